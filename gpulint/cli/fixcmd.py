"""`gpulint scan --fix / --diff / --unsafe-fixes`: which fixes apply, fixing each file in
rounds (gpulint/fix/rounds.py) with the engine scanning the edited text again, and
what is written: files in place (atomically, only those that changed), the fixed
text of stdin on stdout, or a unified diff.
"""

from __future__ import annotations

from typing import Any, Callable

from gpulint.api import Applicability
from gpulint.fix.files import NotFixable, Source, write_atomic
from gpulint.fix.rounds import fix_file, identity
from gpulint.inputs.discovery import Input
from gpulint.record import record, replace
from gpulint.results.findings import STATUS_SCANNED, FileReport, Finding
from gpulint.results.inputkind import InputKind
from gpulint.results.scanning import ScanConfig, ScanResult
from gpulint.scan.reader import InputReader


@record(eq=True, repr=True)
class Policy:
    """Which fixes may be applied: safe ones, unsafe ones too, and of which rules."""

    __slots__ = ("unsafe", "fixable")
    unsafe: bool
    fixable: frozenset[str]          # rule ids

    def __init__(self, unsafe: bool, fixable: frozenset[str]) -> None:
        self.unsafe = unsafe
        self.fixable = fixable

    def allows(self, finding: Finding) -> bool:
        fix = finding.fix
        return (fix is not None and finding.rule_id in self.fixable
                and (self.unsafe or fix.applicability == Applicability.SAFE.value))

    def held_back(self, finding: Finding) -> bool:
        """An unsafe fix `--unsafe-fixes` would apply."""
        fix = finding.fix
        return (not self.unsafe and fix is not None and finding.rule_id in self.fixable
                and fix.applicability == Applicability.UNSAFE.value)


@record(eq=True, repr=True)
class FileFix:
    __slots__ = ("display", "path", "before", "after", "source", "report", "replaces")
    display: str
    path: str | None                  # None: stdin
    before: str
    after: str
    source: Source
    report: FileReport                # the scan of `after`
    replaces: tuple[str, ...]         # the reports it stands for (a chart's, for its values file)

    def __init__(self, display: str, path: str | None, before: str, after: str, source: Source,
                 report: FileReport, replaces: tuple[str, ...] = ()) -> None:
        self.display = display
        self.path = path
        self.before = before
        self.after = after
        self.source = source
        self.report = report
        self.replaces = replaces


@record(eq=True, repr=True)
class FixRun:
    __slots__ = ("files", "fixed", "errors", "notes")
    files: list[FileFix]              # files whose text the fixes changed
    fixed: int
    errors: list[str]
    notes: list[str]                  # files not edited, and why

    def __init__(self, files: list[FileFix] | None = None, fixed: int = 0, errors: list[str] | None = None,
                 notes: list[str] | None = None) -> None:
        self.files = [] if files is None else files
        self.fixed = fixed
        self.errors = [] if errors is None else errors
        self.notes = [] if notes is None else notes


def policy(rules: dict, project: Any, unsafe: bool) -> Policy:
    from gpulint.config.selection import select_rules

    fixable = {rule.id for rule in select_rules(dict(rules), project.fixable or ["ALL"])}
    if project.unfixable:
        fixable -= {rule.id for rule in select_rules(dict(rules), project.unfixable)}
    return Policy(unsafe, frozenset(fixable))


class _TextReader(InputReader):
    """Hands the scan the edited bytes of the one input being fixed."""

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self._data = data

    def small(self, item: Any) -> bytes | None:
        return self._data


def fix_inputs(result: ScanResult, inputs: list, config: ScanConfig, reader: InputReader,
               rules_policy: Policy) -> FixRun:
    """Fix every input whose findings have fixes the policy allows (nothing is written here)."""
    from gpulint.scan.dispatch import scan_input
    from gpulint.scan.indexing import build_index
    from gpulint.scan.violations import ScanContext

    run = FixRun()
    by_display = {item.display: item for item in inputs if item.kind in (InputKind.MANIFEST, InputKind.STDIN)}
    # The files of a kustomization that was not built are scanned as they are: fixed as such too.
    for item in inputs:
        if item.kind is InputKind.KUSTOMIZATION:
            for display, path, given in reader.rendered(item).plain:
                if given is None and display not in by_display:
                    by_display[display] = Input(display, InputKind.MANIFEST, str(path))
    origins: list = []
    if any(item.kind is InputKind.KUSTOMIZATION for item in inputs):   # fixes in kustomizations' files
        from gpulint.cli.fixorigins import targets

        origins = targets(result, inputs, reader, lambda f: f.suppressed is None and rules_policy.allows(f),
                          run.notes)
    in_origins = {i.display for t in origins for i in t.plain} | {t.display for t in origins}
    todo = []
    for report in result.files:
        files = {f.file for f in report.findings if f.suppressed is None and rules_policy.allows(f)
                 and f.fix is not None and f.fix.file is None}
        for file in sorted((files & set(by_display)) - in_origins):
            todo.append((FileReport(file, STATUS_SCANNED, [f for f in report.findings if f.file == file]),
                         by_display[file]))
    in_values = [values for values in _values_files(result, inputs, rules_policy, reader.render_options)
                 if values[0] not in in_origins]
    if not todo and not in_values and not origins:
        return run
    # The scan again, as it was, for each round: without the baseline, whose counts a
    # first pass has used up (what it suppressed stays unfixed), and without hooks.
    rescan_config = replace(
        config, hooks=[], suppressors=[s for s in config.suppressors if not hasattr(s, "decide")])
    index = build_index(inputs, reader, config.limits)

    def opt_in(finding: Finding) -> bool:
        """A finding of a rule the user turned on (off by default): a fix may meet it, bug-free."""
        rule = config.all_rules.get(finding.rule_id)
        return rule is not None and not rule.enabled_by_default

    def unreadable(finding: Finding) -> bool:
        """A finding saying the text is not readable as manifests (a rule's input hook: GPU000)."""
        rule = config.all_rules.get(finding.rule_id)
        return rule is not None and rule.check_input is not None

    contexts = ScanContext(rescan_config, index, [item for _report, item in todo] +
                           [chart for _display, _real, charts in in_values for chart in charts] +
                           [item for target in origins for item in target.builds + target.plain])
    for report, item in todo:
        held = {identity(f) for f in report.findings if f.suppressed is not None}
        source = _read_source(run, item.display, lambda: _read_input(reader, item))
        if source is None:
            continue
        mine = report

        def rescan(text: str, item: Any = item, source: Source = source) -> FileReport:
            return scan_input(item, rescan_config, index, _TextReader(source.encode(text)), contexts)

        def allowed(finding: Finding, held: set = held) -> bool:
            return rules_policy.allows(finding) and identity(finding) not in held

        outcome = _fix_counted(run, item.display, source.text, mine, rescan, allowed, opt_in, unreadable=unreadable)
        if outcome is None:
            continue
        if outcome.text != source.text:
            run.files.append(FileFix(item.display, item.real if item.kind is InputKind.MANIFEST else None,
                                     source.text, outcome.text, source, outcome.report))
    for display, real, charts in in_values:
        _fix_values(run, display, real, charts, result, reader, rescan_config, index, contexts,
                    rules_policy, opt_in, unreadable)
    if origins:
        from gpulint.cli.fixorigins import fix_targets

        fix_targets(run, origins, result, reader, rescan_config, index, contexts, rules_policy.allows, opt_in,
                    unreadable, _read_source, _fix_counted, FileFix)
    return run


def _values_files(result: ScanResult, inputs: list, rules_policy: Policy, options: Any) -> list[tuple[str, str, list]]:
    """(display, real path, the chart renders that read it) of each values file a fix the policy
    allows edits (render/mapping.py found the value written there): a chart's values.yaml, or a
    values file given for the renders (fix/valuesfiles.py)."""
    import os

    from gpulint.fix.valuesfiles import given_values
    from gpulint.render.base import join_display

    charts: dict[str, list] = {}
    for item in inputs:
        if item.kind is InputKind.CHART and item.real is not None:
            charts.setdefault(item.real, []).append(item)
    wanted = sorted({f.fix.file for f in result.findings if f.fix is not None and f.fix.file is not None
                     and f.suppressed is None and rules_policy.allows(f)})
    out = []
    given = given_values([item for item in inputs if item.kind is InputKind.CHART and item.real is not None], options)
    for file in wanted:
        if file in given:
            out.append((file, *given[file]))
            continue
        for real, renders in sorted(charts.items()):
            display = renders[0].display
            prefix = join_display(display, "values.yaml")[:-len("values.yaml")]   # the chart's path and "/"
            rel = file[len(prefix):] if file.startswith(prefix) else None
            if rel and ".." not in rel.split("/"):
                out.append((file, os.path.join(real, *rel.split("/")), renders))
                break
    return out


def _fix_values(run: FixRun, display: str, real: str, charts: list, result: ScanResult, reader: InputReader,
                rescan_config: ScanConfig, index: Any, contexts: Any, rules_policy: Policy,
                opt_in: Callable[[Finding], bool], unreadable: Callable[[Finding], bool]) -> None:
    """Fix a chart's values file: each round renders the chart (all its renders) again with the
    edited values, in a private copy, before anything is written."""
    import os

    from gpulint.fix.valuesfiles import shape_problem
    from gpulint.load.regular import read_regular
    from gpulint.render.overlay import editing
    from gpulint.scan.dispatch import scan_input

    if os.path.islink(real) or not os.path.isfile(real):
        run.notes.append(f"{display}: not fixed: not a regular file in the chart")
        return
    names = {chart.display for chart in charts}
    findings = [f for report in result.files if report.file in names or
                any(f.file == display for f in report.findings) for f in report.findings]
    held = {identity(f) for f in findings if f.suppressed is not None}
    source = _read_source(run, display, lambda: read_regular(real))
    if source is None:
        return

    readers = {source.text: reader}   # each text's renders, for the check of the fixes' shape

    def rescan(text: str) -> FileReport:
        fresh = InputReader(reader.render_options)   # nothing of the first renders is reused
        readers[text] = fresh
        status, found = STATUS_SCANNED, []
        with editing({real: source.encode(text)}):
            for chart in charts:
                report = scan_input(chart, rescan_config, index, fresh, contexts)
                if report.status != STATUS_SCANNED:
                    status = report.status
                found += report.findings
        return _of_file(display, status, found)

    def allowed(finding: Finding) -> bool:
        return rules_policy.allows(finding) and identity(finding) not in held

    def verify(before: str, after: str, fixed: list[Finding]) -> str | None:
        def again() -> list:   # the renders before, once more (a template may generate values)
            if before not in second:
                fresh = InputReader(reader.render_options)
                with editing({real: source.encode(before)}):
                    second[before] = [fresh.rendered(chart).text for chart in charts]
            return second[before]

        return shape_problem([(readers[before].rendered(c).text, readers[after].rendered(c).text) for c in charts],
                             fixed, again)

    second: dict[str, list] = {}

    outcome = _fix_counted(run, display, source.text, _of_file(display, STATUS_SCANNED, findings), rescan, allowed,
                           opt_in, unreadable=unreadable, chains=False, verify=verify)
    if outcome is None:
        return
    if outcome.text != source.text:
        run.files.append(FileFix(display, real, source.text, outcome.text, source, outcome.report,
                                 replaces=tuple(sorted(names))))


def _read_input(reader: InputReader, item: Input) -> bytes:
    with reader.open(item) as stream:
        return stream.read()


def _read_source(run: FixRun, display: str, read: Callable[[], bytes]) -> Source | None:
    """The text a fix edits, or None with a note saying why the file is not fixed."""
    try:
        return Source.of(read())
    except NotFixable as reason:
        run.notes.append(f"{display}: not fixed: {reason}")
    except OSError as error:
        run.notes.append(f"{display}: not fixed: {error.strerror or error}")
    return None


def _fix_counted(run: FixRun, display: str, text: str, *args: Any, **kwargs: Any) -> Any:
    """`fix_file`'s outcome for one file, its counts and messages added to `run`; None when fixing it
    failed (a bug in gpulint or a plugin: reported, the file stays as it is, the others go on)."""
    try:
        outcome = fix_file(display, text, *args, **kwargs)
    except Exception as error:
        from gpulint.results.findings import internal_error_message

        run.errors.append(internal_error_message(f"{display} (fixing)", error))
        return None
    run.fixed += outcome.fixed
    run.errors += outcome.errors
    run.notes += outcome.notes
    return outcome


def _of_file(display: str, status: str, findings: list[Finding]) -> FileReport:
    """A chart's findings, as fixes of the values file `display` see them: fixes elsewhere are not theirs."""
    return FileReport(display, status, [f if f.fix is None or f.fix.file == display
                                        else replace(f, fix=None) for f in findings])


def write_files(run: FixRun) -> None:
    """Write each changed file in place (stdin's text is the caller's to print)."""
    for fixed in run.files:
        if fixed.path is not None:
            write_atomic(fixed.path, fixed.source.encode(fixed.after))


def diff_text(run: FixRun) -> str:
    from gpulint.fix.diff import unified

    return "".join(unified(fixed.display, fixed.before, fixed.after) for fixed in run.files)


def summary(fixed: int, result: ScanResult, rules_policy: Policy, show: Callable[[str], None]) -> None:
    """`N fixed, M remaining (K with --unsafe-fixes)`."""
    remaining = [f for f in result.findings if f.suppressed is None]
    held = sum(1 for f in remaining if rules_policy.held_back(f))
    line = f"gpulint: {fixed} fixed, {len(remaining)} remaining"
    if held:
        line += f" ({held} with --unsafe-fixes)"
    show(line)


def would_fix(run: FixRun, result: ScanResult, rules_policy: Policy, show: Callable[[str], None]) -> None:
    """What `--diff` says after its diff: how many fixes it shows, and how many more `--unsafe-fixes` would."""
    held = sum(1 for f in result.findings if f.suppressed is None and rules_policy.held_back(f))
    files = len(run.files)
    line = (f"gpulint: {run.fixed} fix{'' if run.fixed == 1 else 'es'} in {files} "
            f"file{'' if files == 1 else 's'} would be applied")
    if held:
        line += f" ({held} more with --unsafe-fixes)"
    show(line)



def remaining(result: ScanResult, run: FixRun) -> ScanResult:
    """The scan with each fixed file's report replaced by the scan of its fixed text."""
    fixed = {item.display: item.report for item in run.files}
    gone = {name for item in run.files for name in item.replaces}
    reports = [fixed.get(report.file, report) for report in result.files if report.file not in gone]
    reports += [item.report for item in run.files if item.replaces]
    return ScanResult(reports, list(result.internal_errors))


def text_of(item: Any, reader: InputReader) -> str:
    """The text of an input that was not fixed, as read (for stdin under --fix)."""
    with reader.open(item) as stream:
        data = stream.read()
    try:
        return Source.of(data).text
    except NotFixable:
        return data.decode("utf-8", "replace")
