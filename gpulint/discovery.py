"""Paths on the command line -> the inputs to scan, in a deterministic order.

A directory holding `Chart.yaml` is one input, a Helm chart, rendered by the
engine; nothing under it is scanned as a loose file (values.yaml is not
Kubernetes, templates are not YAML). A file given on the command line that
lives in a chart (a template, values.yaml: what a pre-commit hook passes)
scans that chart instead.

A directory holding a kustomization file is a kustomization. The roots among
the kustomizations found are built: those no other kustomization of the scan
builds on (a base used by an overlay is reached through the overlay; components
are never built alone). Files a built kustomization reads (resources, patches,
generator inputs, directly or through its bases) are not scanned again as loose
files; other files in those directories are.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Callable

from gpulint.record import record

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", "CVS"})
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CHART_FILE = "Chart.yaml"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@record(frozen=True)
class Input:
    """One thing to scan. `display` is the path as the user wrote it (or '-')."""

    display: str
    kind: str                 # "manifest", "dockerfile", "stdin", "chart", "kustomization" or "unreadable-dir"
    real: Path | None = None  # None for stdin


@record
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
    real_dirs: dict[str, str] = {}

    def add(item: Input, key: str | None = None) -> None:
        if key is None:
            key = _realpath(item.real, real_dirs) if item.real is not None else "-"
        if key not in seen:
            seen.add(key)
            inputs.append(item)

    walked: set[str] = set()          # keys of files found by walking (not given explicitly)
    for raw in paths:
        if raw == "-":
            add(Input("-", "stdin"))
            continue
        path = Path(raw)
        if skip is not None and path.exists() and skip(path):
            continue
        if path.is_dir():
            for item, link in _walk(raw, path, exclude, skip):
                key = _realpath(item.real, real_dirs, link) if item.real is not None else "-"
                if item.kind in ("manifest", "dockerfile"):
                    walked.add(key)
                add(item, key)
        elif path.exists():
            chart = _enclosing_chart(raw)
            if chart is not None:
                add(Input(chart[0], "chart", chart[1]))
                continue
            kind = "dockerfile" if is_dockerfile(path.name) else "manifest"
            add(Input(raw, kind, path))
        else:
            missing.append(raw)
    return Discovery(_plan_kustomizations(inputs, walked), missing)


def _realpath(path: Path, real_dirs: dict[str, str], link: bool | None = None) -> str:
    """os.path.realpath (which, unlike Path.resolve before Python 3.13, survives
    symlink loops), resolving each directory once: the real path of a file that
    is no symlink is its directory's real path joined with its name. `link`:
    whether `path` is a symlink, when the caller knows (a directory walk does)."""
    text = os.fspath(path)
    head, tail = os.path.split(text)
    if tail in ("", ".", "..") or (os.path.islink(text) if link is None else link):
        return os.path.realpath(text)
    real_head = real_dirs.get(head)
    if real_head is None:
        real_head = real_dirs[head] = os.path.realpath(head or ".")
    return os.path.join(real_head, tail)


def _plan_kustomizations(inputs: list[Input], walked: set[str]) -> list[Input]:
    """Keep the root kustomizations and drop walked files that a built one reads."""
    found = [item.real for item in inputs if item.kind == "kustomization" and item.real is not None]
    if not found:
        return inputs
    from gpulint.render.kustomization import plan

    chosen = plan(found)
    roots = {str(p) for p in chosen.roots}
    consumed = {str(p) for p in chosen.consumed}
    out = []
    for item in inputs:
        if item.kind == "kustomization" and item.real is not None:
            if os.path.realpath(item.real) in roots:
                out.append(item)
            continue
        if item.real is not None and item.kind in ("manifest", "dockerfile"):
            key = os.path.realpath(item.real)
            if key in walked and key in consumed:
                continue
        out.append(item)
    return out


def _enclosing_chart(raw: str) -> tuple[str, Path] | None:
    """(display, path) of the chart a file given on the command line belongs to, if any.

    The outermost chart wins when the file is in a subchart under `charts/`:
    that is the chart Helm renders.
    """
    path = Path(raw)
    chart: Path | None = None
    for parent in path.parents:
        if (parent / CHART_FILE).is_file():
            chart = parent
            break
    if chart is None:
        return None
    while chart.parent.name == "charts" and (chart.parent.parent / CHART_FILE).is_file():
        chart = chart.parent.parent
    display = str(chart) if str(chart) != "" else "."
    return display, chart


def _walk(display_root: str, root: Path, exclude: tuple[str, ...],
          skip: Callable[[Path], bool] | None = None) -> list[tuple[Input, bool | None]]:
    """The inputs under `root`, each with whether it is a symlink (None: not known)."""
    found: list[tuple[Input, bool | None]] = []
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
            found.append((Input(display, "chart", directory), None))
            return
        if any((directory / name).is_file() for name in KUSTOMIZATION_FILES):
            found.append((Input(display, "kustomization", directory), None))
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            found.append((Input(display, "unreadable-dir", directory), None))
            return
        for entry in entries:
            child_display = _join(display, entry.name)
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            if _excluded(child_display, child_rel, entry.name, exclude):
                continue
            if skip is not None and skip(Path(entry.path)):
                continue
            link: bool | None = None
            try:
                link = entry.is_symlink()
                is_dir = entry.is_dir()
                # A FIFO, socket or device named x.yaml would block or never end:
                # only regular files are read, and symlinks that resolve to no file
                # at all (dangling, or a loop), which are reported as unreadable.
                is_file = entry.is_file() or (link and not is_dir and not _exists(entry.path))
            except OSError:
                is_dir, is_file = False, True  # cannot even stat it: reported when read
            if is_dir:
                if entry.name in VCS_DIRS:
                    continue
                visit(Path(entry.path), child_display, child_rel)
            elif not is_file:
                continue
            elif entry.name.endswith(MANIFEST_SUFFIXES):
                found.append((Input(child_display, "manifest", Path(entry.path)), link))
            elif is_dockerfile(entry.name):
                found.append((Input(child_display, "dockerfile", Path(entry.path)), link))

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
