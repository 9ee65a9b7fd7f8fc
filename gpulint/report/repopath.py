"""Where a reported file lives relative to its repository, for SARIF and GitHub.

GitHub matches a result's path against files committed to the repository, so
both SARIF and workflow annotations need paths relative to the repository root,
whatever path the user typed on the command line. The root is the nearest
directory holding `.git` (a directory, or a file in worktrees and submodules),
found by walking up: no `git` subprocess. Outside any git work tree the current
directory is the root. Symlinks are resolved first, as GitHub asks (it cannot
show a result reported through a symlinked path).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from gpulint.record import record, set_field

STDIN = "-"
STDIN_NAME = "stdin"   # how stdin is named in reports that need a file name


@record(eq=True, frozen=True, repr=True)
class RepoPath:
    """A file as reports name it.

    `root` is the repository (or current directory) the file lies in, and
    `relative` its POSIX path from there; `root` is None for stdin (`relative`
    is "stdin") and for files outside both (`relative` is then absolute).
    """

    __slots__ = ("root", "relative")
    root: Path | None
    relative: str

    def __init__(self, root: Path | None, relative: str) -> None:
        set_field(self, "root", root)
        set_field(self, "relative", relative)

    @property
    def uri(self) -> str:
        """A URI reference: relative (percent-encoded) or an absolute file URI."""
        if self.root is None and self.relative.startswith("/"):
            return Path(self.relative).as_uri()
        # The name's bytes, so a name that is not UTF-8 is encoded losslessly.
        return quote(os.fsencode(self.relative), safe="/")


def git_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` that holds `.git`."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


class Locator:
    """Maps paths as given on the command line to repository-relative paths."""

    def __init__(self, cwd: Path | None = None) -> None:
        self.cwd = Path(os.path.realpath(cwd or os.getcwd()))
        self._roots: dict[Path, Path | None] = {}
        self._cache: dict[str, RepoPath] = {}
        self._real_dirs: dict[str, str] = {}
        self._dir_roots: dict[str, Path | None] = {}
        self._cwd_text = str(self.cwd)
        self._cwd_prefix = self._cwd_text.rstrip("/") + "/"

    @property
    def cwd_repository(self) -> Path | None:
        """The git work tree the command runs in, if any."""
        return self._root_of(self.cwd)

    def _root_of(self, directory: Path) -> Path | None:
        if directory not in self._roots:
            self._roots[directory] = git_root(directory)
        return self._roots[directory]

    def locate(self, path: str) -> RepoPath:
        found = self._cache.get(path)
        if found is None:
            found = self._cache[path] = self._locate(path)
        return found

    def _locate(self, path: str) -> RepoPath:
        if path == STDIN:
            return RepoPath(None, STDIN_NAME)
        real = self._realpath(os.path.join(self.cwd, path))
        if os.sep != "/":  # drives and backslashes: pathlib says it
            return self._locate_path(Path(real))
        # Strings, not pathlib: a report names thousands of files (real and the cwd are
        # absolute and normalised, so a prefix is a parent).
        directory = os.path.dirname(real)
        root = self._dir_roots.get(directory, False)
        if root is False:
            root = self._dir_roots[directory] = self._root_of(Path(directory))
        if root is None and (real == self._cwd_text or real.startswith(self._cwd_prefix)):
            root = self.cwd
        if root is None:
            return RepoPath(None, real)
        top = str(root)
        return RepoPath(root, "." if real == top else real[len(top):].lstrip("/"))

    def _locate_path(self, real: Path) -> RepoPath:
        root = self._root_of(real.parent)
        if root is None and _is_within(real, self.cwd):
            root = self.cwd
        if root is None:
            return RepoPath(None, real.as_posix())
        return RepoPath(root, real.relative_to(root).as_posix())

    def _realpath(self, path: str) -> str:
        """os.path.realpath, resolving each directory once: a report names thousands of
        files of a few directories. A file that is a symlink is resolved whole."""
        head, tail = os.path.split(path)
        if tail in ("", ".", "..") or os.path.islink(path):
            return os.path.realpath(path)
        real_head = self._real_dirs.get(head)
        if real_head is None:
            real_head = self._real_dirs[head] = os.path.realpath(head)
        return os.path.join(real_head, tail)

    def exists_in_repo(self, path: str) -> bool:
        """True for an existing regular file that lies in a repository (or cwd)."""
        if path == STDIN or not os.path.isfile(os.path.join(self.cwd, path)):
            return False
        return self.locate(path).root is not None


def _is_within(path: Path, directory: Path) -> bool:
    try:
        path.relative_to(directory)
    except ValueError:
        return False
    return True
