"""Where an unrendered template's unknown parts sit, and whether they could hide a GPU bypass.

A template's literal text is checked like any manifest (unrendered.py); what
its actions render to is unknown. That matters only where a value decides a
GPU verdict: a container's env, its securityContext, command and args,
resources, the pod's volumes (hostPath), runtimeClassName and annotations (CDI,
GPU sharing). An image decides only through its default environment (GPU005's
heuristic, which needs the NVIDIA runtime as the node's default): a templated
image is counted at info, never a warning nobody could act on. An action
anywhere else (a name, a label, a port, a replica count, a selector) cannot
turn a pod into a bypass, so a template whose actions all sit there is
reported at info severity, and one that has an action in a verdict field is
a warning that names that field.

The place of an action is read from the text's indentation, not from a parse:
a template often does not parse even masked, and an action on a line of its
own (`{{- toYaml .Values.env | nindent 8 }}`) is blank once masked. The path is
the chain of `key:` lines above it with less indentation (list items count),
plus the key on its own line. Control actions (`if`, `range`, `end`, `{% %}`,
`%{ for }`, comments, variable assignments) render no text and are never an
unknown: the literal text between them is read and checked.
"""

from __future__ import annotations

import re

from gpulint.lazypattern import lazy
from gpulint.load import unrendered
from gpulint.record import record, set_field

# A key at the start of a line (after any `- ` list markers), quoted or plain, ending a block or holding a value.
_KEY_RE = re.compile(r"""(?P<indent>[ \t]*)(?P<dashes>(?:-[ \t]+)*)(?P<key>"[^"]*"|'[^']*'|[^\s#'"{\[\-][^:#]*?|-[^\s:#][^:#]*?)[ \t]*:(?:[ \t]|$)""")
_DASH_RE = re.compile(r"(?P<indent>[ \t]*)-(?:[ \t]|$)")
_GO_CONTROL_RE = re.compile(r"-?\s*(?:/\*|(?:if|else|end|range|with|define|break|continue)\b|\$\w*\s*:?=)")
_CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})
_ENV_KEYS = frozenset({"env", "envFrom", "extraEnv", "extraEnvs", "extraEnvVars", "environment"})
_CONTAINER_FIELDS = frozenset({"securityContext", "command", "args", "resources", "limits", "requests"})
_POD_FIELDS = frozenset({"runtimeClassName", "hostPath", "hostPID"})
# Volume sources that cannot reach the host: an unknown inside them changes nothing.
_SAFE_VOLUMES = frozenset({"configMap", "secret", "emptyDir", "persistentVolumeClaim", "projected",
                           "downwardAPI", "ephemeral"})
# Keys an emitter (an action that renders whole keys) may add GPU-deciding fields under.
_OPEN_SCOPES = _CONTAINER_LISTS | frozenset({"spec", "template", "podSpec", "podTemplate"})
_WORKLOAD_RE = re.compile(r"^[ \t]*(?:-[ \t]+)?(?:containers|initContainers|image)[ \t]*:", re.M)


# Output actions of one document placed one by one (each reads the lines above it).
MAX_ACTIONS = 10000
# Lines of a list item read to find its name or GPU request.
MAX_LOOKBACK = 2000
_EXPAND_RE = lazy(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


@record(eq=True, frozen=True, repr=True)
class Unknown:
    """An action whose value could decide a GPU verdict: 1-based line and column in the file, the field
    (dotted, `[]` for a list item; empty for the top of the document), and whether the action renders
    whole keys or items there (`emits`) rather than one value."""

    __slots__ = ("line", "column", "field", "emits")
    line: int
    column: int
    field: str
    emits: bool

    def __init__(self, line: int, column: int, field: str, emits: bool = False) -> None:
        set_field(self, "line", line)
        set_field(self, "column", column)
        set_field(self, "field", field)
        set_field(self, "emits", emits)

    def describe(self) -> str:
        if not self.field and not self.emits:
            return "what its actions render (too many to place one by one)"
        if not self.emits:
            return f"the value of `{self.field}`"
        return f"what it renders into `{self.field}`" if self.field else "what it renders at the top of the document"


def verdict_unknown(chunk: str, line_offset: int = 0) -> Unknown | None:
    """The first action of `chunk` (one document) that could hide a GPU bypass, or None.

    Past MAX_ACTIONS output actions (hostile or generated text) the rest are not placed one by
    one, and the first of them is the answer.
    """
    text = _Text(chunk)
    ln = 0
    placed = 0
    for start, end in unrendered.actions(chunk):
        if _is_control(chunk, start, end):
            continue
        while text.starts[ln + 1] <= start:
            ln += 1
        column = start - text.starts[ln]
        placed += 1
        if placed > MAX_ACTIONS:
            return Unknown(line_offset + ln + 1, column + 1, "")
        found = _field(text, ln, column)
        if found is not None:
            return Unknown(line_offset + ln + 1, column + 1, found[0], found[1])
    return None


@record(eq=True, repr=True)
class _Line:
    """A line that structures the document: a `key:` or a `- ` item (after any indentation)."""

    __slots__ = ("lead", "dash", "key", "key_at", "opens")
    lead: int                 # its indentation
    dash: bool                # a list item
    key: str | None           # the key it holds (after its dashes), if any
    key_at: int               # the column of that key
    opens: bool               # the key's value is on the lines below (or a block scalar)

    def __init__(self, lead: int, dash: bool, key: str | None, key_at: int, opens: bool) -> None:
        self.lead = lead
        self.dash = dash
        self.key = key
        self.key_at = key_at
        self.opens = opens


class _Text:
    """One document's lines, and the chain of lines enclosing the current one.

    Actions are placed in order, so the enclosing lines are kept as a stack while the lines are
    read once (each line pushed and popped at most once): a line pops those of the same or more
    indentation; a `- ` item counts half a column deeper than a key at its column, whose
    indentless list it is.
    """

    def __init__(self, chunk: str) -> None:
        self.lines = chunk.split("\n")
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.kind = _kind(chunk)
        self.stack: list[tuple[float, _Line]] = []
        self._read = 0
        self._expanded: set[str] | None = None

    def enclosing(self, ln: int) -> list[_Line]:
        """The structuring lines enclosing line `ln`, innermost first."""
        while self._read < ln:
            entry = _structure(self.lines[self._read])
            self._read += 1
            if entry is None:
                continue
            level = entry.lead + (0.5 if entry.dash else 0.0)
            while self.stack and self.stack[-1][0] >= level:
                self.stack.pop()
            self.stack.append((level, entry))
        return [entry for _level, entry in reversed(self.stack)]

    def expanded(self) -> set[str]:
        """Names other env values expand (`value: $(NAME)`)."""
        if self._expanded is None:
            self._expanded = {name for line in self.lines if line.lstrip(" \t-").startswith("value:")
                              for name in _EXPAND_RE.findall(line)}
        return self._expanded


def _structure(line: str) -> _Line | None:
    stripped = line.strip()
    if not stripped or stripped.startswith("#") or (_has_opener(line) and _only_actions(line)):
        return None
    lead = len(line) - len(line.lstrip(" \t"))
    key = _KEY_RE.match(line)
    dash = _DASH_RE.match(line) is not None
    if key is None and not dash:
        return None   # a continuation line of a scalar
    key_at = len(key.group("indent")) + len(key.group("dashes")) if key else lead
    return _Line(lead, dash, _unquote(key.group("key")) if key else None, key_at, key is not None and _opens_block(line))


def _has_opener(line: str) -> bool:
    return "{{" in line or "{%" in line or "{#" in line or "${" in line or "%{" in line


def has_workload_shape(chunk: str) -> bool:
    """Whether a document's text shows containers (an unreadable one then may hide anything)."""
    return _WORKLOAD_RE.search(chunk) is not None


def _kind(chunk: str) -> str:
    match = re.search(r"^kind:[ \t]*[\"']?(\w+)", chunk, re.M)
    return match.group(1) if match else ""


def _is_control(text: str, start: int, end: int) -> bool:
    """Whether an action renders no text of its own (a control structure, a comment, an assignment)."""
    opener = text[start:start + 2]
    if opener in ("{%", "{#", "%{"):
        return True
    if opener == "{{":
        return _GO_CONTROL_RE.match(text, start + 2, end - 2) is not None
    return False


def _field(text: _Text, ln: int, column: int) -> tuple[str, bool] | None:
    """The dotted field an output action at (ln, column) fills, when it could decide a GPU verdict,
    and whether the action renders keys or items there."""
    line = text.lines[ln]
    before = line[:column]
    key_match = _KEY_RE.match(before)
    value = ""
    if key_match:
        dash_at = len(key_match.group("indent"))
        key = _unquote(key_match.group("key"))
        value = line[key_match.end():]
        if key_match.group("dashes"):
            path = _ancestors(text, ln, dash_at, True) + ["[]", key]
        else:
            path = _ancestors(text, ln, dash_at, False) + [key]
        emitter = False
    else:
        rest = before.strip()
        dash = _DASH_RE.match(before)
        if dash is not None and not rest.replace("-", "").strip():
            path = _ancestors(text, ln, len(dash.group("indent")), True) + ["[]"]
            emitter = True
        else:
            # Nothing but indentation before it: it renders keys of its own (an indentless list under
            # a key at the same indentation too); otherwise it sits inside a flow or scalar value.
            emitter = not rest
            path = _ancestors(text, ln, column, emitter)
    keys = [key for key in path if key != "[]"]
    if not keys and emitter:
        return "", True
    field = _verdict_field(text, ln, path, keys, emitter, value)
    return None if field is None else (field, emitter)


def _verdict_field(text: _Text, ln: int, path: list[str], keys: list[str], emitter: bool,
                   value: str) -> str | None:
    shown = _dotted(path)
    in_container = any(key in _CONTAINER_LISTS for key in keys)
    for index, key in enumerate(keys):
        if key in _ENV_KEYS:
            return None if _env_name_is_harmless(text, ln, keys[index + 1:]) else shown
        if "NVIDIA_" in key or key in _POD_FIELDS:
            return shown
        if key in _CONTAINER_FIELDS and in_container:
            if key == "resources" and _native_quantity(keys[index + 1:], emitter):
                return None
            return shown
        if key == "volumes":
            rest = keys[index + 1:]
            if rest and (rest[0] in _SAFE_VOLUMES or rest == ["name"]):
                return None
            return shown
        if key == "annotations" and (text.kind == "Pod" or "template" in keys[:index]):
            rest = keys[index + 1:]
            return shown if emitter or not rest or "cdi" in rest[0] or "gpu" in rest[0].lower() else None
    last = keys[-1] if keys else ""
    if last == "image" or (len(keys) > 1 and keys[-2] == "image"):
        # An image only decides a verdict through its default environment (GPU005, a heuristic
        # warning that needs the NVIDIA runtime as the node's default): a templated image is a
        # reference nobody can check before it is rendered, so it is counted, never a warning.
        return None
    if emitter and (last in _OPEN_SCOPES or (path and path[-1] == "[]" and in_container)):
        return shown
    return None


def _native_quantity(rest: list[str], emitter: bool) -> bool:
    """Whether an unknown under `resources` is only the quantity of a named native resource
    (`cpu`, `memory`, `hugepages-2Mi`: names without a domain), which no GPU verdict reads."""
    return (not emitter and len(rest) == 2 and rest[0] in ("limits", "requests")
            and "/" not in rest[1] and "{" not in rest[1] and "$" not in rest[1])


def _ancestors(text: _Text, ln: int, indent: int, equal_ok: bool) -> list[str]:
    """Keys (and `[]` for list items) of the lines enclosing column `indent` of line `ln`, outermost first.

    `equal_ok`: a key at the same indentation that opens a block encloses it too (the parent of an
    indentless `- ` list).
    """
    path: list[str] = []
    threshold = indent
    for entry in text.enclosing(ln):
        if threshold == 0 and not equal_ok:
            break
        if entry.lead > threshold:
            continue
        if entry.lead == threshold and (not equal_ok or entry.dash or not entry.opens):
            continue
        if entry.dash:
            if entry.key is not None and entry.opens and (
                    entry.key_at < threshold or (entry.key_at == threshold and equal_ok)):
                path.append(entry.key)
            path.append("[]")
            threshold, equal_ok = entry.lead, True
            continue
        assert entry.key is not None
        path.append(entry.key)
        threshold, equal_ok = entry.lead, False
    path.reverse()
    return path


def _opens_block(text: str) -> bool:
    """Whether a `key:` line leaves its value to the lines below (nothing, or a block scalar indicator)."""
    value = text.split(":", 1)[1].split(" #", 1)[0].strip() if ":" in text else ""
    return not value or value[0] in "|>"


def _only_actions(text: str) -> bool:
    spans = list(unrendered.actions(text))
    if not spans:
        return False
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    rest = "".join(chars).strip()
    return not rest or rest.startswith("#")


def _env_name_is_harmless(text: _Text, ln: int, rest: list[str]) -> bool:
    """Whether an unknown in an env entry is only the value of a variable whose literal name is not
    NVIDIA's and that no other variable's value refers to (`$(NAME)`); a command's `$(NAME)` runs
    no container."""
    if not rest or rest[0] not in ("value", "valueFrom"):
        return False
    name = _item_key(text.lines, ln, "name")
    if name is None or "{" in name or "NVIDIA" in name.upper():
        return False
    return name not in text.expanded()


def _item_key(lines: list[str], ln: int, wanted: str) -> str | None:
    """The literal value of `wanted` in the list item holding line `ln`."""
    start = ln
    while start >= 0 and ln - start <= MAX_LOOKBACK and _DASH_RE.match(lines[start]) is None:
        start -= 1
    if start < 0 or ln - start > MAX_LOOKBACK:
        return None
    dash_at = len(_DASH_RE.match(lines[start]).group("indent"))  # type: ignore[union-attr]
    for index in range(start, min(len(lines), start + MAX_LOOKBACK)):
        text = lines[index]
        if index > start and text.strip() and len(text) - len(text.lstrip(" \t")) <= dash_at:
            break
        key = _KEY_RE.match(text)
        if key is not None and _unquote(key.group("key")) == wanted:
            return _unquote(text[key.end():].split(" #", 1)[0].strip())
    return None


def _unquote(key: str) -> str:
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'":
        return key[1:-1]
    return key


def _dotted(path: list[str]) -> str:
    out = ""
    for key in path:
        if key == "[]":
            out += "[]"
        else:
            out += ("." if out else "") + key
    return out
