"""The pre-commit hook: declared as pre-commit expects, and run for real with `try-repo`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BAD_POD, ROOT
from repo_copy import GIT_IDENTITY, copy_as_repo, git

from gpulint.load.yamlload import Document, load_documents

BAD = BAD_POD
GOOD = BAD.replace("      value: all\n", "      value: void\n")


def _hooks() -> list:
    (doc,) = load_documents((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert isinstance(doc, Document)
    return doc.data


def _hook(hook_id: str) -> dict:
    (hook,) = [hook for hook in _hooks() if hook["id"] == hook_id]
    return hook


def test_hook_definition() -> None:
    assert [hook["id"] for hook in _hooks()] == ["gpulint", "gpulint-fix"]
    hook = _hook("gpulint")
    assert hook["id"] == "gpulint" and hook["name"]
    assert hook["entry"] == "gpulint scan"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["yaml", "json", "dockerfile"]
    assert hook["require_serial"] is True
    assert isinstance(hook["minimum_pre_commit_version"], str)
    # pre-commit runs `entry` with the file names appended: that must be a scan.
    assert hook.get("pass_filenames", True) is True


def test_hook_file_types_are_known_to_identify() -> None:
    from identify.identify import ALL_TAGS

    for hook in _hooks():
        assert set(hook["types_or"]) <= ALL_TAGS


def test_fix_hook_definition() -> None:
    hook = _hook("gpulint-fix")
    assert hook["entry"] == "gpulint scan --fix --exit-zero"
    assert hook["language"] == "python" and hook["require_serial"] is True
    assert hook["types_or"] == ["yaml", "json"]   # Dockerfiles have no fixes
    assert hook.get("pass_filenames", True) is True


@pytest.mark.slow
def test_try_repo_fails_on_a_bad_manifest_then_passes(tmp_path: Path) -> None:
    """`pre-commit try-repo` installs the hook from a commit of this tree and runs it."""
    source = copy_as_repo(tmp_path / "gpulint")
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / "k8s").mkdir()
    (project / "k8s" / "pod.yaml").write_text(BAD)
    (project / "values.yaml").write_text("replicas: 2\n")     # YAML that is not Kubernetes: skipped
    git("add", "-A", cwd=project)
    env = {**os.environ, **GIT_IDENTITY, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(source), "gpulint", "--all-files", "--color=never"],
            cwd=project, env=env, capture_output=True, text=True, timeout=900)

    failed = try_repo()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "k8s/pod.yaml:10:7: GPU003 [error] NVIDIA_VISIBLE_DEVICES=all" in failed.stdout
    assert "Failed" in failed.stdout

    (project / "k8s" / "pod.yaml").write_text(GOOD)
    git("add", "-A", cwd=project)
    passed = try_repo()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


@pytest.mark.slow
def test_try_repo_fix_hook_changes_the_file_then_passes(tmp_path: Path) -> None:
    """`gpulint-fix` adds the missing limit: pre-commit fails because the file changed, then passes."""
    source = copy_as_repo(tmp_path / "gpulint")
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    request_only = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p  # keep\nspec:\n  containers:\n  - name: app\n"
                    "    image: registry.example.com/app:1\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n")
    (project / "pod.yaml").write_text(request_only)
    git("add", "-A", cwd=project)
    env = {**os.environ, **GIT_IDENTITY, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(source), "gpulint-fix", "--all-files",
             "--color=never"], cwd=project, env=env, capture_output=True, text=True, timeout=900)

    failed = try_repo()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "files were modified by this hook" in failed.stdout
    assert (project / "pod.yaml").read_text() == request_only + "      limits:\n        nvidia.com/gpu: 1\n"
    git("add", "-A", cwd=project)
    passed = try_repo()
    assert passed.returncode == 0, passed.stdout + passed.stderr
