"""The report of an input that discovery found but the scan must not open (not InputKind.read)."""

from __future__ import annotations

from gpulint.inputs.discovery import Input
from gpulint.load.locations import Span
from gpulint.results.findings import (
    OUTSIDE_ROOT,
    STATUS_IGNORED,
    STATUS_OUTSIDE_ROOT,
    FileReport,
)
from gpulint.results.inputkind import InputKind
from gpulint.results.emit import Emitter
from gpulint.results.scanning import SuppressionContext


def not_read_report(item: Input, emitter: Emitter) -> FileReport:
    """The status of an input left unread, with GPU099 (when enabled) saying why a link was not followed."""
    if item.kind is InputKind.IGNORED:
        return FileReport(item.display, STATUS_IGNORED)
    report = FileReport(item.display, STATUS_OUTSIDE_ROOT)
    config = emitter.config
    rule = config.all_rules.get(OUTSIDE_ROOT)
    if rule is None or not any(r.id == OUTSIDE_ROOT for r in config.rules):
        return report
    if item.target is None:
        message = "kernel filesystem directory (/proc, /sys or /dev): not scanned"
    else:
        message = f"symlink to {item.target} points outside the scanned directory: not followed"
    emitter.emit(report, SuppressionContext(None, None, None, None, 0), rule, message, item.display, Span(1, 1, 1, 1))
    return report
