"""JSON output; its shape is fixed by schemas/report.schema.json.

A file name that is not UTF-8 is written with `\\udcNN` escapes for its
undecodable bytes (safetext.py): valid JSON, and `os.fsencode(path)` gives the
name's bytes back."""

from __future__ import annotations

from json.encoder import encode_basestring as q
from typing import IO, Any

from gpulint import __version__
from gpulint.report import summary
from gpulint.report.jsonstream import dumps
from gpulint.results.findings import Finding, FindingSource
from gpulint.results.scanning import ScanResult


def as_dict(finding: Finding) -> dict:
    path, s = _edited(finding)
    obj = finding.obj
    return {
        "rule": finding.rule_id,
        "name": finding.rule_name,
        "severity": finding.severity.value,
        "message": finding.message,
        "path": path,
        "line": s.line,
        "column": s.column,
        "end_line": s.end_line,
        "end_column": s.end_column,
        "rendered": None if not finding.mapped else {
            "path": finding.file, "line": finding.span.line, "column": finding.span.column,
            "end_line": finding.span.end_line, "end_column": finding.span.end_column,
        },
        "object": None if obj is None else {
            "apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name, "namespace": obj.namespace,
        },
        "container": finding.container,
        "field_path": finding.field_path,
        "source": None if finding.source is None else finding.source.as_dict(),
        "suppressed": finding.suppressed is not None,
        "suppression": None if finding.suppressed is None else {
            "kind": finding.suppressed.kind, "reason": finding.suppressed.reason,
        },
        "mapped": [as_dict_mapped(m) for m in finding.mapped],
        "fix": fix_dict(finding),
    }


# The report's own version, apart from the tool's: raised only by a change a reader must handle
# (a field removed, renamed or given another type or meaning); fields are added without raising it.
# The policy and the schema: docs/json-report.md.
SCHEMA_VERSION = 1


def fix_dict(finding: Finding) -> dict | None:
    """The finding's fix (applicability and text edits), or null with the reason it has none."""
    fix = finding.fix
    if fix is None:
        return None if finding.no_fix is None else {"applicability": None, "title": finding.no_fix, "edits": []}
    where = {} if fix.file is None else {"path": fix.file}   # a Helm values file, not the finding's
    return {"applicability": fix.applicability, "title": fix.title, **where,
            "edits": [{"line": e.span.line, "column": e.span.column, "end_line": e.span.end_line,
                       "end_column": e.span.end_column, "text": e.text} for e in fix.edits]}


def render(result: ScanResult) -> str:
    """The report: what `json.dumps({"version", "schema_version", "findings", "summary"}, indent=2,
    ensure_ascii=False)` gives."""
    import io

    out = io.StringIO()
    write(result, out)
    return out.getvalue()


def write(result: ScanResult, out: IO[str]) -> None:
    """Write the report finding by finding (see jsonstream.py): memory stays
    bounded by the findings, not by the text of the report."""
    from gpulint.report import jsonstream
    from gpulint.report.safetext import json_safe

    def emit(text: str) -> None:
        out.write(json_safe(text))   # a name that is not UTF-8: \udcNN escapes, never invalid UTF-8

    emit('{\n  "version": ' + jsonstream.dumps(__version__) + ',\n  "schema_version": ' + str(SCHEMA_VERSION)
         + ',\n  "findings": ')
    head = "[\n    "
    for finding in result.findings:
        emit(head + finding_text(finding))
        head = ",\n    "
    emit("[]" if head == "[\n    " else "\n  ]")
    emit(',\n  "summary": ' + jsonstream.dumps(summary(result), 1) + "\n}\n")


def finding_text(finding: Finding) -> str:
    """`jsonstream.dumps(as_dict(finding), 2)`, written out: reports have many findings."""
    path, s = _edited(finding)
    obj = finding.obj
    if obj is None:
        obj_text = "null"
    else:
        obj_text = (f'{{\n        "apiVersion": {q(obj.api_version)},\n        "kind": {q(obj.kind)},\n'
                    f'        "name": {q(obj.name)},\n        "namespace": '
                    f'{"null" if obj.namespace is None else q(obj.namespace)}\n      }}')
    suppressed = finding.suppressed
    suppression = "null" if suppressed is None else (
        f'{{\n        "kind": {q(suppressed.kind)},\n        "reason": {q(suppressed.reason)}\n      }}')
    mapped = dumps([as_dict_mapped(m) for m in finding.mapped], 3) if finding.mapped else "[]"
    return (f'{{\n      "rule": {q(finding.rule_id)},\n      "name": {q(finding.rule_name)},\n'
            f'      "severity": {q(finding.severity.value)},\n      "message": {q(finding.message)},\n'
            f'      "path": {q(path)},\n      "line": {s.line},\n      "column": {s.column},\n'
            f'      "end_line": {s.end_line},\n      "end_column": {s.end_column},\n'
            f'      "rendered": {_rendered_text(finding)},\n'
            f'      "object": {obj_text},\n'
            f'      "container": {"null" if finding.container is None else q(finding.container)},\n'
            f'      "field_path": {q(finding.field_path)},\n'
            f'      "source": {_source_text(finding.source)},\n'
            f'      "suppressed": {"false" if suppressed is None else "true"},\n'
            f'      "suppression": {suppression},\n      "mapped": {mapped},\n'
            f'      "fix": {_fix_text(finding)}\n    }}')


def _source_text(source: FindingSource | None) -> str:
    """`dumps(source.as_dict(), 3)`, written out (a rendered object's findings all have one)."""
    if source is None:
        return "null"
    return f'{{\n        {q(source.role)}: {q(source.path)}\n      }}'


def _fix_text(finding: Finding) -> str:
    """`dumps(fix_dict(finding), 3)`, written out (most findings of a JSON report have a fix or its absence)."""
    fix = finding.fix
    if fix is None:
        if finding.no_fix is None:
            return "null"
        return f'{{\n        "applicability": null,\n        "title": {q(finding.no_fix)},\n        "edits": []\n      }}'
    where = "" if fix.file is None else f',\n        "path": {q(fix.file)}'
    edits = "[\n          " + ",\n          ".join([
        f'{{\n            "line": {s.line},\n            "column": {s.column},\n'
        f'            "end_line": {s.end_line},\n            "end_column": {s.end_column},\n'
        f'            "text": {q(edit.text)}\n          }}' for edit in fix.edits for s in (edit.span,)]) \
        + "\n        ]" if fix.edits else "[]"
    return (f'{{\n        "applicability": {q(fix.applicability)},\n        "title": {q(fix.title)}{where},\n'
            f'        "edits": {edits}\n      }}')


def _edited(finding: Finding) -> tuple[str, Any]:
    """The file and span a user edits: the first mapped location of rendered input (as the text and
    SARIF reports lead with), else where the finding was found."""
    if finding.mapped:
        return finding.mapped[0].file, finding.mapped[0].span
    return finding.file, finding.span


def _rendered_text(finding: Finding) -> str:
    if not finding.mapped:
        return "null"
    s = finding.span
    return (f'{{\n        "path": {q(finding.file)},\n        "line": {s.line},\n        "column": {s.column},\n'
            f'        "end_line": {s.end_line},\n        "end_column": {s.end_column}\n      }}')


def as_dict_mapped(m: object) -> dict:
    return {"role": m.role, "path": m.file, "line": m.span.line, "column": m.span.column,  # type: ignore[attr-defined]
            "end_line": m.span.end_line, "end_column": m.span.end_column,  # type: ignore[attr-defined]
            "description": m.description}  # type: ignore[attr-defined]
