"""Repository-relative paths (gpulint/report/repopath.py): the string fast path says what pathlib says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpulint.report.repopath import Locator


@pytest.mark.skipif(os.sep != "/", reason="the string path is the POSIX one")
def test_located_paths_agree_with_pathlib(tmp_path: Path) -> None:
    work = tmp_path / "work"
    repo = work / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "k8s" / "app").mkdir(parents=True)
    (repo / "k8s" / "app" / "a.yaml").write_text("a: 1\n")
    (repo / "top.yaml").write_text("a: 1\n")
    (work / "loose.yaml").write_text("a: 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.yaml").write_text("a: 1\n")
    (repo / "k8s" / "link.yaml").symlink_to(outside / "far.yaml")       # a link out of the repository
    (work / "linked-dir").symlink_to(repo / "k8s")                      # a directory link into it
    (repo / "k8s" / "name with space%.yaml").write_text("a: 1\n")
    names = ["repo/k8s/app/a.yaml", "repo/top.yaml", "loose.yaml", "repo/k8s/app", "repo", ".",
             "../outside/far.yaml", str(outside / "far.yaml"), "repo/k8s/link.yaml", "linked-dir/app/a.yaml",
             "./repo//k8s/../k8s/app/a.yaml", "repo/k8s/name with space%.yaml", "missing.yaml"]
    for cwd in (work, repo, repo / "k8s"):
        locator = Locator(cwd)
        for name in names:
            fast = locator.locate(name)
            slow = locator._locate_path(Path(os.path.realpath(os.path.join(locator.cwd, name))))
            assert (fast, fast.uri) == (slow, slow.uri), (cwd, name)
