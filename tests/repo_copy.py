"""A copy of this working tree as a fresh git repository with one commit.

`pre-commit try-repo` and a GitHub Action checkout both see committed files; a
copy committed in a temporary repository tests uncommitted changes too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from conftest import ROOT

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "gpulint tests", "GIT_AUTHOR_EMAIL": "tests@gpulint.invalid",
    "GIT_COMMITTER_NAME": "gpulint tests", "GIT_COMMITTER_EMAIL": "tests@gpulint.invalid",
}


# An empty global git configuration of our own: the user's is not read, and neither is
# os.devnull, which some machine images replace with a regular file that collects output.
_EMPTY_CONFIG = Path(tempfile.mkdtemp(prefix="gpulint-git-")) / "config"
_EMPTY_CONFIG.write_text("")


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_IDENTITY, "GIT_CONFIG_GLOBAL": str(_EMPTY_CONFIG), "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return proc.stdout


def working_tree_files() -> list[str]:
    """Tracked and untracked-but-not-ignored files of this checkout, as they are on disk."""
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    return sorted(name for name in set(listed.split("\0")) if name and (ROOT / name).is_file())


def copy_as_repo(dest: Path) -> Path:
    for name in working_tree_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "gpulint working tree", cwd=dest)
    return dest
