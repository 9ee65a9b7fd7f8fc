"""`--format concise`: one line per finding (report/text.py)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.formats._text import write_text
from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class ConciseReporter(Reporter):
    name = "concise"
    fixes = False
    help = "concise (one line per finding)"
    order = 30
    statistics = True

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        write_text(result, out, context, full=False)


REPORTER = ConciseReporter()
