"""A private copy of what kustomizations read, with some files edited: `--fix` builds every
kustomization that reads a file it edits again there, before anything is written
(gpulint/cli/fixorigins.py).

What is copied is every regular file under the folders of the kustomizations a build reaches
(kustomize's load restrictor lets it read nothing else), inside the repository, each at its
place under the repository, with a `.git` marker at the top so that the copy is a repository
of its own: a build in it reads nothing outside it.
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


# A build checked by building it again is copied whole (every file under its kustomizations'
# folders, which is all kustomize's load restrictor lets it read); beyond these it is not copied.
COPY_FILES_MAX = 20_000
COPY_BYTES_MAX = 256 << 20


def files_of(target: Path, repository: Path) -> tuple[set[Path], set[Path] | str]:
    """What building the kustomization at `target` reads, inside `repository`: the files the pre-build
    audit found it names (resources, patches, generator inputs, configurations), and every file it
    may read, which a private copy holds: all regular files under the folders of the kustomizations
    it reaches (a generator or transformer configuration may name a file by a bare name), or why no
    copy is made (more than COPY_FILES_MAX files or COPY_BYTES_MAX bytes)."""
    found = kz.audit(real_path(target), repository)
    named: set[Path] = set(found.configs)
    for k in found.reached:
        named |= k.referenced_files()
    named = {real_path(p) for p in named if inside(p, repository)}
    every = set(named)
    size = 0
    for k in found.reached:
        for folder, dirs, names in os.walk(k.directory):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            for name in names:
                link = Path(folder) / name
                path = real_path(link)
                if {path, link} <= every or not inside(path, repository) or not path.is_file():
                    continue
                if path not in every:
                    size += path.stat().st_size
                every |= {path, link}   # a link is read where it is, with its target's bytes
                if len(every) > COPY_FILES_MAX or size > COPY_BYTES_MAX:
                    return named, (f"the folders it builds from hold more than {COPY_FILES_MAX} files or "
                                   f"{COPY_BYTES_MAX >> 20} MiB")
    return named, every


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
            data = edited.get(str(real_path(path)))
            if data is not None:
                out.write_bytes(data)
            elif path.is_file():   # (a link's target is inside the repository: files_of checked it)
                shutil.copyfile(path, out)
        yield root
