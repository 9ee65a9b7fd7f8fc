"""Whether the report file (`--output`) is one the scan reads: writing it would replace an input.

Files are compared by identity (device and inode), so a symlink, a hard link or
another spelling of the same path is caught. A rendered input reads every file
under its directory (Helm reads the whole chart), so any existing file there
counts; so do the files a kustomization build reads through its bases.
"""

from __future__ import annotations

import os
import stat
from typing import Iterable

from gpulint.inputs.discovery import Discovery
from gpulint.results.inputkind import InputKind



def input_named_by(output: str, found: Discovery, extra: Iterable[str] = ()) -> str | None:
    """The input (as displayed) or other file read by the scan (`extra`: configuration,
    baseline, values files) that `output` names; None when writing `output` replaces none."""
    try:
        st = os.stat(output)
    except OSError:
        return None  # nothing there yet (or unreachable: writing it fails on its own)
    if not stat.S_ISREG(st.st_mode):
        return None  # a terminal or pipe (`-o /dev/stdout`) is not replaced by writing it
    ident = (st.st_dev, st.st_ino)
    real = os.path.realpath(output)
    for item in found.inputs:
        if item.real is None or not item.kind.read:
            continue
        if item.kind.rendered:
            top = os.path.realpath(item.real)
            if real.startswith(top.rstrip(os.sep) + os.sep):
                return item.display
        elif _identity(item.real) == ident:
            return item.display
    for path in (*extra, *_read_by_builds(found)):
        if _identity(path) == ident:
            return path
    return None


def _read_by_builds(found: Discovery) -> list[str]:
    """The files the kustomizations to build read: theirs and their bases' (resources, patches, generators)."""
    roots = [item.real for item in found.inputs if item.kind is InputKind.KUSTOMIZATION and item.real is not None]
    if not roots:
        return []
    from pathlib import Path

    from gpulint.render.kustomizefile import chain

    files: list[str] = []
    for root in roots:
        for kustomization in chain(Path(root)):
            files.append(str(kustomization.file))
            files.extend(str(path) for path in sorted(kustomization.referenced_files()))
    return files


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
