"""`path:line:col: GPU003 [error] message`, then a summary line.

For rendered input the path is the template (or Kustomize source) line, and the
values key and rendered position follow in brackets.
"""

from __future__ import annotations

import os
from typing import IO

from gpulint.report import summary, visible
from gpulint.results.findings import Finding
from gpulint.results.scanning import ScanResult

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def use_colour(stream: object) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def render(result: ScanResult, show_suppressed: bool = False, colour: bool = False) -> str:
    import io

    out = io.StringIO()
    write(result, out, show_suppressed, colour)
    return out.getvalue()


def write(result: ScanResult, out: IO[str], show_suppressed: bool = False, colour: bool = False) -> None:
    """Write the report line by line (a large scan's report is never held whole)."""
    for finding in visible(result.findings, show_suppressed):
        out.write(_line(finding, colour) + "\n")
    out.write(_summary_line(summary(result)) + "\n")


def _line(finding: Finding, colour: bool) -> str:
    # Rendered input (a chart, a kustomization): the file a human edits comes
    # first, the position in the rendered output last.
    primary = finding.mapped[0] if finding.mapped else None
    s = primary.span if primary else finding.span
    where = f"{primary.file if primary else finding.file}:{s.line}:{s.column}:"
    rule = finding.rule_id
    severity = f"[{finding.severity.value}]"
    if colour:
        where = f"{_BOLD}{where}{_RESET}"
        rule = f"{_BOLD}{rule}{_RESET}"
        severity = f"{_COLOURS[finding.severity.value]}{severity}{_RESET}"
    text = f"{where} {rule} {severity} {finding.message}"
    if primary is not None:
        text += f" [{_mapped_note(finding)}]"
    elif finding.source:
        origin = finding.source.get("template") or finding.source.get("origin")
        text += f" [from {origin}]"
    if finding.suppressed is not None:
        note = f"[suppressed ({finding.suppressed.kind}): {finding.suppressed.reason}]"
        text += f" {_DIM}{note}{_RESET}" if colour else f" {note}"
    return text


def _mapped_note(finding: Finding) -> str:
    """`helper "x"; values key a.b at values.yaml:3:5; rendered at chart (rendered):40:15`."""
    primary, *others = finding.mapped
    parts = [] if primary.description == "template" else [primary.description]
    for loc in others:
        parts.append(f"{loc.description or loc.role} at {loc.file}:{loc.span.line}:{loc.span.column}")
    parts.append(f"rendered at {finding.file}:{finding.span.line}:{finding.span.column}")
    return "; ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary_line(counts: dict) -> str:
    sev = counts["by_severity"]
    parts = [f"{sev[k]} {k}{'s' if k != 'info' and sev[k] != 1 else ''}" for k in ("error", "warning", "info") if sev[k]]
    head = (f"Found {_plural(counts['findings'], 'finding')} ({', '.join(parts)})"
            if counts["findings"] else "No findings")
    text = f"{head} in {_plural(counts['files'], 'file')}: {counts['scanned']} scanned"
    extras = []
    if counts["not_kubernetes"]:
        extras.append(f"{counts['not_kubernetes']} not Kubernetes")
    if counts["not_kubernetes_unparseable"]:
        extras.append(f"{counts['not_kubernetes_unparseable']} not Kubernetes (unparseable)")
    if counts["unrendered_template"]:
        extras.append(_plural(counts["unrendered_template"], "unrendered template"))
    if counts["binary"]:
        extras.append(f"{counts['binary']} binary")
    if counts["error"]:
        extras.append(f"{counts['error']} unreadable")
    if counts["helm_chart"]:
        extras.append(f"{counts['helm_chart']} unrendered Helm chart{'s' if counts['helm_chart'] != 1 else ''}")
    if extras:
        text += ", " + ", ".join(extras)
    text += "."
    if counts["suppressed"]:
        text += f" {counts['suppressed']} suppressed (--show-suppressed to list)."
    return text
