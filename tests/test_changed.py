"""`gpulint scan --changed FILE...`: each changed file scanned through the chart or the
kustomizations that read it (what the pre-commit hook runs; the hook itself: test_precommit.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import BAD_POD, FIXTURES, run_cli, scan_json
from repo_copy import git
from tooling import find_tool


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kustomize fixtures (base, component, overlays dev and prod) and a chart, in a git repository."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize", root / "kustomize")
    shutil.copytree(FIXTURES / "charts" / "gpu-app", root / "charts" / "gpu-app")
    git("init", "-q", cwd=root)
    monkeypatch.chdir(root)
    return root


def _found(report: dict) -> list[tuple[str, str, int, int]]:
    """(rule, file a human edits, line, column) of each active finding."""
    out = []
    for f in report["findings"]:
        if f["suppressed"]:
            continue
        place = f["mapped"][0] if f["mapped"] else f
        out.append((f["rule"], place["path"], place["line"], place["column"]))
    return sorted(out)


def test_a_kustomize_patch_alone_builds_its_overlay_and_reports_on_the_patch(repo: Path) -> None:
    find_tool("kustomize", "kubectl")
    code, report = scan_json("--changed", "kustomize/overlays/dev/devices.json-patch.yaml")
    assert code == 1
    # The dev overlay holds five more findings (base, component, inline patch): not this change's.
    assert _found(report) == [("GPU003", "kustomize/overlays/dev/devices.json-patch.yaml", 6, 7)]
    assert [f["path"] for f in report["findings"]] == ["kustomize/overlays/dev (rendered)"]
    # Without --changed the patch alone is not Kubernetes: nothing found.
    code, report = scan_json("kustomize/overlays/dev/devices.json-patch.yaml")
    assert code == 0 and report["summary"]["not_kubernetes"] == 1


def test_a_base_file_builds_every_overlay_that_includes_it(repo: Path) -> None:
    find_tool("kustomize", "kubectl")
    code, report = scan_json("--changed", "kustomize/base/deployment.yaml")
    assert code == 1
    assert _found(report) == [("GPU003", "kustomize/base/deployment.yaml", 25, 15)] * 2
    assert sorted(f["path"] for f in report["findings"]) == [
        "kustomize/overlays/dev (rendered)", "kustomize/overlays/prod (rendered)"]


def test_a_component_file_builds_the_overlay_using_it(repo: Path) -> None:
    find_tool("kustomize", "kubectl")
    code, report = scan_json("--changed", "kustomize/components/debug/kustomization.yaml")
    assert code == 1
    assert _found(report) == [("GPU003", "kustomize/components/debug/kustomization.yaml", 16, 21)]


def test_a_helper_template_scans_its_chart(repo: Path) -> None:
    find_tool("helm")
    code, report = scan_json("--changed", "charts/gpu-app/templates/_helpers.tpl")
    assert code == 1
    assert ("GPU003", "charts/gpu-app/templates/_helpers.tpl", 10, 3) in _found(report)
    assert {f["path"] for f in report["findings"]} == {"charts/gpu-app (rendered)"}


def test_files_nothing_reads_are_left_out_and_manifests_scanned_alone(repo: Path) -> None:
    (repo / "README.md").write_text("apiVersion: v1\nkind: Pod\n: broken\n")   # looks like a manifest
    (repo / "run.sh").write_text("docker run --gpus all cuda\n")
    (repo / "pod.yaml").write_text(BAD_POD)
    code, report = scan_json("--changed", "README.md", "run.sh", "pod.yaml")
    assert code == 1
    assert _found(report) == [("GPU003", "pod.yaml", 10, 7)]
    assert report["summary"]["files"] == 1
    code, report = scan_json("--changed", "README.md", "run.sh")
    assert code == 0 and report["summary"]["files"] == 0 and report["findings"] == []


def test_a_generator_input_builds_its_overlay(repo: Path) -> None:
    """A ConfigMap generator's file: read by no manifest rule alone, but the overlay's build changes."""
    find_tool("kustomize", "kubectl")
    overlay = repo / "kustomize" / "overlays" / "gen"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources:\n  - pod.yaml\nconfigMapGenerator:\n  - name: gpu\n    envs: [gpu.env]\n")
    (overlay / "pod.yaml").write_text(BAD_POD.replace(
        "    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: all\n",
        "    envFrom:\n    - configMapRef: {name: gpu}\n"))
    (overlay / "gpu.env").write_text("NVIDIA_VISIBLE_DEVICES=all\n")
    code, report = scan_json("--changed", "kustomize/overlays/gen/gpu.env")
    assert code == 1
    # The finding points at the envFrom of pod.yaml (the generated ConfigMap has no lines of its
    # own): a change of the input keeps every finding of the build.
    assert _found(report) == [("GPU004", "kustomize/overlays/gen/pod.yaml", 10, 7)]
    assert "NVIDIA_VISIBLE_DEVICES=all comes through envFrom" in report["findings"][0]["message"]


def test_a_build_the_change_broke_is_reported(repo: Path) -> None:
    find_tool("kustomize", "kubectl")
    patch = repo / "kustomize" / "overlays" / "dev" / "devices.json-patch.yaml"
    patch.write_text("- op: replace\n  path: /spec/no/such/path\n  value: 1\n")
    code, report = scan_json("--changed", os.path.relpath(patch, repo))
    assert code == 1
    assert [f["rule"] for f in report["findings"]] == ["GPU010"]


def test_a_baseline_is_not_written_from_changed_files(repo: Path) -> None:
    code, out, err = run_cli("scan", "--changed", "--write-baseline", "b.json", "kustomize/base/deployment.yaml")
    assert code == 2 and err == "gpulint: error: --write-baseline: not with --changed (write it from a scan of " \
        "the repository)\n"
    assert not (repo / "b.json").exists()
