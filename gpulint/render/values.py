"""Where a Helm value comes from: `--set`, `--values` files, the chart's values.yaml.

Helm merges values with `--set` over `--values` files (later over earlier) over
the chart's values.yaml, and a subchart's values.yaml under its parent's
`<subchart>:` section. A lookup walks the same order and answers with the first
source that defines the key, and its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpulint.load.regular import read_regular
from gpulint.load.decode import BinaryInput, DecodeError, decode
from gpulint.load.locations import Span
from gpulint.load.yamlload import Document, load_documents
from gpulint.record import record
from gpulint.render.overlay import edited

Path_ = tuple  # a values path: keys (str) and list indices (int)


@record(eq=True, repr=True)
class ValuesFile:
    __slots__ = ("display", "doc", "editable")
    display: str
    doc: Document | None        # None when unreadable or empty
    editable: bool              # a given values file inside the chart's repository: a fix may edit it

    def __init__(self, display: str, doc: Document | None, editable: bool = False) -> None:
        self.display = display
        self.doc = doc
        self.editable = editable


@record(eq=True, repr=True)
class SetEntry:
    __slots__ = ("path", "text", "value")
    path: Path_
    text: str                   # the `key=value` as written on the command line
    value: str                  # the value as written (Helm reads `true`/`false` as booleans)

    def __init__(self, path: Path_, text: str, value: str = "") -> None:
        self.path = path
        self.text = text
        self.value = value


@record(eq=True, repr=True)
class Located:
    """A values key that supplied a rendered value."""

    __slots__ = ("file", "span", "key", "set_text", "scalar", "written", "path", "given")
    file: str | None            # None for --set (no file)
    span: Span | None
    key: str                    # dotted key, e.g. gpu.visibleDevices or env[1]
    set_text: str               # the --set entry, when it came from the command line
    scalar: Span | None         # a one-line scalar value: its own span and text as written
    written: str | None
    path: Path_                 # the key's path in its file
    given: bool                 # a values file given for the render (inside the repository), not values.yaml

    def __init__(self, file: str | None, span: Span | None, key: str, set_text: str = "",
                 scalar: Span | None = None, written: str | None = None, path: Path_ = (),
                 given: bool = False) -> None:
        self.file = file
        self.span = span
        self.key = key
        self.set_text = set_text
        self.scalar = scalar
        self.written = written
        self.path = path
        self.given = given


@record(eq=True, repr=True)
class _Source:
    __slots__ = ("prefix", "file", "sets", "given")
    prefix: Path_               # where the template's .Values sits in this source
    file: ValuesFile | None
    sets: list[SetEntry]
    given: bool

    def __init__(self, prefix: Path_, file: ValuesFile | None = None, sets: list[SetEntry] | None = None,
                 given: bool = False) -> None:
        self.prefix = prefix
        self.file = file
        self.sets = [] if sets is None else sets
        self.given = given


VALUES_READ_MAX = 64 << 20   # a values file larger than this is not read for mapping


# The last values document read under each name: a fix made in a values file is placed from it
# (gpulint/fix/valuesedits.py), right after the mapping that named the file read it.
_READ: dict[str, Document] = {}
_READ_KEPT = 64


def values_document(display: str) -> Document | None:
    """The values file `display` as the mapping last read it."""
    return _READ.get(display)


def read_values_file(path: Path, display: str) -> ValuesFile:
    _READ.pop(display, None)
    if len(_READ) >= _READ_KEPT:
        del _READ[next(iter(_READ))]   # the one read longest ago
    try:
        data = edited(path)   # as a fix under test leaves it
        text = decode(data if data is not None else read_regular(path, VALUES_READ_MAX))   # never a named pipe
    except (OSError, BinaryInput, DecodeError):
        return ValuesFile(display, None)
    for doc in load_documents(text):
        if isinstance(doc, Document):
            _READ[display] = doc
            return ValuesFile(display, doc)
        break
    return ValuesFile(display, None)


def parse_set(text: str) -> list[SetEntry]:
    """Keys of one `--set a.b=c,d[0].e=f` argument (Helm's strvals syntax, keys only)."""
    entries: list[SetEntry] = []
    for part in _split_unescaped(text, ","):
        key, eq, value = _partition_unescaped(part, "=")
        if not eq or not key:
            continue
        path: list = []
        for piece in _split_unescaped(key, "."):
            name, _, rest = piece.partition("[")
            name = name.replace("\\.", ".").replace("\\,", ",")
            if name:
                path.append(name)
            while rest:
                index, _, rest = rest.partition("]")
                if index.isdigit():
                    path.append(int(index))
                rest = rest[1:] if rest.startswith("[") else ""
        if path:
            entries.append(SetEntry(tuple(path), part, value))
    return entries


def _split_unescaped(text: str, sep: str) -> list[str]:
    out, current, depth, escaped = [], "", 0, False
    for ch in text:
        if escaped:
            current += ch
            escaped = False
            continue
        if ch == "\\":
            current += ch
            escaped = True
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        if ch == sep and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    out.append(current)
    return out


def _partition_unescaped(text: str, sep: str) -> tuple[str, str, str]:
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            return text[:i], sep, text[i + 1:]
    return text, "", ""


def dotted(path: Path_) -> str:
    """`gpu.visibleDevices`, `env[1]`, `resources.limits["nvidia.com/gpu"]`."""
    out = ""
    for item in path:
        if isinstance(item, int):
            out += f"[{item}]"
        elif "." in str(item) or not str(item):
            out += f'["{item}"]'
        else:
            out += f".{item}" if out else str(item)
    return out


class ValuesChain:
    """The values sources a template sees, highest precedence first."""

    def __init__(self, sources: list[_Source]) -> None:
        self._sources = sources

    @classmethod
    def build(cls, chart_files: list[ValuesFile], subchart_names: list[str],
              user_files: list[ValuesFile], sets: list[SetEntry]) -> "ValuesChain":
        """`chart_files[i]` is the values.yaml of the i-th chart on the way from the
        top chart down to the template's chart; `subchart_names` names the charts
        below the top one, in order."""
        depth = len(subchart_names)
        sources: list[_Source] = []
        top_prefix = tuple(subchart_names)
        if sets:
            sources.append(_Source(top_prefix, sets=list(reversed(sets))))
        for vf in reversed(user_files):
            sources.append(_Source(top_prefix, file=vf, given=vf.editable))
        for level, vf in enumerate(chart_files[: depth + 1]):
            sources.append(_Source(tuple(subchart_names[level:]), file=vf))
        return cls(sources)

    def lookup(self, path: Path_) -> Located | None:
        """The source of the value at `path`, or of its nearest defined ancestor."""
        for length in range(len(path), 0, -1):
            found = self._lookup_exact(path[:length])
            if found is not None:
                return found
        return None

    def effective(self, path: Path_) -> Any:
        """The value Helm would see at `path` (the highest source defining it)."""
        for source in self._sources:
            if source.file is None or source.file.doc is None:
                continue
            found, value = _get(source.file.doc.data, _full(source, path))
            if found:
                return value
        return None

    def _lookup_exact(self, path: Path_) -> Located | None:
        for source in self._sources:
            full = _full(source, path)
            for entry in source.sets:
                shorter = min(len(entry.path), len(full))
                if entry.path[:shorter] == full[:shorter]:
                    return Located(None, None, dotted(entry.path), set_text=entry.text)
            vf = source.file
            if vf is None or vf.doc is None:
                continue
            found, _value = _get(vf.doc.data, full)
            if found:
                scalar, written = _scalar_of(vf.doc, full)
                return Located(vf.display, _span_of(vf.doc, full), dotted(full), scalar=scalar, written=written,
                               path=full, given=source.given)
        return None


def _full(source: _Source, path: Path_) -> Path_:
    if path[:1] == ("global",):
        return path
    return source.prefix + tuple(path)


def _get(data: Any, path: Path_) -> tuple[bool, Any]:
    for item in path:
        if isinstance(item, int):
            if not isinstance(data, list) or not 0 <= item < len(data):
                return False, None
        elif not isinstance(data, dict) or item not in data:
            return False, None
        data = data[item]
    return True, data


def _scalar_of(doc: Document, path: Path_) -> tuple[Span | None, str | None]:
    """The span and text of the one-line scalar at `path`, written in place (no alias, no block scalar)."""
    if not path or not isinstance(path[-1], str):
        return None, None
    node = doc.node(path)
    span = doc.span(path)
    key = doc.span(path, key=True)
    if node is None or span is None or key is None or node.children is not None or node.style in ("|", ">") \
            or node.start == node.end or span.line != span.end_line:
        return None, None
    if key.line != span.line or key.end_column > span.column:   # written after its own key, not an alias's
        return None, None
    written = doc.text[node.start:node.end]
    if "\n" in written or written.startswith(("*", "&", "!")):
        return None, None
    return span, written


def _span_of(doc: Document, path: Path_) -> Span | None:
    """The key and, when on the same line, the scalar value (`visibleDevices: all`)."""
    if not path:
        return doc.span(())
    if isinstance(path[-1], int):
        return doc.span(path)
    key = doc.span(path, key=True)
    value = doc.span(path)
    if key is None:
        return value
    if value is not None and value.line == value.end_line == key.line:
        node = doc.node(path)
        if node is not None and node.children is None:
            return Span(key.line, key.column, value.end_line, value.end_column)
    return key
