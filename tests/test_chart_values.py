"""Values a repository keeps for its charts: ci/*-values.yaml and configured `charts:` entries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, scan_json, scanned


from gpulint.config.render import ChartValues, ConfiguredChart
from gpulint.render.chartvalues import chart_values, variant_name

CHART = "fixtures/charts/values-app"


def _summary(report: dict) -> list[tuple]:
    return [(f["rule"], scanned(f)["path"], scanned(f)["line"], scanned(f)["column"],
             [(m["role"], m["path"], m["line"], m["column"]) for m in f.get("mapped", [])])
            for f in report["findings"]]


def test_each_ci_values_file_is_one_more_render(helm: str, at_root: Path) -> None:
    code, report = scan_json("--helm", helm, CHART)
    assert code == 1
    # The defaults render is clean; each finding comes from one ci values file, named in
    # the render's name and pointed at by the values location.
    assert _summary(report) == [
        ("GPU003", f"{CHART} (rendered with ci/gpu-values.yaml)", 18, 13,
         [("template", f"{CHART}/templates/deployment.yaml", 17, 11),
          ("values", f"{CHART}/ci/gpu-values.yaml", 6, 5)]),
        ("GPU006", f"{CHART} (rendered with ci/privileged-values.yaml)", 21, 11,
         [("template", f"{CHART}/templates/deployment.yaml", 24, 11),
          ("values", f"{CHART}/ci/privileged-values.yaml", 2, 3)]),
    ]
    # Three renders (the defaults and the two ci files; ci/README.md is no values file)
    # of one chart: one input in the summary.
    assert report["summary"]["files"] == 1 and report["summary"]["scanned"] == 1
    assert report["summary"]["workloads"] == 3


def test_text_output_names_the_override_file(helm: str, at_root: Path) -> None:
    code, out, _err = run_cli("scan", "--helm", helm, "--select", "GPU003", CHART)
    assert code == 1
    assert (f"values key env[0] at {CHART}/ci/gpu-values.yaml:6:5; "
            f"rendered at {CHART} (rendered with ci/gpu-values.yaml):18:13]") in out


def test_renders_are_deterministic(helm: str, at_root: Path) -> None:
    first = run_cli("scan", "--helm", helm, "--format", "json", CHART, "fixtures/charts/gpu-app")
    second = run_cli("scan", "--helm", helm, "--format", "json", "--jobs", "2", CHART, "fixtures/charts/gpu-app")
    assert first[1] == second[1]
    paths = [f["path"] for f in json.loads(first[1])["findings"] if f["path"].startswith(CHART)]
    assert paths == sorted(paths, key=lambda p: ("with" in p, p))


def _copy_chart(tmp_path: Path) -> Path:
    chart = tmp_path / "charts" / "values-app"
    for source in (ROOT / CHART).rglob("*"):
        if source.is_file() and "ci" not in source.relative_to(ROOT / CHART).parts:
            target = chart / source.relative_to(ROOT / CHART)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return chart


def test_configured_values_files_and_sets(helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copy_chart(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "prod-values.yaml").write_text(
        "# production\nenv:\n  - name: NVIDIA_VISIBLE_DEVICES\n    value: all\n")
    (tmp_path / ".gpulint.yaml").write_text(
        "charts:\n"
        "  - path: charts/values-app\n"
        "    values: [deploy/prod-values.yaml]\n"
        "    set: [gpu.count=0]\n"
        "  - path: charts/values-app\n"
        "    set: ['securityContext.privileged=true']\n")
    monkeypatch.chdir(tmp_path)
    code, report = scan_json("--helm", helm, "charts")
    assert code == 1
    # Findings are ordered by path: the --set render sorts first.
    assert _summary(report) == [
        ("GPU006", "charts/values-app (rendered with --set securityContext.privileged=true)", 21, 11,
         [("template", "charts/values-app/templates/deployment.yaml", 24, 11)]),
        ("GPU003", "charts/values-app (rendered with deploy/prod-values.yaml, --set gpu.count=0)", 18, 13,
         [("template", "charts/values-app/templates/deployment.yaml", 17, 11),
          ("values", "deploy/prod-values.yaml", 3, 5)]),
    ]
    code, out, _err = run_cli("scan", "--helm", helm, "--select", "GPU006", "charts")
    assert "value from --set securityContext.privileged=true" in out, out


@pytest.mark.parametrize("entry, message", [
    ("  - path: charts/missing\n", "`charts[0].path`: charts/missing is no chart directory (no Chart.yaml in it)"),
    ("  - path: charts/values-app\n    values: [nope.yaml]\n", "`charts[0].values[0]`: no such file: nope.yaml"),
    ("  - values: [x.yaml]\n", "path"),
    ("  - path: charts/values-app\n    set: [novalue]\n", "set"),
])
def test_bad_chart_entries_are_configuration_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    entry: str, message: str) -> None:
    _copy_chart(tmp_path)
    (tmp_path / ".gpulint.yaml").write_text("charts:\n" + entry)
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("scan", "charts")
    assert code == 2
    assert message in err


def test_chart_values_order_and_names(tmp_path: Path) -> None:
    chart = tmp_path / "app"
    (chart / "ci").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    for name in ("z-values.yaml", "a-values.yaml", "values.yaml", "notes-values.yml"):
        (chart / "ci" / name).write_text("{}\n")
    (chart / "ci" / "dir-values.yaml").mkdir()
    outside = tmp_path / "secret.yaml"
    outside.write_text("{}\n")
    (chart / "ci" / "link-values.yaml").symlink_to(outside)
    configured = ConfiguredChart(str(chart), ChartValues.of((str(outside),), ("secret.yaml",), ("a=b",)))
    other = ConfiguredChart(str(tmp_path / "other"), ChartValues.of((), (), ("c=d",)))
    found = chart_values(str(chart), "charts/app", [configured, other])
    assert [v.label for v in found] == ["ci/a-values.yaml", "ci/z-values.yaml", "secret.yaml, --set a=b"]
    assert found[0].shown == ("charts/app/ci/a-values.yaml",)
    assert found[0].files == (os.path.join(str(chart), "ci", "a-values.yaml"),)
    assert variant_name("charts/app", found[2]) == "charts/app (rendered with secret.yaml, --set a=b)"
    assert chart_values(str(tmp_path / "nothing"), "x") == []


def _small_chart(tmp_path: Path, chart_extra: str, template: str, ci: dict[str, str]) -> Path:
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "ci").mkdir()
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: c\nversion: 0.1.0\n{chart_extra}")
    (chart / "templates" / "cm.yaml").write_text(template)
    for name, text in ci.items():
        (chart / "ci" / name).write_text(text)
    return chart


def test_a_chart_that_never_renders_is_reported_once(helm: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _small_chart(tmp_path, "dependencies:\n- {name: dep, version: 1.0.0, repository: https://example.com}\n",
                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", {"a-values.yaml": "a: 1\n"})
    monkeypatch.chdir(tmp_path)
    code, report = scan_json("--helm", helm, "c")
    assert code == 1
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == [("GPU010", "c/Chart.yaml", 1)]
    assert report["summary"]["files"] == 1 and report["summary"]["helm_chart"] == 1


def test_a_render_failing_on_its_own_values_names_them(helm: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _small_chart(tmp_path, "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Values.name }}}\n",
                 {"ok-values.yaml": "name: x\n", "bad-values.yaml": "name: [\n"})
    (tmp_path / "c" / "values.yaml").write_text("name: default\n")
    monkeypatch.chdir(tmp_path)
    code, report = scan_json("--helm", helm, "c")
    assert code == 1
    messages = [f["message"] for f in report["findings"]]
    assert len(messages) == 1 and messages[0].startswith("helm template failed: failed to parse")
    assert messages[0].endswith("(rendered with ci/bad-values.yaml)")
    # The chart rendered (with its defaults and ci/ok-values.yaml): scanned, with the error.
    assert report["summary"]["files"] == 1 and report["summary"]["scanned"] == 1
    assert report["summary"]["objects"] == 2


POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: registry.example.com/app:1
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
    - name: NVIDIA_DRIVER_CAPABILITIES
      value: {{ .Values.caps | quote }}
"""


def test_a_finding_every_render_repeats_is_said_once(helm: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _small_chart(tmp_path, "", POD, {"a-values.yaml": "caps: compute\n", "b-values.yaml": "caps: utility\n"})
    (tmp_path / "c" / "values.yaml").write_text("caps: all\n")
    monkeypatch.chdir(tmp_path)
    code, report = scan_json("--helm", helm, "--select", "GPU003", "c")
    assert code == 1
    # The literal env entry is the same template line in all three renders: reported
    # with the first render (the defaults) only, saying how many renders met it.
    assert [(f["rule"], scanned(f)["path"], scanned(f)["line"], f["path"], f["line"]) for f in report["findings"]] == [
        ("GPU003", "c (rendered)", 11, "c/templates/cm.yaml", 9)]
    assert report["findings"][0]["message"].endswith(" (met by 3 renders)")
    assert report["summary"]["files"] == 1 and report["summary"]["findings"] == 1
