"""JUnit XML: one test case per scanned input, one failure per finding.

CI systems that read test results (Jenkins, GitLab's test report, Azure Pipelines,
CircleCI, ...) show a failed test per file with a finding, and a passed one per clean
file. The shape is the one Maven Surefire writes and the Jenkins xUnit plugin's
junit-10.xsd describes (several `failure` elements in one `testcase`); the tests
validate every report against that schema.

A failure's `type` is the rule id, its `message` the finding's message, and its text
the finding as the concise text report writes it (the file a human edits first).
Suppressed findings are no failures (with --show-suppressed, a `skipped` element
names each). Names and messages come from the scanned tree: control characters and
bytes that are not UTF-8 are escaped (safetext) and XML's special characters quoted,
so no name can break the document or forge an element.
"""

from __future__ import annotations

import re
from typing import IO
from xml.sax.saxutils import escape, quoteattr

from gpulint.report.safetext import printable, printable_path
from gpulint.results.findings import STATUS_IGNORED, Finding
from gpulint.results.scanning import ScanResult

SUITE = "gpulint"
# Characters XML 1.0 forbids that printable() leaves (it escapes controls and lone surrogates).
_NOT_XML = re.compile("[\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(value))


def _path(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable_path(value))


def _where(finding: Finding) -> str:
    place = finding.mapped[0] if finding.mapped else None
    span = place.span if place is not None else finding.span
    return f"{_path(place.file if place is not None else finding.file)}:{span.line}:{span.column}"


def write(result: ScanResult, out: IO[str], show_suppressed: bool = False) -> None:
    """Write the report as it is made, test case by test case."""
    reports = [report for report in result.files if report.status != STATUS_IGNORED]
    failed = sum(1 for report in reports if any(f.suppressed is None for f in report.findings))
    counts = f'tests="{len(reports)}" failures="{failed}" errors="0"'
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f'<testsuites name="{SUITE}" {counts}>\n')
    out.write(f'  <testsuite name="{SUITE}" {counts} skipped="0">\n')
    for report in reports:
        findings = sorted(report.findings, key=Finding.sort_key)
        shown = [f for f in findings if f.suppressed is None or show_suppressed]
        head = f'    <testcase classname="{SUITE}" name={quoteattr(_path(report.file))}'
        if not shown:
            out.write(head + "/>\n")
            continue
        out.write(head + ">\n")
        for finding in shown:
            line = f"{_where(finding)}: {finding.rule_id} [{finding.severity.value}] {_text(finding.message)}"
            if finding.suppressed is not None:
                reason = f"suppressed ({finding.suppressed.kind}): {_text(finding.suppressed.reason)}"
                out.write(f"      <skipped message={quoteattr(reason)}>{escape(line)}</skipped>\n")
                continue
            out.write(f"      <failure type={quoteattr(finding.rule_id)} message={quoteattr(_text(finding.message))}>"
                      f"{escape(line)}</failure>\n")
        out.write("    </testcase>\n")
    out.write("  </testsuite>\n</testsuites>\n")
