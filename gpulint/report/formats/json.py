"""`--format json`: every finding and the summary (report/json_report.py); with --statistics, the counts."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class JsonReporter(Reporter):
    name = "json"
    order = 40
    statistics = True

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        if context.statistics:
            import json

            from gpulint.report import text

            out.write(json.dumps(text.statistics(result, context.show_suppressed), indent=2) + "\n")
            return
        from gpulint.report import json_report

        json_report.write(result, out)


REPORTER = JsonReporter()
