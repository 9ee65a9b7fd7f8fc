"""The report of an input that discovery found but the scan must not open (not InputKind.read)."""

from __future__ import annotations

from gpulint.api import Severity
from gpulint.inputs.discovery import Input
from gpulint.load.locations import Span
from gpulint.results.findings import (
    OUTSIDE_ROOT,
    STATUS_IGNORED,
    STATUS_OUTSIDE_ROOT,
    FileReport,
    Finding,
)
from gpulint.results.inputkind import InputKind
from gpulint.results.scanning import ScanConfig, SuppressionContext
from gpulint.suppress.core import apply as apply_suppressors


def not_read_report(item: Input, config: ScanConfig) -> FileReport:
    """The status of an input left unread, with GPU099 (when enabled) saying why a link was not followed."""
    if item.kind is InputKind.IGNORED:
        return FileReport(item.display, STATUS_IGNORED)
    report = FileReport(item.display, STATUS_OUTSIDE_ROOT)
    rule = config.all_rules.get(OUTSIDE_ROOT)
    if rule is None or not any(r.id == OUTSIDE_ROOT for r in config.rules):
        return report
    if item.target is None:
        message = "kernel filesystem directory (/proc, /sys or /dev): not scanned"
    else:
        message = f"symlink to {item.target} points outside the scanned directory: not followed"
    finding = Finding(OUTSIDE_ROOT, rule.name, config.severity_of(OUTSIDE_ROOT, rule.severity or Severity.INFO),
                      message, item.display, Span(1, 1, 1, 1), field_path="line:1")
    report.findings.append(apply_suppressors(finding, SuppressionContext(None, None, None, None, 0),
                                             config.suppressors))
    return report
