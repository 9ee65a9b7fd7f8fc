"""The Markdown job summary GitHub Actions shows on a run's page ($GITHUB_STEP_SUMMARY).

A table people read instead of a log they scroll: findings by rule and
severity, the files with the most findings, and what was suppressed and how.
Names come from the scanned tree: they are escaped for Markdown (and for lines,
safetext.py), so a file name cannot add links, tables or HTML to the page.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import IO

from gpulint.report import RULE_DOCS_URI, summary
from gpulint.report.safetext import printable, printable_path
from gpulint.results.findings import Finding
from gpulint.results.scanning import ScanResult

ENV = "GITHUB_STEP_SUMMARY"
TOP_FILES = 10
# Inline Markdown and HTML: emphasis, code, links, tables, tags and entities.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~&])")


# What GitHub turns into a link or a notification in text it renders, escapes aside: `@user` and
# `@org/team` mentions, `#123` references, and autolinks (`https://...`, `www.`, `a@b.c`). A zero
# width space after `@`, `#`, `:` of `://` and `www` breaks each without changing what is read.
_LINKING = re.compile(r"(@|#(?=\d)|:(?=//)|(?<![\w.])www(?=\.))", re.I)


def md(text: str) -> str:
    """Text shown as itself in Markdown: punctuation Markdown reads is backslash-escaped, and
    mentions, references and autolinks are broken."""
    return _LINKING.sub("\\1\u200b", _MARKDOWN.sub(r"\\\1", text))


def _where(finding: Finding) -> str:
    """The file a human edits: the template or source a rendered finding maps to."""
    return finding.mapped[0].file if finding.mapped else finding.file


def markdown(result: ScanResult, top: int = TOP_FILES) -> str:
    from gpulint.report.text import _summary_line

    counts = summary(result)
    findings = result.findings
    active = [f for f in findings if f.suppressed is None]
    suppressed = [f for f in findings if f.suppressed is not None]
    sev = counts["by_severity"]
    words = {"error": "error", "warning": "warning", "info": "info"}
    parts = [f"{sev[k]} {w}{'s' if k != 'info' and sev[k] != 1 else ''}" for k, w in words.items() if sev[k]]
    head = f"{len(active)} finding{'' if len(active) == 1 else 's'}" + (f" ({', '.join(parts)})" if parts else "")
    lines = [f"### gpulint: {head if active else 'no findings'}", "", md(_summary_line(counts)), ""]

    if findings:
        rules: dict[str, Counter] = {}
        names: dict[str, str] = {}
        for finding in findings:
            column = "suppressed" if finding.suppressed is not None else finding.severity.value
            rules.setdefault(finding.rule_id, Counter())[column] += 1
            names[finding.rule_id] = finding.rule_name
        lines += ["| Rule | Name | Errors | Warnings | Info | Suppressed |", "|---|---|--:|--:|--:|--:|"]
        for rule_id in sorted(rules):
            c = rules[rule_id]
            link = f"[{md(rule_id)}]({RULE_DOCS_URI.format(id=rule_id)})" if re.fullmatch(r"[A-Z]+\d+", rule_id) \
                else md(rule_id)
            lines.append(f"| {link} | {md(names[rule_id])} | {c['error']} | {c['warning']} | {c['info']} | "
                         f"{c['suppressed']} |")
        lines.append("")

    if active:
        by_file = Counter(_where(f) for f in active)
        ranked = sorted(by_file.items(), key=lambda item: (-item[1], item[0]))
        lines += ["**Files with the most findings**", "", "| File | Findings |", "|---|--:|"]
        lines += [f"| {md(printable_path(name))} | {n} |" for name, n in ranked[:top]]
        if len(ranked) > top:
            rest = len(ranked) - top
            lines.append(f"| and {rest} more file{'' if rest == 1 else 's'} | "
                         f"{sum(n for _, n in ranked[top:])} |")
        lines.append("")

    if suppressed:
        kinds = Counter(f.suppressed.kind for f in suppressed)  # type: ignore[union-attr]
        how = ", ".join(f"{md(kind)} {n}" for kind, n in sorted(kinds.items()))
        lines += [f"**Suppressed:** {len(suppressed)} ({how}); they do not fail the job. "
                  "`gpulint scan --show-suppressed` lists them with their reasons.", ""]
    if result.internal_errors:
        lines += [f"**Internal errors:** {len(result.internal_errors)}; see the log.", ""]
        lines += [f"- {md(printable(message))}" for message in result.internal_errors[:top]]
        lines.append("")
    return "\n".join(lines) + "\n"


def append_to_step_summary(result: ScanResult, environ: dict | None = None) -> bool:
    """Append the summary to the file $GITHUB_STEP_SUMMARY names, if it is set; whether it was."""
    path = (os.environ if environ is None else environ).get(ENV)
    if not path:
        return False
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        write(result, handle)
    return True


def write(result: ScanResult, out: IO[str]) -> None:
    out.write(markdown(result))
