"""Source positions: spans and the location tree built beside each document.

Rules never see parser objects. They see plain data and ask the document for
the span of a path (a tuple of mapping keys and list indices).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Union

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

    The loader hands out nodes whose children are made on first access
    (`expand`): a finding needs the nodes on one path, not the whole tree.
    """

    __slots__ = ("span", "start", "end", "style", "_children", "_expand")

    def __init__(self, span: Span, start: int, end: int, style: str | None = None,
                 expand: Callable[[], dict | list] | None = None) -> None:
        self.span = span
        self.start = start
        self.end = end
        self.style = style
        self._children: dict | list | None = None
        self._expand = expand

    @property
    def children(self) -> dict | list | None:
        expand = self._expand
        if expand is not None:
            self._expand = None
            self._children = expand()
        return self._children

    @children.setter
    def children(self, value: dict | list | None) -> None:
        self._expand = None
        self._children = value
