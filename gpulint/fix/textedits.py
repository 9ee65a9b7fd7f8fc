"""Text edits placed by line and column, applied to a whole file's text."""

from __future__ import annotations

import re
from typing import Iterable

from gpulint.results.findings import FindingFix


class Lines:
    """Offsets of a text's lines, to turn a (1-based) line and column into an offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [match.end() for match in re.finditer("\n", text)]

    def offset(self, line: int, column: int) -> int:
        if not 1 <= line <= len(self.starts):
            raise ValueError(f"line {line} is not in the text")
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        if not 0 <= column - 1 <= end - start:
            raise ValueError(f"column {column} is not in line {line}")
        return start + column - 1

    def ranges(self, fix: FindingFix) -> list[tuple[int, int, str]]:
        out = []
        for edit in fix.edits:
            s = edit.span
            out.append((self.offset(s.line, s.column), self.offset(s.end_line, s.end_column), edit.text))
        return out


def apply(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """`text` with the non-overlapping (start, end, new text) edits made; the rest left as it is."""
    out = []
    at = 0
    for start, end, new in sorted(edits):
        if start < at:
            raise ValueError("overlapping edits")
        out.append(text[at:start])
        out.append(new)
        at = end
    out.append(text[at:])
    return "".join(out)


def apply_fixes(text: str, fixes: Iterable[FindingFix]) -> str:
    lines = Lines(text)
    return apply(text, [edit for fix in fixes for edit in lines.ranges(fix)])


def disjoint(taken: list[tuple[int, int]], ranges: list[tuple[int, int, str]]) -> bool:
    """Whether none of `ranges` overlaps or touches one already `taken` (those wait for the next round)."""
    return all(max(start, s) > min(end, e) for start, end, _new in ranges for s, e in taken)


