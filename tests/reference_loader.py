"""The loader's reference: the location tree built eagerly, as gpulint did before it was optimised.

The fast loader (gpulint/load/yamlload.py) builds data and keeps the parser's
events as a tree in one pass, and makes LocNodes from that tree only where a
finding asks. This module is the straightforward version it replaced, kept
verbatim: a second parse of the document's text, turning every event into a
LocNode as it comes. tests/test_loader_reference.py asserts both give the same
data, the same location tree node for node, the same problems and the same
findings, on the fixtures, the shared corpus and the benchmark corpus.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from ruamel.yaml import events as ev

from gpulint.load import events, jsonload
from gpulint.load.locations import LocNode, Span
from gpulint.load.yamlload import (
    _STR_TAG,
    _TYPED_TAGS,
    Document,
    Limits,
    LoadError,
    Problem,
    event_reader,
    resolve_plain,
)


def reference_node(root: LocNode, path: Iterable) -> LocNode | None:
    """Document.node as it walked the eagerly built tree."""
    node = root
    for item in path:
        children = node.children
        if isinstance(children, dict):
            entry = children.get(item)
            if entry is None:
                return None
            node = entry[1]
        elif isinstance(children, list) and isinstance(item, int) and 0 <= item < len(children):
            node = children[item]
        else:
            return None
    return node


def reference_span(root: LocNode, path: tuple, key: bool = False) -> Span | None:
    """Document.span as it read the eagerly built tree."""
    if key and path:
        parent = reference_node(root, path[:-1])
        if parent is None or not isinstance(parent.children, dict):
            return None
        entry = parent.children.get(path[-1])
        return entry[0] if entry else None
    node = reference_node(root, path)
    return node.span if node else None


def reference_tree(doc: Document) -> tuple[Any, LocNode, list[Problem]]:
    """(data, location tree, problems) of `doc`, built eagerly from a second parse of its text."""
    if doc._is_json:
        events: Iterable[Any] = map(_ruamel_event, jsonload.json_events(doc.text)[doc._raw])
    else:
        events = next(d for i, d in enumerate(_documents_of(doc.text)) if i == doc._raw)
    data, root, problems = _build(events, doc.line_offset, True, doc._limits)
    assert root is not None and isinstance(problems, list)
    return data, root, problems


def _scalar(event: Any) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        return resolve_plain(event.value) if event.style == "" and event.implicit[0] else event.value
    if tag == _STR_TAG:
        return event.value
    if tag in _TYPED_TAGS:
        value = resolve_plain(event.value)
        return value
    # Unknown and local tags are ignored: the value is read as if untagged.
    return resolve_plain(event.value) if event.style == "" else event.value



_SCALAR = ev.ScalarEvent
_MAP_START = ev.MappingStartEvent
_SEQ_START = ev.SequenceStartEvent
_END_TYPES = (ev.MappingEndEvent, ev.SequenceEndEvent)
_ALIAS = ev.AliasEvent
_MISSING = object()


def _span(event: Any, line_offset: int) -> Span:
    s, e = event.start_mark, event.end_mark
    return Span(s.line + line_offset + 1, s.column + 1, e.line + line_offset + 1, e.column + 1)


class _Frame:
    __slots__ = ("value", "loc", "key", "key_span", "anchor", "merges")

    def __init__(self, value: Any, loc: LocNode | None, anchor: str | None) -> None:
        self.value = value
        self.loc = loc
        self.key: Any = _MISSING
        self.key_span: Span | None = None
        self.anchor = anchor
        self.merges: list | None = None


def _build(events: Iterable[Any], line_offset: int, with_locs: bool, limits: Limits) -> tuple[Any, LocNode | None, list[Problem] | bool]:
    """Turn one document's node events into (data, location tree, problems).

    Without locations, problems cannot be placed: the third item is then only
    whether there are any, and the caller rebuilds with locations to get them.
    """
    anchors: dict[str, tuple[Any, LocNode | None, int]] = {}
    open_anchors: set[str] = set()
    problems: list[Problem] = []
    duplicates = False
    stack: list[_Frame] = []
    sizes: list[int] = []
    expanded = 0
    result: Any = None
    result_loc: LocNode | None = None

    def fail(message: str, event: Any, syntax: bool = True) -> LoadError:
        m = event.start_mark
        return LoadError(message, m.line + line_offset + 1, m.column + 1, syntax)

    for event in events:
        cls = type(event)
        if cls is _SCALAR:
            frame = stack[-1] if stack else None
            if frame is not None and frame.key is _MISSING and isinstance(frame.value, dict):
                # A mapping key: Kubernetes keys are strings, taken verbatim.
                key = event.value
                frame.key = key
                frame.key_span = _span(event, line_offset) if with_locs else None
                if event.style == "" and key == "<<":
                    frame.key = _MERGE
                continue
            value = _scalar(event)
            loc = LocNode(_span(event, line_offset), event.start_mark.index,
                          event.end_mark.index, event.style) if with_locs else None
            size = 1
            if event.anchor is not None:
                anchors[event.anchor] = (value, loc, 1)
        elif cls is _MAP_START or cls is _SEQ_START:
            if stack and isinstance(stack[-1].value, dict) and stack[-1].key is _MISSING:
                raise fail("complex (non-scalar) mapping keys are not valid in Kubernetes manifests", event)
            if len(stack) >= limits.max_depth:
                raise fail(f"nesting deeper than {limits.max_depth} levels (limit: --max-depth)", event, False)
            loc = LocNode(_span(event, line_offset), event.start_mark.index, 0) if with_locs else None
            if loc is not None:
                loc.children = {} if cls is _MAP_START else []
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            stack.append(_Frame({} if cls is _MAP_START else [], loc, event.anchor))
            sizes.append(1)
            continue
        elif cls in _END_TYPES:
            frame = stack.pop()
            size = sizes.pop()
            value, loc = frame.value, frame.loc
            if frame.merges:
                _apply_merges(frame)
            if loc is not None:
                _close(loc, event, line_offset)
            if frame.anchor is not None:
                open_anchors.discard(frame.anchor)
                anchors[frame.anchor] = (value, loc, size)
        elif cls is _ALIAS:
            name = event.anchor
            if name in open_anchors:
                raise fail(f"recursive alias *{name} refers to a node that contains it", event)
            if name not in anchors:
                raise fail(f"alias *{name} refers to an undefined anchor", event)
            value, loc, size = anchors[name]
            expanded += size
            if expanded > limits.max_expanded_nodes:
                raise fail(f"alias expansion exceeds {limits.max_expanded_nodes} nodes, a YAML bomb? "
                           "(limit: --max-alias-nodes)", event, False)
            frame = stack[-1] if stack else None
            if frame is not None and frame.key is _MISSING and isinstance(frame.value, dict):
                raise fail("an alias used as a mapping key is not valid in Kubernetes manifests", event)
        else:  # document/stream events are not part of the node tree
            continue

        if not stack:
            result, result_loc = value, loc
            continue
        parent = stack[-1]
        sizes[-1] += size
        container = parent.value
        if type(container) is list:
            container.append(value)
            if parent.loc is not None:
                parent.loc.children.append(loc)  # type: ignore[union-attr]
            continue
        key = parent.key
        parent.key = _MISSING
        if key is _MERGE:
            if parent.merges is None:
                parent.merges = []
            parent.merges.append((value, loc))
            continue
        if key in container:
            if parent.loc is None:
                duplicates = True  # reported with positions when the tree is built
            else:
                first, first_loc = parent.loc.children[key]  # type: ignore[index]
                where = f" (first defined at line {first.line})" if first else ""
                problems.append(Problem(
                    f"duplicate key {key!r}{where}: Kubernetes keeps only the last value (strict field "
                    "validation rejects the object), so the first one is ignored and not checked",
                    parent.key_span or _span(event, line_offset),
                    first_loc.span if first_loc is not None else None,
                    (first_loc.start, first_loc.end) if first_loc is not None else None))
        container[key] = value
        if parent.loc is not None:
            parent.loc.children[key] = (parent.key_span, loc)  # type: ignore[index]
    return result, result_loc, (problems if with_locs else duplicates)


_MERGE = object()


def _close(loc: LocNode, event: Any, line_offset: int) -> None:
    """Set a collection's end: after `]`/`}` in flow style, else after its last child.

    (libyaml ends a block collection where the next token starts, often lines later.)
    """
    children = loc.children
    last: LocNode | None = None
    if isinstance(children, dict) and children:
        last = next(reversed(children.values()))[1]
    elif isinstance(children, list) and children:
        last = children[-1]
    e = event.end_mark
    s = loc.span
    if last is not None and e.index > last.end and event.start_mark.index == e.index:
        # Block style: the end event is empty and sits at the next token.
        loc.span = Span(s.line, s.column, last.span.end_line, last.span.end_column)
        loc.end = last.end
    else:
        loc.span = Span(s.line, s.column, e.line + line_offset + 1, e.column + 1)
        loc.end = e.index


def _apply_merges(frame: _Frame) -> None:
    """YAML merge keys (`<<: *base`): explicit keys win, then earlier merges."""
    target: dict = frame.value
    taken = set(target)
    for value, loc in frame.merges or ():
        if isinstance(value, list):
            sources = value
            source_locs = loc.children if loc is not None else [None] * len(value)
        else:
            sources, source_locs = [value], [loc]
        for source, source_loc in zip(sources, source_locs):  # type: ignore[arg-type]
            if not isinstance(source, dict):
                continue
            for key, item in source.items():
                if key in taken:
                    continue
                taken.add(key)
                target[key] = item
                if frame.loc is not None and source_loc is not None:
                    frame.loc.children[key] = source_loc.children[key]  # type: ignore[index]


class _DocumentEvents:
    """The node events of one document, read from the parser as they are consumed.

    Consuming them while the document is built lets a limit stop libyaml early:
    its time grows with the square of the nesting depth (a million `[` would
    take minutes). With `keep`, the events are also kept in `kept` for the
    location tree; a large document does without (they take about 30 times the
    size of its text) and is parsed again when a finding needs positions.
    """

    __slots__ = ("_parser", "first", "count", "done", "kept")

    def __init__(self, parser: Any, keep: bool = False) -> None:
        self._parser = parser
        self.first: Any = None
        self.count = 0
        self.done = False
        self.kept: list | None = [] if keep else None

    def __iter__(self) -> Iterator[Any]:
        parser = self._parser
        kept = self.kept
        while not self.done:
            event = parser.get_event()
            if type(event) is ev.DocumentEndEvent:
                self.done = True
                return
            if self.first is None:
                self.first = event
            self.count += 1
            if kept is not None:
                kept.append(event)
            yield event

    def is_empty(self) -> bool:
        first = self.first
        return self.count == 1 and type(first) is _SCALAR and first.value == "" and first.style == ""


class _Parser:
    """libyaml's events as ruamel's own event objects, with lines as editors count them
    (yamlload.event_reader: NEL, LS and PS are no line breaks; the one thing the reference takes
    from the fast loader, as both must agree). The events are read at once, in one of the
    loader's parsing windows (events.py), so that renders parsing in other threads meanwhile
    cannot hand this reader tuples where it expects ruamel's objects, or the other way round."""

    def __init__(self, text: str) -> None:
        out: list[Any] = []
        self._error: Exception | None = None
        try:
            with events.parsing():
                out.extend(map(_ruamel_event, events.through_end(event_reader(text))))
        except Exception as error:  # noqa: BLE001 - raised where the reader reaches it
            self._error = error
        self._events = iter(out)

    def get_event(self) -> Any:
        event = next(self._events, None)
        if event is None:
            raise self._error or StopIteration
        return event


_RUAMEL_EVENTS = {events.MAP_START: ev.MappingStartEvent, events.SEQ_START: ev.SequenceStartEvent,
                  events.MAP_END: ev.MappingEndEvent, events.SEQ_END: ev.SequenceEndEvent,
                  events.DOC_START: ev.DocumentStartEvent, events.DOC_END: ev.DocumentEndEvent,
                  events.STREAM_START: ev.StreamStartEvent, events.STREAM_END: ev.StreamEndEvent}


def _ruamel_event(event: tuple) -> Any:
    """The ruamel event object of one of the loader's event tuples."""
    kind, start, end = event[:3]
    if kind == events.SCALAR:
        return ev.ScalarEvent(event[events.ANCHOR], event[events.TAG], event[events.IMPLICIT], event[events.VALUE],
                              start, end, event[events.STYLE])
    if kind == events.ALIAS:
        return ev.AliasEvent(event[events.ANCHOR], start, end)
    if kind in (events.MAP_START, events.SEQ_START):
        return _RUAMEL_EVENTS[kind](event[events.ANCHOR], event[events.TAG], event[events.IMPLICIT], start, end,
                                    event[events.FLOW])
    return _RUAMEL_EVENTS[kind](start, end)


def _documents_of(text: str, keep: bool = False) -> Iterator[_DocumentEvents]:
    """Each document of `text` (libyaml), its events to be consumed in order."""
    parser = _Parser(text)
    while True:
        event = parser.get_event()
        cls = type(event)
        if cls is ev.StreamEndEvent:
            return
        if cls is ev.DocumentStartEvent:
            document = _DocumentEvents(parser, keep)
            yield document
            for _event in document:  # whatever the consumer left unread
                pass


