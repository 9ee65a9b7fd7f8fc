"""Kustomize directories: built with the real tool, findings mapped to resource and patch files."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, ROOT, run_cli, scan_json, scanned
from tooling import expected_for, map_markers, mapped_of, rendered_root

from gpulint.api import KeyAt
from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import objects_in
from gpulint.render import RenderOptions, render
from gpulint.results.inputkind import InputKind

KUSTOMIZE = "fixtures/kustomize"


def _build(tool: str, directory: str) -> str:
    argv = [tool, "kustomize", directory] if Path(tool).name.startswith("kubectl") else [tool, "build", directory]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True).stdout


def test_overlays_are_built_and_mapped_to_their_files(kustomize: str, at_root: Path) -> None:
    code, report = scan_json("--select", "GPU003", "--kustomize", kustomize, KUSTOMIZE)
    assert code == 1
    jsonschema.validate(report, json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text()))
    # base/ is built through both overlays, components/ through dev: two roots, no loose file.
    assert report["summary"]["files"] == 2 and report["summary"]["scanned"] == 2
    assert sorted({scanned(f)["path"] for f in report["findings"]}) == [
        f"{KUSTOMIZE}/overlays/dev (rendered)", f"{KUSTOMIZE}/overlays/prod (rendered)"]
    markers = map_markers(FIXTURES / "kustomize")
    seen = set()
    for finding in report["findings"]:
        root = rendered_root(finding)
        expected = expected_for(markers, "GPU003", root, finding["container"])
        assert expected, f"no map marker for {root}/{finding['container']}"
        assert mapped_of(finding) == expected, (root, finding["container"])
        seen.add((root, finding["container"]))
    assert seen == {("dev", "debug"), ("dev", "trainer"), ("dev", "metrics"), ("prod", "trainer"),
                    ("prod", "metrics")}


def test_rendered_positions_are_those_of_a_plain_build(kustomize: str, at_root: Path) -> None:
    """The origin annotations gpulint turns on are gone before rules run and from every position."""
    overlay = f"{KUSTOMIZE}/overlays/prod"
    plain = _build(kustomize, overlay).split("\n")
    _code, report = scan_json("--kustomize", kustomize, overlay)
    assert report["findings"]
    for finding in report["findings"]:
        line = plain[scanned(finding)["line"] - 1]
        assert line[scanned(finding)["column"] - 1:].startswith("name: NVIDIA_VISIBLE_DEVICES")
        assert finding["source"] == {"origin": f"{KUSTOMIZE}/base/deployment.yaml"}
    _code, out, _err = run_cli("scan", "--format", "json", "--kustomize", kustomize, "--select", "ALL", overlay)
    assert "config.kubernetes.io/origin" not in out


def test_text_output_leads_with_the_patch_line(kustomize: str, at_root: Path) -> None:
    _code, out, _err = run_cli("scan", "--kustomize", kustomize, f"{KUSTOMIZE}/overlays/prod")
    trainer = next(line for line in out.splitlines() if 'container "trainer"' in line)
    assert trainer.startswith(f"{KUSTOMIZE}/overlays/prod/gpu-env.yaml:12:15: GPU003 [error] ")
    assert f"rendered at {KUSTOMIZE}/overlays/prod (rendered):25:11" in trainer


def test_a_base_scanned_alone_is_built(kustomize: str, at_root: Path) -> None:
    _code, report = scan_json("--kustomize", kustomize, f"{KUSTOMIZE}/base")
    [finding] = report["findings"]
    assert finding["container"] == "metrics" and scanned(finding)["path"] == f"{KUSTOMIZE}/base (rendered)"
    assert mapped_of(finding) == expected_for(map_markers(FIXTURES / "kustomize"), "GPU003", "base", "metrics")


def test_inline_json_patch_maps_into_the_kustomization_file(kustomize: str, at_root: Path) -> None:
    """A value set by an inline patch (`patch: |-` in kustomization.yaml) maps to its line there."""
    rendered = render(InputKind.KUSTOMIZATION, Path(f"{KUSTOMIZE}/overlays/dev"), f"{KUSTOMIZE}/overlays/dev",
                      RenderOptions(kustomize=kustomize))
    assert rendered.failure is None and rendered.text is not None and rendered.mapper is not None
    for doc in load_documents(rendered.text):
        assert isinstance(doc, Document)
        for obj in objects_in(rendered.display, doc):
            if obj.ref.kind != "Deployment":
                continue
            containers = obj.data["spec"]["template"]["spec"]["containers"]
            index = next(i for i, c in enumerate(containers) if c["name"] == "trainer")
            path = ("spec", "template", "spec", "containers", index, "securityContext", "privileged")
            [location] = rendered.mapper.map(obj, KeyAt(path))
            file = ROOT / location.file
            assert location.file == f"{KUSTOMIZE}/overlays/dev/kustomization.yaml"
            line = file.read_text().splitlines()[location.span.line - 1]
            assert line[location.span.column - 1:].startswith("privileged: true")
            return
    pytest.fail("no Deployment in the build")


def test_build_error_is_reported_with_the_tools_message(kustomize: str, tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n  - ../missing-base\n")
    code, report = scan_json("--kustomize", kustomize, str(overlay))
    assert code == 1
    [finding] = report["findings"]
    assert finding["rule"] == "GPU010" and finding["path"] == f"{overlay}/kustomization.yaml"
    assert finding["message"].startswith("kustomize build failed: ")
    assert "missing-base" in finding["message"]
    assert "gpulint-render-" not in json.dumps(report) and "wrapper" not in finding["message"]
    assert report["summary"]["error"] == 1


def test_without_a_kustomize_tool_it_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.chdir(ROOT)
    code, report = scan_json(f"{KUSTOMIZE}/overlays/prod")
    # Not built: its local resources and patches are scanned as they are, findings at their severity.
    rows = [(f["rule"], f["severity"], f["path"], f["line"], f["column"]) for f in report["findings"]]
    assert rows == [("GPU003", "error", f"{KUSTOMIZE}/base/deployment.yaml", 25, 15),
                    ("GPU003", "error", f"{KUSTOMIZE}/overlays/prod/gpu-env.yaml", 12, 15),
                    ("GPU010", "warning", f"{KUSTOMIZE}/overlays/prod/kustomization.yaml", 1, 1)]
    finding = report["findings"][2]
    assert "kustomize and kubectl not found on PATH" in finding["message"]
    assert "kubectl kustomize fixtures/kustomize/overlays/prod | gpulint scan -" in finding["message"]
    assert finding["message"].endswith("; its local resources and patches were scanned as they are")
    assert code == 1 and report["summary"]["files"] == report["summary"]["scanned"] == 1


def test_unreferenced_files_beside_a_kustomization_are_still_scanned(kustomize: str, tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("resources:\n  - pod.yaml\n")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n    - name: c\n"
           "      image: x\n      env:\n        - name: NVIDIA_VISIBLE_DEVICES\n          value: all\n")
    (app / "pod.yaml").write_text(pod.format(name="built"))
    (app / "stray.yaml").write_text(pod.format(name="stray"))
    _code, report = scan_json("--kustomize", kustomize, str(app))
    got = sorted((scanned(f)["path"], f["object"]["name"]) for f in report["findings"])
    assert got == [(f"{app} (rendered)", "built"), (f"{app}/stray.yaml", "stray")]
    [built] = [f for f in report["findings"] if f["object"]["name"] == "built"]
    assert mapped_of(built) == [("origin", f"{app}/pod.yaml", 10, 11)]


def test_piped_kustomize_output(kustomize: str, at_root: Path) -> None:
    output = _build(kustomize, f"{KUSTOMIZE}/overlays/prod")
    _code, report = scan_json("-", input=output)
    assert {f["container"] for f in report["findings"]} == {"trainer", "metrics"}
    assert all(f["path"] == "-" and f["mapped"] == [] for f in report["findings"])


def test_no_temporary_path_in_any_output(kustomize: str, at_root: Path) -> None:
    temp_root = str(Path(tempfile.gettempdir()).resolve())
    for fmt in ("text", "json"):
        _code, out, err = run_cli("scan", "--format", fmt, "--kustomize", kustomize, KUSTOMIZE)
        assert temp_root not in out + err and "gpulint-render-" not in out + err
        assert os.sep + "wrapper" not in out


def test_roots_and_consumed_files(tmp_path: Path) -> None:
    """Discovery alone: which kustomizations are built and which files they take."""
    from gpulint.inputs.discovery import discover

    base, overlay, component = tmp_path / "base", tmp_path / "overlay", tmp_path / "component"
    for directory in (base, overlay, component):
        directory.mkdir()
    (base / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (base / "deploy.yaml").write_text("kind: Deployment\n")
    (overlay / "kustomization.yaml").write_text(
        "resources: [../base]\ncomponents: [../component]\npatches:\n  - path: patch.yaml\n")
    (overlay / "patch.yaml").write_text("kind: Deployment\n")
    (overlay / "notes.yaml").write_text("unreferenced: true\n")
    (component / "kustomization.yaml").write_text("kind: Component\n")
    found = discover([str(tmp_path)])
    kinds = {Path(i.display).relative_to(tmp_path).as_posix(): i.kind for i in found.inputs}
    # base/ is reached through the overlay; the component is used by it; notes.yaml is read by nobody.
    assert kinds == {"overlay": "kustomization", "overlay/notes.yaml": "manifest"}
    alone = discover([str(component)])
    assert [i.kind for i in alone.inputs] == ["manifest"]       # a component is never built on its own


def test_resources_outside_the_directory_are_scanned_as_they_are(kustomize: str, tmp_path: Path) -> None:
    """Only buildable with --load-restrictor LoadRestrictionsNone (Argo CD / Flux style): never built in a
    less restricted mode; its files are scanned as they are, their findings at their own severity."""
    (tmp_path / "shared.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: shared\nspec:\n  containers:\n    - name: c\n"
        "      image: x\n      env:\n        - name: NVIDIA_VISIBLE_DEVICES\n          value: all\n")
    app = tmp_path / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("resources:\n  - ../shared.yaml\n")
    code, report = scan_json("--kustomize", kustomize, str(tmp_path))
    rows = [(f["rule"], f["severity"], f["path"], f["line"], f["column"]) for f in report["findings"]]
    # shared.yaml is the kustomization's: scanned once, through it
    assert rows == [("GPU010", "warning", f"{app}/kustomization.yaml", 2, 5),
                    ("GPU003", "error", f"{tmp_path}/shared.yaml", 10, 11)]
    assert "is not in or below" in report["findings"][0]["message"]
    assert code == 1 and report["summary"]["files"] == 1


def test_a_file_outside_the_kustomization_is_named_as_the_scan_shows_it(kustomize: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """kustomize names the sibling file by its absolute path: the report names it relative to where the
    scan was run (a runner's folder never reaches a public report), and says how to make it build."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "k8s" / "app").mkdir(parents=True)
    (repo / "k8s" / "shared.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    (repo / "k8s" / "app" / "kustomization.yaml").write_text("resources:\n  - ../shared.yaml\n")
    monkeypatch.chdir(repo)
    code, report = scan_json("--kustomize", kustomize, "k8s/app")
    [finding] = report["findings"]
    assert (finding["rule"], finding["path"], finding["line"], finding["column"]) == (
        "GPU010", "k8s/app/kustomization.yaml", 2, 5)
    assert "file 'k8s/shared.yaml' is not in or below 'k8s/app'" in finding["message"], finding["message"]
    assert str(tmp_path) not in json.dumps(report)
    assert "list the folder holding it, made a kustomization, instead" in finding["message"]
