"""Source positions: spans and the location tree built beside each document.

Rules never see parser objects. They see plain data and ask the document for
the span of a path (a tuple of mapping keys and list indices).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence, Union

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

    def along(self, path: tuple) -> "Sequence[LocNode] | None":
        """The nodes on `path` from this one down (this one first), as far as the path exists: the
        node at path[:depth] is along(path)[depth] for depth < len(along(path)). None: not known."""
        return None

    def start_line(self) -> int | None:
        """How many line breaks the loader counted before `start` in the document's text (None: not known)."""
        return None

    # Entries and items as written, read without making `children` (a mapping's entries by key, a
    # list's items in order, a node each): true of a document written in place (no alias, merge key
    # or repeated key), where the entries written are the children. None: not known.

    def kind(self) -> type | None:
        """The type of `children` (dict, list, None for a scalar), without making them."""
        children = self.children
        return None if children is None else type(children)

    def item_count(self) -> int | None:
        """How many entries or items are written."""
        return None

    def item_index(self, key: object) -> int | None:
        """Where the entry of `key` (a list: the item at index `key`) comes among those written."""
        return None

    def item_start(self, at: int) -> tuple[int, int] | None:
        """(start, end) of the key of the `at`-th entry written (a list's item: its start, twice)."""
        return None

    def item_end(self, at: int) -> int | None:
        """Where the `at`-th entry (the later of its key's and its value's end) or item written ends."""
        return None

    def first_item_key_start(self) -> int | None:
        """Where a list's first item's first key starts (None too when that item is not a mapping with keys)."""
        return None
