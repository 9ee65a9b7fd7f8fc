"""`--format gitlab`: GitLab Code Quality JSON (report/gitlab.py)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


class GitlabReporter(Reporter):
    name = "gitlab"
    fixes = False
    help = "gitlab (GitLab Code Quality JSON)"
    order = 80

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        from gpulint.report import gitlab

        gitlab.write(result, out, dict(context.rules))


REPORTER = GitlabReporter()
