"""The repository a chart or kustomization belongs to: renderers may read inside it, never outside.

The repository is the nearest directory holding `.git` above the rendered
directory; outside a git work tree it is the scan root (the path given on the
command line) that holds it, else the rendered directory itself. Paths are
compared after resolving symlinks, so a link inside the repository that points
outside it is outside.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpulint.render.tools import real_path


def repository_root(target: Path, scan_roots: tuple[str, ...] = ()) -> Path:
    """The directory `target` (a chart or kustomization directory) may read files under."""
    real = real_path(target)
    for directory in (real, *real.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    holding = [root for root in (_directory_of(r) for r in scan_roots) if inside(real, root)]
    if holding:
        return min(holding, key=lambda root: len(root.parts))   # the widest scan root holding it
    return real


def _directory_of(path: str) -> Path:
    real = real_path(Path(path))
    return real if real.is_dir() else real.parent


def inside(path: Path, root: Path) -> bool:
    """Whether `path` (resolved) is `root` or below it."""
    real = real_path(path)
    return real == root or root in real.parents
