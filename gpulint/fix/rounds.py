"""Fix one file in rounds: apply the fixes that do not overlap, scan again, repeat until
nothing changes (at most MAX_ROUNDS, as ruff does).

After each round the file is scanned again (`rescan`, given by the caller, which
owns the engine). A round whose result no longer parses, adds a finding, or keeps
the finding a fix was for, is undone; its fixes are then tried one by one and
those that fail are dropped and reported as internal errors: a fix that breaks a
manifest is a bug in gpulint, never the user's problem.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from gpulint.fix.textedits import Lines, apply, disjoint
from gpulint.results.findings import INVALID_INPUT, STATUS_SCANNED, FileReport, Finding

MAX_ROUNDS = 10

Rescan = Callable[[str], FileReport]
Allowed = Callable[[Finding], bool]


@dataclass
class Outcome:
    text: str
    report: FileReport                 # the scan of `text`
    fixed: int = 0                     # fixes applied
    errors: list[str] = field(default_factory=list)


def identity(finding: Finding) -> tuple:
    """What makes a finding the same one after edits elsewhere moved its lines."""
    if finding.field_path.startswith("line:") or finding.rule_id == INVALID_INPUT:
        return (finding.rule_id, finding.message)
    return (finding.rule_id, finding.obj, finding.container, finding.field_path)


def fix_file(display: str, text: str, report: FileReport, rescan: Rescan, allowed: Allowed) -> Outcome:
    outcome = Outcome(text, report)
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
        accepted = _try(outcome, batch, rescan)
        if accepted is None:   # the round together failed: each fix on its own
            good = []
            for item in batch:
                problem = _check(outcome, [item], rescan)[1]
                if problem is None:
                    good.append(item)
                else:
                    dropped.add(identity(item[0]))
                    outcome.errors.append(_error(display, item[0], problem))
            batch = good
            accepted = _try(outcome, batch, rescan) if batch else None
            if accepted is None:
                continue   # nothing kept this round; the dropped fixes are not offered again
        outcome.text, outcome.report = accepted
        outcome.fixed += len(batch)
        applied.update(identity(finding) for finding, _ranges in batch)
    return outcome


def _try(outcome: Outcome, batch: list, rescan: Rescan) -> tuple[str, FileReport] | None:
    result, problem = _check(outcome, batch, rescan)
    return result if problem is None else None


def _check(outcome: Outcome, batch: list, rescan: Rescan) -> tuple[tuple[str, FileReport] | None, str | None]:
    """The text and scan after `batch`, or why it may not be kept."""
    text = apply(outcome.text, [edit for _finding, ranges in batch for edit in ranges])
    report = rescan(text)
    if report.status != STATUS_SCANNED:
        return None, f"after it the file is no longer read as Kubernetes manifests ({report.status})"
    before = Counter(identity(f) for f in outcome.report.findings)
    after = Counter(identity(f) for f in report.findings)
    new = after - before
    if new:
        first = next(f for f in report.findings if identity(f) in new)
        if first.rule_id == INVALID_INPUT:
            return None, f"after it the file does not load: {first.message}"
        return None, f"it adds a {first.rule_id} finding at line {first.span.line}: {first.message}"
    return (text, report), None


def _error(display: str, finding: Finding, problem: str) -> str:
    s = finding.span
    return (f"{display}:{s.line}:{s.column}: internal error: the fix of {finding.rule_id} "
            f"({finding.fix.title if finding.fix else ''}) was not applied: {problem}")
