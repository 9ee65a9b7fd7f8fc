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

The scanned tree is untrusted, so a walk stays inside the directory it was
given (its root): a symlink found while walking whose target resolves outside
that root, or into a kernel filesystem (/proc, /sys, /dev), is not followed and
becomes a "not-followed" input (reported, never read). A path given on the
command line is trusted as given, symlink or not: the user chose it.
"""

from __future__ import annotations

import fnmatch
import os
from typing import TYPE_CHECKING, Callable, Sequence

from gpulint.inputs.helmscripts import is_script
from gpulint.load.filenames import is_dockerfile
from gpulint.record import record, replace, set_field
from gpulint.results.inputkind import InputKind

if TYPE_CHECKING:
    from pathlib import Path

    from gpulint.config.render import ChartValues, ConfiguredChart

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", "CVS"})
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CHART_FILE = "Chart.yaml"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# Kernel filesystems: reading them can block, never end or expose the host; a walk never enters them.
KERNEL_FS = ("/proc", "/sys", "/dev")


@record(frozen=True)
class Input:
    """One thing to scan. `display` is the path as the user wrote it (or '-')."""

    __slots__ = ("display", "kind", "real", "target", "values", "values_role")
    display: str
    kind: InputKind
    # The file or directory (None for stdin): a string, so that a plain scan never
    # imports pathlib (with urllib.parse and ipaddress, 2 ms of a one-file scan's 40).
    real: str | None
    # "not-followed": the symlink's own text (as readlink gives it; None for a kernel
    # filesystem directory that is no symlink). It is in the repository: showing it
    # reveals nothing of the host.
    target: str | None
    # A chart's render besides its defaults (ci/*-values.yaml, a configured `charts:`
    # entry): see with_chart_values. None for the defaults and for other kinds.
    values: ChartValues | None
    # "values": a values file a script in the tree passes to helm (helmscripts.py), checked by the
    # shape of its containers whatever its name (and through the render, for a chart of the tree);
    # "" otherwise.
    values_role: str

    def __init__(self, display: str, kind: InputKind, real: str | None = None, target: str | None = None,
                 values: ChartValues | None = None, values_role: str = "") -> None:
        set_field(self, "display", display)
        # (a kind may be given by name)
        set_field(self, "kind", kind if isinstance(kind, InputKind) else InputKind(kind))
        set_field(self, "real", real)
        set_field(self, "target", target)
        set_field(self, "values", values)
        set_field(self, "values_role", values_role)


@record
class Discovery:
    """The inputs found under the command-line paths."""
    __slots__ = ("inputs", "missing", "skipped")
    inputs: list[Input]
    missing: list[str]        # command-line paths that do not exist
    # (path, reason) of what was left out on purpose (excludes, special files), for --verbose
    skipped: list[tuple[str, str]]

    def __init__(self, inputs: list[Input], missing: list[str],
                 skipped: list[tuple[str, str]] | None = None) -> None:
        self.inputs = inputs
        self.missing = missing
        self.skipped = [] if skipped is None else skipped


EXCLUDED = "matches --exclude"
EXCLUDED_BY_CONFIG = "matches the configuration's exclude"
NOT_A_FILE = "not a regular file (a pipe, socket or device)"


def _excluded(display: str, rel: str, name: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        stripped = pattern.rstrip("/")
        if (fnmatch.fnmatch(display, stripped) or fnmatch.fnmatch(rel, stripped)
                or fnmatch.fnmatch(name, stripped)):
            return True
    return False


def _stdin_excluded(named: str, exclude: tuple[str, ...], skip: Callable[[str], bool] | None) -> str | None:
    """Why a walk would have left out `named` (--stdin-filename): the file or a folder above it
    matches an exclude; None when it would not."""
    path = named
    while path and path not in (".", os.sep):
        if _excluded(path, path, os.path.basename(path), exclude):
            return EXCLUDED
        if skip is not None and skip(path):
            return EXCLUDED_BY_CONFIG
        path = os.path.dirname(path)
    return None


def discover(paths: list[str], exclude: tuple[str, ...] = (),
             skip: Callable[[str], bool] | None = None, respect_ignore: bool = True,
             stdin_name: str | None = None) -> Discovery:
    """Inputs under `paths`. `skip(path)` (the configuration's `exclude`) prunes
    files and directories, including files named on the command line.
    `respect_ignore`: a walk passes over what git ignores (gitignore.py), each such
    file or directory becoming an "ignored" input; paths given are always scanned.
    `stdin_name` (--stdin-filename) is the name `-` is reported under and excluded by."""
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
    skipped: list[tuple[str, str]] = []
    scripts: list[str] = []           # shell scripts and makefiles met while walking (helmscripts.py)
    roots: list[str] = []
    for raw in paths:
        if raw == "-":
            named = _normal(stdin_name) if stdin_name else None
            reason = _stdin_excluded(named, exclude, skip) if named is not None else None
            if reason is not None:
                skipped.append((f"- ({named})", reason))
                continue
            add(Input(stdin_name or "-", InputKind.STDIN))
            continue
        path = _normal(raw)
        if skip is not None and os.path.exists(path) and skip(path):
            skipped.append((raw, EXCLUDED_BY_CONFIG))
            continue
        if os.path.isdir(path):
            roots.append(path)
            for item, link in _walk(raw, path, exclude, skip, respect_ignore, skipped, scripts):
                if not item.kind.read:  # each link is reported, wherever it points
                    add(item, f"{item.kind}:{_realpath(item.real or '', real_dirs, False)}")
                    continue
                key = _realpath(item.real, real_dirs, link) if item.real is not None else "-"
                if item.kind.file:
                    walked.add(key)
                add(item, key)
        elif os.path.exists(path):
            chart = _enclosing_chart(path)
            if chart is not None:
                add(Input(chart, InputKind.CHART, chart))
                continue
            kind = InputKind.DOCKERFILE if is_dockerfile(os.path.basename(path)) else InputKind.MANIFEST
            add(Input(raw, kind, path))
        else:
            missing.append(raw)
    if scripts:
        inputs = _mark_remote_values(inputs, scripts, roots)
    return Discovery(_plan_kustomizations(inputs, walked), missing, skipped)


def _mark_remote_values(inputs: list[Input], scripts: list[str], roots: list[str]) -> list[Input]:
    """The inputs, with the values files scripts pass to helm marked "values", and each chart of
    the tree a script renders with values files of the tree followed by that render."""
    from gpulint.config.render import ChartValues
    from gpulint.inputs.helmscripts import script_values

    yaml = [item.real for item in inputs
            if item.kind is InputKind.MANIFEST and item.real is not None and item.real.endswith((".yaml", ".yml"))]
    remote, local = script_values(sorted(scripts), yaml, roots)
    shown = {item.real: item.display for item in inputs if item.real is not None}
    renders: dict[str, list[ChartValues]] = {}
    rendered: set[str] = set()
    for script, folder, files in local:
        names = tuple(shown.get(path, path) for path in files)
        values = ChartValues.of(files, names, label=f"{', '.join(names)} (as {os.path.basename(script)} passes them)")
        if values not in renders.setdefault(os.path.normpath(folder), []):
            renders[os.path.normpath(folder)].append(values)
        rendered.update(files)
    out: list[Input] = []
    for item in inputs:
        if item.real in rendered or item.real in remote:
            item = replace(item, values_role="values")
        out.append(item)
        if item.kind is InputKind.CHART and item.values is None and item.real is not None:
            out.extend(Input(item.display, InputKind.CHART, item.real, values=values)
                       for values in renders.get(os.path.normpath(item.real), ()))
    return out


def _normal(raw: str) -> str:
    """`raw` as str(Path(raw)) writes it: no empty or `.` components, no trailing slash."""
    if os.sep != "/":  # Windows paths: drives, backslashes
        from pathlib import Path

        return str(Path(raw))
    if not raw:
        return "."
    lead = "/" if raw.startswith("/") else ""
    if raw.startswith("//") and not raw.startswith("///"):
        lead = "//"  # POSIX leaves the meaning of exactly two leading slashes open: kept
    parts = [part for part in raw.split("/") if part and part != "."]
    return (lead + "/".join(parts)) or "."


def _realpath(path: str | Path, real_dirs: dict[str, str], link: bool | None = None) -> str:
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
    found = [item.real for item in inputs if item.kind is InputKind.KUSTOMIZATION and item.real is not None]
    if not found:
        return inputs
    from pathlib import Path

    from gpulint.render.kustomizefile import plan

    chosen = plan([Path(real) for real in found])
    roots = {str(p) for p in chosen.roots}
    consumed = {str(p) for p in chosen.consumed}
    out = []
    for item in inputs:
        if item.kind is InputKind.KUSTOMIZATION and item.real is not None:
            if os.path.realpath(item.real) in roots:
                out.append(item)
            continue
        if item.real is not None and item.kind.file:
            key = os.path.realpath(item.real)
            if key in walked and key in consumed:
                continue
        out.append(item)
    return out


def _enclosing_chart(path: str) -> str | None:
    """The chart a file given on the command line belongs to, if any (its path, shown as is).

    The outermost chart wins when the file is in a subchart under `charts/`:
    that is the chart Helm renders. (`path` is _normal, so its directories
    are what Path.parents gives.)
    """
    chart = None
    directory = path
    while directory not in ("/", "."):
        directory = _parent(directory)
        if os.path.isfile(os.path.join(directory, CHART_FILE)):
            chart = directory
            break
    if chart is None:
        return None
    while (_name(_parent(chart)) == "charts"
           and os.path.isfile(os.path.join(_parent(_parent(chart)), CHART_FILE))):
        chart = _parent(_parent(chart))
    return chart


def _parent(path: str) -> str:
    """Path(path).parent of a _normal path."""
    cut = path.rfind("/")
    return path[:cut] if cut > 0 else ("/" if cut == 0 else ".")


def _name(path: str) -> str:
    """Path(path).name of a _normal path."""
    return "" if path in ("/", ".") else path[path.rfind("/") + 1:]


def _walk(display_root: str, root: str, exclude: tuple[str, ...], skip: Callable[[str], bool] | None = None,
          respect_ignore: bool = True, skipped: list[tuple[str, str]] | None = None,
          scripts: list[str] | None = None) -> list[tuple[Input, bool | None]]:
    """The inputs under `root`, each with whether it is a symlink (None: not known).
    What an exclude or its type leaves out is added to `skipped` with the reason; shell
    scripts and makefiles (regular files, not links) to `scripts`."""
    if skipped is None:
        skipped = []
    found: list[tuple[Input, bool | None]] = []
    visited: set[tuple[int, int]] = set()
    root_real = os.path.realpath(root)
    if _in_kernel_fs(root_real):
        return [(Input(display_root, InputKind.NOT_FOLLOWED, root, None), None)]
    ignored = None
    if respect_ignore:
        from gpulint.inputs.gitignore import ignored_under

        ignored = ignored_under(root)

    def visit(directory: str, display: str, rel: str) -> None:
        try:
            st = os.stat(directory)
        except OSError:
            return
        ident = (st.st_dev, st.st_ino)
        if ident in visited:  # a symlink loop, or a second way into the same tree
            return
        visited.add(ident)
        if os.path.isfile(os.path.join(directory, CHART_FILE)):
            found.append((Input(display, InputKind.CHART, directory), None))
            return
        if any(os.path.isfile(os.path.join(directory, name)) for name in KUSTOMIZATION_FILES):
            found.append((Input(display, InputKind.KUSTOMIZATION, directory), None))
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            found.append((Input(display, InputKind.UNREADABLE_DIR, directory), None))
            return
        for entry in entries:
            child_display = _join(display, entry.name)
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            if _excluded(child_display, child_rel, entry.name, exclude):
                skipped.append((child_display, EXCLUDED))
                continue
            if skip is not None and skip(entry.path):
                skipped.append((child_display, EXCLUDED_BY_CONFIG))
                continue
            if ignored is not None and entry.name not in VCS_DIRS and ignored(child_rel):
                if _scannable_name(entry.name) or _is_dir(entry):
                    found.append((Input(child_display, InputKind.IGNORED, entry.path), None))
                continue
            link: bool | None = None
            try:
                link = entry.is_symlink()
                if link or (entry.name in KERNEL_FS_NAMES and _in_kernel_fs(os.path.realpath(entry.path))):
                    escape = _escape(entry, root_real)
                    if escape is not None:
                        if escape.kind == "dir" or _scannable_name(entry.name):
                            found.append((Input(child_display, InputKind.NOT_FOLLOWED, entry.path, escape.target), True))
                        continue
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
                visit(entry.path, child_display, child_rel)
            elif not is_file:
                if entry.name.endswith(MANIFEST_SUFFIXES) or is_dockerfile(entry.name):
                    skipped.append((child_display, NOT_A_FILE))
                continue
            elif entry.name.endswith(MANIFEST_SUFFIXES):
                found.append((Input(child_display, InputKind.MANIFEST, entry.path), link))
            elif is_dockerfile(entry.name):
                found.append((Input(child_display, InputKind.DOCKERFILE, entry.path), link))
            elif scripts is not None and not link and is_script(entry.name):
                scripts.append(entry.path)

    visit(root, display_root, "")
    return found


KERNEL_FS_NAMES = frozenset(os.path.basename(path) for path in KERNEL_FS)


@record(frozen=True)
class _Escape:
    """A symlink that leads outside the scanned root."""
    __slots__ = ("kind", "target")
    kind: str                 # "dir" or "file" (a dangling link counts as a file)
    target: str | None        # the link's text, None for a directory that is no symlink

    def __init__(self, kind: str, target: str | None) -> None:
        set_field(self, "kind", kind)
        set_field(self, "target", target)


def _escape(entry: os.DirEntry, root_real: str) -> _Escape | None:
    """How `entry` (a symlink, or a directory named like a kernel filesystem) leaves the
    walk's root, or None when it stays inside. Only its path is resolved: nothing it
    points to is opened."""
    real = os.path.realpath(entry.path)
    if _inside(real, root_real) and not _in_kernel_fs(real):
        return None
    target = None
    if entry.is_symlink():
        try:
            target = os.readlink(entry.path)
        except OSError:
            target = real
    return _Escape("dir" if os.path.isdir(real) else "file", target)


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _in_kernel_fs(real: str) -> bool:
    return any(real == top or real.startswith(top + os.sep) for top in KERNEL_FS)


def _scannable_name(name: str) -> bool:
    """Whether a file of this name would be scanned when found by walking."""
    return name.endswith(MANIFEST_SUFFIXES) or is_dockerfile(name)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


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


def with_chart_values(inputs: list[Input], configured: "Sequence[ConfiguredChart]" = ()) -> list[Input]:
    """`inputs` with each chart followed by its other renders: one per chart-testing
    `ci/*-values.yaml` file and per configured `charts:` entry (render/chartvalues.py)."""
    if not any(item.kind is InputKind.CHART for item in inputs):
        return inputs
    from gpulint.render.chartvalues import chart_values

    out: list[Input] = []
    for item in inputs:
        out.append(item)
        if item.kind is InputKind.CHART and item.real is not None and item.values is None:
            out.extend(Input(item.display, InputKind.CHART, item.real, values=values)
                       for values in chart_values(item.real, item.display, configured))
    return out
