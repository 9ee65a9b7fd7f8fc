"""A Helm template read as indented text: YAML-shaped lines and `{{ }}` actions.

Templates are not YAML, but they are written as YAML with actions in it, so the
indentation of the literal text is enough to follow a path (spec -> template ->
containers -> ...) down to the line that produced a node. Each action records
the block actions (`with`, `range`, `if`, `define`) enclosing it, so `.` and
`$var` inside them can be traced back to `.Values`.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpulint.lazypattern import lazy
from gpulint.record import record

_OPENERS = frozenset({"if", "with", "range", "define", "block"})
_PLACEHOLDER = "\x01"
_KEY_RE = lazy(
    r"""(?:"(?P<dq>[^"\x01]*)"|'(?P<sq>[^'\x01]*)'|(?P<plain>[^\s:#'"\x01\-?\[\]{},&*!|>%@`][^:#\x01]*?|-[^\s:#\x01][^:#\x01]*?))"""
    r"""\s*:(?:[ \t]|$)"""
)
_DEFINE_RE = lazy(r'^(?:define|block)\s+"([^"]+)"')


@record(eq=True, repr=True)
class Action:
    """One `{{ ... }}`; positions are 0-based, `end_col` exclusive."""

    __slots__ = ("line", "col", "end_line", "end_col", "text", "context")
    line: int
    col: int
    end_line: int
    end_col: int
    text: str                       # inside the braces, trim markers and spaces removed
    context: tuple["Action", ...]   # enclosing block openers, outermost first

    def __init__(self, line: int, col: int, end_line: int, end_col: int, text: str,
                 context: tuple["Action", ...]) -> None:
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.text = text
        self.context = context

    @property
    def word(self) -> str:
        return self.text.split(None, 1)[0] if self.text else ""

    @property
    def is_comment(self) -> bool:
        return self.text.startswith("/*")

    @property
    def is_control(self) -> bool:
        """Does not write text: block openers/closers, comments, assignments."""
        word = self.word
        return (self.is_comment or word in _OPENERS or word in ("end", "else", "break", "continue")
                or bool(re.match(r"^\$\w*\s*:?=", self.text)))


@record(eq=True, repr=True)
class Line:
    __slots__ = ("index", "text", "indent", "content", "yaml", "dashes", "dash_col", "key", "key_col",
                 "inline_value", "actions")
    index: int
    text: str
    indent: int
    content: str                    # the text with actions blanked out (same columns)
    yaml: bool                      # has literal YAML text outside actions and comments
    dashes: int                     # `- ` list markers at the start
    dash_col: int
    key: str | None                 # the mapping key after any dashes
    key_col: int                    # column of the key (or of the item content after dashes)
    inline_value: str               # text after `key:` (with actions blanked)
    actions: list[Action]

    def __init__(self, index: int, text: str, indent: int, content: str, yaml: bool, dashes: int = 0,
                 dash_col: int = -1, key: str | None = None, key_col: int = -1, inline_value: str = "",
                 actions: list[Action] | None = None) -> None:
        self.index = index
        self.text = text
        self.indent = indent
        self.content = content
        self.yaml = yaml
        self.dashes = dashes
        self.dash_col = dash_col
        self.key = key
        self.key_col = key_col
        self.inline_value = inline_value
        self.actions = [] if actions is None else actions

    @property
    def output_actions(self) -> list[Action]:
        return [a for a in self.actions if not a.is_control]


class Template:
    """One template file (or `.tpl` helper file) of a chart."""

    def __init__(self, path: Path, display: str, text: str) -> None:
        self.path = path
        self.display = display
        self.text = text
        raw_lines = text.split("\n")
        self.actions = _scan_actions(text)
        blanked = _blank_actions(raw_lines, self.actions)
        self.lines = [_classify(i, raw, content) for i, (raw, content) in enumerate(zip(raw_lines, blanked))]
        for action in self.actions:
            self.lines[action.line].actions.append(action)
        self._line_context = _line_contexts(len(raw_lines), self.actions)

    def context_at(self, line: int) -> tuple[Action, ...]:
        """Block openers enclosing the start of `line`."""
        return self._line_context[line]

    def defines(self) -> dict[str, tuple[int, int]]:
        """Helper name -> (first body line, line of its `end`) for each `define`."""
        out: dict[str, tuple[int, int]] = {}
        for action in self.actions:
            match = _DEFINE_RE.match(action.text)
            if not match:
                continue
            end = self._matching_end(action)
            if end is None:
                continue
            first = action.end_line + 1 if self._ends_line(action) else action.end_line
            before_end = self.lines[end.line].text[:end.col]
            last = end.line + 1 if before_end.strip() and end.line > action.end_line else end.line
            out.setdefault(match.group(1), (first, max(first, last)))
        return out

    def _ends_line(self, action: Action) -> bool:
        rest = self.lines[action.end_line].text[action.end_col:]
        return not rest.strip()

    def _matching_end(self, opener: Action) -> Action | None:
        for action in self.actions:
            if action.word == "end" and action.context and action.context[-1] is opener:
                return action
        return None

    def regions(self) -> list[tuple[int, int]]:
        """Line ranges [start, end) separated by `---` lines, keeping those with YAML text."""
        out: list[tuple[int, int]] = []
        start = 0
        for line in self.lines:
            if re.match(r"^---(?:\s|$)", line.text):
                out.append((start, line.index))
                start = line.index + 1
        out.append((start, len(self.lines)))
        return [(a, b) for a, b in out if any(self.lines[i].yaml for i in range(a, b))]


def _scan_actions(text: str) -> list[Action]:
    actions: list[Action] = []
    stack: list[Action] = []
    line_starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            line_starts.append(i + 1)

    def position(index: int) -> tuple[int, int]:
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= index:
                lo = mid
            else:
                hi = mid - 1
        return lo, index - line_starts[lo]

    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            break
        end = text.find("}}", start + 2)
        if text.startswith("{{/*", start) or text.startswith("{{- /*", start):
            comment_end = text.find("*/", start)
            if comment_end >= 0:
                end = text.find("}}", comment_end)
        if end < 0:
            break
        inner = text[start + 2:end]
        inner = inner[1:] if inner.startswith("-") else inner
        inner = inner[:-1] if inner.endswith("-") else inner
        line, col = position(start)
        end_line, end_col = position(end + 2)
        action = Action(line, col, end_line, end_col, inner.strip(), tuple(stack))
        actions.append(action)
        word = action.word
        if not action.is_comment:
            if word in _OPENERS:
                stack.append(action)
            elif word == "end" and stack:
                stack.pop()
        pos = end + 2
    return actions


def _blank_actions(lines: list[str], actions: list[Action]) -> list[str]:
    out = [list(line) for line in lines]
    for a in actions:
        for ln in range(a.line, a.end_line + 1):
            row = out[ln]
            lo = a.col if ln == a.line else 0
            hi = a.end_col if ln == a.end_line else len(row)
            for c in range(lo, min(hi, len(row))):
                row[c] = _PLACEHOLDER
    return ["".join(row) for row in out]


def _classify(index: int, raw: str, content: str) -> Line:
    indent = len(raw) - len(raw.lstrip(" "))
    literal = content.replace(_PLACEHOLDER, " ").strip()
    is_yaml = bool(literal) and not literal.startswith("#") and literal not in ("---", "...")
    line = Line(index, raw, indent, content, is_yaml)
    if not is_yaml:
        return line
    col = indent
    while content.startswith("- ", col) or content[col:].rstrip() == "-":
        if line.dashes == 0:
            line.dash_col = col
        line.dashes += 1
        col += 1
        while col < len(content) and content[col] == " ":
            col += 1
        if col >= len(content):
            break
    line.key_col = col
    match = _KEY_RE.match(content, col)
    if match:
        key = match.group("dq") if match.group("dq") is not None else (
            match.group("sq") if match.group("sq") is not None else match.group("plain"))
        line.key = key.strip() if key is not None else None
        line.inline_value = content[match.end():].strip()
    return line


def _line_contexts(count: int, actions: list[Action]) -> list[tuple[Action, ...]]:
    """Enclosing openers at the start of every line."""
    out: list[tuple[Action, ...]] = []
    stack: tuple[Action, ...] = ()
    by_line: dict[int, list[Action]] = {}
    for a in actions:
        by_line.setdefault(a.end_line, []).append(a)
    for ln in range(count):
        out.append(stack)
        for a in by_line.get(ln, ()):
            if a.is_comment:
                continue
            if a.word in _OPENERS:
                stack = a.context + (a,)
            elif a.word == "end":
                stack = a.context[:-1]
    return out
