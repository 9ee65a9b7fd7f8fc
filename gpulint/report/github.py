"""GitHub Actions workflow commands: annotations for the most severe findings, then a summary.

`::error file=k8s/train.yaml,line=14,endLine=14,col=11,endColumn=14,title=GPU003 visible-devices-env::message`

GitHub shows these on the pull request's changed lines and in the run summary.
Paths are repository-relative (GitHub resolves them against the checkout), and
a Helm/Kustomize finding is annotated on the template it came from when that
file is in the repository, as in SARIF. Severities map to the commands GitHub
has: error -> error, warning -> warning, info -> notice.
"""

from __future__ import annotations

from typing import IO

from gpulint.api import Severity
from gpulint.report import summary, visible
from gpulint.report.repopath import Locator
from gpulint.report.safetext import no_command, valid_text
from gpulint.report.text import _summary_line as summary_line
from gpulint.results.findings import Finding
from gpulint.results.scanning import ScanResult

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """A command's message: `%`, CR and LF are percent-encoded.

    Other control characters and the undecodable bytes of a name that is not
    UTF-8 are escaped first (safetext.valid_text): the log stays valid UTF-8
    and no text can start a line or a command of its own."""
    return valid_text(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: as data, plus `:` and `,` that delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


# GitHub shows at most this many annotations of each kind per step (the rest
# are dropped silently): actions/toolkit, docs/problem-matchers.md, "Limitations".
PER_KIND = 10
NOT_ANNOTATED_GROUP = "gpulint: findings not annotated"


def render(result: ScanResult, show_suppressed: bool = False, locator: Locator | None = None,
           limit: int = PER_KIND) -> str:
    import io

    out = io.StringIO()
    write(result, out, show_suppressed, locator, limit)
    return out.getvalue()


def write(result: ScanResult, out: IO[str], show_suppressed: bool = False, locator: Locator | None = None,
          limit: int = PER_KIND) -> None:
    """Annotations for the most severe findings, the others as plain log lines, then a summary.

    GitHub keeps the first `limit` error, warning and notice annotations of a
    step and drops the rest without a word; so errors come first, at most
    `limit` of each kind are annotations (one notice is kept for the word that
    more exist), and every other finding is listed in a collapsed log group
    the notice points at (and in the job summary and code scanning).
    """
    locator = locator or Locator()
    findings = visible(result.findings, show_suppressed)
    # Most severe first, active before suppressed, then in report order (sorted is stable).
    ranked = sorted(findings, key=lambda f: (f.suppressed is not None, -f.severity.rank))
    room = {"error": limit, "warning": limit, "notice": limit - 1}
    rest: list[Finding] = []
    for finding in ranked:
        command = _command(finding)
        if room[command] > 0:
            room[command] -= 1
            out.write(annotation(finding, locator) + "\n")
        else:
            rest.append(finding)
    if rest:
        from gpulint.report.text import _line as text_line

        out.write(f"::group::{escape_data(NOT_ANNOTATED_GROUP)} ({len(rest)})\n")
        for finding in rest:
            # Plain text, escaped: the runner reads commands inside a group too (and trims a line
            # before it looks for `::`), so no line may read as one.
            out.write(no_command(text_line(finding, False)) + "\n")
        out.write("::endgroup::\n")
        count = len(rest)
        out.write(f"::notice title=gpulint::{escape_data(more_message(count))}\n")
    out.write(summary_line(summary(result)) + "\n")


def more_message(count: int) -> str:
    return (f"{count} more finding{'' if count == 1 else 's'} not annotated: GitHub shows {PER_KIND} error, "
            f"{PER_KIND} warning and {PER_KIND} notice annotations per step. See the log group "
            f"\"{NOT_ANNOTATED_GROUP}\", the job summary, or the code scanning alerts.")


def _command(finding: Finding) -> str:
    return "notice" if finding.suppressed is not None else COMMANDS[finding.severity]


def annotation(finding: Finding, locator: Locator) -> str:
    mapped = next((m for m in finding.mapped if locator.exists_in_repo(m.file)), None)
    file, span = (finding.file, finding.span) if mapped is None else (mapped.file, mapped.span)
    message = finding.message
    if mapped is not None:
        rendered = finding.rendered
        shown = locator.locate(rendered.target if rendered is not None else finding.file).relative
        if rendered is not None and rendered.values:
            shown = f"{shown} with {rendered.values}"
        message += f" (rendered output of {shown}, line {finding.span.line})"
    title = f"{finding.rule_id} {finding.rule_name}"
    command = COMMANDS[finding.severity]
    if finding.suppressed is not None:
        # Listed only with --show-suppressed; never an error or warning.
        command = "notice"
        title += " (suppressed)"
        message += f" [suppressed ({finding.suppressed.kind}): {finding.suppressed.reason}]"

    where = locator.locate(file)
    props: list[tuple[str, str]] = []
    if where.root is not None or where.relative.startswith("/"):  # stdin has no file to annotate
        end_line = max(span.end_line, span.line)
        props += [("file", where.relative), ("line", str(span.line)), ("endLine", str(end_line))]
        if end_line == span.line:  # GitHub takes columns only for a single-line annotation
            props += [("col", str(span.column)), ("endColumn", str(max(span.end_column, span.column)))]
    props.append(("title", title))
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{command} {rendered}::{escape_data(message)}"
