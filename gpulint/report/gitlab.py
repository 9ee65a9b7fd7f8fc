"""GitLab Code Quality JSON: one issue per finding, shown in the merge request.

GitLab reads a JSON array of Code Climate issues (`artifacts: reports:
codequality:`): `description`, `check_name`, `fingerprint`, `severity`
(`info`, `minor`, `major`, `critical`, `blocker`) and `location` with a
repository-relative `path` and `lines.begin`. GitLab compares the fingerprints of
the merge request's report with the target branch's to tell new findings from old,
so a fingerprint must not change when lines move: it is the line-independent
identity SARIF uses (report/fingerprint.py: rule, file, object, container, field
path). A finding on rendered output is located at the first file it maps back to
that is in the repository (a template, values file, patch), as in SARIF.
Suppressed findings are left out (GitLab has no notion of them).
"""

from __future__ import annotations

import json
from typing import IO

from gpulint.api import Severity
from gpulint.report.fingerprint import Fingerprints
from gpulint.report.repopath import Locator
from gpulint.report.safetext import json_safe
from gpulint.results.findings import Finding
from gpulint.results.scanning import ScanResult

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}
# Code Climate categories by the rule's SARIF tags (its first known one).
CATEGORIES = {"security": "Security", "correctness": "Bug Risk", "reliability": "Bug Risk",
              "maintainability": "Clarity"}


def issue(finding: Finding, locator: Locator, fingerprints: Fingerprints, tags: tuple[str, ...] = ()) -> dict:
    mapped = next((m for m in finding.mapped if locator.exists_in_repo(m.file)), None)
    file, span = (finding.file, finding.span) if mapped is None else (mapped.file, mapped.span)
    path = locator.locate(file).relative
    category = next((CATEGORIES[tag] for tag in tags if tag in CATEGORIES), "Bug Risk")
    return {
        "type": "issue",
        "check_name": finding.rule_id,
        "description": f"{finding.rule_id} {finding.rule_name}: {finding.message}",
        "categories": [category],
        "severity": SEVERITIES[finding.severity],
        "fingerprint": fingerprints.of(finding, path),
        "location": {"path": path, "lines": {"begin": span.line, "end": max(span.end_line, span.line)}},
    }


def write(result: ScanResult, out: IO[str], rules: dict | None = None) -> None:
    """The report: a JSON array, one issue per line of it written as it is made."""
    locator = Locator()
    fingerprints = Fingerprints()
    head = "["
    for finding in result.findings:
        if finding.suppressed is not None:
            continue
        rule = (rules or {}).get(finding.rule_id)
        entry = issue(finding, locator, fingerprints, tuple(getattr(rule, "tags", ())))
        out.write(json_safe(head + "\n  " + json.dumps(entry, ensure_ascii=False, sort_keys=True)))
        head = ","
    out.write("[]\n" if head == "[" else "\n]\n")
