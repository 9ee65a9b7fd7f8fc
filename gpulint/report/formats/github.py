"""`--format github`: GitHub Actions annotations (report/github.py), and the job summary."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class GithubReporter(Reporter):
    name = "github"
    fixes = False
    order = 60

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        from gpulint.report import github

        github.write(result, out, show_suppressed=context.show_suppressed)

    def finish(self, result: ScanResult) -> str | None:
        from gpulint.report.jobsummary import append_to_step_summary

        try:
            append_to_step_summary(result)   # when $GITHUB_STEP_SUMMARY is set
        except OSError as error:
            return f"job summary not written: {error.strerror or error}"
        return None


REPORTER = GithubReporter()
