"""Source positions: spans and the location tree built beside each document.

Rules never see parser objects. They see plain data and ask the document for
the span of a path (a tuple of mapping keys and list indices).
"""

from __future__ import annotations

from typing import NamedTuple, Union

PathItem = Union[str, int]
Path = tuple  # tuple[PathItem, ...]; kept loose for speed and readability


class Span(NamedTuple):
    """A region in the file read: 1-based lines and columns, end column exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


class LocNode:
    """Location of one YAML node and, for collections, of its children.

    `children` is a dict (key -> (key_span, LocNode)) for mappings, a list of
    LocNode for sequences, None for scalars. `start`/`end` are character offsets
    into the document's text (used to find text inside block scalars); `style`
    is the scalar style ('' plain, '|' literal, '>' folded, quotes).
    """

    __slots__ = ("span", "children", "start", "end", "style")

    def __init__(self, span: Span, start: int, end: int, style: str | None = None) -> None:
        self.span = span
        self.children: dict | list | None = None
        self.start = start
        self.end = end
        self.style = style
