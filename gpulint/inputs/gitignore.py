"""Which files under a directory git ignores, asked of git itself.

Only git knows which files are tracked, and a tracked file is part of the
repository whatever `.gitignore` says: a pull request must not be able to hide
a manifest from the scan by adding a pattern that matches it. So gpulint does
not read `.gitignore` files itself; it runs

    git ls-files -z --others --ignored --exclude-standard --directory

in the directory to walk, which lists the untracked files that `.gitignore`
files, `.git/info/exclude` and `core.excludesFile` exclude, a wholly ignored
directory as one `dir/` entry (git does not descend into it, nor does the walk).
No network is involved. The repository's file-system monitor hook (a command
its configuration may name) is turned off for the call.

Nothing is ignored when git is missing, fails (not a work tree, a repository
owned by another user) or takes too long: the walk then scans every file, which
is safe (more is scanned, nothing hidden). Nothing is ignored either under a
directory named on the command line that git ignores as a whole (a pattern
matches it, or every file in it is ignored; git lists it as `./`): the user
asked for it.
"""

from __future__ import annotations

import os
import subprocess

from gpulint.record import record, set_field

GIT_TIMEOUT = 30.0  # seconds; on a huge tree listing the ignored files stays far below this
_COMMAND = ("git", "-c", "core.fsmonitor=false", "ls-files", "-z", "--others", "--ignored",
            "--exclude-standard", "--directory")


@record(eq=True, frozen=True)
class Ignored:
    """The paths git ignores under one directory, relative to it ('/'-separated)."""

    __slots__ = ("files", "dirs")
    files: frozenset[str]
    dirs: frozenset[str]

    def __init__(self, files: frozenset[str], dirs: frozenset[str]) -> None:
        set_field(self, "files", files)
        set_field(self, "dirs", dirs)

    def __call__(self, rel: str) -> bool:
        """Whether the file or directory at `rel` is ignored (git sees a symlink as a file)."""
        return rel in self.files or rel in self.dirs


def ignored_under(directory: str) -> Ignored | None:
    """What git ignores under `directory`; None when nothing is (see the module docstring)."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    try:
        done = subprocess.run(_COMMAND, cwd=directory, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return None
    if done.returncode != 0:
        return None
    files: set[str] = set()
    dirs: set[str] = set()
    for raw in done.stdout.split(b"\0"):
        if not raw:
            continue
        name = os.fsdecode(raw)
        if name == "./":
            return None  # the directory itself is ignored: it was asked for explicitly
        if name.endswith("/"):
            dirs.add(name.rstrip("/"))
        else:
            files.add(name)
    if not files and not dirs:
        return None
    return Ignored(frozenset(files), frozenset(dirs))
