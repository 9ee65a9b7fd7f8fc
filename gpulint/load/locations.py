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

    The loader hands out collections whose children, span and end are made on
    first access (yamlload._CollectionLoc): a finding needs the nodes on one path,
    not the whole tree.
    """

    __slots__ = ("span", "start", "end", "style", "children")

    def __init__(self, span: Span, start: int, end: int, style: str | None = None,
                 children: dict | list | None = None) -> None:
        self.span = span
        self.start = start
        self.end = end
        self.style = style
        self.children = children

    def key_offsets(self) -> dict | None:
        """A mapping's keys -> (start, end): where each key of `children` is written, as offsets into
        the document's text; None when not known (then the key spans say it)."""
        return None

    def first_key_start(self) -> int | None:
        """Where a mapping's first key event starts, without making `children`; None when not known
        (a list, no keys, or a node that must make its children to say)."""
        return None
