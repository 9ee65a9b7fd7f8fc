"""The documentation site builds with `mkdocs build --strict`: a broken link or anchor, a page
left out of both the menu and `not_in_nav`, fails it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


@pytest.mark.slow
def test_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "ci" / "index.html").is_file()
    assert (tmp_path / "site" / "rules" / "GPU003" / "index.html").is_file()


def test_strict_build_fails_on_a_broken_anchor(tmp_path: Path) -> None:
    """The check the site relies on: mkdocs.yml makes a link to a missing heading a warning."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    page = copy / "docs" / "usage.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](configuration.md#no-such-heading).\n",
                    encoding="utf-8")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "no-such-heading" in done.stdout + done.stderr
