"""`--fix` in the files of kustomizations: a finding on a build whose fix is made in the resource
or patch file that writes the value (fix/kustomize.py). Each round builds, in a private copy
with the edited files (render/kustomizecopy.py), EVERY kustomization of the scan that reads
the file (a base shared by several overlays changes them all) and scans the file itself
when it is an input of its own too; a fix is dropped as an internal error when its finding
stays or any new finding appears in any of them. A file both scanned on its own and read by
a kustomization is fixed once, here, for the findings of both.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from gpulint.inputs.discovery import Input
from gpulint.record import record, replace
from gpulint.results.findings import STATUS_SCANNED, FileReport, Finding
from gpulint.results.inputkind import InputKind
from gpulint.results.scanning import ScanResult
from gpulint.scan.reader import InputReader


@record(eq=True, repr=True)
class Target:
    """A file of the repository that fixes of kustomization findings edit."""

    __slots__ = ("display", "real", "repository", "builds", "plain", "reads")
    display: str
    real: str
    repository: Path
    builds: list[Input]               # the kustomizations that read it
    plain: list[Input]                # the file itself as an input of the scan
    reads: dict[str, set[Path]]       # by build: the files its copy holds

    def __init__(self, display: str, real: str, repository: Path, builds: list[Input] | None = None,
                 plain: list[Input] | None = None, reads: dict[str, set[Path]] | None = None) -> None:
        self.display = display
        self.real = real
        self.repository = repository
        self.builds = [] if builds is None else builds
        self.plain = [] if plain is None else plain
        self.reads = {} if reads is None else reads


def targets(result: ScanResult, inputs: list, reader: InputReader, wanted: Callable[[Finding], bool],
            notes: list[str]) -> list[Target]:
    """The files kustomization findings' fixes (those `wanted`) are in, with who reads them. A file
    outside the paths scanned is not edited (a note says so): kustomizations the scan did not see
    may read it, and no build of theirs would check the edit."""
    from gpulint.render.base import join_display
    from gpulint.render.boundary import inside, repository_root
    from gpulint.render.kustomizecopy import files_of
    from gpulint.render.tools import real_path

    files = sorted({f.fix.file for f in result.findings
                    if f.fix is not None and f.fix.file is not None and wanted(f)})
    builds = [item for item in inputs if item.kind is InputKind.KUSTOMIZATION and item.real is not None
              and reader.rendered(item).text is not None]
    if not files or not builds:
        return []
    scan_roots = reader.render_options.scan_roots
    read: list[tuple[Input, Path, set[Path]]] = []
    copies: dict[str, set[Path] | str] = {}   # by build: the files a private copy holds, or why it is not made
    for item in builds:
        root = real_path(Path(item.real))    # type: ignore[arg-type]
        repository = repository_root(root, scan_roots)
        named, every = files_of(root, repository)
        read.append((item, repository, named))
        copies[item.display] = every
    out = []
    for file in files:
        for item, repository, paths in read:
            root = real_path(Path(item.real))   # type: ignore[arg-type]
            real = next((p for p in paths if join_display(item.display, os.path.relpath(p, root)) == file), None)
            if real is None:
                continue
            if scan_roots and not any(inside(real, _directory(root)) for root in scan_roots):
                notes.append(f"{file}: not fixed: it is outside the paths scanned, and kustomizations the scan "
                             "did not build may read it (scan a directory that holds it)")
                break
            target = Target(file, str(real), repository)
            target.builds = [other for other, repo, others in read if real in others and repo == repository]
            large = next((copies[b.display] for b in target.builds if isinstance(copies[b.display], str)), None)
            if large is not None:
                notes.append(f"{file}: not fixed: the fix cannot be checked by building again: {large}")
                break
            target.reads = {b.display: copies[b.display] for b in target.builds}   # type: ignore[misc]
            target.plain = [i for i in inputs if i.kind is InputKind.MANIFEST and i.real is not None
                            and os.path.realpath(i.real) == str(real)]
            out.append(target)
            break
    return out


def _directory(path: str) -> Path:
    from gpulint.render.tools import real_path

    real = real_path(Path(path))
    return real if real.is_dir() else real.parent


class _Bytes(InputReader):
    def __init__(self, data: bytes) -> None:
        super().__init__()
        self._data = data

    def small(self, item: Any) -> bytes | None:
        return self._data


def fix_targets(run: Any, found: list[Target], result: ScanResult, reader: InputReader, rescan_config: Any,
                index: Any, contexts: Any, allows: Callable[[Finding], bool], opt_in: Callable[[Finding], bool],
                unreadable: Callable[[Finding], bool], read_source: Callable, counted: Callable,
                file_fix: Callable) -> None:
    """Fix each target in turn, each one built with the fixes of those before it; `read_source`,
    `counted` and `file_fix` are cli/fixcmd.py's (the source read, fix_file's counts, FileFix)."""
    from gpulint.load.regular import read_regular

    edited: dict[str, bytes] = {}
    made: list[Any] = []
    builds = _Builds(reader, rescan_config, index, contexts)
    for target in found:
        if os.path.islink(target.real) or not os.path.isfile(target.real):
            run.notes.append(f"{target.display}: not fixed: not a regular file")
            continue
        source = read_source(run, target.display, lambda target=target: read_regular(target.real))
        if source is None:
            continue
        builds.originals[target.real] = source.encode(source.text)
        own = {i.display for i in target.builds + target.plain}
        before = [f for report in result.files if report.file in own for f in report.findings]
        held = {_identity(_tagged(f)) for f in before if f.suppressed is not None}

        def rescan(text: str, target: Target = target, source: Any = source) -> FileReport:
            files = {**edited, target.real: source.encode(text)}
            return _mine(target, builds.scan(target, files))

        first = rescan(source.text) if edited else _mine(target, (STATUS_SCANNED, before))

        def allowed(finding: Finding, held: set = held) -> bool:
            return allows(finding) and _identity(finding) not in held

        outcome = counted(run, target.display, source.text, first, rescan, allowed, opt_in,
                          unreadable=unreadable, chains=False)
        if outcome is None or outcome.text == source.text:
            continue
        edited[target.real] = source.encode(outcome.text)
        made.append((target, file_fix(target.display, target.real, source.text, outcome.text, source,
                                      FileReport(target.display, STATUS_SCANNED, []))))
    if made:
        run.files += _reported(made, edited, builds)


def _reported(made: list, edited: dict[str, bytes], builds: "_Builds") -> list:
    """The fixed files, the first of each repository carrying the scan of every input they feed (each
    once, with all the files edited): one report standing for those inputs, as a chart's stands for
    its values file's."""
    by_repository: dict[Path, list] = {}
    for target, fixed in made:
        by_repository.setdefault(target.repository, []).append((target, fixed))
    for repository, group in by_repository.items():
        every = Target("", "", repository)
        for target, _fixed in group:
            every.builds += [i for i in target.builds if i.display not in {b.display for b in every.builds}]
            every.plain += [i for i in target.plain if i.display not in {p.display for p in every.plain}]
            every.reads.update(target.reads)
        status, findings = builds.scan(every, edited)
        first = group[0][1]
        first.report = FileReport(first.display, status, sorted(findings, key=Finding.sort_key))
        first.replaces = tuple(sorted(i.display for i in every.builds + every.plain))
    return [fixed for _target, fixed in made]


class _Builds:
    """Scans of the kustomizations reading a target, built in a private copy with some files edited;
    a build whose files are as they were at an earlier scan is not built again (the file fixed
    before this one ends with the scan the next one starts from)."""

    def __init__(self, reader: InputReader, config: Any, index: Any, contexts: Any) -> None:
        self.reader, self.config, self.index, self.contexts = reader, config, index, contexts
        self.originals: dict[str, bytes] = {}   # each target's bytes as read
        self._done: dict[tuple, FileReport] = {}

    def scan(self, target: Target, files: dict[str, bytes]) -> tuple[str, list[Finding]]:
        """Every kustomization reading the target, built with `files` (real path: bytes) edited, and
        the target itself as its own input: (a status other than scanned if one had it, their findings)."""
        from gpulint.render.kustomizecopy import private_copy
        from gpulint.render.tools import real_path
        from gpulint.scan.dispatch import scan_input

        changed = {path: data for path, data in files.items() if data != self.originals.get(path)}
        reports: dict[str, FileReport] = {}
        todo = []
        for item in target.builds:
            reads = target.reads[item.display]
            key = (item.display, frozenset((path, data) for path, data in changed.items() if Path(path) in reads))
            if key in self._done:
                reports[item.display] = self._done[key]
            else:
                todo.append((item, key))
        if todo:
            copied = {path for item, _key in todo for path in target.reads[item.display]}
            copied |= {Path(path) for path in files if path.startswith(str(target.repository) + os.sep)}
            fresh = InputReader(self.reader.render_options)   # nothing of the first builds is reused
            with private_copy(target.repository, copied, files) as root:
                for item, key in todo:
                    rel = os.path.relpath(real_path(Path(item.real)), target.repository)   # type: ignore[arg-type]
                    copy = replace(item, real=str(root / rel))
                    reports[item.display] = self._done[key] = scan_input(copy, self.config, self.index, fresh,
                                                                         self.contexts)
        for item in target.plain:
            data = files.get(os.path.realpath(item.real))   # type: ignore[arg-type]
            reports[item.display] = scan_input(item, self.config, self.index,
                                               _Bytes(data) if data is not None else InputReader(), self.contexts)
        ordered = [reports[item.display] for item in target.builds + target.plain]
        status = next((r.status for r in ordered if r.status != STATUS_SCANNED), STATUS_SCANNED)
        return status, [f for report in ordered for f in report.findings]


def _mine(target: Target, scanned: tuple[str, list[Finding]]) -> FileReport:
    """The findings as the target's fixes see them: fixes in other files are not its to apply."""
    status, found = scanned
    own = {i.display for i in target.plain}
    return FileReport(target.display, status, [
        _tagged(f if f.fix is None or f.fix.file == target.display or (f.fix.file is None and f.file in own)
                else replace(f, fix=None)) for f in found])


def _tagged(finding: Finding) -> Finding:
    """The finding with its object named with the input it was found in: the same Deployment built by two
    overlays is two objects, and a fix that mends one and breaks the other must not look like a no-op."""
    return replace(finding, obj=(finding.file, finding.obj))   # type: ignore[arg-type]


def _identity(finding: Finding) -> tuple:
    from gpulint.fix.rounds import identity

    return identity(finding)
