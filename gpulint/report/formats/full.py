"""`--format full`: findings grouped by file, each with its source line (report/text.py)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.formats._text import write_text
from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class FullReporter(Reporter):
    name = "full"
    fixes = False
    help = "full (grouped by file, with each finding's source line)"
    order = 20
    statistics = True

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        write_text(result, out, context, full=True)


REPORTER = FullReporter()
