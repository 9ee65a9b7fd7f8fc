"""Which `#` of a YAML text start real comments (and not text inside a quoted scalar).

Inline suppressions (`# gpulint: ignore[...]`) must come from comments a
reviewer sees as comments. A line of a double-quoted multi-line string, or a
JSON string, can read exactly like one:

    args: ["sh", "-c", "echo start
      # gpulint: ignore[GPU003] looks like a comment, is part of the string
      "]

libyaml's scanner knows where every scalar starts and ends: a `#` inside a
plain, single- or double-quoted scalar is text. Block scalars (`|`, `>`) are
the exception gpulint keeps on purpose: their lines are scripts and config
files, where a `#` line is that language's comment and reads as one. JSON has
no comments, so JSON text holds no directive at all.
"""

from __future__ import annotations

from bisect import bisect_right

from _ruamel_yaml import CParser

from gpulint.load.yamlload import DEFAULT_LIMITS, split_documents

_FLOW_STYLES = ("", "'", '"')


class CommentMap:
    """Answers `is_comment(line, column)` for one text (a document or a whole file)."""

    __slots__ = ("_text", "_line_offset", "_json", "_starts", "_ends", "_line_starts")

    def __init__(self, text: str, line_offset: int = 0) -> None:
        self._text = text
        self._line_offset = line_offset
        self._json = False
        self._starts: list[int] | None = None   # flow scalars' start offsets, sorted
        self._ends: list[int] = []
        self._line_starts: list[int] = []

    def _build(self) -> None:
        from gpulint.load import jsonload  # only for texts that hold a directive

        ranges: list[tuple[int, int]] = []
        base = 0
        for chunk, _line in split_documents(self._text):
            if jsonload.looks_like_json(chunk):
                self._json = True  # JSON holds no comments, hence no directives
            ranges.extend((base + start, base + end) for start, end in _flow_scalars(chunk))
            base += len(chunk)
        ranges.sort()
        self._starts = [start for start, _end in ranges]
        self._ends = [end for _start, end in ranges]
        starts = [0]
        pos = self._text.find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = self._text.find("\n", pos + 1)
        self._line_starts = starts

    def is_comment(self, line: int, column: int) -> bool:
        """Whether the `#` at 1-based file `line` and `column` starts a real comment."""
        if self._starts is None:
            self._build()
        if self._json:
            return False
        index = line - 1 - self._line_offset
        if not 0 <= index < len(self._line_starts):
            return False
        offset = self._line_starts[index] + column - 1
        at = bisect_right(self._starts, offset) - 1  # type: ignore[arg-type]
        return at < 0 or offset >= self._ends[at]


_OPENS = frozenset({"FlowSequenceStartToken", "FlowMappingStartToken", "BlockSequenceStartToken",
                    "BlockMappingStartToken"})
_CLOSES = frozenset({"FlowSequenceEndToken", "FlowMappingEndToken", "BlockEndToken"})


def _flow_scalars(chunk: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the plain and quoted scalars of `chunk`, as far as it scans.

    Scanning stops, like a syntax error, at nesting deeper than the loader's
    default limit: libyaml's scanner takes time growing with the square of the
    depth, and such a document does not load anyway.
    """
    out: list[tuple[int, int]] = []
    parser = CParser(chunk)
    depth = 0
    try:
        while True:
            token = parser.get_token()
            name = type(token).__name__
            if token is None or name == "StreamEndToken":
                break
            if name == "ScalarToken":
                if token.style in _FLOW_STYLES:
                    out.append((token.start_mark.index, token.end_mark.index))
            elif name in _OPENS:
                depth += 1
                if depth > DEFAULT_LIMITS.max_depth:
                    break
            elif name in _CLOSES:
                depth -= 1
    except Exception:  # noqa: BLE001 - broken YAML: what was scanned before the error still counts
        pass
    finally:
        parser.dispose()
    return out
