"""Text reports: `concise` (one line per finding), `full` (grouped by file, with each finding's
source line), `--statistics` (findings per rule); then a summary line.

A concise line is `path:line:col: GPU003 [error] message`: for rendered input the
path is the template (or Kustomize source) line, and the values key and rendered
position follow in brackets. The full form shows the same line of text under a
heading per file (the file a human edits), with the source line and a caret.
"""

from __future__ import annotations

import os
from typing import IO, Collection, Iterable

from gpulint.report import summary, visible
from gpulint.report.safetext import no_command, no_commands, printable, printable_path, terminal_text
from gpulint.results.findings import Finding
from gpulint.results.scanning import ScanResult

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"
_MAX_SOURCE = 200   # characters of a source line shown; longer lines are cut with "..."


def render(result: ScanResult, show_suppressed: bool = False, colour: bool = False) -> str:
    import io

    out = io.StringIO()
    write(result, out, show_suppressed, colour)
    return out.getvalue()


def write(result: ScanResult, out: IO[str], show_suppressed: bool = False, colour: bool = False, *,
          full: bool = False, quiet: bool = False, not_on_disk: Collection[str] = ()) -> None:
    """Write the report finding by finding (a large scan's report is never held whole).

    `full`: grouped by file with source lines, read from the files as they are now;
    `not_on_disk` names inputs whose text is not the file of that name (stdin).
    `quiet`: no summary line."""
    findings = visible(result.findings, show_suppressed)
    if full:
        _write_full(findings, out, colour, not_on_disk)
    else:
        for finding in findings:
            out.write(no_command(_line(finding, colour)) + "\n")
    if not quiet:
        out.write(_summary_line(summary(result), show_suppressed) + "\n")


def write_statistics(result: ScanResult, out: IO[str], show_suppressed: bool = False, colour: bool = False,
                     quiet: bool = False) -> None:
    """Findings per rule, most first (like `ruff check --statistics`), then the summary line."""
    rows = statistics(result, show_suppressed)
    width = max((len(str(row["count"])) for row in rows), default=1)
    name_width = max((len(row["name"]) for row in rows), default=0)
    for row in rows:
        rule, severity = row["rule"], f"[{row['severity']}]"
        if colour:
            rule = f"{_BOLD}{rule}{_RESET}"
            severity = f"{_COLOURS[row['severity']]}{severity}{_RESET}"
        out.write(f"{row['count']:>{width}}  {rule}  {row['name']:<{name_width}}  {severity}".rstrip() + "\n")
    if not quiet:
        out.write(_summary_line(summary(result), show_suppressed) + "\n")


def statistics(result: ScanResult, show_suppressed: bool = False) -> list[dict]:
    """[{rule, name, severity, count}] of the reported findings, by count then rule id.
    A rule whose findings have several severities (configured per rule) gets one row each."""
    counts: dict[tuple[str, str, str], int] = {}
    for finding in visible(result.findings, show_suppressed):
        key = (finding.rule_id, finding.rule_name, finding.severity.value)
        counts[key] = counts.get(key, 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"rule": rule, "name": name, "severity": severity, "count": count}
            for (rule, name, severity), count in ordered]


def _where(finding: Finding) -> tuple[str, int, int]:
    """The position a human edits: the template/source line for rendered input."""
    primary = finding.mapped[0] if finding.mapped else None
    s = primary.span if primary else finding.span
    return (primary.file if primary else finding.file), s.line, s.column


def _write_full(findings: Iterable[Finding], out: IO[str], colour: bool, not_on_disk: Collection[str]) -> None:
    current = None
    source: _SourceLines | None = None
    try:
        for finding in findings:
            path, line, column = _where(finding)
            if path != current:
                if current is not None:
                    out.write("\n")
                if source is not None:
                    source.close()
                current = path
                source = None if path in not_on_disk else _SourceLines(path)
                shown = no_command(printable_path(path))
                out.write((f"{_BOLD}{shown}{_RESET}" if colour else shown) + ":\n")
            out.write(no_command("  " + _line(finding, colour, with_path=False)) + "\n")
            text = source.line(line) if source is not None else ""
            if text:
                out.write(no_commands(_snippet(text, line, column, colour)))
    finally:
        if source is not None:
            source.close()


class _SourceLines:
    """Lines of one file, read forward as findings ask for them (a large file is never held
    whole). Only a regular file at exactly `path` is read: rendered output and stdin have none."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.handle: IO[str] | None = None
        self.number = 0            # lines read so far
        self.last = ""             # line `number`, for several findings on one line

    def line(self, number: int) -> str:
        if number < 1:
            return ""
        if self.handle is not None and number == self.number:
            return self.last
        if self.handle is None or number < self.number:
            self.close()
            if not os.path.isfile(self.path):
                return ""
            try:
                self.handle = open(self.path, encoding="utf-8-sig", errors="replace", newline="")
            except OSError:
                return ""
            self.number = 0
        text = ""
        while self.number < number:
            text = self.handle.readline()
            if not text:
                return ""
            self.number += 1
        self.last = text.rstrip("\r\n")
        return self.last

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def _snippet(source: str, line: int, column: int, colour: bool) -> str:
    """`   14 | text` and a caret under the column (tabs kept so the caret lines up)."""
    cut = source if len(source) <= _MAX_SOURCE else source[:_MAX_SOURCE]
    # The line is the tree's: control characters escaped (an escape sequence would drive the terminal).
    shown = terminal_text(cut) + ("..." if len(cut) < len(source) else "")
    lead = "".join(c if c == "\t" else " " * len(terminal_text(c)) for c in cut[:max(column - 1, 0)])
    number = str(line)
    gutter = " " * len(number) + " |"
    caret = "^"
    if colour:
        gutter, caret = f"{_DIM}{gutter}{_RESET}", f"{_BOLD}{caret}{_RESET}"
        number_part = f"{_DIM}{number} |{_RESET}"
    else:
        number_part = f"{number} |"
    return f"    {number_part} {shown}\n    {gutter} {lead}{caret}\n"


def _line(finding: Finding, colour: bool, with_path: bool = True) -> str:
    # Rendered input (a chart, a kustomization): the file a human edits comes
    # first, the position in the rendered output last.
    # Names and messages come from the scanned tree: escaped (safetext.py), so
    # a name that is not UTF-8 or holds a newline cannot break or forge a line.
    primary = finding.mapped[0] if finding.mapped else None
    path, line, column = _where(finding)
    where = f"{printable_path(path)}:{line}:{column}:" if with_path else f"{line}:{column}:"
    rule = finding.rule_id
    severity = f"[{finding.severity.value}]"
    if colour:
        where = f"{_BOLD}{where}{_RESET}"
        rule = f"{_BOLD}{rule}{_RESET}"
        severity = f"{_COLOURS[finding.severity.value]}{severity}{_RESET}"
    text = f"{where} {rule} {severity} {printable(finding.message)}"
    if primary is not None:
        text += f" [{_mapped_note(finding)}]"
    elif finding.source:
        text += f" [from {printable_path(finding.source.path)}]"
    if finding.suppressed is not None:
        note = f"[suppressed ({finding.suppressed.kind}): {printable(finding.suppressed.reason)}]"
        text += f" {_DIM}{note}{_RESET}" if colour else f" {note}"
    return text


def _mapped_note(finding: Finding) -> str:
    """`helper "x"; values key a.b at values.yaml:3:5; rendered at chart (rendered):40:15`."""
    primary, *others = finding.mapped
    parts = [] if primary.description == "template" else [printable(primary.description)]
    for loc in others:
        parts.append(f"{printable(loc.description or loc.role)} at "
                     f"{printable_path(loc.file)}:{loc.span.line}:{loc.span.column}")
    parts.append(f"rendered at {printable_path(finding.file)}:{finding.span.line}:{finding.span.column}")
    return "; ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary_line(counts: dict, show_suppressed: bool = False) -> str:
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
    if counts["outside_root"]:
        extras.append(f"{counts['outside_root']} outside the scanned directory (not followed)")
    if counts["ignored"]:
        extras.append(f"{counts['ignored']} ignored by git (--no-ignore to scan)")
    if extras:
        text += ", " + ", ".join(extras)
    text += "."
    if counts["suppressed"]:
        hint = "" if show_suppressed else " (--show-suppressed to list)"
        text += f" {counts['suppressed']} suppressed{hint}."
    return text
