"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning (report/sarif.py)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class SarifReporter(Reporter):
    name = "sarif"
    order = 50

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        from gpulint.report import sarif  # bounded by its maximum number of results

        sarif.write(result, context.rules, out, list(context.enabled), category=context.category,
                    problems=context.problems, show_suppressed=context.show_suppressed)


REPORTER = SarifReporter()
