"""JSON output; its shape is fixed by schemas/report.schema.json."""

from __future__ import annotations

import json

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
    doc = {
        "version": __version__,
        "findings": [as_dict(f) for f in result.findings],
        "summary": summary(result),
    }
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
