"""One finding for a message several renders repeat at one location.

A chart rendered with its defaults and with each `ci/*-values.yaml`, or one base
built through fifteen overlays, meets the same template line, the same base
file or the same failing remote resource once per render. The user edits that
place once: the finding is reported once, with the first render that met it,
and its message says how many renders did. Findings stay apart when anything
a user reads differs: the rule, severity, message (but for the name of the
render's own chart or kustomization in it), the edited locations (a values
file of one render maps elsewhere than another's), suppression.
Repeats inside one render (two objects from one template line) are not folded.
"""

from __future__ import annotations

from gpulint.results.findings import FileReport, Finding


def fold_repeats(reports: list[FileReport], rendered: set[int]) -> None:
    """Fold, in place, findings of the reports whose `id` is in `rendered` (renders of charts and
    kustomizations) that repeat one another across renders."""
    first: dict[tuple, Finding] = {}
    renders: dict[int, set[tuple[int, str]]] = {}   # the renders that met a kept finding
    for report in reports:
        if id(report) not in rendered:
            continue
        kept = []
        for finding in report.findings:
            key = _key(finding, report.file)
            seen = first.get(key)
            render = (id(report), finding.file)   # a chart's renders share a report, not a name
            if seen is None:
                first[key] = finding
                renders[id(finding)] = {render}
            elif render not in renders[id(seen)]:
                renders[id(seen)].add(render)
                continue
            kept.append(finding)
        report.findings[:] = kept
    for finding in first.values():
        count = len(renders[id(finding)])
        if count > 1:
            finding.message = f"{finding.message} (met by {count} renders)"


def drop_values_repeats(reports: list[FileReport], values_kind: str) -> None:
    """Drop, in place, a finding read from a values file by shape (its object of kind `values_kind`)
    when a render already maps the same rule to the same values line: the render says it better."""
    mapped = {(finding.rule_id, m.file, m.span.line) for report in reports for finding in report.findings
              for m in finding.mapped if m.role == "values"}
    if not mapped:
        return
    for report in reports:
        report.findings[:] = [finding for finding in report.findings
                              if finding.obj is None or finding.obj.kind != values_kind
                              or (finding.rule_id, finding.file, finding.span.line) not in mapped]


def _key(finding: Finding, render: str) -> tuple:
    """What must be equal for two findings of two renders to be one: their message counts as equal
    when it differs only by the name of the render's own chart or kustomization (`build it
    yourself: kubectl kustomize overlays/a`)."""
    where = tuple((m.role, m.file, m.span) for m in finding.mapped) or ((finding.file, finding.span),)
    suppressed = None if finding.suppressed is None else (finding.suppressed.kind, finding.suppressed.reason)
    message = finding.message.replace(render, "\0") if render else finding.message
    return (finding.rule_id, finding.severity, message, where, suppressed)
