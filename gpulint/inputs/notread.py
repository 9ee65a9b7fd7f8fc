"""The report of an input that discovery found but the scan must not open (not InputKind.read)."""

from __future__ import annotations

from gpulint.inputs.discovery import Input
from gpulint.results.findings import (
    STATUS_IGNORED,
    STATUS_OUTSIDE_ROOT,
    FileReport,
)
from gpulint.results.inputkind import InputKind


def not_read_report(item: Input) -> FileReport:
    """The status of an input left unread; the scan hands a link not followed to the rules (GPU099)."""
    if item.kind is InputKind.IGNORED:
        return FileReport(item.display, STATUS_IGNORED)
    return FileReport(item.display, STATUS_OUTSIDE_ROOT)
