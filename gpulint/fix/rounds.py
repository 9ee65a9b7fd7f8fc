"""Fix one file in rounds: apply the fixes that do not overlap, scan again, repeat until
nothing changes (at most MAX_ROUNDS, as ruff does).

After each round the file is scanned again (`rescan`, given by the caller, which
owns the engine). A round whose result no longer parses, adds a finding, or keeps
the finding a fix was for, is undone; its fixes are then tried one by one and
those that fail are dropped and reported as internal errors: a fix that breaks a
manifest is a bug in gpulint, never the user's problem. One case is no bug: a fix
that makes a workload request GPUs as the default rules want may meet a rule the
user turned on that asks for more (GPU105 wants the GPU model pinned). `opt_in`
says which findings are of such rules; the fix is then left out with a note.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from gpulint.fix.textedits import Lines, apply, disjoint
from gpulint.record import record
from gpulint.results.findings import STATUS_SCANNED, FileReport, Finding

MAX_ROUNDS = 10

Rescan = Callable[[str], FileReport]
Allowed = Callable[[Finding], bool]
Verify = Callable[[str, str, "list[Finding]"], "str | None"]


class _Problem(str):
    """Why a round may not be kept; `bug` False: a conflict with an opt-in rule, not an error."""

    bug = True


class _Conflict(_Problem):
    bug = False


@record(eq=True, repr=("text", "report", "fixed", "errors", "notes"))
class Outcome:
    __slots__ = ("text", "report", "fixed", "errors", "notes", "verify")
    text: str
    report: FileReport                 # the scan of `text`
    fixed: int                         # fixes applied
    errors: list[str]
    notes: list[str]                   # fixes left out for an opt-in rule's sake
    verify: "Verify | None"            # (not in the repr)

    def __init__(self, text: str, report: FileReport, fixed: int = 0, errors: list[str] | None = None,
                 notes: list[str] | None = None, verify: "Verify | None" = None) -> None:
        self.text = text
        self.report = report
        self.fixed = fixed
        self.errors = [] if errors is None else errors
        self.notes = [] if notes is None else notes
        self.verify = verify


def identity(finding: Finding) -> tuple:
    """What makes a finding the same one after edits elsewhere moved its lines (a finding placed
    by line only, as every input problem is, by its message)."""
    if finding.field_path.startswith("line:"):
        return (finding.rule_id, finding.message)
    return (finding.rule_id, finding.obj, finding.container, finding.field_path)


def fix_file(display: str, text: str, report: FileReport, rescan: Rescan, allowed: Allowed,
             opt_in: Allowed = lambda finding: False, *, unreadable: Allowed, chains: bool = True,
             verify: Verify | None = None) -> Outcome:
    """`unreadable`: whether a finding says the text cannot be read as manifests (an input
    problem, GPU000): a fix after which one appears broke the file. `chains` False: no new
    finding at all is accepted, not even one with a fix of its own (a values file, whose one
    key may feed several places of a chart: fixing one place must not break another).
    `verify(before, after, findings fixed)`: why the fixes may not be kept although the scan
    is fine (a values file's fix the chart renders otherwise than the same fix in a plain
    file): they are left out with a note, no error."""
    outcome = Outcome(text, report, verify=verify)
    applied: set[tuple] = set()
    dropped: set[tuple] = set()
    for _round in range(MAX_ROUNDS):
        lines = Lines(outcome.text)
        batch: list[tuple[Finding, list[tuple[int, int, str]]]] = []
        taken: list[tuple[int, int]] = []
        for finding in sorted(outcome.report.findings, key=Finding.sort_key):
            if finding.fix is None or finding.suppressed is not None or not allowed(finding):
                continue
            key = identity(finding)
            if key in dropped:
                continue
            if key in applied:   # fixed once already and still there: the fix does not work
                dropped.add(key)
                outcome.errors.append(_error(display, finding, "its finding is still there after it was applied"))
                continue
            try:
                ranges = lines.ranges(finding.fix)
            except ValueError as error:
                dropped.add(key)
                outcome.errors.append(_error(display, finding, f"its edits are not in the file ({error})"))
                continue
            if disjoint(taken, ranges):
                batch.append((finding, ranges))
                taken += [(start, end) for start, end, _new in ranges]
        if not batch:
            break
        accepted = _try(outcome, batch, rescan, opt_in, allowed, unreadable, chains)
        if accepted is None:   # the round together failed: each fix on its own
            good, failed = [], []
            for item in batch:
                problem = _check(outcome, [item], rescan, opt_in, allowed, unreadable, chains)[1]
                (good if problem is None else failed).append((item, problem))
            good = [item for item, _problem in good]
            for item, problem in failed:
                # Some fixes only work together (a name renamed in requests and in limits).
                if _check(outcome, good + [item], rescan, opt_in, allowed, unreadable, chains)[1] is None:
                    good.append(item)
                    continue
                dropped.add(identity(item[0]))
                if problem.bug:
                    outcome.errors.append(_error(display, item[0], problem))
                else:
                    s = _at(item[0])
                    outcome.notes.append(f"{display}:{s.line}:{s.column}: the fix of {item[0].rule_id} was left "
                                         f"out: {problem}")
            batch = good
            accepted = _try(outcome, batch, rescan, opt_in, allowed, unreadable, chains) if batch else None
            if accepted is None:
                continue   # nothing kept this round; the dropped fixes are not offered again
        outcome.text, outcome.report = accepted
        outcome.fixed += len(batch)
        applied.update(identity(finding) for finding, _ranges in batch)
    return outcome


def _try(outcome: Outcome, batch: list, rescan: Rescan, opt_in: Allowed, allowed: Allowed,
         unreadable: Allowed, chains: bool) -> tuple[str, FileReport] | None:
    result, problem = _check(outcome, batch, rescan, opt_in, allowed, unreadable, chains)
    return result if problem is None else None


def _check(outcome: Outcome, batch: list, rescan: Rescan, opt_in: Allowed, allowed: Allowed,
           unreadable: Allowed, chains: bool) -> tuple[tuple[str, FileReport] | None, _Problem | None]:
    """The text and scan after `batch`, or why it may not be kept. A new finding that has a fix
    of its own the run applies is the next step of a chain (a GPU request renamed right, then
    given its limit), not a regression: its fix is checked in the next round."""
    text = apply(outcome.text, [edit for _finding, ranges in batch for edit in ranges])
    report = rescan(text)
    if report.status != STATUS_SCANNED:
        return None, _Problem(f"after it the file is no longer read as Kubernetes manifests ({report.status})")
    before = Counter(identity(f) for f in outcome.report.findings)
    after = Counter(identity(f) for f in report.findings)
    new = after - before
    added = [f for f in report.findings if identity(f) in new
             and (unreadable(f) or f.fix is None or not allowed(f) or not chains)]
    if added:
        first = next((f for f in added if not opt_in(f)), added[0])
        if unreadable(first):
            return None, _Problem(f"after it the file does not load: {first.message}")
        where = f"line {first.span.line}"
        if not chains:   # a values file's fix: the finding is in a template of the chart
            at = next((m for m in first.mapped if m.role == "template"), None)
            where = f"{first.file}:{first.span.line}" if at is None else f"{at.file}:{at.span.line}"
        said = f"it adds a {first.rule_id} finding at {where}: {first.message}"
        return None, _Problem(said) if not opt_in(first) else _Conflict(said)
    problem = outcome.verify(outcome.text, text, [f for f, _ranges in batch]) if outcome.verify else None
    if problem is not None:
        return None, _Conflict(problem)
    return (text, report), None


def _at(finding: Finding) -> Any:
    """Where in the fixed file a message about a fix points: its first edit in another file (a values file's)."""
    fix = finding.fix
    return fix.edits[0].span if fix is not None and fix.file is not None and fix.edits else finding.span


def _error(display: str, finding: Finding, problem: str) -> str:
    s = _at(finding)
    return (f"{display}:{s.line}:{s.column}: internal error: the fix of {finding.rule_id} "
            f"({finding.fix.title if finding.fix else ''}) was not applied: {problem}")
