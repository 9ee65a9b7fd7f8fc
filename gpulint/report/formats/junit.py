"""`--format junit`: JUnit XML, one test case per scanned input (report/junit.py)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class JunitReporter(Reporter):
    name = "junit"
    fixes = False
    help = "junit (JUnit XML for CI test reports)"
    order = 70

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        from gpulint.report import junit

        junit.write(result, out, show_suppressed=context.show_suppressed)


REPORTER = JunitReporter()
