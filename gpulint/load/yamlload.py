"""YAML/JSON text -> plain data plus a lazily built location tree.

Speed comes from libyaml (ruamel.yaml.clib's C parser) emitting events; this
module turns events into dicts/lists/scalars with Kubernetes (YAML 1.1, as in
sigs.k8s.io/yaml) scalar resolution. No tag ever constructs a Python object.

Each document keeps its events, and the location tree (LocNode) is only built
when a finding needs a position: most documents have none, so most scans never
pay for it. A stream is cut into documents at `---`/`...` lines first (YAML
forbids those markers at column 0 inside any scalar), which bounds memory to one
document (or a few small ones, see BATCH_CHARS), gives each document its own raw
text, and lets a parse error in one document leave the others scanned.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from typing import Any, Iterable, Iterator

from ruamel.yaml.error import StreamMark

from gpulint.lazypattern import lazy
from gpulint.load import events as ev
from gpulint.load.events import (ALIAS, ANCHOR, DOC_END, DOC_START, END_MARK, IMPLICIT, KIND, MAP_END, MAP_START,
                                 SCALAR, SEQ_END, SEQ_START, START_MARK, STREAM_END, STYLE, TAG, VALUE, parsing)
from gpulint.load.locations import LocNode, Span
from gpulint.record import record, set_field


@record(frozen=True)
class Limits:
    """Bounds that keep hostile input from exhausting time or memory.

    `max_depth` bounds nesting (flow `[[[[`, block or JSON); `max_expanded_nodes`
    bounds the nodes aliases add to a document (the "billion laughs" bomb).
    """

    __slots__ = ("max_depth", "max_expanded_nodes", "max_file_size")
    max_depth: int
    max_expanded_nodes: int
    # Bytes of the largest file read (stdin aside): a larger one is reported and never opened. A
    # file with no line breaks is held whole while parsed (about 7 times its size in memory).
    max_file_size: int | None

    def __init__(self, max_depth: int = 500, max_expanded_nodes: int = 1_000_000,
                 max_file_size: int | None = 256 << 20) -> None:
        set_field(self, "max_depth", max_depth)
        set_field(self, "max_expanded_nodes", max_expanded_nodes)
        set_field(self, "max_file_size", max_file_size)


DEFAULT_LIMITS = Limits()

# What happens to the first of two equal keys of a manifest (a values file's reader says it otherwise).
KEEPS_LAST = "Kubernetes keeps only the last value (strict field validation rejects the object)"

# Documents larger than this (in characters) do not keep their parser events,
# which take about 30 times the size of the text, for the location tree: it is
# built from a second parse when a finding needs it.
KEEP_EVENTS_MAX = 1 << 20


class LoadError(Exception):
    """A document could not be loaded; `line`/`column` are 1-based in the file.

    `syntax`: the parser rejected the text (not a limit of ours).
    `template`: the text is an unrendered template (`{{ ... }}`, `${...}`).
    `literal_checked`: masking the actions made it parse, and the masked
    document follows this error. See `_recover` for the other attributes.
    """

    def __init__(self, message: str, line: int, column: int, syntax: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.syntax = syntax
        self.template = False
        self.literal_checked = False
        self.kubernetes = True           # whether the text shows a sign of being a Kubernetes object (sniff.py)
        self.template_syntax: str | None = None   # unrendered.GO or unrendered.DOLLAR
        self.helm = False                # the template uses Helm's objects (`.Values`, `include`, ...)
        self.jsonc = False               # JSON that is not strict JSON (comments, trailing commas), read anyway
        self.unknown: Any = None         # the first action that could hide a GPU bypass (unknowns.Unknown)
        self.workload_shaped = False     # the text shows containers (what an unread template may hide)
        # Whether every pod of its literal text is GPU infrastructure (set by the scan: knowledge/roles.py),
        # whose findings are exempt whatever its actions render.
        self.infrastructure: bool | None = None


@record
class Problem:
    """A non-fatal defect found while loading (e.g. a duplicate key).

    For a duplicate key, `hidden` is the span of the first value: text
    Kubernetes ignores.
    """

    __slots__ = ("message", "span", "hidden", "hidden_range")
    message: str
    span: Span
    hidden: Span | None
    hidden_range: tuple[int, int] | None   # the same, as offsets in the document's text

    def __init__(self, message: str, span: Span, hidden: Span | None = None,
                 hidden_range: tuple[int, int] | None = None) -> None:
        self.message = message
        self.span = span
        self.hidden = hidden
        self.hidden_range = hidden_range


class Document:
    """One YAML document: plain data, its raw text, and positions on demand."""

    __slots__ = ("index", "data", "text", "line_offset", "content_start", "_dups", "_ends",
                 "_problems", "_events", "_root", "_limits", "_raw", "_is_json", "placeholders")

    def __init__(self, index: int, data: Any, text: str, line_offset: int,
                 events: Any, dups: list | bool, content_start: int, *,
                 limits: Limits = DEFAULT_LIMITS, raw: int = 0, is_json: bool = False,
                 placeholders: tuple[Span, ...] = ()) -> None:
        self.index = index
        self.data = data
        self.text = text
        self.line_offset = line_offset  # 0-based line of `text` in the file
        # Offset in `text` of the first node: what precedes it is the header
        # (`---`, comments such as Helm's `# Source:`).
        self.content_start = content_start
        # Repeated keys: as noted by _build with the event tree, or only whether there are any.
        self._dups = dups
        self._problems: list[Problem] | None = None
        # The document's node events, kept as a tree (see _build); None: parse
        # `text` again when positions are needed (large documents).
        self._events = events
        self._root: LocNode | None = None
        self._ends: dict = {}                # see _loc
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
        if self._problems is None:
            if not self._dups:
                self._problems = []
            else:
                if not isinstance(self._dups, list):
                    self._reparse()
                self._problems = _problems(self._dups, self.line_offset, self._ends)  # type: ignore[arg-type]
        return self._problems

    @property
    def start_line(self) -> int:
        """1-based line of the document's first node."""
        return self.root().span.line

    def root(self) -> LocNode:
        if self._root is None:
            if self._events is None:
                self._reparse()
            self._root = _loc(self._events, self.line_offset, self._ends)
        return self._root

    def without_data(self) -> Document:
        """This document's text and place without its data and event tree (a few times the
        text's size), for documents kept long, such as the ConfigMaps of an index; `reparsed`
        gives the whole document back."""
        return Document(self.index, None, self.text, self.line_offset, None, bool(self._dups), self.content_start,
                        limits=self._limits, raw=self._raw, is_json=self._is_json, placeholders=self.placeholders)

    def reparsed(self) -> Document:
        """The document again, data included, from its text (see without_data)."""
        with parsing():
            docs, _is_json = _parse_any(self.text, self.line_offset, self._limits, keep=False)
        for tree, data, dups, content_start, raw in docs:
            if raw == self._raw:
                return Document(self.index, data, self.text, self.line_offset, tree, dups, content_start,
                                limits=self._limits, raw=raw, is_json=self._is_json, placeholders=self.placeholders)
        raise LoadError("the document is no longer in its text", self.line_offset + 1, 1)

    def _reparse(self) -> None:
        """Keep the event tree of a large document, parsing its text again."""
        if self._is_json:
            from gpulint.load import jsonload

            events = iter(jsonload.json_events(self.text)[self._raw] + [_JSON_END])
            _data, tree, dups, _first = _build(events.__next__, self.line_offset, True, self._limits)
        else:
            tree, dups = _tree_of(self.text, self._raw, self.line_offset, self._limits)
        self._events = tree
        self._dups = dups

    def in_placeholder(self, span: Span) -> bool:
        """Whether `span` overlaps text that stands in for an unrendered template action."""
        for mark in self.placeholders:
            if ((mark.line, mark.column) < (span.end_line, span.end_column)
                    and (span.line, span.column) < (mark.end_line, mark.end_column)):
                return True
        return False

    def node(self, path: Iterable) -> LocNode | None:
        """The location node at `path`, or None when the path does not exist."""
        raw = self._node(path)
        if raw is _MISSING:
            return None
        if raw is self._events:
            return self.root()
        return _loc(raw, self.line_offset, self._ends)

    def _node(self, path: Iterable) -> Any:
        """The event-tree node at `path` (_MISSING when there is none): only that path is walked."""
        if self._events is None:
            self._reparse()
        path = tuple(path)
        raws = _walk(self._events, path)
        return raws[-1] if len(raws) > len(path) else _MISSING

    def span(self, path: tuple, key: bool = False) -> Span | None:
        """Span of the value at `path`, or of its mapping key when `key` is set."""
        if key and path:
            parent = self._node(path[:-1])
            if type(parent) is not list or parent[_START][KIND] != MAP_START:
                return None
            entry = _entry(parent, path[-1])
            return _span(entry[0], self.line_offset) if entry else None
        raw = self._node(path)
        if raw is _MISSING:
            return None
        if type(raw) is not list:
            return _span(raw, self.line_offset)
        return _extent(raw, self.line_offset, self._ends)[0]

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

    def block_entries(self, limit: int) -> Iterator[tuple[int, int, bool]]:
        """The mapping entries whose value is a block collection with entries, breadth first from the
        root (in each mapping in the order written; `limit`: nodes taken from the queue, scalars and
        list items included): (key start, start of the value's first entry, whether it is a mapping).
        Read from the event tree: only for documents whose nodes are all written where their path
        says (no alias, merge key or repeated key), where the order of events is the order written.
        Offsets are the events' (libyaml does not count a leading byte-order mark)."""
        text = self.text
        queue = deque([self._node(())])
        seen = 0
        while queue and seen < limit:
            raw = queue.popleft()
            seen += 1
            if type(raw) is not list or len(raw) == _ITEMS or \
                    text[raw[_START][START_MARK].index:raw[_START][START_MARK].index + 1] in ("{", "["):
                continue   # a scalar, an empty or a flow collection (whose children are not looked into)
            if raw[_START][KIND] != MAP_START:
                queue.extend(raw[_ITEMS:])
                continue
            for i in range(_ITEMS, len(raw), 2):
                child = raw[i + 1]
                queue.append(child)
                if type(child) is not list or len(child) == _ITEMS:
                    continue
                start = child[_START][START_MARK].index
                if text[start:start + 1] in ("{", "["):
                    continue
                first = child[_ITEMS]
                first_start = first[_START][START_MARK].index if type(first) is list else first[START_MARK].index
                yield raw[i][START_MARK].index, first_start, child[_START][KIND] == MAP_START

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
# Kubernetes' decoder (go-yaml v2) reads a plain integer with strconv.ParseInt(text, 0) once
# underscores are removed: 0x/0X hex, 0o/0O and a leading 0 octal, 0b/0B binary.
_HEX_RE = re.compile(r"[-+]?0[xX][0-9a-fA-F_]+\Z")
_PREFIXED_RE = re.compile(r"[-+]?0(?:[oO][0-7_]+|[bB][01_]+)\Z")
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
        # The usual cases first: a decimal integer (a port, a count), then text
        # with a character no number has (`500m`, `1Gi`, `12.0-base`). Manifests
        # have as many of those as of all other scalars that start like a number.
        if text.isdigit() and text.isascii() and (first != "0" or len(text) == 1):
            return int(text)
        if not _NUMBER_CHARS.issuperset(text):
            return text
        return _resolve_number(text)
    return text


# Every character of an int, float, hex or octal number or a special float.
_NUMBER_CHARS = frozenset("0123456789_+-.xXoOabcdefABCDEFinIN")


def _resolve_number(text: str) -> Any:
    """Type of a plain scalar starting like a number (resolve_plain's slow path)."""
    if _INT_RE.match(text):
        return int(text.replace("_", ""))
    if _FLOAT_RE.match(text) and text != ".":
        try:
            return float(text.replace("_", ""))
        except ValueError:
            return text
    if _HEX_RE.match(text):
        try:
            return int(text.replace("_", ""), 16)
        except ValueError:  # `0x_`: no digit left
            return text
    if _OCT_RE.match(text):
        return int(text.replace("_", ""), 8)
    if _PREFIXED_RE.match(text):
        digits = text.replace("_", "")
        try:
            return int(digits, 0)
        except ValueError:  # `0o_`: no digit left
            return text
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    return text


# --- events -> data and the kept event tree ---------------------------------
#
# One pass over the parser's events (tuples: see events.py) builds the plain data
# and, for documents up to KEEP_EVENTS_MAX, keeps the events as a tree: a
# scalar's event is its own leaf; a collection is a list [start event, end
# event, repeated keys?, merged keys, children...], a mapping's children flat as
# key event, child, key event, child. That costs a list append or two per node. LocNodes (spans,
# child dicts) are made from the tree only for the nodes a finding asks about.

_MISSING = object()
_MERGE = object()
# Plain scalars starting with anything else are strings: no need to call resolve_plain.
_RESOLVE_START = frozenset(_NUMBER_START | _WORD_START | {""})

# A collection of the event tree is a list (cheap to make, children appended in place):
_START = 0     # its MappingStart/SequenceStart event
_END = 1       # its end event
_DUPS = 2      # whether a key occurs twice among its children
_MERGED = 3    # keys a merge (`<<: *base`) added, in order, each with the mapping it came from; or None
_ITEMS = 4     # where the children start


# Span(...) through tuple.__new__ directly: the same Span without the Python-level __new__ a
# NamedTuple has (a location tree makes one per node it expands).
_new_span = tuple.__new__


def _span(event: tuple, line_offset: int) -> Span:
    s, e = event[START_MARK], event[END_MARK]
    return _new_span(Span, (s.line + line_offset + 1, s.column + 1, e.line + line_offset + 1, e.column + 1))


def _build(next_event: Any, line_offset: int, keep: bool,
           limits: Limits) -> tuple[Any, Any, list | bool, Any]:
    """Read one document's node events (up to its document end) from `next_event`.

    Returns (data, event tree or None, duplicates, first event). With `keep`
    the event tree is kept and `duplicates` lists where keys repeat (made into
    Problems when asked for); without, it only says whether any do. Written as
    one flat loop with the current collection in locals: it runs once per
    node of every document scanned.
    """
    anchors: dict[str, tuple[Any, Any, int]] = {}
    open_anchors: set[str] = set()
    dups: list = []
    duplicates = False
    stack: list[tuple] = []
    max_depth = limits.max_depth
    max_expanded = limits.max_expanded_nodes
    count = 0        # nodes so far, aliases counted at their expanded size
    expanded = 0     # nodes added by aliases
    # The collection being read: its data, whether a mapping, the pending key
    # (and its event), its event-tree node, pending merges, anchor and `count` at its start;
    # and whether the next event is a mapping's key.
    cur: Any = None
    is_map = False
    key: Any = None
    key_ev: Any = None
    wants_key = False
    node: list | None = None
    merges: list | None = None
    anchor: str | None = None
    base = 0
    result: Any = None
    result_raw: Any = None
    first: Any = None
    # Module constants as locals (a local is read faster than a global, once per event).
    merge, resolve_start, str_tag = _MERGE, _RESOLVE_START, _STR_TAG
    scalar_kind, map_start, seq_start, map_end, seq_end = SCALAR, MAP_START, SEQ_START, MAP_END, SEQ_END
    f_kind, f_value, f_tag, f_style, f_implicit, f_anchor = KIND, VALUE, TAG, STYLE, IMPLICIT, ANCHOR
    end_slot = _END

    while True:
        event = next_event()
        kind = event[f_kind]
        if kind == scalar_kind:
            if wants_key:
                # A mapping key: Kubernetes keys are strings, taken verbatim.
                key = event[f_value]
                if key == "<<" and event[f_style] == "":
                    key = merge
                key_ev = event
                wants_key = False
                continue
            value = event[f_value]
            tag = event[f_tag]
            if tag is None or tag == "!":
                if event[f_style] == "" and event[f_implicit][0] and value[:1] in resolve_start:
                    value = resolve_plain(value)
            elif tag != str_tag and (tag in _TYPED_TAGS or event[f_style] == ""):
                value = resolve_plain(value)
            # (other tags are ignored: the value is read as if untagged)
            raw: Any = event
            count += 1
            if event[f_anchor] is not None:
                anchors[event[f_anchor]] = (value, event, 1)
        elif kind == map_start or kind == seq_start:
            if wants_key:
                raise _fail("complex (non-scalar) mapping keys are not valid in Kubernetes manifests", event,
                            line_offset)
            if len(stack) >= max_depth:
                raise _fail(f"nesting deeper than {max_depth} levels (limit: --max-depth)", event, line_offset,
                            False)
            if cur is None:
                first = event
            stack.append((cur, is_map, key, key_ev, node, merges, anchor, base))
            is_map = wants_key = kind == map_start
            cur = {} if is_map else []
            node = [event, None, False, None] if keep else None
            merges = None
            anchor = event[f_anchor]
            if anchor is not None:
                open_anchors.add(anchor)
            base = count
            count += 1
            continue
        elif kind == map_end or kind == seq_end:
            value = cur
            raw = node
            if merges:
                _apply_merges(cur, merges, node)
            if node is not None:
                node[end_slot] = event
            if anchor is not None:
                open_anchors.discard(anchor)
                anchors[anchor] = (value, node, count - base)
            cur, is_map, key, key_ev, node, merges, anchor, base = stack.pop()
            wants_key = False
        elif kind == ALIAS:
            name = event[f_anchor]
            if name in open_anchors:
                raise _fail(f"recursive alias *{name} refers to a node that contains it", event, line_offset)
            if name not in anchors:
                raise _fail(f"alias *{name} refers to an undefined anchor", event, line_offset)
            value, raw, size = anchors[name]
            expanded += size
            count += size
            if expanded > max_expanded:
                raise _fail(f"alias expansion exceeds {max_expanded} nodes, a YAML bomb? "
                            "(limit: --max-alias-nodes)", event, line_offset, False)
            if wants_key:
                raise _fail("an alias used as a mapping key is not valid in Kubernetes manifests", event,
                            line_offset)
        elif kind == DOC_END:
            return result, result_raw, (dups if keep else duplicates), first
        else:  # stream/document starts are not part of the node tree
            continue

        if cur is None:  # the document's root
            result, result_raw = value, raw
            if kind != map_end and kind != seq_end:
                first = event
            continue
        if not is_map:
            cur.append(value)
            if node is not None:
                node.append(raw)
            continue
        wants_key = True
        if key is merge:
            if merges is None:
                merges = []
            merges.append((value, raw))
            continue
        if key in cur:
            if node is None:
                duplicates = True  # reported with positions when the tree is built
            else:
                node[_DUPS] = True
                dups.append((node, len(node), key_ev))
        cur[key] = value
        if node is not None:
            node.append(key_ev)
            node.append(raw)


def _fail(message: str, event: tuple, line_offset: int, syntax: bool = True) -> LoadError:
    """A LoadError at `event`'s start."""
    m = event[START_MARK]
    return LoadError(message, m.line + line_offset + 1, m.column + 1, syntax)


def _apply_merges(target: dict, merges: list, node: list | None) -> None:
    """YAML merge keys (`<<: *base`): explicit keys win, then earlier merges."""
    taken = set(target)
    added: list[tuple[str, list]] = []
    for value, raw in merges:
        if isinstance(value, list):
            sources = value
            source_raws = raw[_ITEMS:] if raw is not None else [None] * len(value)
        else:
            sources, source_raws = [value], [raw]
        for source, source_raw in zip(sources, source_raws):
            if not isinstance(source, dict):
                continue
            for key, item in source.items():
                if key in taken:
                    continue
                taken.add(key)
                target[key] = item
                if source_raw is not None:
                    added.append((key, source_raw))
    if node is not None and added:
        node[_MERGED] = added


# --- the event tree -> location nodes, on demand ------------------------------
#
# These reproduce what building every LocNode eagerly gave: a mapping's
# children in dict order (explicit keys where first written, holding the last
# value; then merged keys), and a block collection ending where its last child
# in that order ends (libyaml ends it where the next token starts, often lines
# later; flow collections end after `]`/`}`). Loops, not recursion: nesting can
# be as deep as --max-depth allows.


def _is_coll(raw: Any) -> bool:
    return type(raw) is list


def _is_mapping(coll: list) -> bool:
    return coll[_START][KIND] == MAP_START


def _entry(coll: list, key: Any) -> tuple[Any, Any] | None:
    """(key event, child) of `key` in mapping `coll`, following merges."""
    while True:
        for i in range(len(coll) - 2, _ITEMS - 1, -2):  # the last occurrence wins
            if coll[i][VALUE] == key:
                return coll[i], coll[i + 1]
        source = next((src for k, src in coll[_MERGED] or () if k == key), None)
        if source is None:
            return None
        coll = source


def _walk(raw: Any, path: tuple) -> list:
    """The event-tree nodes on `path` from `raw` down (`raw` first), as far as the path exists: the
    node at path[:depth] is the depth-th, and the path exists when there are len(path) + 1. The last
    occurrence of a repeated key wins; a key a merge (`<<`) added counts. (_entry's search written
    out: a path walks one mapping per step, and a call per step cost as much as the search.)"""
    raws = [raw]
    for item in path:
        if type(raw) is not list:
            break
        if raw[_START][KIND] == MAP_START:
            i = len(raw) - 2
            while i >= _ITEMS and raw[i][VALUE] != item:
                i -= 2
            if i >= _ITEMS:
                raw = raw[i + 1]
            else:
                entry = _entry(raw, item) if raw[_MERGED] else None
                if entry is None:
                    break
                raw = entry[1]
        elif isinstance(item, int) and 0 <= item < len(raw) - _ITEMS:
            raw = raw[_ITEMS + item]
        else:
            break
        raws.append(raw)
    return raws


def _last_child(coll: list) -> Any:
    """The event-tree child whose LocNode comes last among `coll`'s children (None: no children)."""
    if len(coll) == _ITEMS and not coll[_MERGED]:
        return None
    if not _is_mapping(coll):
        return coll[-1]
    if coll[_MERGED]:
        key, source = coll[_MERGED][-1]
        entry = _entry(source, key)
        return entry[1] if entry else None
    if not coll[_DUPS]:
        return coll[-1]
    order: dict[str, Any] = {}
    for i in range(_ITEMS, len(coll), 2):
        order[coll[i][VALUE]] = coll[i + 1]
    return next(reversed(order.values()))


def _loc(raw: Any, line_offset: int, ends: dict) -> LocNode:
    """The LocNode of an event-tree node (a scalar event or a collection).

    `ends` memoises collections' (span, end offset) by id: making a node's
    children needs each child's end, found down its chain of last children.
    """
    if type(raw) is not list:
        s, e = raw[START_MARK], raw[END_MARK]
        span = _new_span(Span, (s.line + line_offset + 1, s.column + 1, e.line + line_offset + 1, e.column + 1))
        return LocNode(span, s.index, e.index, raw[STYLE])
    return _CollectionLoc(raw, line_offset, ends)


def _extent(coll: list, line_offset: int, ends: dict) -> tuple[Span, int]:
    """(span, end offset) of a collection, from its last child's (a loop: nesting can be deep)."""
    known = ends.get(id(coll))
    if known is not None:
        return known
    chain = []
    node: Any = coll
    while type(node) is list and id(node) not in ends:
        chain.append(node)
        node = _last_child(node)
    if node is None:
        last = None
    elif type(node) is list:
        last = ends[id(node)]
    else:
        e = node[END_MARK]
        last = (_new_span(Span, (0, 0, e.line + line_offset + 1, e.column + 1)), e.index)
    for item in reversed(chain):
        s = item[_START][START_MARK]
        end_event = item[_END]
        e = end_event[END_MARK]
        if last is not None and e.index > last[1] and end_event[START_MARK].index == e.index:
            # Block style: the end event is empty and sits at the next token.
            last_span = last[0]
            last = (_new_span(Span, (s.line + line_offset + 1, s.column + 1, last_span.end_line,
                                     last_span.end_column)), last[1])
        else:
            last = (_new_span(Span, (s.line + line_offset + 1, s.column + 1, e.line + line_offset + 1,
                                     e.column + 1)), e.index)
        ends[id(item)] = last
    return last  # type: ignore[return-value]


def _end_of(raw: Any) -> int:
    """The end offset of an event-tree node, as its LocNode's `end` (_extent's, without making spans)."""
    if type(raw) is not list:
        return raw[END_MARK].index
    chain = []
    while type(raw) is list:
        chain.append(raw)
        # (The last child is the last one written unless a key repeats or a merge key adds one.)
        raw = raw[-1] if len(raw) > _ITEMS and not raw[_DUPS] and raw[_MERGED] is None else _last_child(raw)
    last = None if raw is None else raw[END_MARK].index
    for coll in reversed(chain):
        end_event = coll[_END]
        end = end_event[END_MARK].index
        # (A block collection's end event is empty and sits at the next token: it ends with its last child.)
        if last is None or end <= last or end_event[START_MARK].index != end:
            last = end
    return last  # type: ignore[return-value]


class _CollectionLoc(LocNode):
    """A collection's LocNode as the loader hands it out: its children made when first asked for, and
    its span and end too (_extent, a walk down its chain of last children): a fix lists a mapping's
    entries and reads the end of one of them, and a path walked asks only for the node at its end.

    It holds the collection, never the other way round: the event tree stays free of reference
    cycles, so a document is freed as soon as it is dropped (not by the cyclic garbage collector,
    which would have to walk every event).
    """

    __slots__ = ("_children", "_coll", "_line_offset", "_ends")

    def __init__(self, coll: list, line_offset: int, ends: dict) -> None:
        self.start = coll[_START][START_MARK].index
        self.style = None
        self._children = None   # (made on first access: a collection's children are a dict or a list)
        self._coll = coll
        self._line_offset = line_offset
        self._ends = ends

    @property  # type: ignore[override]
    def span(self) -> Span:
        return _extent(self._coll, self._line_offset, self._ends)[0]

    @property  # type: ignore[override]
    def end(self) -> int:
        return _extent(self._coll, self._line_offset, self._ends)[1]

    @property
    def children(self) -> dict | list | None:
        children = self._children
        if children is None:
            children = self._children = _children_of(self._coll, self._line_offset, self._ends)
        return children

    @children.setter
    def children(self, value: dict | list | None) -> None:
        self._children = value

    def first_key_start(self) -> int | None:
        """LocNode.first_key_start: the first key written, when the document is written in place
        (resolve._Text._in_place)."""
        coll = self._coll
        if not _is_mapping(coll) or len(coll) == _ITEMS:
            return None
        return coll[_ITEMS][START_MARK].index

    def kind(self) -> type:
        return dict if self._coll[_START][KIND] == MAP_START else list

    def along(self, path: tuple) -> _Along:
        """LocNode.along: the path walked as Document._node walks it, its nodes made when asked for."""
        return _Along(_walk(self._coll, path), self._line_offset, self._ends)

    def start_line(self) -> int:
        return self._coll[_START][START_MARK].line

    # LocNode.item_count and the others after it, from the event tree (in place: every key once, no merge).

    def item_count(self) -> int:
        coll = self._coll
        return (len(coll) - _ITEMS) // 2 if coll[_START][KIND] == MAP_START else len(coll) - _ITEMS

    def item_index(self, key: object) -> int | None:
        coll = self._coll
        if coll[_START][KIND] != MAP_START:
            return key if type(key) is int and 0 <= key < len(coll) - _ITEMS else None
        for i in range(_ITEMS, len(coll), 2):
            if coll[i][VALUE] == key:
                return (i - _ITEMS) // 2
        return None

    def item_start(self, at: int) -> tuple[int, int]:
        coll = self._coll
        if coll[_START][KIND] == MAP_START:
            key_event = coll[_ITEMS + 2 * at]
            return key_event[START_MARK].index, key_event[END_MARK].index
        item = coll[_ITEMS + at]
        start = (item[_START] if type(item) is list else item)[START_MARK].index
        return start, start

    def item_end(self, at: int) -> int:
        coll = self._coll
        if coll[_START][KIND] == MAP_START:
            return max(_end_of(coll[_ITEMS + 2 * at + 1]), coll[_ITEMS + 2 * at][END_MARK].index)
        return _end_of(coll[_ITEMS + at])

    def first_item_key_start(self) -> int | None:
        coll = self._coll
        if coll[_START][KIND] == MAP_START or len(coll) == _ITEMS:
            return None
        item = coll[_ITEMS]
        if type(item) is not list or item[_START][KIND] != MAP_START or len(item) == _ITEMS:
            return None
        return item[_ITEMS][START_MARK].index

    def key_offsets(self) -> dict | None:
        """The key events' offsets, for the children's keys in the same order (LocNode.key_offsets; like
        every offset of the loader, one short of the text's after a leading byte-order mark)."""
        coll = self._coll
        if not _is_mapping(coll):
            return None
        offsets = {}
        for i in range(_ITEMS, len(coll), 2):
            key_event = coll[i]
            offsets[key_event[VALUE]] = (key_event[START_MARK].index, key_event[END_MARK].index)
        for key, source in coll[_MERGED] or ():
            key_event, _child = _entry(source, key)  # type: ignore[misc]
            offsets[key] = (key_event[START_MARK].index, key_event[END_MARK].index)
        return offsets


class _Along:
    """The event-tree nodes on a path (_CollectionLoc.along), each made a LocNode only when asked for:
    a fix asks for a path's node and then for one or two of its ancestors, often for none."""

    __slots__ = ("_raws", "_line_offset", "_ends")

    def __init__(self, raws: list, line_offset: int, ends: dict) -> None:
        self._raws = raws
        self._line_offset = line_offset
        self._ends = ends

    def __len__(self) -> int:
        return len(self._raws)

    def __getitem__(self, depth: int) -> LocNode:  # type: ignore[override]
        return _loc(self._raws[depth], self._line_offset, self._ends)


def _children_of(coll: list, off: int, ends: dict) -> dict | list:
    """A collection's children LocNodes: a mapping's by key (key span, node), a list's in order."""
    if not _is_mapping(coll):
        return [_loc(child, off, ends) for child in coll[_ITEMS:]]
    children: dict = {}
    for i in range(_ITEMS, len(coll), 2):
        key_event = coll[i]
        children[key_event[VALUE]] = (_span(key_event, off), _loc(coll[i + 1], off, ends))
    for key, source in coll[_MERGED] or ():
        key_event, child = _entry(source, key)  # type: ignore[misc]
        children[key] = (_span(key_event, off), _loc(child, off, ends))
    return children


def _problems(dups: list, line_offset: int, ends: dict) -> list[Problem]:
    """Problems for the repeated keys `_build` noted: (mapping, index of the repeat, key event)."""
    problems = []
    for coll, at, key_event in dups:
        key = key_event[VALUE]
        first_event, first_child = next((coll[i], coll[i + 1]) for i in range(at - 2, _ITEMS - 1, -2)
                                        if coll[i][VALUE] == key)
        first = _span(first_event, line_offset)
        first_loc = _loc(first_child, line_offset, ends)
        problems.append(Problem(
            f"duplicate key {key!r} (first defined at line {first.line}): {KEEPS_LAST}, so the first one is "
            "ignored and not checked",
            _span(key_event, line_offset), first_loc.span, (first_loc.start, first_loc.end)))
    return problems


# --- streams -> documents ---------------------------------------------------

# A document starts at a `---` line (with any directives just before it) and ends
# after a `...` line. YAML forbids both at column 0 inside scalars. Directive
# lines are found by walking back from a `---`, at most MAX_DIRECTIVES of them: a
# regex for them is quadratic on thousands of `%` lines.
_BOUNDARY_RE = re.compile(r"^(?:---(?=[ \t\r\n]|$)|\.\.\.[ \t]*(?:\r?\n|$))", re.M)
MAX_DIRECTIVES = 64


def _boundaries(text: str, end: int) -> list[tuple[int, int]]:
    """(start, end) of each match of `_BOUNDARY_RE.finditer(text, 0, end)`, found faster: the
    marker lines are looked for with str.find (a regex scan tries every character), a `---`
    found is checked by the character after it, a `...` with the regex."""
    starts = [0] if text.startswith(("---", "..."), 0, end) else []
    for needle in ("\n---", "\n..."):
        pos = text.find(needle, 0, end)
        while pos >= 0:
            starts.append(pos + 1)
            pos = text.find(needle, pos + 1, end)
    starts.sort()
    found = []
    last = 0
    for start in starts:
        if start < last:
            continue  # inside the previous match (finditer does not overlap)
        if text.startswith("-", start):
            last = start + 3
            if last < end and text[last] not in " \t\r\n":
                last = start
                continue
        else:
            match = _BOUNDARY_RE.match(text, start, end)
            if match is None:
                continue
            last = match.end()
        found.append((start, last))
    return found


def _cuts(text: str, end: int) -> list[int]:
    """Where the boundaries of `text[:end]` cut it, in order: after a `...` line, before a `---`
    line and its directives (none to look for in a text without `%`)."""
    cuts = []
    floor = 0
    directives = "%" in text
    for start, stop in _boundaries(text, end):
        if text.startswith(".", start):
            floor = stop
        elif directives:
            floor = _directives_start(text, start, floor)
        else:
            floor = start
        cuts.append(floor)
    return cuts


def _directives_start(text: str, pos: int, floor: int) -> int:
    """Where the directive lines (`%...`, at most MAX_DIRECTIVES) just before `pos` start, not before `floor`."""
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
    for cut in _cuts(text, len(text)):
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
        for cut in _cuts(text, end):
            pieces.append(text[start:cut])
            chunk = "".join(pieces)
            pieces = []
            if chunk:
                yield chunk, line
                line += chunk.count("\n")
            start = cut
        # Directive lines at the end belong to a `---` that may come with the
        # next block: keep them (as many as a `---` may claim) to search again.
        keep = _directives_start(text, end, start)
        if keep > start:
            pieces.append(text[start:keep])
        pending = [text[keep:]] if keep < len(text) else []
    rest = "".join(pieces) + "".join(pending)
    if rest or line == 0:
        for chunk, offset in split_documents(rest):
            yield chunk, line + offset


# Chunks parsed once, by line offset in their file: (parsed documents, read as JSON).
ParsedChunks = dict[int, tuple[list, bool]]


def load_documents(text: str, limits: Limits = DEFAULT_LIMITS, unrendered: bool = True,
                   only: tuple[str, ...] = (), strict_json: bool = False, *,
                   record: ParsedChunks | None = None,
                   parsed: ParsedChunks | None = None,
                   chunks: Iterable[tuple[str, int]] | None = None) -> Iterator[Document | LoadError]:
    """Yield every non-empty document of `text`, or a LoadError where one fails.

    With `unrendered`, a document that fails and holds `{{ ... }}` yields its
    LoadError (marked `template`) and then, when masking the template actions
    makes it parse, the masked document (see unrendered.py). With `only`,
    documents whose text holds none of these words are skipped unparsed. With
    `strict_json` (a `.json` file), JSON-looking text that YAML accepts but JSON
    does not (trailing commas, comments) also yields a LoadError, before the
    document read as YAML.

    `record` and `parsed` let a first pass over `text` (the ConfigMap index)
    spare the second its work: with `record`, each chunk that parses is stored
    there, without its event tree (positions then come from a parse on
    demand); with `parsed` (what a pass over the same text recorded), a stored
    chunk is taken from there instead of being parsed again. `chunks`: what
    `split_documents(text)` gives, when the caller has it already.
    """
    if chunks is None:
        chunks = split_documents(text)
    return _load_chunks(chunks, limits, unrendered, only, strict_json, record, parsed)


def load_stream(blocks: Iterable[str], limits: Limits = DEFAULT_LIMITS, unrendered: bool = True,
                only: tuple[str, ...] = (), strict_json: bool = False, *, first_line: int = 0,
                first_index: int = 0) -> Iterator[Document | LoadError]:
    """`load_documents` over text arriving in blocks; memory is bounded by the largest document.
    `first_line`, `first_index`: the 0-based line and the document number the text starts at
    (a part of a larger stream, scanned on its own)."""
    chunks = split_stream(blocks)
    if first_line:
        chunks = ((chunk, line + first_line) for chunk, line in chunks)
    return _load_chunks(chunks, limits, unrendered, only, strict_json, first_index=first_index)


# The chunks of a text are parsed a batch at a time, in one parsing window (opening and closing one
# costs about a twentieth of a small document's parse), and their documents handed on after it
# closes: about this many characters of text are parsed ahead of the caller. Not more: documents
# held longer are walked by the garbage collector's young-generation passes (a batch of 64K
# characters cost more than its windows saved).
BATCH_CHARS = 1 << 13


def _load_chunks(chunks: Iterable[tuple[str, int]], limits: Limits, unrendered: bool,
                 only: tuple[str, ...], strict_json: bool = False, record: ParsedChunks | None = None,
                 parsed: ParsedChunks | None = None, first_index: int = 0) -> Iterator[Document | LoadError]:
    index = first_index
    for batch in _batches(chunks, only):
        loaded = _load_batch(batch, limits, unrendered, strict_json, record, parsed)
        loaded.reverse()
        while loaded:   # (each chunk's documents let go of once handed on, not at the batch's end)
            error, docs, text, line_offset, is_json, placeholders = loaded.pop()
            if error is not None:
                yield error
            for tree, data, dups, content_start, raw in docs:
                yield Document(index, data, text, line_offset, tree, dups, content_start,
                               limits=limits, raw=raw, is_json=is_json, placeholders=placeholders)
                index += 1


def _batches(chunks: Iterable[tuple[str, int]], only: tuple[str, ...]) -> Iterator[list[tuple[str, int]]]:
    """The chunks to parse (those that hold a word of `only`, when given), in lists of about
    BATCH_CHARS characters (at least one chunk each)."""
    batch: list[tuple[str, int]] = []
    size = 0
    for chunk, line_offset in chunks:
        if only:
            for word in only:
                if word in chunk:
                    break
            else:
                continue
        if chunk.startswith("...") and not chunk[3:].strip():
            continue  # a bare document end marker: valid YAML 1.2 that libyaml refuses
        batch.append((chunk, line_offset))
        size += len(chunk)
        if size >= BATCH_CHARS:
            yield batch
            batch = []
            size = 0
    if batch:
        yield batch


def _load_batch(batch: list[tuple[str, int]], limits: Limits, unrendered: bool, strict_json: bool,
                record: ParsedChunks | None, parsed: ParsedChunks | None) -> list[tuple]:
    """(error to report first or None, documents, the text they were read from, its line offset,
    whether read as JSON, template placeholders) of each chunk of `batch`, parsed in one window."""
    out = []
    with parsing():
        for chunk, line_offset in batch:
            placeholders: tuple[Span, ...] = ()
            text = chunk
            problem: LoadError | None = None
            try:
                done = parsed.pop(line_offset, None) if parsed else None
                if done is not None:
                    docs, is_json = done
                else:
                    docs, is_json = _parse_any(chunk, line_offset, limits, keep=record is None)
                    if record is not None:
                        record[line_offset] = (docs, is_json)
            except LoadError as error:
                error.__traceback__ = None  # keeps no parser or chunk alive while the caller holds it
                docs, text, is_json, placeholders, problem = _recover(error, chunk, line_offset, limits, unrendered,
                                                                      strict_json)
            else:
                where = _json_error(chunk) if strict_json and not is_json else None
                if where is not None:
                    line, column, reason = where
                    problem = LoadError(f"invalid JSON: {reason}; kubectl rejects it (gpulint checked it read as "
                                        "YAML)", line_offset + line + 1, column + 1, syntax=True)
                    from gpulint.load import sniff

                    problem.kubernetes = sniff.looks_like_kubernetes(chunk)
                    problem.jsonc = True  # read all the same: the documents follow
            out.append((problem, docs, text, line_offset, is_json, placeholders))
    return out


def _recover(error: LoadError, chunk: str, line_offset: int, limits: Limits, unrendered: bool,
             strict_json: bool) -> tuple[list, str, bool, tuple[Span, ...], LoadError]:
    """What can still be read of a chunk that failed: (documents, the text they were read
    from, whether as JSON, template placeholders, the error to report).

    JSON with comments is read with its comments blanked; an unrendered template
    with its actions masked (see unrendered.py). The error says whether the chunk
    looks like a Kubernetes object (`kubernetes`) and which template syntax it
    holds, so that the engine can tell a broken manifest from a file that is
    not one.
    """
    from gpulint.load import sniff
    from gpulint.load import unrendered as unrendered_mod

    kubernetes = sniff.looks_like_kubernetes(chunk)
    where = _json_error(chunk) if strict_json and error.syntax else None
    if where is not None:  # a `.json` file: say what JSON finds wrong
        error = LoadError(f"invalid JSON: {where[2]}", line_offset + where[0] + 1, where[1] + 1, syntax=True)
    error.kubernetes = kubernetes
    if not error.syntax:
        return [], chunk, False, (), error
    from gpulint.load import jsonload

    stripped = jsonload.strip_jsonc(chunk) if jsonload.looks_like_jsonc(chunk) else None
    if stripped is not None:
        text, first = stripped
        try:
            docs, is_json = _parse_any(text, line_offset, limits)
        except LoadError:
            pass
        else:
            line = chunk.count("\n", 0, first)
            column = first - (chunk.rfind("\n", 0, first) + 1)
            error = LoadError("invalid JSON: comments (`//`, `/* */`) or trailing commas, which kubectl rejects "
                              "(gpulint read it as JSON with comments)", line_offset + line + 1, column + 1,
                              syntax=True)
            error.kubernetes, error.jsonc = kubernetes, True
            return docs, text, is_json, (), error
    syntax = unrendered_mod.syntax(chunk) if unrendered else None
    if syntax is None:
        return [], chunk, False, (), error
    from gpulint.load import unknowns

    error.template_syntax = syntax
    error.helm = syntax == unrendered_mod.GO and unrendered_mod.uses_helm(chunk)
    error.unknown = unknowns.verdict_unknown(chunk, line_offset)
    error.workload_shaped = unknowns.has_workload_shape(chunk)
    text, marks = unrendered_mod.mask(chunk)
    try:
        docs = _parse_chunk(text, line_offset, limits)
    except LoadError as masked:
        # Still a template if the parser stumbled on (or just after) a line holding an action,
        # as written or once masked (a blanked `{{- include ... | nindent 4 }}` breaks the next lines).
        lines = chunk.split("\n")
        near = [line for at in {error.line, masked.line} for line in lines[max(at - line_offset - 2, 0):at - line_offset]]
        error.template = any("{{" in line or "}}" in line or unrendered_mod.has_actions(line) for line in near)
        return [], chunk, False, (), error
    error.template = error.literal_checked = True
    placeholders = tuple(Span(line_offset + ln + 1, start + 1, line_offset + ln + 1, end + 1)
                         for ln, start, end in marks)
    return docs, text, False, placeholders, error


# What `_build` reads after a JSON document's events: JSON has no document markers.
_JSON_END = ev.document_end()


def _json_error(chunk: str) -> tuple[int, int, str] | None:
    """What JSON finds wrong in a `.json` file's chunk that reads as YAML (None: nothing,
    or it does not look like JSON). jsonload is imported only when a `.json` file is read."""
    from gpulint.load import jsonload

    return jsonload.json_error(chunk) if jsonload.looks_like_json(chunk) else None


_Parsed = tuple  # (event tree or None, data, duplicates, offset of the first node, raw index)


def _parse_any(chunk: str, line_offset: int, limits: Limits, keep: bool = True) -> tuple[list[_Parsed], bool]:
    """Documents of `chunk` as YAML, or as JSON where libyaml rejects valid JSON; and which
    (inside `parsing()`).

    `keep`: whether to keep event trees (documents up to KEEP_EVENTS_MAX)."""
    keep = keep and len(chunk) <= KEEP_EVENTS_MAX
    try:
        return _read_chunk(chunk, line_offset, limits, keep), False
    except LoadError as error:
        # libyaml rejected it: JSON is rare, and read only then
        from gpulint.load import jsonload

        if not (error.syntax and jsonload.looks_like_json(chunk)):
            raise
        try:
            documents = jsonload.json_events(chunk)
        except jsonload.JSONSyntaxError:
            raise error from None
    out = []
    for raw, events in enumerate(documents):
        content_start = events[0][START_MARK].index
        events.append(_JSON_END)
        data, tree, dups, _first = _build(iter(events).__next__, line_offset, keep, limits)
        out.append((tree, data, dups, content_start, raw))
    return out, True


def _parse_chunk(chunk: str, line_offset: int, limits: Limits, keep: bool | None = None) -> list[_Parsed]:
    """(event tree, data, duplicates, offset of the first node, raw index) of each non-empty document.

    A document is built as libyaml parses it, so a limit stops libyaml early
    (its time grows with the square of the nesting depth: a million `[` would
    take minutes). For a large chunk the event tree is not kept (None): it
    takes about 30 times the size of the text, so it is parsed again if a
    finding needs positions. The raw index counts empty documents too, to find
    the document again.
    """
    with parsing():
        return _read_chunk(chunk, line_offset, limits, keep)


def _read_chunk(chunk: str, line_offset: int, limits: Limits, keep: bool | None = None) -> list[_Parsed]:
    """`_parse_chunk` inside a parsing window already open."""
    if "%" in chunk:
        _check_directives(chunk, line_offset)
    if keep is None:
        keep = len(chunk) <= KEEP_EVENTS_MAX
    out = []
    try:
        next_event = event_reader(chunk)
        raw = 0   # the index of each document of the stream, once its start is read
        while True:
            kind = next_event()[KIND]
            if kind == DOC_START:
                data, tree, dups, first = _build(next_event, line_offset, keep, limits)
                if data is not None and not _is_empty(first):
                    out.append((tree, data, dups, first[START_MARK].index, raw))
                raw += 1
            elif kind == STREAM_END:
                return out
    except LoadError:
        raise
    except Exception as error:  # the C parser raises ruamel's MarkedYAMLError or ReaderError
        raise _as_load_error(error, chunk, line_offset) from None


_BREAK_RE = lazy(r"\r\n?|\n")


def _holds_odd_breaks(text: str) -> bool:
    """Whether `text` holds a character YAML 1.1 (hence libyaml) counts as a line break and editors
    do not (NEL, LS, PS): inside a quoted value it would shift every later line number. (Three
    searches, no generator: asked of every chunk.)"""
    return "\x85" in text or "\u2028" in text or "\u2029" in text


def event_reader(text: str) -> Any:
    """libyaml's events over `text` (events.py's tuples; call it inside `events.parsing()`), with
    positions as editors count lines: when `text` holds NEL, LS or PS, every mark's line and
    column is computed again from its offset."""
    get_event = ev.reader(text)
    if not _holds_odd_breaks(text):
        return get_event
    mark = _Relines(text).mark

    def next_event() -> tuple:
        event = get_event()
        return (event[KIND], mark(event[START_MARK]), mark(event[END_MARK]), *event[END_MARK + 1:])

    return next_event


class _Relines:
    """Line and column of an offset, counting LF, CRLF and CR as line breaks (and nothing else)."""

    __slots__ = ("starts",)

    def __init__(self, text: str) -> None:
        self.starts = [0] + [match.end() for match in _BREAK_RE.finditer(text)]

    def mark(self, mark: Any) -> Any:
        if mark is None:
            return None
        line = bisect_right(self.starts, mark.index) - 1
        return StreamMark(mark.name, mark.index, line, mark.index - self.starts[line])


def _is_empty(first: tuple) -> bool:
    """A document of nothing but an empty plain scalar (what libyaml makes of `---` alone)."""
    return first[KIND] == SCALAR and first[VALUE] == "" and first[STYLE] == ""


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


def _tree_of(text: str, raw: int, line_offset: int, limits: Limits) -> tuple[Any, list]:
    """The event tree and repeated keys of document `raw` of `text`, parsed again (a document's
    text is its chunk: the others of it, if any, are few and small)."""
    with parsing():
        for tree, _data, dups, _start, index in _read_chunk(text, line_offset, limits, keep=True):
            if index == raw:
                return tree, dups
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
    if _holds_odd_breaks(chunk):
        relines = _Relines(chunk)
        problem_mark, context_mark = relines.mark(problem_mark), relines.mark(context_mark)
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
