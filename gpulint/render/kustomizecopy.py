"""A private copy of what kustomizations read, with some files edited: `--fix` builds every
kustomization that reads a file it edits again there, before anything is written
(gpulint/cli/fixorigins.py).

Only the files the pre-build audit found the builds read are copied (regular files inside
the repository, each at its place under the repository), with a `.git` marker at the top so
that the copy is a repository of its own: a build in it reads nothing outside it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator

from gpulint.render import kustomizefile as kz
from gpulint.render.boundary import inside
from gpulint.render.tools import real_path, scratch_dir


def files_of(target: Path, repository: Path) -> set[Path]:
    """Every file inside `repository` that building the kustomization at `target` reads."""
    found = kz.audit(real_path(target), repository)
    files: set[Path] = set(found.configs)
    for k in found.reached:
        files |= k.referenced_files()
    return {real_path(p) for p in files if inside(p, repository)}


@contextlib.contextmanager
def private_copy(repository: Path, files: set[Path], edited: dict[str, bytes]) -> Iterator[Path]:
    """A temporary copy of `files` (real paths under `repository`), the `edited` ones (by real
    path) with the given bytes; yields the copy's root, which stands for `repository`."""
    with scratch_dir() as scratch:
        root = Path(scratch).resolve() / "repository"
        (root / ".git").mkdir(parents=True)
        for path in sorted(files):
            rel = os.path.relpath(path, repository)
            if rel.startswith(".."):
                continue
            out = root / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            data = edited.get(str(path))
            if data is not None:
                out.write_bytes(data)
            elif path.is_file() and not path.is_symlink():
                shutil.copyfile(path, out)
        yield root
