"""`--format rdjson`: reviewdog's Diagnostic Format, so that a pull request shows each finding
and, for findings with a fix, a one-click suggestion (`reviewdog -f=rdjson`).

One JSON document: the tool (`source`) and a diagnostic per active finding, with its
rule (`code`, linked to the rule's page) and its fix's text edits as `suggestions`.
Unsafe fixes are offered too, their message saying so: a suggestion is only ever
applied by a reviewer's click. Positions are 1-based; reviewdog counts columns in UTF-8
bytes, so columns are converted from characters with the line's text when the file
can be read (ASCII lines, the usual case, are the same either way).
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

from gpulint.report.registry import ReportContext, Reporter

if TYPE_CHECKING:
    from gpulint.results.findings import Finding
    from gpulint.results.scanning import ScanResult

SEVERITIES = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}
SOURCE = {"name": "gpulint", "url": "https://github.com/gpulint/gpulint"}


class _Columns:
    """Character columns -> UTF-8 byte columns, from the lines of the files findings are in."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}

    def byte_column(self, file: str, line: int, column: int) -> int:
        lines = self._lines.get(file, False)
        if lines is False:
            lines = self._lines[file] = _read_lines(file)
        if lines is None or not 1 <= line <= len(lines):
            return column
        return len(lines[line - 1][:column - 1].encode("utf-8", "surrogatepass")) + 1


def _read_lines(file: str) -> list[str] | None:
    from gpulint.load.decode import BinaryInput, decode_lenient

    if file == "-":
        return None
    try:
        with open(file, "rb") as handle:
            text, _problem = decode_lenient(handle.read())
    except (OSError, BinaryInput):
        return None
    return text.split("\n")


def diagnostic(finding: Finding, columns: _Columns) -> dict[str, Any]:
    from gpulint.report import RULE_DOCS_URI

    def position(line: int, column: int) -> dict[str, int]:
        return {"line": line, "column": columns.byte_column(finding.file, line, column)}

    s = finding.span
    out: dict[str, Any] = {
        "message": finding.message,
        "location": {"path": finding.file,
                     "range": {"start": position(s.line, s.column), "end": position(s.end_line, s.end_column)}},
        "severity": SEVERITIES[finding.severity.value],
        "source": SOURCE,
        "code": {"value": finding.rule_id, "url": RULE_DOCS_URI.format(id=finding.rule_id)},
    }
    fix = finding.fix
    if fix is not None and fix.file is None:   # a suggestion is in the diagnostic's own file
        out["suggestions"] = [{"range": {"start": position(e.span.line, e.span.column),
                                         "end": position(e.span.end_line, e.span.end_column)},
                               "text": e.text} for e in fix.edits]
        out["message"] += f" [fix: {fix.title}{'' if fix.applicability == 'safe' else ' (unsafe)'}]"
    return out


def render(result: ScanResult) -> str:
    import json

    from gpulint.report.safetext import json_safe

    columns = _Columns()
    doc = {"source": SOURCE, "diagnostics": [diagnostic(f, columns) for f in result.findings
                                             if f.suppressed is None]}
    return json_safe(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


class RdjsonReporter(Reporter):
    name = "rdjson"
    help = "rdjson (reviewdog, fixes as suggestions)"
    order = 65

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        out.write(render(result))


REPORTER = RdjsonReporter()
