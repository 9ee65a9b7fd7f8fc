"""GitHub Actions workflow commands: one annotation per finding, then a summary.

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
from gpulint.report.safetext import valid_text
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


def render(result: ScanResult, show_suppressed: bool = False, locator: Locator | None = None) -> str:
    import io

    out = io.StringIO()
    write(result, out, show_suppressed, locator)
    return out.getvalue()


def write(result: ScanResult, out: IO[str], show_suppressed: bool = False, locator: Locator | None = None) -> None:
    """Write the annotations line by line (a large scan's report is never held whole)."""
    locator = locator or Locator()
    for finding in visible(result.findings, show_suppressed):
        out.write(annotation(finding, locator) + "\n")
    out.write(summary_line(summary(result)) + "\n")


def annotation(finding: Finding, locator: Locator) -> str:
    mapped = next((m for m in finding.mapped if locator.exists_in_repo(m.file)), None)
    file, span = (finding.file, finding.span) if mapped is None else (mapped.file, mapped.span)
    message = finding.message
    if mapped is not None:
        message += f" (rendered: {locator.locate(finding.file).relative}:{finding.span.line})"
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
