"""Inline suppression comments: `# gpulint: ignore[GPU003,GPU006] reason`.

A directive applies to findings on its own line, or, written on a line of its
own, to findings on the next line. It names the rules it silences (ids or rule
names) and says why. A directive without codes silences nothing (a blanket
ignore would hide every future rule too); without a reason it still works, but
both are reported (GPU091, GPU090), and directives that silenced nothing are
reported when GPU092 is enabled. The same comments work in YAML (also inside a
block scalar, i.e. in a script) and in Dockerfiles; text inside a plain or
quoted scalar is not a comment, and JSON has none (see load/comments.py).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from gpulint.api import LineAt, SuppressionComment, UnusedSuppression
from gpulint.lazypattern import lazy
from gpulint.load.comments import CommentMap
from gpulint.load.filenames import is_dockerfile
from gpulint.load.locations import Span
from gpulint.record import record, set_field
from gpulint.results.emit import Emitter
from gpulint.results.findings import Finding, Suppression
from gpulint.results.scanning import SuppressionContext
from gpulint.suppress.core import (
    KIND_INLINE,
    NO_REASON,
    code_matches,
    directive_hook,
    unused_suppression_hook,
    unused_label,
)

if TYPE_CHECKING:
    from gpulint.load.yamlload import Document
    from gpulint.model.workload import Workload
    from gpulint.results.findings import FileReport
    from gpulint.results.scanning import ScanConfig, ScanResult

# `#` starts a comment at the start of a line or after whitespace (YAML and
# Dockerfile alike); `a#b` is not a comment.
_DIRECTIVE_RE = lazy(
    r"(?:^|(?<=\s))#\s*gpulint:\s*ignore(?![\w-])\s*(?P<codes>\[[^\]]*\])?(?P<rest>.*)$", re.I)
_QUICK_RE = lazy(r"gpulint:\s*ignore", re.I)
_CODE_SPLIT_RE = lazy(r"[\s,]+")
# The reason ends where another comment starts (`... reason  # other note`).
_NEXT_COMMENT_RE = lazy(r"\s#\s")


# Comment lines looked at one by one before the rest of a text is looked at whole (_may_hold_directive).
_COMMENT_LINES = 8


def _may_hold_directive(text: str) -> bool:
    """Whether a line of `text` may hold a directive: `_QUICK_RE.search(text)`, without its slow
    case-insensitive scan of the usual text that has no "gpul" in any case (only the ASCII letters
    match g, p, u, l under re.I) on a line after a `#`. A directive is a comment: most documents have
    none, or a few comment lines (Helm's `# Source:`, a script's `#!`), each lowered alone."""
    start = text.find("#")
    for _ in range(_COMMENT_LINES):
        if start < 0:
            return False
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        if "gpul" in text[start:end].lower():
            return _QUICK_RE.search(text) is not None
        start = text.find("#", end)
    return start >= 0 and "gpul" in text[start:].lower() and _QUICK_RE.search(text) is not None


@record(frozen=True)
class Directive:
    """One `# gpulint: ignore` comment."""
    __slots__ = ("line", "column", "end_column", "codes", "reason", "own_line", "has_brackets")
    line: int                  # 1-based file line
    column: int                # 1-based column of the `#`
    end_column: int            # exclusive, end of the directive text
    codes: tuple[str, ...]     # as written; empty when none were given
    reason: str                # "" when none was given
    own_line: bool             # the line holds nothing but the comment
    has_brackets: bool

    def __init__(self, line: int, column: int, end_column: int, codes: tuple[str, ...], reason: str,
                 own_line: bool, has_brackets: bool) -> None:
        set_field(self, "line", line)
        set_field(self, "column", column)
        set_field(self, "end_column", end_column)
        set_field(self, "codes", codes)
        set_field(self, "reason", reason)
        set_field(self, "own_line", own_line)
        set_field(self, "has_brackets", has_brackets)

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.line, self.end_column)

    @property
    def text(self) -> str:
        codes = f"[{','.join(self.codes)}]" if self.has_brackets else ""
        return f"# gpulint: ignore{codes}"


def parse_directive(line_text: str, line: int) -> Directive | None:
    """The directive in one line of text, if there is one."""
    if not _QUICK_RE.search(line_text):
        return None
    match = _DIRECTIVE_RE.search(line_text)
    if match is None:
        return None
    brackets = match.group("codes")
    codes = tuple(c for c in _CODE_SPLIT_RE.split(brackets[1:-1]) if c) if brackets else ()
    rest = match.group("rest")
    cut = _NEXT_COMMENT_RE.search(rest)
    end = match.end() if cut is None else match.start("rest") + cut.start()
    reason = rest[: cut.start()] if cut else rest
    reason = reason.strip().lstrip(":-–—").strip()
    column = match.start() + 1
    return Directive(
        line=line,
        column=column,
        end_column=len(line_text[:end].rstrip()) + 1,
        codes=codes,
        reason=reason,
        own_line=not line_text[: match.start()].strip(),
        has_brackets=brackets is not None,
    )


def _in_comment(comments: CommentMap, file: str, line: int, directive: Directive) -> bool:
    """Whether a directive is a real comment: in YAML, not text inside a scalar (JSON has none);
    a Dockerfile's `#` comments are its own."""
    if is_dockerfile(os.path.basename(file)):
        return True
    return comments.is_comment(line, directive.column)


class InlineSuppressions:
    """The inline suppressor and the hook that reports directives (bad or unused)."""

    def __init__(self, about_suppressions: frozenset[str]) -> None:
        # Rules whose findings no directive silences (core.about_suppressions).
        self.about_suppressions = about_suppressions
        # (file, line, code as written) of every directive code that silenced a finding.
        self.used: set[tuple[str, int, str]] = set()
        # Directives seen per file, each with a context over the text it is in (for later findings).
        self.seen: dict[str, list[tuple[Directive, SuppressionContext]]] = {}
        # The last text findings came from, and whether any line of it may hold a directive:
        # most documents hold none, and then no finding needs their lines.
        self._last_text: tuple[str, bool] | None = None
        # Where the real comments of the last text with a directive are (made when first asked).
        self._comments: tuple[str, int, CommentMap] | None = None

    # --- the suppressor -------------------------------------------------------

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> Suppression | None:
        if ctx.text is None or finding.rule_id in self.about_suppressions:
            return None
        if self._last_text is None or self._last_text[0] is not ctx.text:
            self._last_text = (ctx.text, _may_hold_directive(ctx.text))
        if not self._last_text[1]:
            return None
        line = finding.span.line
        for number, needs_own_line in ((line, False), (line - 1, True)):
            text = ctx.line(number)
            if not text:
                continue
            directive = parse_directive(text, number)
            if directive is None or (needs_own_line and not directive.own_line):
                continue
            if not _in_comment(self._comment_map(ctx.text, ctx.line_offset), finding.file, number, directive):
                continue  # text inside a string that reads like a directive
            for code in directive.codes:
                if code_matches(code, finding):
                    self.used.add((finding.file, number, code))
                    return Suppression(KIND_INLINE, directive.reason or NO_REASON)
        return None

    def _comment_map(self, text: str, line_offset: int) -> CommentMap:
        last = self._comments
        if last is None or last[0] is not text or last[1] != line_offset:
            last = self._comments = (text, line_offset, CommentMap(text, line_offset))
        return last[2]

    # --- the hook -------------------------------------------------------------

    def text_done(self, report: "FileReport", text: str, line_offset: int, config: "ScanConfig") -> None:
        if not _may_hold_directive(text):
            return
        found = []
        comments = CommentMap(text, line_offset)
        for number, line_text in enumerate(text.split("\n"), start=line_offset + 1):
            directive = parse_directive(line_text.rstrip("\r"), number)
            if directive is not None and _in_comment(comments, report.file, number, directive):
                found.append((directive, SuppressionContext(None, None, None, text, line_offset)))
        if not found:
            return
        self.seen.setdefault(report.file, []).extend(found)
        emitter = Emitter(config)
        for d, ctx in found:
            span = d.span
            comment = SuppressionComment(d.text, LineAt(span.line, span.column, span.end_line, span.end_column),
                                         tuple(d.codes), d.reason or "")
            emitter.event(report, ctx, directive_hook, comment, report.file)

    def document_done(self, report: "FileReport", doc: "Document", workloads: "list[Workload]",
                      config: "ScanConfig") -> None:
        return None

    # A ParallelHook (see suppress.py): what workers saw is gathered before scan_done.
    def take_state(self) -> tuple[set, dict]:
        state = (self.used, self.seen)
        self.used, self.seen = set(), {}
        return state

    def merge_state(self, state: tuple[set, dict]) -> None:
        used, seen = state
        self.used |= used
        for file, directives in seen.items():
            self.seen.setdefault(file, []).extend(directives)

    def scan_done(self, result: "ScanResult", config: "ScanConfig") -> None:
        if not any(rule.check_suppression is not None for rule in config.rules):
            return
        emitter = Emitter(config)
        reports = {report.file: report for report in result.files}
        for file, directives in self.seen.items():
            report = reports.get(file)
            if report is None:
                continue
            for d, ctx in directives:
                unused = []
                for code in d.codes:
                    if (file, d.line, code) in self.used:
                        continue
                    unused.append(unused_label(code, config))
                if unused:
                    span = d.span
                    emitter.event(report, ctx, unused_suppression_hook,
                                  UnusedSuppression(f"`{d.text}`", LineAt(span.line, span.column, span.end_line,
                                                                           span.end_column), tuple(unused)),
                                  report.file)
