"""`--format text`: full on a terminal, concise otherwise (report/text.py)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.formats._text import write_text
from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class TextReporter(Reporter):
    name = "text"
    fixes = False
    help = "text (full on a terminal, concise otherwise)"
    order = 10
    statistics = True

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        write_text(result, out, context, full=None)


REPORTER = TextReporter()
