"""Paths on the command line -> the inputs to scan, in a deterministic order."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", "CVS"})
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CHART_FILE = "Chart.yaml"


@dataclass(frozen=True)
class Input:
    """One thing to scan. `display` is the path as the user wrote it (or '-')."""

    display: str
    kind: str                 # "manifest", "dockerfile", "stdin" or "chart"
    real: Path | None = None  # None for stdin


@dataclass
class Discovery:
    inputs: list[Input]
    missing: list[str]        # command-line paths that do not exist


def is_dockerfile(name: str) -> bool:
    lower = name.lower()
    return (lower in ("dockerfile", "containerfile") or lower.endswith(".dockerfile")
            or lower.startswith(("dockerfile.", "containerfile.")))


def _excluded(display: str, rel: str, name: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        stripped = pattern.rstrip("/")
        if (fnmatch.fnmatch(display, stripped) or fnmatch.fnmatch(rel, stripped)
                or fnmatch.fnmatch(name, stripped)):
            return True
    return False


def discover(paths: list[str], exclude: tuple[str, ...] = (),
             skip: Callable[[Path], bool] | None = None) -> Discovery:
    """Inputs under `paths`. `skip(path)` (the configuration's `exclude`) prunes
    files and directories, including files named on the command line."""
    inputs: list[Input] = []
    missing: list[str] = []
    seen: set[str] = set()

    def add(item: Input) -> None:
        key = str(item.real.resolve()) if item.real is not None else "-"
        if key not in seen:
            seen.add(key)
            inputs.append(item)

    for raw in paths:
        if raw == "-":
            add(Input("-", "stdin"))
            continue
        path = Path(raw)
        if skip is not None and path.exists() and skip(path):
            continue
        if path.is_dir():
            for item in _walk(raw, path, exclude, skip):
                add(item)
        elif path.exists():
            kind = "dockerfile" if is_dockerfile(path.name) else "manifest"
            add(Input(raw, kind, path))
        else:
            missing.append(raw)
    return Discovery(inputs, missing)


def _walk(display_root: str, root: Path, exclude: tuple[str, ...],
          skip: Callable[[Path], bool] | None = None) -> list[Input]:
    found: list[Input] = []
    visited: set[tuple[int, int]] = set()

    def visit(directory: Path, display: str, rel: str) -> None:
        try:
            st = directory.stat()
        except OSError:
            return
        ident = (st.st_dev, st.st_ino)
        if ident in visited:  # a symlink loop, or a second way into the same tree
            return
        visited.add(ident)
        if (directory / CHART_FILE).is_file():
            found.append(Input(_join(display, CHART_FILE), "chart", directory))
            return
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            found.append(Input(display, "unreadable-dir", directory))
            _ = error
            return
        for entry in entries:
            child_display = _join(display, entry.name)
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            if _excluded(child_display, child_rel, entry.name, exclude):
                continue
            if skip is not None and skip(Path(entry.path)):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if entry.name in VCS_DIRS:
                    continue
                visit(Path(entry.path), child_display, child_rel)
            elif entry.name.endswith(MANIFEST_SUFFIXES):
                found.append(Input(child_display, "manifest", Path(entry.path)))
            elif is_dockerfile(entry.name):
                found.append(Input(child_display, "dockerfile", Path(entry.path)))

    visit(root, display_root, "")
    return found


def _join(display: str, name: str) -> str:
    if display in ("", "."):
        return name
    return display.rstrip("/") + "/" + name
