"""Inside a git work tree, a directory walk passes over what git ignores; named paths are always scanned.

Repositories are built in tmp_path with the real `git` (the tests skip without it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ACK_EXAMPLE_POD, BAD_POD, run_cli

from gpulint.cli import scanargs
from gpulint.results.findings import STATUSES

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GITIGNORE = "node_modules/\n/build/\n*.gen.yaml\n!keep.gen.yaml\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                   check=True, capture_output=True)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    for rel, text in {
        ".gitignore": GITIGNORE,
        "k8s/pod.yaml": ACK_EXAMPLE_POD,
        "k8s/a.gen.yaml": BAD_POD,                 # ignored by pattern
        "k8s/keep.gen.yaml": ACK_EXAMPLE_POD,      # re-included by `!keep.gen.yaml`
        "k8s/tracked.gen.yaml": BAD_POD,           # matches a pattern but is tracked: scanned
        "node_modules/pkg/deploy.yaml": BAD_POD,   # ignored directory, at any depth
        "web/node_modules/x/job.yaml": BAD_POD,
        "web/README.md": "untracked, not ignored, not a manifest\n",
        "build/out.yaml": BAD_POD,                 # ignored directory, anchored
        "k8s/build/pod.yaml": ACK_EXAMPLE_POD,     # `/build/` is anchored: this one is scanned
        "node_modules/README.md": "not a manifest\n",
    }.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "init", "-q", ".")
    _git(repo, "add", ".gitignore", "k8s/pod.yaml", "k8s/keep.gen.yaml", "k8s/build/pod.yaml")
    _git(repo, "add", "-f", "k8s/tracked.gen.yaml")
    _git(repo, "commit", "-qm", "init")
    return repo


def _scan(*args: str, cwd: Path) -> tuple[int, dict, str]:
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        code, out, err = run_cli("scan", "--format", "json", *args)
    finally:
        os.chdir(previous)
    return code, json.loads(out), err


def _bad_files(report: dict) -> list[str]:
    return sorted({f["path"] for f in report["findings"] if f["rule"] == "GPU003"})


def test_a_walk_passes_over_what_git_ignores_and_counts_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    code, report, _err = _scan(cwd=repo)
    assert _bad_files(report) == ["k8s/tracked.gen.yaml"]  # tracked: a pattern cannot hide it
    summary = report["summary"]
    assert summary["ignored"] == 4  # build, k8s/a.gen.yaml, node_modules, web/node_modules (each counted once)
    assert summary["scanned"] == 4  # k8s/pod.yaml, keep.gen.yaml, tracked.gen.yaml, k8s/build/pod.yaml
    assert summary["files"] == sum(summary[k] for k in STATUSES) == 8
    assert code == 1


def test_the_summary_line_says_how_many_were_ignored(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    previous = os.getcwd()
    os.chdir(repo)
    try:
        _code, out, _err = run_cli("scan", "--format", "text", "k8s")
    finally:
        os.chdir(previous)
    assert out.splitlines()[-1] == ("Found 1 finding (1 error) in 5 files: 4 scanned, "
                                    "1 ignored by git (--no-ignore to scan).")


def test_no_ignore_scans_everything(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _code, report, _err = _scan("--no-ignore", ".", cwd=repo)
    assert _bad_files(report) == ["build/out.yaml", "k8s/a.gen.yaml", "k8s/tracked.gen.yaml",
                                  "node_modules/pkg/deploy.yaml", "web/node_modules/x/job.yaml"]
    assert report["summary"]["ignored"] == 0


def test_a_path_named_on_the_command_line_is_always_scanned(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _code, report, _err = _scan("build/out.yaml", "k8s/a.gen.yaml", cwd=repo)
    assert _bad_files(report) == ["build/out.yaml", "k8s/a.gen.yaml"]
    _code, report, _err = _scan("node_modules", cwd=repo)  # an ignored directory, named: its files too
    assert _bad_files(report) == ["node_modules/pkg/deploy.yaml"]
    assert report["summary"]["ignored"] == 0

    (repo / "gen").mkdir()  # a directory whose every file git ignores is named: scanned whole as well
    (repo / "gen" / "x.gen.yaml").write_text(BAD_POD)
    _code, report, _err = _scan("gen", cwd=repo)
    assert _bad_files(report) == ["gen/x.gen.yaml"]


def test_outside_a_git_work_tree_gitignore_files_mean_nothing(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text(GITIGNORE)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.yaml").write_text(BAD_POD)
    _code, report, _err = _scan(".", cwd=tmp_path)
    assert _bad_files(report) == ["build/out.yaml"]


def test_without_git_everything_is_scanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over-scanning is safe; guessing from .gitignore patterns could hide a tracked file."""
    repo = _repo(tmp_path)
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    _code, report, _err = _scan(".", cwd=repo)
    assert len(_bad_files(report)) == 5
    assert report["summary"]["ignored"] == 0


def test_the_repository_configuration_runs_no_command(tmp_path: Path) -> None:
    """A repository's core.fsmonitor names a command that plain `git ls-files` would run."""
    repo = _repo(tmp_path)
    canary = tmp_path / "pwned"
    _git(repo, "config", "core.fsmonitor", f"touch {canary}; echo")
    _code, report, _err = _scan(".", cwd=repo)
    assert not canary.exists()
    assert report["summary"]["ignored"] == 4


def test_an_ignored_link_out_of_the_repository_is_ignored_not_followed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "node_modules" / ".bin").symlink_to("/")
    (repo / "k8s" / "x.gen.yaml").symlink_to("/etc/hostname")
    _code, report, _err = _scan(".", cwd=repo)
    assert report["summary"]["outside_root"] == 0
    assert report["summary"]["ignored"] == 5


def test_the_options_are_declared_for_both_front_ends() -> None:
    values = scanargs.parse(["--no-ignore", "--fail-if-empty", "k8s"])
    assert values is not None
    assert (values["no_ignore"], values["fail_if_empty"], values["paths"]) == (True, True, ["k8s"])
    code, out, _err = run_cli("scan", "--help")
    assert code == 0 and "--no-ignore" in out and "--fail-if-empty" in out


# A scan with nothing to scan says so.

def test_an_empty_scan_warns_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    code, report, err = _scan(".", cwd=tmp_path)
    assert code == 0
    assert err == "gpulint: warning: no file to scan in .\n"
    assert report["summary"]["files"] == 0


def test_fail_if_empty_exits_2(tmp_path: Path) -> None:
    code, out, err = run_cli("scan", "--fail-if-empty", str(tmp_path))
    assert code == 2
    assert err == f"gpulint: error: no file to scan in {tmp_path}\n"
    assert out.startswith("No findings in 0 files")


def test_an_empty_scan_says_when_git_ignored_everything(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    code, _report, err = _scan("--fail-if-empty", "web", cwd=repo)
    assert code == 2
    assert err == "gpulint: error: no file to scan in web (1 ignored by git: --no-ignore scans them)\n"


def test_a_scan_with_files_says_nothing_about_emptiness(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(ACK_EXAMPLE_POD)
    code, _report, err = _scan("--fail-if-empty", ".", cwd=tmp_path)
    assert code == 0 and err == ""
