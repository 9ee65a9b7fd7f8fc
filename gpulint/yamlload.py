"""YAML/JSON text -> plain data plus a lazily built location tree.

Speed comes from libyaml (ruamel.yaml.clib's C parser) emitting events; this
module turns events into dicts/lists/scalars with Kubernetes (YAML 1.1, as in
sigs.k8s.io/yaml) scalar resolution. No tag ever constructs a Python object.

Each document keeps its events, and the location tree (LocNode) is only built
when a finding needs a position: most documents have none, so most scans never
pay for it. A stream is cut into documents at `---`/`...` lines first (YAML
forbids those markers at column 0 inside any scalar), which bounds memory to one
document, gives each document its own raw text, and lets a parse error in one
document leave the others scanned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from _ruamel_yaml import CParser
from ruamel.yaml import events as ev

from gpulint import jsonload
from gpulint import unrendered as unrendered_mod
from gpulint.locations import LocNode, Span


@dataclass(frozen=True)
class Limits:
    """Bounds that keep hostile input from exhausting time or memory.

    `max_depth` bounds nesting (flow `[[[[`, block or JSON); `max_expanded_nodes`
    bounds the nodes aliases add to a document (the "billion laughs" bomb).
    """

    max_depth: int = 500
    max_expanded_nodes: int = 1_000_000


DEFAULT_LIMITS = Limits()

# Documents larger than this (in characters) do not keep their parser events,
# which take about 30 times the size of the text, for the location tree: it is
# built from a second parse when a finding needs it.
KEEP_EVENTS_MAX = 1 << 20


class LoadError(Exception):
    """A document could not be loaded; `line`/`column` are 1-based in the file.

    `syntax`: the parser rejected the text (not a limit of ours).
    `template`: the text holds Go-template actions (`{{ ... }}`), so it is most
    likely an unrendered Helm template. `literal_checked`: masking the actions
    made it parse, and the masked document follows this error.
    """

    def __init__(self, message: str, line: int, column: int, syntax: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.syntax = syntax
        self.template = False
        self.literal_checked = False


@dataclass
class Problem:
    """A non-fatal defect found while loading (e.g. a duplicate key).

    For a duplicate key, `hidden` is the span of the first value: text
    Kubernetes ignores.
    """

    message: str
    span: Span
    hidden: Span | None = None
    hidden_range: tuple[int, int] | None = None   # the same, as offsets in the document's text


class Document:
    """One YAML document: plain data, its raw text, and positions on demand."""

    __slots__ = ("index", "data", "text", "line_offset", "content_start", "_has_problems",
                 "_problems", "_events", "_root", "_limits", "_raw", "_is_json", "placeholders")

    def __init__(self, index: int, data: Any, text: str, line_offset: int,
                 events: list | None, has_problems: bool, content_start: int | None = None, *,
                 limits: Limits = DEFAULT_LIMITS, raw: int = 0, is_json: bool = False,
                 placeholders: tuple[Span, ...] = ()) -> None:
        self.index = index
        self.data = data
        self.text = text
        self.line_offset = line_offset  # 0-based line of `text` in the file
        # Offset in `text` of the first node: what precedes it is the header
        # (`---`, comments such as Helm's `# Source:`).
        if content_start is None:
            content_start = events[0].start_mark.index if events else 0
        self.content_start: int = content_start
        self._has_problems = has_problems
        self._problems: list[Problem] = []
        self._events: list | None = events   # None: parse `text` again when needed
        self._root: LocNode | None = None
        self._limits = limits
        self._raw = raw                      # which document of `text` this is (empty ones count)
        self._is_json = is_json              # `text` was read by the JSON reader
        # Where `{{ ... }}` actions of an unrendered template were replaced
        # (empty for ordinary documents); see unrendered.py.
        self.placeholders = placeholders

    @property
    def problems(self) -> list[Problem]:
        """Defects such as duplicate keys, with their positions."""
        if self.placeholders:
            return []  # `{{ if }}`/`{{ else }}` branches of a template repeat keys legitimately
        if self._has_problems:
            self.root()
        return self._problems

    @property
    def start_line(self) -> int:
        """1-based line of the document's first node."""
        return self.root().span.line

    def root(self) -> LocNode:
        if self._root is None:
            events: Iterable[Any] | None = self._events
            if events is None:
                events = _node_events(self.text, self._raw, self._is_json)
            _data, root, problems = _build(events, self.line_offset, True, self._limits)
            assert root is not None
            self._root = root
            self._problems = problems  # type: ignore[assignment]
            self._events = None
        return self._root

    def in_placeholder(self, span: Span) -> bool:
        """Whether `span` overlaps text that stands in for an unrendered template action."""
        for mark in self.placeholders:
            if ((mark.line, mark.column) < (span.end_line, span.end_column)
                    and (span.line, span.column) < (mark.end_line, mark.end_column)):
                return True
        return False

    def node(self, path: Iterable) -> LocNode | None:
        """The location node at `path`, or None when the path does not exist."""
        node = self.root()
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

    def span(self, path: tuple, key: bool = False) -> Span | None:
        """Span of the value at `path`, or of its mapping key when `key` is set."""
        if key and path:
            parent = self.node(path[:-1])
            if parent is None or not isinstance(parent.children, dict):
                return None
            entry = parent.children.get(path[-1])
            return entry[0] if entry else None
        node = self.node(path)
        return node.span if node else None

    def text_span(self, path: tuple, start: int, end: int) -> Span | None:
        """Span of `value[start:end]` of the string scalar at `path`.

        Works for every scalar style: the n-th occurrence of the target text in
        the value is the n-th occurrence in the raw source of the scalar (for
        folded scalars, whose line breaks change, the first word is used).
        """
        node = self.node(path)
        if node is None or node.children is not None:
            return None
        value = _value_at(self.data, path)
        if not isinstance(value, str) or not 0 <= start <= end <= len(value):
            return node.span
        raw = self.text[node.start:node.end]
        target = value[start:end].split("\n", 1)[0]
        candidates = [target]
        first_word = target.split(None, 1)[0] if target.strip() else ""
        if first_word and first_word != target:
            candidates.append(first_word)
        for needle in candidates:
            if not needle:
                continue  # an empty target occurs everywhere (and would never advance)
            nth = _count(value, needle, start)
            pos = _nth_index(raw, needle, nth)
            if pos < 0:
                continue
            abs_start = node.start + pos
            line, col = self._line_col(abs_start, node)
            line_end = self.text.find("\n", abs_start)
            if line_end < 0:
                line_end = len(self.text)
            stop = min(abs_start + len(target), line_end)
            end_line, end_col = self._line_col(stop, node)
            return Span(line, col, end_line, end_col)
        return node.span

    def _line_col(self, index: int, node: LocNode) -> tuple[int, int]:
        """File line and column of `index`, counted from `node`'s start (cost: the node, not the document)."""
        newlines = self.text.count("\n", node.start, index)
        if not newlines:
            return node.span.line, node.span.column + index - node.start
        line_start = self.text.rfind("\n", node.start, index) + 1
        return node.span.line + newlines, index - line_start + 1


def _value_at(data: Any, path: tuple) -> Any:
    for item in path:
        data = data[item]
    return data


def _count(haystack: str, needle: str, stop: int) -> int:
    count, pos = 0, haystack.find(needle)
    while 0 <= pos < stop:
        count += 1
        pos = haystack.find(needle, pos + len(needle))
    return count


def _nth_index(haystack: str, needle: str, nth: int) -> int:
    pos = haystack.find(needle)
    for _ in range(nth):
        if pos < 0:
            return -1
        pos = haystack.find(needle, pos + len(needle))
    return pos


# --- scalar resolution (YAML 1.1 as Kubernetes' YAML decoder applies it) -----

_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOLS = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
}
_INT_RE = re.compile(r"[-+]?(?:0|[1-9][0-9_]*)\Z")
_HEX_RE = re.compile(r"[-+]?0x[0-9a-fA-F_]+\Z")
_OCT_RE = re.compile(r"[-+]?0[0-7_]+\Z")
_FLOAT_RE = re.compile(r"[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?\Z|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+\Z")
_SPECIAL_FLOATS = {
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), float("inf")),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), float("-inf")),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), float("nan")),
}
_NUMBER_START = frozenset("0123456789-+.")
_WORD_START = frozenset("~nNyYtTfFoO")

_STR_TAG = "tag:yaml.org,2002:str"
_TYPED_TAGS = {
    "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null",
}


def resolve_plain(text: str) -> Any:
    """Type of an untagged plain scalar."""
    if not text:
        return None
    first = text[0]
    if first in _WORD_START and len(text) <= 5:
        if text in _NULLS:
            return None
        if text in _BOOLS:
            return _BOOLS[text]
        return text
    if first in _NUMBER_START:
        if _INT_RE.match(text):
            return int(text.replace("_", ""))
        if _FLOAT_RE.match(text) and text != ".":
            try:
                return float(text.replace("_", ""))
            except ValueError:
                return text
        if _HEX_RE.match(text):
            return int(text.replace("_", ""), 16)
        if _OCT_RE.match(text):
            return int(text.replace("_", ""), 8)
        if text in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[text]
    return text


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


# --- events -> data ---------------------------------------------------------

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


# --- streams -> documents ---------------------------------------------------

# A document starts at a `---` line (with any directives just before it) and ends
# after a `...` line. YAML forbids both at column 0 inside scalars. Directive
# lines are found by walking back from a `---`, at most MAX_DIRECTIVES of them: a
# regex for them is quadratic on thousands of `%` lines.
_BOUNDARY_RE = re.compile(r"^(?:---(?=[ \t\r\n]|$)|\.\.\.[ \t]*(?:\r?\n|$))", re.M)
MAX_DIRECTIVES = 64


def _cut(text: str, match: re.Match, floor: int) -> int:
    """Where a boundary cuts `text`: after a `...` line, before a `---` line and its directives."""
    if text.startswith(".", match.start()):
        return match.end()
    pos = match.start()
    for _ in range(MAX_DIRECTIVES):
        if pos <= floor:
            break
        prev = max(text.rfind("\n", floor, pos - 1) + 1, floor)
        if not text.startswith("%", prev):
            break
        pos = prev
    return pos


def split_documents(text: str) -> Iterator[tuple[str, int]]:
    """Yield (document text, 0-based line of its first character)."""
    start = 0
    line = 0
    for match in _BOUNDARY_RE.finditer(text):
        cut = _cut(text, match, start)
        if cut > start:
            chunk = text[start:cut]
            yield chunk, line
            line += chunk.count("\n")
            start = cut
    if start < len(text) or not text:
        yield text[start:], line


def split_stream(blocks: Iterable[str]) -> Iterator[tuple[str, int]]:
    """`split_documents` over text arriving in blocks, holding one document at a time.

    Only complete lines are searched for boundaries. The searched lines of the
    current document accumulate in `pieces` and are joined once, when it ends,
    so a large document costs linear time.
    """
    pieces: list[str] = []    # the current document's complete lines, already searched
    pending: list[str] = []   # text after the last complete line
    line = 0
    for block in blocks:
        pending.append(block)
        if "\n" not in block:
            continue
        text = "".join(pending)
        end = text.rfind("\n") + 1
        start = 0
        for match in _BOUNDARY_RE.finditer(text, 0, end):
            cut = _cut(text, match, start)
            pieces.append(text[start:cut])
            chunk = "".join(pieces)
            pieces = []
            if chunk:
                yield chunk, line
                line += chunk.count("\n")
            start = cut
        # Directive lines at the end belong to a `---` that may come with the
        # next block: keep them (as many as a `---` may claim) to search again.
        keep = end
        for _ in range(MAX_DIRECTIVES):
            if keep <= start:
                break
            prev = max(text.rfind("\n", start, keep - 1) + 1, start)
            if not text.startswith("%", prev):
                break
            keep = prev
        if keep > start:
            pieces.append(text[start:keep])
        pending = [text[keep:]] if keep < len(text) else []
    rest = "".join(pieces) + "".join(pending)
    if rest or line == 0:
        for chunk, offset in split_documents(rest):
            yield chunk, line + offset


def load_documents(text: str, limits: Limits = DEFAULT_LIMITS, unrendered: bool = True,
                   only: tuple[str, ...] = (), strict_json: bool = False) -> Iterator[Document | LoadError]:
    """Yield every non-empty document of `text`, or a LoadError where one fails.

    With `unrendered`, a document that fails and holds `{{ ... }}` yields its
    LoadError (marked `template`) and then, when masking the template actions
    makes it parse, the masked document (see unrendered.py). With `only`,
    documents whose text holds none of these words are skipped unparsed. With
    `strict_json` (a `.json` file), JSON-looking text that YAML accepts but JSON
    does not (trailing commas, comments) also yields a LoadError, before the
    document read as YAML.
    """
    return _load_chunks(split_documents(text), limits, unrendered, only, strict_json)


def load_stream(blocks: Iterable[str], limits: Limits = DEFAULT_LIMITS, unrendered: bool = True,
                only: tuple[str, ...] = (), strict_json: bool = False) -> Iterator[Document | LoadError]:
    """`load_documents` over text arriving in blocks; memory is bounded by the largest document."""
    return _load_chunks(split_stream(blocks), limits, unrendered, only, strict_json)


def _load_chunks(chunks: Iterable[tuple[str, int]], limits: Limits, unrendered: bool,
                 only: tuple[str, ...], strict_json: bool = False) -> Iterator[Document | LoadError]:
    index = 0
    for chunk, line_offset in chunks:
        if only and not any(word in chunk for word in only):
            continue
        if chunk.startswith("...") and not chunk[3:].strip():
            continue  # a bare document end marker: valid YAML 1.2 that libyaml refuses
        placeholders: tuple[Span, ...] = ()
        text = chunk
        try:
            docs, is_json = _parse_any(chunk, line_offset, limits)
        except LoadError as error:
            error.__traceback__ = None  # keeps no parser or chunk alive while the caller holds it
            if strict_json and error.syntax and jsonload.looks_like_json(chunk):
                where = jsonload.json_error(chunk)
                if where is not None:  # a `.json` file: say what JSON finds wrong
                    error = LoadError(f"invalid JSON: {where[2]}", line_offset + where[0] + 1, where[1] + 1,
                                      syntax=True)
            if unrendered and error.syntax and unrendered_mod.has_actions(chunk):
                text, marks = unrendered_mod.mask(chunk)
                try:
                    docs, is_json = list(_parse_chunk(text, line_offset, limits)), False
                except LoadError:
                    docs = []
                    # Still a template if the parser stumbled on a line holding an action.
                    lines = chunk.split("\n")
                    at = error.line - line_offset - 1
                    error.template = any("{{" in line or "}}" in line for line in lines[max(at - 1, 0):at + 1])
                else:
                    error.template = error.literal_checked = True
                    placeholders = tuple(Span(line_offset + ln + 1, start + 1, line_offset + ln + 1, end + 1)
                                         for ln, start, end in marks)
            else:
                docs = []
            yield error
        else:
            if strict_json and not is_json and jsonload.looks_like_json(chunk):
                where = jsonload.json_error(chunk)
                if where is not None:
                    line, column, reason = where
                    yield LoadError(f"invalid JSON: {reason}; kubectl rejects it (gpulint checked it read as YAML)",
                                    line_offset + line + 1, column + 1, syntax=True)
        for events, data, has_problems, content_start, raw in docs:
            yield Document(index, data, text, line_offset, events, has_problems, content_start,
                           limits=limits, raw=raw, is_json=is_json, placeholders=placeholders)
            index += 1


def _parse_any(chunk: str, line_offset: int,
               limits: Limits) -> tuple[list[tuple[list | None, Any, bool, int, int]], bool]:
    """Documents of `chunk` as YAML, or as JSON where libyaml rejects valid JSON; and which."""
    try:
        return list(_parse_chunk(chunk, line_offset, limits)), False
    except LoadError as error:
        if not (error.syntax and jsonload.looks_like_json(chunk)):
            raise
        try:
            documents = jsonload.json_events(chunk)
        except jsonload.JSONSyntaxError:
            raise error from None
    out = []
    keep = len(chunk) <= KEEP_EVENTS_MAX
    for raw, events in enumerate(documents):
        data, _loc, has_problems = _build(events, line_offset, False, limits)
        out.append(((events if keep else None), data, bool(has_problems), events[0].start_mark.index, raw))
    return out, True


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


def _documents_of(text: str, keep: bool = False) -> Iterator[_DocumentEvents]:
    """Each document of `text` (libyaml), its events to be consumed in order."""
    parser = CParser(text)
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


def _parse_chunk(chunk: str, line_offset: int,
                 limits: Limits) -> Iterator[tuple[list | None, Any, bool, int, int]]:
    """(events, data, has problems, offset of the first node, raw index) of each non-empty document.

    For a large chunk, events are not kept (None): the document is built as
    they are parsed, and parsed again if a finding needs its location tree.
    The raw index counts empty documents too, to find the document again.
    """
    if "%" in chunk:
        _check_directives(chunk, line_offset)
    try:
        for raw, document in enumerate(_documents_of(chunk, keep=len(chunk) <= KEEP_EVENTS_MAX)):
            data, _loc, has_problems = _build(document, line_offset, False, limits)
            if data is not None and not document.is_empty():
                yield document.kept, data, bool(has_problems), document.first.start_mark.index, raw
    except LoadError:
        raise
    except Exception as error:  # the C parser raises ruamel's MarkedYAMLError or ReaderError
        raise _as_load_error(error, chunk, line_offset) from None


def _check_directives(chunk: str, line_offset: int) -> None:
    """Refuse more than MAX_DIRECTIVES directive lines before a document.

    libyaml compares each `%TAG` with every earlier one: thousands of them take
    quadratic time. Real documents have one or two.
    """
    count = line = pos = 0
    while pos < len(chunk):
        end = chunk.find("\n", pos)
        end = len(chunk) if end < 0 else end
        first = chunk[pos:pos + 1]
        if first == "%":
            count += 1
            if count > MAX_DIRECTIVES:
                raise LoadError(f"more than {MAX_DIRECTIVES} directives (`%...` lines) before a document",
                                line_offset + line + 1, 1, syntax=True)
        elif first != "#" and chunk[pos:end].strip():
            return  # the header ends at the first content line
        pos = end + 1
        line += 1


def _node_events(text: str, raw: int, is_json: bool) -> Iterable[Any]:
    """The node events of document `raw` of `text`, parsed again."""
    if is_json:
        return jsonload.json_events(text)[raw]
    for index, document in enumerate(_documents_of(text)):
        if index == raw:
            return document
    raise LookupError(f"document {raw} vanished on a second parse")


def _as_load_error(error: Exception, chunk: str, line_offset: int) -> LoadError:
    position = getattr(error, "position", None)
    if isinstance(position, int):
        # A ReaderError (e.g. a control character): `position` is a byte offset
        # into the UTF-8 text the C parser was given.
        index = len(chunk.encode("utf-8")[:position].decode("utf-8", "ignore"))
        line = chunk.count("\n", 0, index)
        column = index - (chunk.rfind("\n", 0, index) + 1)
        char = getattr(error, "character", None)
        what = f"character {_describe_char(char)}" if isinstance(char, int) else "character"
        reason = getattr(error, "reason", "not allowed")
        return LoadError(f"invalid YAML: unacceptable {what}: {reason}",
                         line + line_offset + 1, column + 1, syntax=True)
    problem_mark = getattr(error, "problem_mark", None)
    context_mark = getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    mark = problem_mark or context_mark
    if context and context_mark is not None and problem_mark is not None and (
            context_mark.line, context_mark.column) != (problem_mark.line, problem_mark.column):
        if "end of stream" in str(problem):
            # An unterminated quote: the end of the document says little, its start says where.
            mark = context_mark
            context = f"{context} (never closed)"
        else:
            context = f"{context} started at line {context_mark.line + line_offset + 1}, column " \
                      f"{context_mark.column + 1}"
    message = f"{context}: {problem}" if context else str(problem)
    if mark is None:
        return LoadError(f"invalid YAML: {message}", line_offset + 1, 1, syntax=True)
    return LoadError(f"invalid YAML: {message}", mark.line + line_offset + 1, mark.column + 1, syntax=True)


def _describe_char(code: int) -> str:
    if code == 0:
        return "NUL (#x0)"
    return f"#x{code:x}"
