"""Reporters: findings -> text, JSON, SARIF, GitHub annotations and job summary."""

from __future__ import annotations

from gpulint import __version__
from gpulint.api import Severity
from gpulint.results.findings import STATUSES, Finding
from gpulint.results.scanning import ScanResult

# Each built-in rule's page (docs/rules/, made by scripts/gen_rule_docs.py) as this version
# documents it: the release's tag, so an old report never links to a newer rule's text.
RULE_DOCS_URI = f"https://github.com/gpulint/gpulint/blob/v{__version__}/docs/rules/{{id}}.md"


def visible(findings: list[Finding], show_suppressed: bool) -> list[Finding]:
    return [f for f in findings if show_suppressed or f.suppressed is None]


def summary(result: ScanResult) -> dict:
    """Counts for the summary; `files` always equals the sum of the statuses."""
    findings = [f for report in result.files for f in report.findings]  # counted: no need to sort
    active = [f for f in findings if f.suppressed is None]
    by_status = {status: 0 for status in STATUSES}
    for report in result.files:
        by_status[report.status] += 1
    return {
        "files": len(result.files),
        **by_status,
        "documents": sum(r.documents for r in result.files),
        "objects": sum(r.objects for r in result.files),
        "workloads": sum(r.workloads for r in result.files),
        "findings": len(active),
        "by_severity": {s.value: sum(1 for f in active if f.severity is s) for s in Severity},
        "suppressed": len(findings) - len(active),
        "internal_errors": len(result.internal_errors),
    }
