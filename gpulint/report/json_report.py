"""JSON output; its shape is fixed by schemas/report.schema.json."""

from __future__ import annotations

from typing import IO

from gpulint import __version__
from gpulint.engine import ScanResult
from gpulint.findings import Finding
from gpulint.report import summary


def as_dict(finding: Finding) -> dict:
    s = finding.span
    obj = finding.obj
    return {
        "rule": finding.rule_id,
        "name": finding.rule_name,
        "severity": finding.severity.value,
        "message": finding.message,
        "path": finding.file,
        "line": s.line,
        "column": s.column,
        "end_line": s.end_line,
        "end_column": s.end_column,
        "object": None if obj is None else {
            "apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name, "namespace": obj.namespace,
        },
        "container": finding.container,
        "field_path": finding.field_path,
        "source": finding.source,
        "suppressed": finding.suppressed is not None,
        "suppression": None if finding.suppressed is None else {
            "kind": finding.suppressed.kind, "reason": finding.suppressed.reason,
        },
        "mapped": [
            {"role": m.role, "path": m.file, "line": m.span.line, "column": m.span.column,
             "end_line": m.span.end_line, "end_column": m.span.end_column, "description": m.description}
            for m in finding.mapped
        ],
    }


def render(result: ScanResult) -> str:
    """The report: what `json.dumps({"version", "findings", "summary"}, indent=2, ensure_ascii=False)` gives."""
    import io

    out = io.StringIO()
    write(result, out)
    return out.getvalue()


def write(result: ScanResult, out: IO[str]) -> None:
    """Write the report finding by finding (see jsonstream.py): memory stays
    bounded by the findings, not by the text of the report."""
    from gpulint.report import jsonstream

    emit = out.write
    emit('{\n  "version": ' + jsonstream.dumps(__version__) + ',\n  "findings": ')
    jsonstream.items((as_dict(f) for f in result.findings), 1, emit)
    emit(',\n  "summary": ' + jsonstream.dumps(summary(result), 1) + "\n}\n")
