"""Paths on the command line -> the inputs to scan, in a deterministic order."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", "CVS"})
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CHART_FILE = "Chart.yaml"


@dataclass(frozen=True)
class Input:
    """One thing to scan. `display` is the path as the user wrote it (or '-')."""

    display: str
    kind: str                 # "manifest", "dockerfile", "stdin", "chart" or "unreadable-dir"
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


def discover(paths: list[str], exclude: tuple[str, ...] = ()) -> Discovery:
    inputs: list[Input] = []
    missing: list[str] = []
    seen: set[str] = set()

    def add(item: Input) -> None:
        # os.path.realpath, unlike Path.resolve before Python 3.13, survives symlink loops.
        key = os.path.realpath(item.real) if item.real is not None else "-"
        if key not in seen:
            seen.add(key)
            inputs.append(item)

    for raw in paths:
        if raw == "-":
            add(Input("-", "stdin"))
            continue
        path = Path(raw)
        if path.is_dir():
            for item in _walk(raw, path, exclude):
                add(item)
        elif path.exists():
            kind = "dockerfile" if is_dockerfile(path.name) else "manifest"
            add(Input(raw, kind, path))
        else:
            missing.append(raw)
    return Discovery(inputs, missing)


def _walk(display_root: str, root: Path, exclude: tuple[str, ...]) -> list[Input]:
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
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            found.append(Input(display, "unreadable-dir", directory))
            return
        for entry in entries:
            child_display = _join(display, entry.name)
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            if _excluded(child_display, child_rel, entry.name, exclude):
                continue
            try:
                is_dir = entry.is_dir()
                # A FIFO, socket or device named x.yaml would block or never end:
                # only regular files are read, and symlinks that resolve to no file
                # at all (dangling, or a loop), which are reported as unreadable.
                is_file = entry.is_file() or (entry.is_symlink() and not is_dir and not _exists(entry.path))
            except OSError:
                is_dir, is_file = False, True  # cannot even stat it: reported when read
            if is_dir:
                if entry.name in VCS_DIRS:
                    continue
                visit(Path(entry.path), child_display, child_rel)
            elif not is_file:
                continue
            elif entry.name.endswith(MANIFEST_SUFFIXES):
                found.append(Input(child_display, "manifest", Path(entry.path)))
            elif is_dockerfile(entry.name):
                found.append(Input(child_display, "dockerfile", Path(entry.path)))

    visit(root, display_root, "")
    return found


def _exists(path: str) -> bool:
    try:
        os.stat(path)
    except OSError:
        return False
    return True


def _join(display: str, name: str) -> str:
    if display in ("", "."):
        return name
    return display.rstrip("/") + "/" + name
