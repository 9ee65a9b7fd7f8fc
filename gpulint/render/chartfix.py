"""What keeps Helm from loading a chart offline, and how gpulint's private copy gets past it.

Two things stop `helm template` before any template runs, although the
chart's own templates are fine:

- `version` (or `appVersion`) in Chart.yaml is not a usable string: a release
  tool's placeholder filled in by CI (`version: [[ .Version ]]` is a nested
  YAML list, `{{ .Version }}` not YAML at all, `"${VERSION}"` not SemVer).
  Helm reads both fields as strings (numbers are converted) and requires
  `version` to be SemVer. The copy gets a stand-in (STAND_IN).
- a dependency declared in Chart.yaml (`requirements.yaml` for apiVersion v1
  charts) is not in `charts/`: repositories rarely vendor them, and gpulint
  never fetches. Helm names the missing ones; the copy declares the others only,
  so the chart renders without them.

What to change is learnt from Helm's own error (what it refused), read
against Chart.yaml (where it is written): the copy's Chart.yaml or
requirements.yaml is then written as JSON (which is YAML), the fields gpulint
changes replaced and everything else as it was read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from gpulint.lazypattern import lazy
from gpulint.load.decode import BinaryInput, DecodeError, decode
from gpulint.load.locations import Span
from gpulint.load.yamlload import Document, load_documents
from gpulint.record import record
from gpulint.render.values import SetEntry, ValuesChain

CHART_FILE = "Chart.yaml"
REQUIREMENTS_FILE = "requirements.yaml"
STAND_IN = "0.0.0"
# The metadata fields Helm loads as strings; `version` must be SemVer too.
FIELDS = ("version", "appVersion")

_MISSING_RE = lazy(r"missing in charts/ directory: ([^;\n]+)")
_VERSION_INVALID_RE = lazy(r"chart\.metadata\.version (?:\".*\" is invalid|is required)")
_UNMARSHAL_RE = lazy(r"cannot unmarshal \w+ into Go struct field Metadata\.(\w+)")
_SHOWN_MAX = 40


@record(eq=True, repr=True)
class StandIn:
    __slots__ = ("field", "span", "shown")
    field: str
    span: Span                  # the value in Chart.yaml (line 1 when the field is missing)
    shown: str                  # the value as written, or "" when missing

    def __init__(self, field: str, span: Span, shown: str) -> None:
        self.field = field
        self.span = span
        self.shown = shown


@record(eq=True, repr=True)
class Dependency:
    __slots__ = ("name", "file", "span", "condition", "enabled")
    name: str
    file: str                   # CHART_FILE or REQUIREMENTS_FILE: where it is declared
    span: Span                  # its `name:` value
    condition: str              # as written, "" without one
    enabled: bool | None        # with the render's values: True/False, None when no condition decides

    def __init__(self, name: str, file: str, span: Span, condition: str, enabled: bool | None) -> None:
        self.name = name
        self.file = file
        self.span = span
        self.condition = condition
        self.enabled = enabled


@record(eq=True, repr=True)
class ChartFix:
    """What the private copy changes, accumulated over Helm's attempts."""

    __slots__ = ("stand_ins", "left_out")
    stand_ins: list[StandIn]
    left_out: list[Dependency]

    def __init__(self, stand_ins: list[StandIn] | None = None, left_out: list[Dependency] | None = None) -> None:
        self.stand_ins = [] if stand_ins is None else stand_ins
        self.left_out = [] if left_out is None else left_out


class ChartFile:
    """A chart's Chart.yaml (and requirements.yaml), read as gpulint reads YAML."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.text, self.doc = _read(root / CHART_FILE)
        self.req_text, self.req_doc = _read(root / REQUIREMENTS_FILE)

    def dependencies_doc(self) -> tuple[str, Document | None]:
        """Where the dependencies are declared: Chart.yaml's `dependencies`, else requirements.yaml."""
        if self.doc is not None and isinstance(self.doc.data, dict) and "dependencies" in self.doc.data:
            return CHART_FILE, self.doc
        if self.req_doc is not None and isinstance(self.req_doc.data, dict):
            return REQUIREMENTS_FILE, self.req_doc
        return CHART_FILE, self.doc


def learn(message: str, chart: ChartFile, fix: ChartFix, values: ValuesChain,
          sets: Sequence[SetEntry] = ()) -> bool:
    """Add to `fix` what Helm's error `message` says the copy must change; whether anything was added."""
    added = False
    missing = _MISSING_RE.search(message)
    if missing:
        names = [name.strip() for name in missing.group(1).split(",") if name.strip()]
        known = {dep.name for dep in fix.left_out}
        for dep in _dependencies(chart, values, sets):
            if dep.name in names and dep.name not in known:
                fix.left_out.append(dep)
                known.add(dep.name)
                added = True
        return added
    wanted: list[str] = []
    if _VERSION_INVALID_RE.search(message):
        wanted.append("version")
    wanted += [name for name in _UNMARSHAL_RE.findall(message) if name in FIELDS]
    if "cannot load Chart.yaml" in message:
        # Helm names the first field it could not read, if any (`{{ .Version }}` is not YAML at
        # all): every field gpulint reads as no string (template actions masked) is replaced at once.
        wanted += [name for name in FIELDS if _unusable(chart, name)]
    done = {stand_in.field for stand_in in fix.stand_ins}
    for name in wanted:
        if name in done or chart.doc is None or not isinstance(chart.doc.data, dict):
            continue
        if name != "version" and name not in chart.doc.data:
            continue
        fix.stand_ins.append(_stand_in(chart, name))
        done.add(name)
        added = True
    return added


def apply(chart: ChartFile, fix: ChartFix) -> bool:
    """Write the copy's Chart.yaml (and requirements.yaml) with `fix`; False when it cannot be."""
    if chart.doc is None or not isinstance(chart.doc.data, dict):
        return False
    data = dict(chart.doc.data)
    for stand_in in fix.stand_ins:
        data[stand_in.field] = STAND_IN
    left = {dep.name for dep in fix.left_out}
    where, _doc = chart.dependencies_doc()
    try:
        if where == CHART_FILE:
            if left and isinstance(data.get("dependencies"), list):
                data["dependencies"] = _kept(data["dependencies"], left)
        else:
            assert chart.req_doc is not None
            requirements = dict(chart.req_doc.data)
            requirements["dependencies"] = _kept(requirements.get("dependencies"), left)
            (chart.root / REQUIREMENTS_FILE).write_text(_json(requirements), encoding="utf-8")
        (chart.root / CHART_FILE).write_text(_json(data), encoding="utf-8")
    except (OSError, ValueError, TypeError):
        return False
    return True


def _kept(dependencies: Any, left: set[str]) -> list:
    """The dependency entries Helm finds in charts/ (it matches them by `name`, not alias)."""
    if not isinstance(dependencies, list):
        return []
    return [dep for dep in dependencies if not (isinstance(dep, dict) and dep.get("name") in left)]


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, default=str, indent=1) + "\n"


def _read(path: Path) -> tuple[str, Document | None]:
    try:
        text = decode(path.read_bytes())
    except (OSError, BinaryInput, DecodeError):
        return "", None
    for doc in load_documents(text):
        if isinstance(doc, Document):
            return text, doc
    return text, None


def _unusable(chart: ChartFile, name: str) -> bool:
    """Whether Chart.yaml's `name` holds what Helm cannot read as a string (masked actions included)."""
    if chart.doc is None or not isinstance(chart.doc.data, dict) or name not in chart.doc.data:
        return False
    value = chart.doc.data[name]
    span = chart.doc.span((name,))
    masked = span is not None and chart.doc.in_placeholder(span)
    return masked or not isinstance(value, (str, int, float)) or isinstance(value, bool)


def _stand_in(chart: ChartFile, name: str) -> StandIn:
    assert chart.doc is not None
    span = chart.doc.span((name,)) if name in chart.doc.data else None
    if span is None:
        return StandIn(name, Span(1, 1, 1, 1), "")
    return StandIn(name, span, _excerpt(chart.text, span))


def _excerpt(text: str, span: Span) -> str:
    """The value as written (its first line, shortened)."""
    lines = text.split("\n")
    if not 0 < span.line <= len(lines):
        return ""
    line = lines[span.line - 1]
    end = span.end_column - 1 if span.end_line == span.line else len(line)
    shown = line[span.column - 1:end].strip()
    return shown if len(shown) <= _SHOWN_MAX else shown[:_SHOWN_MAX - 3] + "..."


def _dependencies(chart: ChartFile, values: ValuesChain, sets: Sequence[SetEntry]) -> list[Dependency]:
    where, doc = chart.dependencies_doc()
    if doc is None or not isinstance(doc.data, dict) or not isinstance(doc.data.get("dependencies"), list):
        return []
    out = []
    for i, dep in enumerate(doc.data["dependencies"]):
        if not isinstance(dep, dict) or not isinstance(dep.get("name"), str):
            continue
        condition = dep.get("condition") if isinstance(dep.get("condition"), str) else ""
        tags = [tag for tag in dep["tags"] if isinstance(tag, str)] if isinstance(dep.get("tags"), list) else []
        span = doc.span(("dependencies", i, "name")) or Span(1, 1, 1, 1)
        out.append(Dependency(dep["name"], where, span, condition, enabled(condition, tags, values, sets)))
    return out


def enabled(condition: str, tags: list[str], values: ValuesChain, sets: Sequence[SetEntry] = ()) -> bool | None:
    """Whether Helm renders a dependency with these values (`sets`: the --set pairs, last one
    winning), None when neither its condition nor its tags decide (it is then rendered). As
    Helm does: the first condition path holding a boolean wins; else a tag set true enables
    it and tags all set false disable it."""
    def value_at(path: tuple) -> object:
        for entry in reversed(sets):
            if entry.path == path:
                return {"true": True, "false": False}.get(entry.value, entry.value)
            if entry.path[:len(path)] == path:
                return None                     # a map built by --set: not a boolean
        return values.effective(path)

    for path in condition.split(","):
        path = path.strip()
        if not path:
            continue
        value = value_at(tuple(path.split(".")))
        if isinstance(value, bool):
            return value
    states = []
    for tag in tags:
        state = value_at(("tags", tag))
        if isinstance(state, bool):
            states.append(state)
    if any(states):
        return True
    if states:
        return False
    return None
