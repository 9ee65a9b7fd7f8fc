"""A rule's edits by document path (api.Edit) -> text edits of the document's own text.

Every edit is placed from the positions the loader keeps: a value is replaced where
its scalar is written, an entry is deleted with the lines it occupies, an entry is
inserted after its last sibling with the siblings' indentation and in their style
(block or flow, quoted keys or not). The rest of the text is left exactly as it is.
When the text does not allow a clean edit (an alias or merge key shares the node with
other places, a block scalar, a layout not foreseen), there is no fix and `NoFix` says why.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import deque
from itertools import accumulate, repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from gpulint.api import CopyOf, Edit, Fix
from gpulint.load.locations import LocNode, Span
from gpulint.load.yamlload import resolve_plain
from gpulint.results.findings import Finding, FindingFix, TextEdit

if TYPE_CHECKING:
    from gpulint.api import Violation
    from gpulint.load.yamlload import Document

NO_FIX_TEMPLATE = "no fix: the value comes from a template expression"
_HELM_SOURCE = "# Source:"   # what `helm template` writes before each document
# A string written plain only when YAML reads it back as the same string.
_PLAIN_RE = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*\Z")
# Nodes looked at to learn the document's indentation.
_INDENT_SAMPLE = 400
# Texts up to this many characters are searched for line breaks; longer ones keep a table of lines.
_SEARCH_MAX = 16 * 1024
# Why a path has no node (_Text.node): the messages name the path asked for.
_NO_CONTENT, _MISSING, _SHARED = "no content", "missing", "shared"


class NoFix(Exception):
    """Why an edit cannot be made in this text (the finding says so instead of offering a fix)."""


def attach(finding: Finding, violation: "Violation", doc: "Document", rendered: bool,
           values: "Callable[[Fix], FindingFix | str | None] | None" = None,
           origin: "Callable[[Fix], FindingFix | str | None] | None" = None) -> None:
    """Give `finding` the text edits of its violation's fix, or the reason it has none.
    `rendered`: the document is a renderer's output (Helm, Kustomize), not a file the user edits;
    so is a document of saved Helm output (a `# Source:` comment before it), and a template.
    `values`: the fix made in a chart's values file instead, or why not (fix/valuesedits.py).
    `origin`: a Kustomize build's fix made in the file that writes the value, or why not
    (fix/kustomize.py)."""
    if violation.no_fix is not None:
        finding.no_fix = violation.no_fix
    fix = violation.fix
    if fix is None:
        return
    if rendered or doc.placeholders or _HELM_SOURCE in doc.text[:doc.content_start]:
        built = finding.source is not None and finding.source.role == "origin"
        written = next((m for m in finding.mapped if m.role == "origin"), None)
        if not built:
            # A chart's render (not saved output, not a template read as text) whose edited
            # values are written literally in a values file: the fix is made there.
            in_values = None
            if rendered and values is not None and not doc.placeholders:
                in_values = values(fix)
            if isinstance(in_values, FindingFix):
                finding.fix = in_values
            else:
                finding.no_fix = in_values or NO_FIX_TEMPLATE
            return
        made = origin(fix) if origin is not None else None
        if isinstance(made, FindingFix):
            finding.fix = made
            return
        why = f": {made}" if made else ""
        if written is not None:   # a resource, or the patch that set the value
            finding.no_fix = (f"no fix: the object is built by Kustomize{why}; the value is written at "
                              f"{written.file}:{written.span.line}")
        else:
            finding.no_fix = f"no fix: the object is built by Kustomize{why}"
        return
    try:
        edits = resolve(doc, fix)
    except NoFix as reason:
        finding.no_fix = f"no fix: {reason}"
        return
    finding.fix = FindingFix(fix.title, fix.applicability.value, edits)


def resolve(doc: "Document", fix: Fix) -> tuple[TextEdit, ...]:
    """The text edits of `fix` in `doc` (file lines and columns), or NoFix."""
    global _last
    if _last is None or _last.doc is not doc:
        _last = _Text(doc)   # findings of one document come one after another: its lines are counted once
    text = _last
    if len(fix.edits) == 1:   # (most fixes: no other edit to keep clear of)
        edit = fix.edits[0]
        start, end, new = text.delete(edit.path) if edit.op == "delete" else text.change(edit, [])
        return (TextEdit(text.span(start, end), new),)
    deleted: list[tuple[int, int]] = []
    changes: list[tuple[int, int, str]] = []
    for edit in fix.edits:   # deletions first: an insertion next to deleted lines must not land in them
        if edit.op == "delete":
            start, end, new = text.delete(edit.path)
            deleted.append((start, end))
            changes.append((start, end, new))
    for edit in fix.edits:
        if edit.op != "delete":
            changes.append(text.change(edit, deleted))
    changes.sort()
    for (_s1, e1, _t1), (s2, _e2, _t2) in zip(changes, changes[1:]):
        if s2 < e1:
            raise NoFix("its edits overlap in this layout")
    return tuple(TextEdit(text.span(start, end), new) for start, end, new in changes)


_last: "_Text | None" = None
# Span(...) without its Python-level __new__ (as the loader makes them).
_new_span = tuple.__new__


def _content(written: str) -> str | None:
    """A one-line scalar's text without its quotes (None: an escape gpulint does not read)."""
    if written[:1] == "'" and written.endswith("'") and len(written) > 1:
        return written[1:-1].replace("''", "'")
    if written[:1] == '"':
        try:
            value = json.loads(written)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    return written


class _Text:
    """One document's text, its nodes and the style of its entries."""

    def __init__(self, doc: "Document") -> None:
        self.doc = doc
        self.text = text = doc.text
        self.base = doc.line_offset
        # Each line's start, made only when a line is asked for by number (_walk_levels) or the text is
        # long: offsets and positions in a short text are found by searching it for line breaks (a table of
        # a whole document's lines cost more than a fix's every search of it), in a long one by bisecting
        # the table (a search from the text's start per position would make many fixes quadratic).
        self._starts: list[int] | None = None
        self._searched = len(text) <= _SEARCH_MAX
        self._counted = (0, 0)   # an offset and the line breaks before it (position)
        # Whether the loader's event offsets and lines are this text's: not when a lone CR ends a line for the
        # loader and not for the line table (old Mac text; a scan's decoding makes it LF), nor after a leading
        # byte-order mark, which libyaml does not count. Then a key's offset is taken from its line in the
        # table and indent() reads location nodes, as they always were.
        self._indexed = not (("\r" in text and text.count("\r") != text.count("\r\n")) or text[:1] == "\ufeff")
        first = text.find("\n")
        self.nl = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
        self._step: tuple[int, int] | None = None
        # Nodes by path, or why a path has none (NoFix's message): a fix asks for the same paths several
        # times (exists, then node), and so do the findings of one container.
        self._nodes: dict[tuple, LocNode | str] = {}
        # Whether every node is written where its path says, inside its parent and after its key (then a
        # path is walked once, _walk_once): so it is unless an alias (`*name` of an `&name`: a text without
        # both characters has none) or a merge key (`<<`) brings in a node written elsewhere, or a repeated
        # key's value lies past where its mapping ends (a mapping ends where its first-written keys' last
        # value does). A template's masked text does not report its repeated keys: it is walked level by level.
        self._in_place = not (doc.placeholders or ("&" in text and "*" in text) or ("<" in text and "<<" in text)
                              or doc.problems)
        # Whether a node's entries as written are read from the event tree (LocNode.item_count and the
        # others) rather than from its children, a location node each: in place, with the loader's offsets.
        self._written = self._in_place and self._indexed
        # Whether the loader's lines are this text's too: it also breaks lines at U+0085, U+2028 and U+2029.
        # (Counted from there only where a text is searched for its line breaks: see position.)
        self._lined = self._written and self._searched and text.isascii()
        self._json: bool | None = None
        # The last path walked in place and its nodes (LocNode.along).
        self._walked: tuple[tuple, Sequence[LocNode]] | None = None
        self._items: dict[int, tuple[LocNode, list]] = {}

    # --- positions -----------------------------------------------------------

    @property
    def starts(self) -> list[int]:
        """Each line's start: its length plus one, added up (in C, not a match object a line)."""
        if self._starts is None:
            self._starts = list(accumulate(map(add, map(len, self.text.split("\n")[:-1]), repeat(1)), initial=0))
        return self._starts

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - self.base - 1] + column - 1

    def position(self, offset: int) -> tuple[int, int]:
        if self._searched:
            # (Its line breaks counted from the last offset asked for: a fix's start and end are close.)
            text = self.text
            at, breaks = self._counted
            if offset >= at:
                breaks += text.count("\n", at, offset)
            else:
                breaks -= text.count("\n", offset, at)
            self._counted = (offset, breaks)
            return breaks + self.base + 1, offset - text.rfind("\n", 0, offset)
        index = bisect_right(self.starts, offset) - 1
        return index + self.base + 1, offset - self.starts[index] + 1

    def count_from(self, node: LocNode) -> None:
        """Count line breaks from `node`'s start on (position), when the loader's count of them is known."""
        if self._lined:
            line = node.start_line()
            if line is not None:
                self._counted = (node.start, line)

    def span(self, start: int, end: int) -> Span:
        first = self.position(start)
        return _new_span(Span, first + (first if end == start else self.position(end)))

    def line_start(self, offset: int) -> int:
        if self._searched:
            return self.text.rfind("\n", 0, offset) + 1
        return self.starts[bisect_right(self.starts, offset) - 1]

    def line_break(self, offset: int) -> int:
        """Where the line holding the text just before `offset` ends (its CR LF or LF, or the end)."""
        text = self.text
        if offset > 0 and text[offset - 1] == "\n":   # a block scalar's end: the next line's start
            offset -= 1
        else:
            found = text.find("\n", offset)
            offset = len(text) if found < 0 else found
        if offset > 0 and text[offset - 1] == "\r":
            offset -= 1
        return offset

    def after_line(self, offset: int) -> int:
        """The start of the line after the one holding the text just before `offset`."""
        if offset > 0 and self.text[offset - 1] == "\n":
            return offset
        found = self.text.find("\n", offset)
        return len(self.text) if found < 0 else found + 1

    # --- nodes ---------------------------------------------------------------

    def node(self, path: tuple) -> LocNode:
        """The node at `path`, checked to be written where its parent is (not an alias or a merge)."""
        found = self._nodes.get(path)
        if found is None:
            found = self._walk(path)
        if type(found) is not str:
            return found  # type: ignore[return-value]
        if found == _NO_CONTENT:
            raise NoFix("the document has no content")
        if found == _MISSING:
            raise NoFix(f"{_dotted(path)} is not in the document")
        raise NoFix(f"{_dotted(path)} comes from a YAML anchor shared with other places")

    def _walk(self, path: tuple) -> LocNode | str:
        """The node at `path`, or why there is none (the first of its ancestors' reasons), noted for
        `path`. Only the path's nodes are made, not their siblings (a mapping's children are all made
        when first asked for)."""
        if self._in_place:
            return self._walk_once(path)
        return self._walk_levels(path)

    def _walk_once(self, path: tuple) -> LocNode | str:
        """_walk where every node is in place (`_in_place`): the path is walked from the root once, not
        each ancestor and its key's place in turn (each of those a walk from the root); and not at all
        when it leads to a node on the path walked before (a fix asks for a node, then its ancestors)."""
        nodes = self._nodes
        walked = self._walked
        depth = len(path)
        if walked is not None and depth < len(walked[1]) and walked[0][:depth] == path:
            found = walked[1][depth]
        else:
            root = nodes.get(())
            if root is None:
                root = nodes[()] = self.doc.node(()) or _NO_CONTENT
            if type(root) is str:
                return root
            along = root.along(path)
            if along is None:
                found = self.doc.node(path) or _MISSING
            else:
                self._walked = (path, along)
                found = along[depth] if depth < len(along) else _MISSING
        nodes[path] = found
        return found

    def _walk_levels(self, path: tuple) -> LocNode | str:
        """_walk, each ancestor checked to be written inside its parent and after its key (noted for each)."""
        doc, nodes = self.doc, self._nodes
        depth = len(path)
        while depth > 0 and path[:depth] not in nodes:
            depth -= 1
        node = nodes.get(path[:depth])
        if node is None:   # (depth 0)
            node = nodes[()] = doc.node(()) or _NO_CONTENT
        while depth < len(path) and type(node) is not str:
            depth += 1
            here = path[:depth]
            child = doc.node(here)
            if child is None:
                node = _MISSING
            else:
                key_span = doc.span(here, key=True)
                start = child.start if key_span is None else self.offset(key_span.line, key_span.column)
                # Written inside its parent, after its key: an alias's node is written at its anchor.
                if not (node.start <= start <= child.start and child.end <= node.end) and not _empty(child):
                    node = _SHARED
                else:
                    node = child
            nodes[here] = node
        if depth < len(path):
            nodes[path] = node
        return node

    def exists(self, path: tuple) -> bool:
        """Whether node(path) has a node (asked without raising NoFix: a missing path is what add looks for)."""
        found = self._nodes.get(path)
        if found is None:
            found = self._walk(path)
        return type(found) is not str

    def flow(self, node: LocNode) -> bool:
        return self.text[node.start:node.start + 1] in ("{", "[")

    def entries(self, node: LocNode) -> list[tuple[Any, int, int, LocNode]]:
        """A mapping's entries in text order: (key, key start, key end, value node)."""
        offsets = node.key_offsets() if self._indexed else None
        children = node.children.items()  # type: ignore[union-attr]
        if offsets is None:
            offset = self.offset
            out = [(key, offset(key_span.line, key_span.column), offset(key_span.end_line, key_span.end_column), child)
                   for key, (key_span, child) in children]
        else:
            out = [(key, *offsets[key], child) for key, (_key_span, child) in children]
        out.sort(key=itemgetter(1))
        return out

    def items(self, node: LocNode) -> list[tuple[Any, int, int, LocNode]]:
        """A mapping's entries or a list's items alike: (key or index, start, key end, node)."""
        known = self._items.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        if isinstance(node.children, dict):
            items = self.entries(node)
        else:
            items = [(i, child.start, child.start, child) for i, child in enumerate(node.children or ())]
        self._items[id(node)] = (node, items)
        return items

    def count(self, node: LocNode) -> int:
        """How many entries or items the collection `node` has."""
        count = node.item_count() if self._written else None
        return len(self.items(node)) if count is None else count

    def index(self, node: LocNode, key: Any) -> int:
        """Where the entry of `key` (a list: the item at index `key`) comes among `node`'s, which has it."""
        at = node.item_index(key) if self._written else None
        if at is None:
            at = next(i for i, item in enumerate(self.items(node)) if item[0] == key)
        return at

    def item_start(self, node: LocNode, at: int) -> tuple[int, int]:
        """(start, key end) of `node`'s `at`-th entry or item (a list item's key end: its start)."""
        found = node.item_start(at) if self._written else None
        if found is None:
            _key, start, key_end, _child = self.items(node)[at]
            return start, key_end
        return found

    def item_end(self, node: LocNode, at: int) -> int:
        """Where `node`'s `at`-th entry (its key or value, whichever ends later) or item ends."""
        found = node.item_end(at) if self._written else None
        if found is None:
            _key, _start, key_end, child = self.items(node)[at]
            return max(child.end, key_end)
        return found

    def quote(self, node: LocNode) -> str | None:
        """How the mapping's keys (or the list's first mapping's keys) are quoted: '"', "'" or None."""
        if self._written:
            # (Its first key event is its first key written: no entry is made a node.)
            start = node.first_key_start() if node.kind() is dict else node.first_item_key_start()
            if start is not None:
                return self._quote_at(start)
        entries = self.items(node)
        if entries and not isinstance(node.children, dict):
            first = entries[0][3]
            entries = self.items(first) if isinstance(first.children, dict) else []
        return self._quote_at(entries[0][1] if entries else None)

    def _quote_at(self, key_start: int | None) -> str | None:
        """The quote of the key written at `key_start` (None: no key there, the document's style)."""
        if key_start is None:
            return '"' if self._jsonish() else None
        mark = self.text[key_start]
        return mark if mark in ("'", '"') else None

    def _jsonish(self) -> bool:
        if self._json is None:
            self._json = self._learn_jsonish()
        return self._json

    def _learn_jsonish(self) -> bool:
        root = self.doc.node(())
        if root is None or self.text[root.start:root.start + 1] != "{" or root.kind() is not dict:
            return False
        start = root.first_key_start() if self._written else None
        if start is None:
            entries = self.entries(root)
            if not entries:
                return False
            start = entries[0][1]
        return self.text[start] == '"'

    def indent(self) -> tuple[int, int]:
        """(step of a nested mapping, offset of a list's dashes under its key), learnt from the document:
        from the first entries (breadth first) whose value is a block mapping or list on the next lines."""
        if self._step is not None:
            return self._step
        step = seq = None
        # (A document written in place is walked in its event tree, without making its location nodes.)
        entries = self.doc.block_entries(_INDENT_SAMPLE) if self._written else self._block_entries()
        for start, first, nested in entries:
            if not nested:
                first = self.text.rfind("-", 0, first)
            below = self.line_start(first)
            key_line = self.line_start(start)
            if below == key_line:
                continue
            column, inner = start - key_line, first - below
            if nested and step is None and inner > column:
                step = inner - column
            elif not nested and seq is None and inner >= column:
                seq = inner - column
            else:
                continue
            if step is not None and seq is not None:
                break   # (the rest would change neither, and the walk stops here)
        self._step = (step or 2, 2 if seq is None else seq)
        return self._step

    def _block_entries(self) -> Iterator[tuple[int, int, bool]]:
        """Document.block_entries through the location nodes, for a document not written in place."""
        queue = deque([self.doc.node(())])
        seen = 0
        while queue and seen < _INDENT_SAMPLE:
            node = queue.popleft()
            seen += 1
            if node is None or self.flow(node):
                continue
            children = node.children
            if not children:
                continue
            if not isinstance(children, dict):
                queue.extend(children)
                continue
            for _key, start, _end, child in self.items(node):
                queue.append(child)
                # (A flow value is never looked into: its children are not made.)
                if self.flow(child) or not child.children:
                    continue
                yield start, self.items(child)[0][1], isinstance(child.children, dict)

    # --- edits ---------------------------------------------------------------

    def change(self, edit: Edit, deleted: list[tuple[int, int]]) -> tuple[int, int, str]:
        if edit.op == "set":
            return self.set(edit.path, edit.value)
        if edit.op == "rename":
            return self.rename(edit.path, str(edit.value))
        if edit.op == "add":
            return self.add(edit.path, edit.value, deleted)
        if edit.op == "append":
            return self.append(edit.path, edit.value, deleted)
        raise NoFix(f"unknown edit {edit.op!r}")

    def raw(self, value: CopyOf) -> str:
        node = self.node(value.path)
        if node.kind() is not None or node.style in ("|", ">") or node.start == node.end:
            raise NoFix(f"{_dotted(value.path)} is not a one-line value")
        return self.text[node.start:node.end]

    def set(self, path: tuple, value: Any) -> tuple[int, int, str]:
        node = self.node(path)
        if node.kind() is not None or node.style in ("|", ">"):
            raise NoFix(f"{_dotted(path)} is not a one-line value")
        if isinstance(value, CopyOf):
            return node.start, node.end, self.raw(value)
        quote = node.style if node.style in ("'", '"') else ('"' if self._jsonish() else None)
        return node.start, node.end, scalar(value, quote)

    def rename(self, path: tuple, key: str) -> tuple[int, int, str]:
        parent = self.node(path[:-1])
        self.node(path)
        for name, start, end, _child in self.entries(parent):
            if name == path[-1]:
                if key in parent.children:  # type: ignore[operator]
                    raise NoFix(f"{key} is already set there")
                mark = self.text[start]
                return start, end, scalar(key, mark if mark in ("'", '"') else None)
        raise NoFix(f"{_dotted(path)} is not in the document")

    def delete(self, path: tuple) -> tuple[int, int, str]:
        self.node(path)   # it is there, written in place
        # A mapping or list left empty goes too, up to the nearest one that keeps other entries.
        while len(path) > 1 and isinstance(path[-2], str) and self.count(self.node(path[:-1])) == 1:
            path = path[:-1]
        parent = self.node(path[:-1])
        self.node(path)
        self.count_from(parent)
        count = self.count(parent)
        at = self.index(parent, path[-1])
        start = self.item_start(parent, at)[0]
        end = self.item_end(parent, at)
        if self.flow(parent):
            if at + 1 < count:
                return start, self.item_start(parent, at + 1)[0], ""
            if at > 0:
                return self.item_end(parent, at - 1), end, ""
            return start, end, ""
        if parent.kind() is list:
            start = self.text.rfind("-", 0, start)
        lead = self.text[self.line_start(start):start]
        rest = self.text[end:self.line_break(end)].strip()
        if rest and not rest.startswith("#"):
            raise NoFix(f"{_dotted(path)} shares its line with other text")
        if not lead.strip():
            return self.line_start(start), self.after_line(end), ""
        if lead.strip() == "-" and at + 1 < count:   # the first key of a list item's mapping
            return start, self.item_start(parent, at + 1)[0], ""
        raise NoFix(f"{_dotted(path)} is written in a layout gpulint does not edit")

    def add(self, path: tuple, value: Any, deleted: list[tuple[int, int]]) -> tuple[int, int, str]:
        depth = len(path) - 1
        while depth > 0 and not self.exists(path[:depth]):
            depth -= 1
        for key in reversed(path[depth + 1:]):
            value = {key: value}
        return self.insert(self.node(path[:depth]), path[:depth], path[depth], value, deleted)

    def append(self, path: tuple, value: Any, deleted: list[tuple[int, int]]) -> tuple[int, int, str]:
        if not self.exists(path):
            return self.add(path, [value], deleted)
        return self.insert(self.node(path), path, None, value, deleted)

    def insert(self, node: LocNode, path: tuple, key: Any, value: Any,
               deleted: list[tuple[int, int]]) -> tuple[int, int, str]:
        """`key: value` into the mapping `node`, or `value` at the end of the list `node` (key None)."""
        kind = node.kind()
        if key is None and kind is not list:
            raise NoFix(f"{_dotted(path)} is not a list")
        if key is not None and kind is not dict:
            raise NoFix(f"{_dotted(path)} is not a mapping")
        quote = self.quote(node)
        count = self.count(node)
        self.count_from(node)   # (its edit is made inside it or just after it)
        # The entry's text is made in the style it is written in (flow on one line or several, block).
        name = f"{scalar(key, quote)}: " if key is not None else ""
        if self.flow(node):
            if not count:
                return node.start + 1, node.start + 1, name + self.flow_text(value, quote)
            last = self.item_start(node, count - 1)[0]
            end = self.item_end(node, count - 1)
            if self.line_start(last) != self.line_start(node.start):  # one entry a line: keep it so
                column = last - self.line_start(last)
                indent = len(self.text[self.line_start(node.start):node.start]) - \
                    len(self.text[self.line_start(node.start):node.start].lstrip(" "))
                step = max(column - indent, 1)
                return end, end, "," + self.nl + " " * column + name + self.flow_lines(value, column, step, quote)
            return end, end, ", " + name + self.flow_text(value, quote)
        if not count:   # (a tagged or anchored `{}`, not taken for flow)
            self.flow_text(value, quote)   # a copy that cannot be made is the reason given first, as everywhere
            raise NoFix(f"{_dotted(path)} is empty")
        # The document's indentation is learnt (a walk of its nodes) only for lines nested under the new one.
        step, seq = self.indent() if _nests(value, key is None) else (0, 0)
        first = self.item_start(node, 0)[0]
        if key is None:
            first = self.text.rfind("-", 0, first)
            lines = self.item_lines(value, first - self.line_start(first), step, seq, quote)
        else:
            lines = self.entry_lines(key, value, first - self.line_start(first), step, seq, quote)
        at = self.line_break(self.item_end(node, count - 1))
        for start, end in deleted:
            if start <= at < end:   # after lines another edit deletes: before them instead
                if start == 0:
                    raise NoFix("the entries it follows are all deleted")
                at = self.line_break(start)
        return at, at, self.nl + self.nl.join(lines)

    # --- rendering -------------------------------------------------------------

    def flow_text(self, value: Any, quote: str | None) -> str:
        if type(value) is str:
            return scalar(value, quote)
        if isinstance(value, CopyOf):
            return self.raw(value)
        if isinstance(value, dict):
            return "{" + ", ".join(f"{scalar(k, quote)}: {self.flow_text(v, quote)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self.flow_text(v, quote) for v in value) + "]"
        return scalar(value, quote)

    def flow_lines(self, value: Any, column: int, step: int, quote: str | None) -> str:
        """A flow value over several lines, one entry a line (as a multi-line JSON object is written)."""
        if not isinstance(value, (dict, list)) or not value:
            return self.flow_text(value, quote)
        inner = " " * (column + step)
        if isinstance(value, dict):
            parts = [f"{inner}{scalar(k, quote)}: {self.flow_lines(v, column + step, step, quote)}"
                     for k, v in value.items()]
            opening, closing = "{", "}"
        else:
            parts = [inner + self.flow_lines(v, column + step, step, quote) for v in value]
            opening, closing = "[", "]"
        return opening + self.nl + ("," + self.nl).join(parts) + self.nl + " " * column + closing

    def entry_lines(self, key: Any, value: Any, column: int, step: int, seq: int, quote: str | None) -> list[str]:
        pad = " " * column
        name = scalar(key, quote)
        if isinstance(value, dict) and value:
            lines = [f"{pad}{name}:"]
            for k, v in value.items():
                lines += self.entry_lines(k, v, column + step, step, seq, quote)
            return lines
        if isinstance(value, list) and value:
            lines = [f"{pad}{name}:"]
            for v in value:
                lines += self.item_lines(v, column + seq, step, seq, quote)
            return lines
        return [f"{pad}{name}: {self.flow_text(value, quote)}"]

    def item_lines(self, value: Any, column: int, step: int, seq: int, quote: str | None) -> list[str]:
        pad = " " * column
        if isinstance(value, dict) and value:
            lines: list[str] = []
            for k, v in value.items():
                lines += self.entry_lines(k, v, column + 2, step, seq, quote)
            lines[0] = pad + "- " + lines[0][column + 2:]
            return lines
        return [f"{pad}- {self.flow_text(value, quote)}"]


def scalar(value: Any, quote: str | None) -> str:
    """`value` as a YAML (or JSON, with quote '"') scalar; plain when YAML reads it back the same."""
    if type(value) is str:   # (the usual value, asked first)
        text = value
    elif isinstance(value, bool):
        return "true" if value else "false"
    elif isinstance(value, int):
        return str(value)
    else:
        text = str(value)
    if quote == "'":
        return "'" + text.replace("'", "''") + "'"
    if quote == '"' or not _PLAIN_RE.match(text) or resolve_plain(text) != text:
        return json.dumps(text)
    return text


def _nests(value: Any, item: bool) -> bool:
    """Whether `value` written as a block entry (`item`: as a list item) has lines nested under its
    first, whose indentation entry_lines and item_lines take from indent()."""
    if item:
        return isinstance(value, dict) and any(_nests(v, False) for v in value.values())
    return isinstance(value, (dict, list)) and bool(value)


def _empty(node: LocNode) -> bool:
    return node.start == node.end


def _dotted(path: tuple) -> str:
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out or "the document"
