"""Renders point where a user edits: --kube-version, aliased subcharts, repeats folded, JSON path/line."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, run_cli, scan_json, scanned
from tooling import expected_for, find_tool, map_markers, mapped_of

CHARTS = "fixtures/charts"
SCHEMA = json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text())


def _rows(report: dict) -> list[tuple]:
    return [(f["rule"], f["severity"], f["path"], f["line"], f["column"]) for f in report["findings"]]


# --- --kube-version ---------------------------------------------------------------------------------------


def test_a_chart_for_a_newer_cluster_says_which_option_renders_it(helm: str, at_root: Path) -> None:
    chart = f"{CHARTS}/new-cluster-app"
    code, report = scan_json("--no-cache", "--helm", helm, chart)
    # Not rendered: the failure, and the template's literal text checked as it is.
    assert (code, _rows(report)) == (1, [("GPU010", "warning", f"{chart}/Chart.yaml", 1, 1),
                                         ("GPU003", "error", f"{chart}/templates/job.yaml", 13, 11)])
    message = report["findings"][0]["message"]
    assert "chart requires kubeVersion: >=1.40.0-0 which is incompatible with Kubernetes v" in message
    assert "(rendered for helm's default Kubernetes version: give the cluster's version with --kube-version" in message


def test_kube_version_renders_it(helm: str, at_root: Path) -> None:
    chart = f"{CHARTS}/new-cluster-app"
    code, report = scan_json("--no-cache", "--helm", helm, "--kube-version", "1.40", chart)
    assert (code, _rows(report)) == (1, [("GPU003", "error", f"{chart}/templates/job.yaml", 13, 11)])
    [finding] = report["findings"]
    assert mapped_of(finding) == expected_for(map_markers(FIXTURES / "charts" / "new-cluster-app"), "GPU003",
                                              "new-cluster-app", "trainer")
    assert (scanned(finding)["path"], scanned(finding)["line"]) == (f"{chart} (rendered)", 15)


def test_the_configuration_key_gives_the_version_and_the_option_wins(helm: str, at_root: Path,
                                                                     tmp_path: Path) -> None:
    chart = f"{CHARTS}/new-cluster-app"
    config = tmp_path / "gpulint.yaml"
    config.write_text('kube-version: "1.40"\n')
    code, report = scan_json("--no-cache", "--helm", helm, "--config", str(config), chart)
    assert [f["rule"] for f in report["findings"]] == ["GPU003"]
    code, report = scan_json("--no-cache", "--helm", helm, "--config", str(config), "--kube-version", "1.32", chart)
    assert [f["rule"] for f in report["findings"]] == ["GPU010", "GPU003"]   # the literal text still checked
    assert "incompatible with Kubernetes v1.32" in report["findings"][0]["message"]
    assert "(rendered for Kubernetes 1.32: give the cluster's version" in report["findings"][0]["message"]


@pytest.mark.parametrize("value", ["latest", "1", "1.x", "-1.3"])
def test_a_version_that_is_not_one_is_a_usage_error(value: str) -> None:
    code, _out, err = run_cli("scan", f"--kube-version={value}", str(FIXTURES / "outside-charts" / "values-cpu.yaml"))
    assert code == 2 and "expected a Kubernetes version such as 1.33" in err


def test_a_bad_kube_version_in_the_configuration_is_a_configuration_error(tmp_path: Path) -> None:
    config = tmp_path / "gpulint.yaml"
    config.write_text("kube-version: latest\n")
    code, _out, err = run_cli("scan", "--config", str(config), str(FIXTURES / "outside-charts" / "values-cpu.yaml"))
    assert code == 2 and "kube-version" in err


# --- aliased subcharts ------------------------------------------------------------------------------------


def test_an_aliased_subchart_maps_to_its_own_folder(helm: str, at_root: Path) -> None:
    chart = f"{CHARTS}/aliased-app"
    code, report = scan_json("--no-cache", "--helm", helm, chart)
    assert (code, _rows(report)) == (1, [("GPU003", "error", f"{chart}/charts/exporter/templates/daemonset.yaml",
                                          18, 11)])
    [finding] = report["findings"]
    # Helm names it by the alias; the template is in charts/exporter, its value under the alias's key.
    assert finding["source"] == {"template": "aliased-app/charts/gpu-metrics/templates/daemonset.yaml"}
    assert mapped_of(finding) == expected_for(map_markers(FIXTURES / "charts" / "aliased-app"), "GPU003",
                                              "aliased-app", "exporter")
    assert all("charts/gpu-metrics" not in m["path"] for m in finding["mapped"])


# --- JSON: the file a user edits ------------------------------------------------------------------------


def test_json_path_and_line_are_the_edited_file_and_the_render_beside(helm: str, at_root: Path) -> None:
    chart = f"{CHARTS}/aliased-app"
    _code, report = scan_json("--no-cache", "--helm", helm, chart)
    jsonschema.validate(report, SCHEMA)
    [finding] = report["findings"]
    first = finding["mapped"][0]
    assert (finding["path"], finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (
        first["path"], first["line"], first["column"], first["end_line"], first["end_column"])
    assert finding["rendered"] == {"path": f"{chart} (rendered)", "line": 29, "column": 11, "end_line": 30,
                                   "end_column": 23}
    _code, text, _err = run_cli("scan", "--no-cache", "--helm", helm, chart)
    assert text.startswith(f"{first['path']}:{first['line']}:{first['column']}: GPU003 ")


def test_json_rendered_is_null_for_a_plain_file() -> None:
    _code, report = scan_json(str(FIXTURES / "outside-charts" / "gpu-values.yaml"))
    jsonschema.validate(report, SCHEMA)
    assert {f["rendered"] is None for f in report["findings"]} == {True}


# --- one finding per location, however many renders meet it ------------------------------------------------


def test_a_base_built_by_several_overlays_is_reported_once(tmp_path: Path) -> None:
    kustomize = find_tool("kustomize", "kubectl")
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n- pod.yaml\n")
    (base / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
                                   "  - name: c\n    image: busybox\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n"
                                   "      value: all\n")
    for name in ("one", "two", "three"):
        overlay = tmp_path / "overlays" / name
        overlay.mkdir(parents=True)
        (overlay / "kustomization.yaml").write_text("resources:\n- ../../base\n")
    code, report = scan_json("--no-cache", "--kustomize", kustomize, str(tmp_path))   # three roots
    assert (code, _rows(report)) == (1, [("GPU003", "error", str(base / "pod.yaml"), 10, 7)])
    assert report["findings"][0]["message"].endswith('(Pod p, container "c") (met by 3 renders)')
    assert report["summary"]["files"] == 3 and report["summary"]["findings"] == 1


def test_different_objects_from_one_render_are_not_folded(tmp_path: Path) -> None:
    kustomize = find_tool("kustomize", "kubectl")
    base = tmp_path / "app"
    base.mkdir()
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: c\n"
           "    image: busybox\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: all\n")
    (base / "kustomization.yaml").write_text("resources:\n- a.yaml\n- b.yaml\n")
    (base / "a.yaml").write_text(pod.format(name="a"))
    (base / "b.yaml").write_text(pod.format(name="b"))
    _code, report = scan_json("--no-cache", "--kustomize", kustomize, str(base))
    assert [(f["path"], f["line"], f["message"].endswith("renders)")) for f in report["findings"]] == [
        (str(base / "a.yaml"), 10, False), (str(base / "b.yaml"), 10, False)]


def test_a_remote_base_failing_every_overlay_is_one_warning(tmp_path: Path) -> None:
    kustomize = find_tool("kustomize", "kubectl")
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n- https://github.com/example/repo//deploy?ref=v1\n")
    for name in ("one", "two"):
        overlay = tmp_path / name
        overlay.mkdir()
        (overlay / "kustomization.yaml").write_text("resources:\n- ../base\n")
    _code, report = scan_json("--no-cache", "--kustomize", kustomize, str(tmp_path))
    # Each overlay's message names itself (`kubectl kustomize <overlay>`): one finding all the same.
    assert _rows(report) == [("GPU010", "warning", str(base / "kustomization.yaml"), 2, 3)]
    assert report["findings"][0]["message"].endswith(" (met by 2 renders)")


def test_a_chart_refusing_the_default_namespace_is_rendered_for_its_own(helm: str, tmp_path: Path) -> None:
    chart = tmp_path / "gpu-app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpu-app\nversion: 0.1.0\n")
    (chart / "templates" / "check.yaml").write_text(
        '{{- if eq .Release.Namespace "default" }}{{ fail "do not install in the default namespace" }}{{ end }}\n')
    (chart / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: {{ .Release.Namespace }}\nspec:\n"
        "  containers:\n  - name: c\n    image: busybox\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n"
        "      value: all\n")
    code, report = scan_json("--no-cache", "--helm", helm, str(chart))
    assert (code, _rows(report)) == (1, [("GPU003", "error", str(chart / "templates" / "pod.yaml"), 11, 7),
                                         ("GPU010", "info", str(chart / "Chart.yaml"), 1, 1)])
    assert "rendered for namespace 'gpu-app' instead and checked" in report["findings"][1]["message"]
    assert report["findings"][0]["object"]["namespace"] == "gpu-app"
    # A namespace the user gives is kept as given.
    _code, report = scan_json("--no-cache", "--helm", helm, "--helm-namespace", "default", str(chart))
    assert sorted((f["rule"], f["severity"]) for f in report["findings"]) == [
        ("GPU003", "error"), ("GPU010", "warning")]   # the literal text still checked
