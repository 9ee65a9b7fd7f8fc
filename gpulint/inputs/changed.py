"""`gpulint scan --changed FILE...`: files changed in a commit -> what to scan for them.

A pre-commit hook passes the files a commit changes, and a change can matter
without being a manifest: a chart's `_helpers.tpl` or `values.yaml`, or a
kustomize patch, which is "not Kubernetes" on its own. So each changed file is
scanned through what reads it:

- a file of a Helm chart scans that chart (as any file named on the command
  line does, see discovery.py);
- a file that a kustomization of the repository reads (a resource, patch,
  component, generator input, or the kustomization file itself, directly or
  through the bases an overlay builds on) builds the root kustomizations that
  read it, and of those builds only the findings on the changed files are
  reported, with any build failure: an unrelated finding elsewhere in the
  overlay is not this commit's business, a build the change broke is. A
  changed file no finding can point at (a generator's input: the ConfigMap it
  makes has no lines of its own) keeps every finding of the builds reading it;
- any other YAML, JSON or Dockerfile is scanned on its own, and a file of
  another kind (a README, a script no kustomization reads) is left out.

The repository is the nearest directory holding `.git` above the file (else
the current directory); it is walked as a directory scan walks (excludes, git's
ignored files and symlinks out of it left out) to find its kustomizations.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from gpulint.inputs.discovery import (
    EXCLUDED_BY_CONFIG,
    Discovery,
    Input,
    _enclosing_chart,
    _normal,
    _scannable_name,
    _walk,
    discover,
)
from gpulint.record import record
from gpulint.results.inputkind import InputKind

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult

NOT_READ = "changed, but read by no chart or kustomization, and not a manifest or Dockerfile"


@record(eq=True, repr=True)
class Changed:
    """What to scan for the changed files, and which findings of the builds to keep."""

    __slots__ = ("discovery", "focus")
    discovery: Discovery
    # Display of a kustomization built for changed files -> the real paths of those files whose
    # findings are kept; None: all of its findings (a changed file no finding can point at).
    focus: dict[str, set[str] | None]

    def __init__(self, discovery: Discovery, focus: dict[str, set[str] | None] | None = None) -> None:
        self.discovery = discovery
        self.focus = {} if focus is None else focus


def discover_changed(paths: list[str], exclude: tuple[str, ...] = (),
                     skip: Callable[[str], bool] | None = None, respect_ignore: bool = True,
                     stdin_name: str | None = None) -> Changed:
    """Inputs for changed `paths` (directories and `-` are scanned as without --changed)."""
    passed: list[str] = []        # given to discover() as they are: directories, stdin, chart files
    loose: list[str] = []         # manifests and Dockerfiles, unless a kustomization reads them
    others: list[str] = []        # scanned only through a kustomization that reads them
    skipped: list[tuple[str, str]] = []
    for raw in paths:
        path = _normal(raw) if raw != "-" else raw
        if raw == "-" or not os.path.isfile(path) or _enclosing_chart(path) is not None:
            passed.append(raw)
        elif skip is not None and skip(path):
            skipped.append((raw, EXCLUDED_BY_CONFIG))
        elif _scannable_name(os.path.basename(path)):
            loose.append(raw)
        else:
            others.append(raw)

    readers = _kustomization_readers([*loose, *others], exclude, skip, respect_ignore)
    focus: dict[str, set[str] | None] = {}
    kustomizations: list[Input] = []
    for raw in [*loose, *others]:
        real = os.path.realpath(raw)
        roots = readers.get(real, [])
        for root, pointed in roots:
            if root.display not in focus:
                focus[root.display] = set()
                kustomizations.append(root)
            # A generator input (a ConfigMap's .env) shows in the build's findings without a line
            # of its own: every finding of that build is the change's.
            changed = focus[root.display]
            if changed is not None:
                changed.add(real)
            if not pointed:
                focus[root.display] = None
        if not roots:
            if raw in loose:
                passed.append(raw)
            else:
                skipped.append((raw, NOT_READ))

    found = discover(passed, exclude, skip=skip, respect_ignore=respect_ignore, stdin_name=stdin_name)
    present = {os.path.realpath(item.real) for item in found.inputs if item.real is not None}
    for item in kustomizations:
        if os.path.realpath(item.real or "") in present:   # a directory given scans it whole
            del focus[item.display]
        else:
            found.inputs.append(item)
    found.skipped[:0] = skipped
    return Changed(found, focus)


def _kustomization_readers(files: list[str], exclude: tuple[str, ...], skip: Callable[[str], bool] | None,
                           respect_ignore: bool) -> dict[str, list[tuple[Input, bool]]]:
    """Real path of each of `files` that a root kustomization of its repository reads -> those roots,
    each with whether a finding of its build can point at the file (see files_read)."""
    if not files:
        return {}
    from pathlib import Path

    from gpulint.render.kustomizefile import files_read, plan

    out: dict[str, list[tuple[Input, bool]]] = {}
    repositories: dict[str, list[str]] = {}
    for raw in files:
        real = os.path.realpath(raw)
        repositories.setdefault(_repository(real), []).append(real)
    for repository, reals in sorted(repositories.items()):
        display = _display(repository)
        found = [item for item, _ in _walk(display, repository, exclude, skip, respect_ignore)
                 if item.kind is InputKind.KUSTOMIZATION and item.real is not None]
        if not found:
            continue
        by_real = {os.path.realpath(item.real or ""): item for item in found}
        wanted = set(reals)
        for root in plan([Path(item.real or "") for item in found]).roots:
            item = by_real.get(str(root))
            if item is None:
                continue
            read, pointed = files_read(root)
            for real in sorted(wanted & {str(p) for p in read}):
                out.setdefault(real, []).append((item, Path(real) in pointed))
    return out


def _repository(real: str) -> str:
    """The nearest directory holding `.git` above the file, else the current directory."""
    directory = os.path.dirname(real)
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.realpath(os.getcwd())
        directory = parent


def _display(directory: str) -> str:
    """`directory` as a path relative to the current directory when it is below it."""
    here = os.path.realpath(os.getcwd())
    if directory == here:
        return "."
    if directory.startswith(here.rstrip(os.sep) + os.sep):
        return os.path.relpath(directory, here)
    return directory


def keep_changed(result: ScanResult, focus: dict[str, set[str] | None], render_rules: frozenset[str]) -> None:
    """Of the kustomizations built for changed files, keep the findings on those files (the
    rendered position, or a file it maps back to) and the build failures (findings of
    `render_rules`, the rules that report render problems)."""
    if not focus:
        return
    for report in result.files:
        if report.file not in focus:
            continue
        changed = focus[report.file]
        if changed is None:
            continue
        report.findings = [
            finding for finding in report.findings
            if finding.rule_id in render_rules or os.path.realpath(finding.file) in changed
            or any(os.path.realpath(place.file) in changed for place in finding.mapped)]
