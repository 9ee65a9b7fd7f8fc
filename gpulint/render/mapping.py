"""Template line mapping: a node of rendered Helm output -> the template line and values key.

The path of the offending node (spec, template, spec, containers, 0, env, 2) is
followed through the template text by indentation: a key step looks for a
`key:` line among the block's children, a list step for the `- ` item whose
literal `name:` matches the rendered item (or the item emitted by a `range`
over values whose element has that name). When a step is not literal text, the
block's output action that produced it is taken instead: `include` of a helper
continues the walk inside the helper's `define` body; `toYaml .Values.x` (or any
expression on values) ends the walk, and the rest of the path is looked up in
the values. `with` and `range` blocks are followed so `.`, `.name` and `$v.x`
resolve to `.Values` keys.

This is best effort by design (templates are programs), and every answer names
a real line of a real file; when a step cannot be followed the deepest matched
line is given and described as approximate.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from gpulint.lazypattern import lazy
from gpulint.load.locations import Span
from gpulint.record import record, set_field
from gpulint.render.template import Action, Template
from gpulint.render.values import Located, ValuesChain, dotted
from gpulint.results.findings import MappedLocation

_BUILTINS = frozenset({"Release", "Chart", "Capabilities", "Template", "Files", "Subcharts"})
_TOKEN_RE = lazy(r"(\$[A-Za-z_]\w*|\$)?((?:\.[A-Za-z_][\w]*)+)|(?<![\w\)\]\.\$])\.(?![\w\.])")
_INDEX_RE = lazy(r"\bindex\s+(\$?[\w.]*)((?:\s+(?:\"[^\"]*\"|\d+))+)")
_RANGE_VARS_RE = lazy(r"^(?:range|with)\s+(?:(\$\w+)\s*(?:,\s*(\$\w+))?\s*:=\s*)?(.*)$", re.S)
_INCLUDE_RE = lazy(r"\b(?:include|template)\s+\"([^\"]+)\"\s*(\(.*?\)|\$?[\w.]*)?")
_VALUE_FUNCS = lazy(r"\b(?:toYaml|toJson|tpl|toPrettyJson|toRawJson)\b")

SET_NOTE = "value from --set"   # a template location's note: the value is given on the command line
ROOT = ("<root>",)          # dot is the top-level context (.Values reachable)
UNKNOWN = ("<unknown>",)    # dot is something we cannot trace


@record(eq=True, frozen=True, repr=True)
class RangeIndex:
    """A list index (or map key) chosen by a `range`; bound while walking."""

    __slots__ = ("action_id",)
    action_id: int

    def __init__(self, action_id: int) -> None:
        set_field(self, "action_id", action_id)


@record(eq=True, repr=True)
class Walk:
    """State of a walk through one template or helper body."""

    __slots__ = ("tpl", "dot", "helper", "bindings")
    tpl: Template
    dot: tuple                                  # what `.` is at the top of this body
    helper: str | None                          # define name, inside a helper
    bindings: dict[int, Any]

    def __init__(self, tpl: Template, dot: tuple, helper: str | None = None,
                 bindings: dict[int, Any] | None = None) -> None:
        self.tpl = tpl
        self.dot = dot
        self.helper = helper
        self.bindings = {} if bindings is None else bindings


@record(eq=True, repr=True)
class Hit:
    __slots__ = ("tpl", "line", "col", "exact", "block", "walk", "generator", "remaining", "sites")
    tpl: Template
    line: int
    col: int
    exact: bool
    block: list[int]
    walk: Walk
    generator: Action | None
    remaining: tuple
    sites: list[tuple[Template, Action]]   # include sites, innermost first

    def __init__(self, tpl: Template, line: int, col: int, exact: bool, block: list[int], walk: Walk,
                 generator: Action | None = None, remaining: tuple = (),
                 sites: list[tuple[Template, Action]] | None = None) -> None:
        self.tpl = tpl
        self.line = line
        self.col = col
        self.exact = exact
        self.block = block
        self.walk = walk
        self.generator = generator
        self.remaining = remaining
        self.sites = [] if sites is None else sites


HelperLookup = Callable[[str], "tuple[Template, tuple[int, int]] | None"]


class TemplateMapper:
    """Maps paths of one rendered object to its template region."""

    def __init__(self, helpers: HelperLookup, values: ValuesChain) -> None:
        self._helpers = helpers
        self._values = values

    # --- public -------------------------------------------------------------

    def locate(self, tpl: Template, region: tuple[int, int], data: Any, rel: tuple,
               text_target: str | None = None) -> list[MappedLocation]:
        walk = Walk(tpl, ROOT)
        hit = self._descend(walk, list(range(*region)), data, rel, depth=0)
        return self._locations(hit, data, rel, text_target)

    # --- walking ------------------------------------------------------------

    def _descend(self, walk: Walk, block: list[int], data: Any, rel: tuple, depth: int) -> Hit:
        """Follow `rel` from the children lines `block`; `data` is the rendered node there."""
        tpl = walk.tpl
        current: tuple[int, int] | None = None      # (line, col) of the last matched step
        node_lines: list[int] = block
        node = data
        for i, step in enumerate(rel):
            child = _child(node, step)
            if isinstance(step, str):
                found = self._find_key(tpl, block, step)
            else:
                found = self._find_item(walk, block, step, node, child)
            if found is not None:
                line = tpl.lines[found]
                current = (found, line.key_col)
                if isinstance(step, str):
                    node_lines = _key_block(tpl, found)
                    block = node_lines[1:]
                    inline = [a for a in line.output_actions if a.col >= line.key_col]
                    if line.inline_value and not _opens_block_scalar(line.inline_value):
                        if inline and i + 1 < len(rel):
                            # `env: {{ toYaml .Values.env | nindent 4 }}`: the rest comes from the action.
                            return Hit(tpl, found, line.key_col, True, node_lines, walk,
                                       generator=inline[0], remaining=rel[i + 1:])
                        # Anything left is inside a flow value on this very line.
                        return Hit(tpl, found, line.key_col, True, node_lines, walk)
                else:
                    node_lines = _item_block(tpl, found)
                    block = node_lines
                node = child
                continue
            gen = self._pick_generator(walk, block, step, child)
            if gen is not None:
                include = _INCLUDE_RE.search(gen.text)
                if include and depth < 8:
                    helper = self._helpers(include.group(1))
                    if helper is not None:
                        htpl, (start, end) = helper
                        arg = (include.group(2) or ".").strip("() ") or "."
                        inner = Walk(htpl, self._resolve_dot(walk, gen, arg), include.group(1))
                        sub = self._descend(inner, list(range(start, end)), node, rel[i:], depth + 1)
                        sub.sites.append((tpl, gen))
                        return sub
                return Hit(tpl, gen.line, gen.col, True, [gen.line], walk, generator=gen, remaining=rel[i:])
            if current is None:
                current = _first_yaml(tpl, block)
            return Hit(tpl, current[0], current[1], False, node_lines, walk, remaining=rel[i:])
        if current is None:
            current = _first_yaml(tpl, block)
        return Hit(tpl, current[0], current[1], True, node_lines, walk)

    def _find_key(self, tpl: Template, block: list[int], key: str) -> int | None:
        level = _child_level(tpl, block)
        for n in block:
            line = tpl.lines[n]
            if line.yaml and line.key == key and line.key_col == level:
                return n
        return None

    def _find_item(self, walk: Walk, block: list[int], index: int, parent: Any, item: Any) -> int | None:
        tpl = walk.tpl
        items = _items(tpl, block)
        if not items:
            return None
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str):
            for n in items:
                if _literal_name(tpl, n) == name:
                    return n
        elif not isinstance(item, (dict, list)) and item is not None:
            for n in items:
                line = tpl.lines[n]
                value = line.content[line.key_col:].split(" #", 1)[0].strip().strip("\"'")
                if "\x01" not in value and value == str(item):
                    return n
        # An item emitted by a range over values: bind the range to the element.
        templated = [n for n in items if _literal_name(tpl, n) is None]
        for n in templated:
            rng = _enclosing_range(tpl, n, block)
            if rng is None:
                continue
            collection = self._effective(self._range_source(walk, rng))
            key = _match_element(collection, item)
            if key is not None:
                walk.bindings[id(rng)] = key
                return n
        if self._generators(tpl, block):
            return None                 # the output action wrote it (picked by the caller)
        if not isinstance(name, str) and isinstance(parent, list) and len(parent) == len(items):
            return items[index]        # literal items, one per rendered item
        return templated[0] if templated else None

    def _generators(self, tpl: Template, block: list[int]) -> list[Action]:
        """Output actions at this level: not inside the value of a child key or list item."""
        nested = _nested_lines(tpl, block)
        out = []
        for n in block:
            line = tpl.lines[n]
            if line.yaml or n in nested:
                continue
            out.extend(line.output_actions)
        return out

    def _pick_generator(self, walk: Walk, block: list[int], step: Any, child: Any) -> Action | None:
        gens = self._generators(walk.tpl, block)
        if not gens:
            return None
        if len(gens) == 1:
            return gens[0]
        name = child.get("name") if isinstance(child, dict) else None
        needle = name if isinstance(name, str) else (step if isinstance(step, str) else None)
        for gen in gens:
            include = _INCLUDE_RE.search(gen.text)
            if include:
                helper = self._helpers(include.group(1))
                if helper and needle is not None and needle in "\n".join(
                        helper[0].lines[n].text for n in range(*helper[1])):
                    return gen
                continue
            for path in self._refs(walk, gen):
                value = self._effective(path)
                if isinstance(step, str) and isinstance(value, dict) and step in value:
                    return gen
                if isinstance(value, list) and _match_element(value, child) is not None:
                    return gen
        return gens[0]

    # --- expressions -> values paths -------------------------------------------

    def _refs(self, walk: Walk, action: Action) -> list[tuple]:
        """Values paths an action reads (with range indices where bound)."""
        if action.is_control or _INCLUDE_RE.search(action.text) and not _VALUE_FUNCS.search(action.text):
            return []
        out: list[tuple] = []
        for match in _INDEX_RE.finditer(action.text):
            base = self._resolve_token(walk, action, match.group(1) or ".")
            keys = tuple(int(k) if k.isdigit() else k.strip('"') for k in match.group(2).split())
            if base is not None:
                out.append(base + keys)
        text = _INDEX_RE.sub(" ", action.text)
        text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
        for match in _TOKEN_RE.finditer(text):
            token = match.group(0)
            path = self._resolve_token(walk, action, token)
            if path is not None and path not in out:
                out.append(path)
        return out

    def _resolve_token(self, walk: Walk, action: Action, token: str) -> tuple | None:
        var, _, chain = token.partition(".") if token.startswith("$") else ("", "", token.lstrip("."))
        fields = tuple(f for f in chain.split(".") if f) if chain else ()
        if var in ("$",) or (not var and fields[:1] == ("Values",) and self._dot(walk, action) in (ROOT, UNKNOWN)):
            if fields[:1] == ("Values",):
                return fields[1:]
            return None
        if var:
            base = self._var(walk, action, var)
            return None if base is None else base + fields
        dot = self._dot(walk, action)
        if dot in (ROOT, UNKNOWN):
            return None
        if fields[:1] and fields[0] in _BUILTINS:
            return None
        return dot + fields

    def _dot(self, walk: Walk, action: Action) -> tuple:
        for opener in reversed(action.context):
            if opener.word == "with":
                return self._with_or_range_path(walk, opener, is_range=False) or UNKNOWN
            if opener.word == "range":
                return self._with_or_range_path(walk, opener, is_range=True) or UNKNOWN
            if opener.word in ("define", "block"):
                return walk.dot
        return walk.dot

    def _var(self, walk: Walk, action: Action, var: str) -> tuple | None:
        for opener in reversed(action.context):
            match = _RANGE_VARS_RE.match(opener.text)
            if not match or opener.word not in ("range", "with"):
                continue
            first, second = match.group(1), match.group(2)
            if opener.word == "range" and second == var or (opener.word == "range" and first == var and second is None):
                return self._with_or_range_path(walk, opener, is_range=True)
            if opener.word == "with" and first == var:
                return self._with_or_range_path(walk, opener, is_range=False)
        return None

    def _with_or_range_path(self, walk: Walk, opener: Action, is_range: bool) -> tuple | None:
        source = self._range_source(walk, opener)
        if source is None:
            return None
        if not is_range:
            return source
        return source + (walk.bindings.get(id(opener), RangeIndex(id(opener))),)

    def _range_source(self, walk: Walk, opener: Action) -> tuple | None:
        match = _RANGE_VARS_RE.match(opener.text)
        expr = (match.group(3) if match else opener.text.split(None, 1)[-1]).strip()
        expr = expr.split("|", 1)[0].strip().strip("()").strip()
        token_match = _TOKEN_RE.match(expr) or (re.match(r"\$\w*", expr))
        if token_match is None:
            return None
        outer = Action(opener.line, opener.col, opener.end_line, opener.end_col, "", opener.context)
        return self._resolve_token(walk, outer, token_match.group(0))

    def _resolve_dot(self, walk: Walk, action: Action, arg: str) -> tuple:
        if arg in (".", "$"):
            dot = self._dot(walk, action)
            return dot if arg == "." else ROOT
        path = self._resolve_token(walk, action, arg) if arg.startswith((".", "$")) else None
        return path if path is not None else UNKNOWN

    def _effective(self, path: tuple | None) -> Any:
        """The merged value at a values path, when the path is fully known."""
        if path is None or not _concrete(path):
            return None
        return self._values.effective(path)

    # --- results ------------------------------------------------------------

    def _locations(self, hit: Hit, data: Any, rel: tuple, text_target: str | None) -> list[MappedLocation]:
        tpl = hit.tpl
        line, col = hit.line, hit.col
        if text_target and hit.generator is None and hit.exact:
            for n in hit.block:
                pos = tpl.lines[n].text.find(text_target)
                if pos >= 0:
                    line, col = n, pos
                    break
        end_col = _content_end(tpl, line) if hit.generator is None or hit.generator.end_line != line \
            else hit.generator.end_col
        if end_col <= col:
            end_col = col + 1
        values = self._values_of(hit, data, rel)
        describe = f'helper "{hit.walk.helper}"' if hit.walk.helper else "template"
        if hit.generator is not None:
            describe += " line that writes the value"
        elif not hit.exact:
            describe += ", nearest line (the rest is generated)"
        for note in (v for v in values if v.file is None):
            describe += f"; {SET_NOTE} {note.set_text} (command line, no file)"
        out = [MappedLocation("template", tpl.display, Span(line + 1, col + 1, line + 1, end_col + 1), describe)]
        for site_tpl, action in hit.sites:
            out.append(MappedLocation(
                "template", site_tpl.display,
                Span(action.line + 1, action.col + 1, action.end_line + 1, action.end_col + 1),
                "helper included"))
        for located in values:
            if located.file is not None and located.span is not None:
                out.append(MappedLocation("values", located.file, located.span, f"values key {located.key}",
                                          located.scalar, located.written, located.path, located.given))
        return out

    def _values_of(self, hit: Hit, data: Any, rel: tuple) -> list[Located]:
        walk = hit.walk
        paths: list[tuple] = []
        if hit.generator is not None:
            for base in self._refs(walk, hit.generator)[:1]:
                remaining = self._values_remaining(walk, base, hit.remaining, data, rel)
                paths.append(base + remaining)
        else:
            rng = _enclosing_range(hit.tpl, hit.line, hit.block)
            if rng is not None and id(rng) in walk.bindings and hit.tpl.lines[hit.line].dashes:
                source = self._range_source(walk, rng)
                if source is not None:
                    paths.append(source + (walk.bindings[id(rng)],))
            if not paths:
                for n in _value_lines(hit.tpl, hit.line, hit.block):
                    for action in hit.tpl.lines[n].output_actions:
                        for path in self._refs(walk, action):
                            if path not in paths:
                                paths.append(path)
            if not paths and hit.exact and len(hit.block) > 1:
                # `resources:` with the whole value written by an action below it (`toYaml .Values.resources`).
                for action in self._generators(hit.tpl, [n for n in hit.block if n != hit.line]):
                    for path in self._refs(walk, action):
                        if path not in paths:
                            paths.append(path)
        out: list[Located] = []
        for path in paths[:3]:
            concrete = _truncate(path)
            if not concrete:
                continue
            found = self._values.lookup(concrete)
            if found is not None and all(found.key != o.key or found.file != o.file for o in out):
                out.append(found)
        return out

    def _values_remaining(self, walk: Walk, base: tuple, remaining: tuple, data: Any, rel: tuple) -> tuple:
        """Map the rendered rest of the path onto the values below `base` (lists by name)."""
        node = _walk_data(data, rel[: len(rel) - len(remaining)])
        out: list = []
        values = self._effective(base)
        for step in remaining:
            child = _child(node, step)
            if isinstance(step, int) and isinstance(values, list):
                key = _match_element(values, child)
                step = key if key is not None else step
            out.append(step)
            values = _child(values, step)
            node = child
        return tuple(out)


# --- helpers over template lines ------------------------------------------------


def _child(node: Any, step: Any) -> Any:
    if isinstance(step, int):
        return node[step] if isinstance(node, list) and 0 <= step < len(node) else None
    return node.get(step) if isinstance(node, dict) else None


def _walk_data(node: Any, path: tuple) -> Any:
    for step in path:
        node = _child(node, step)
    return node


def _concrete(path: tuple) -> bool:
    return not any(isinstance(p, RangeIndex) for p in path)


def _truncate(path: tuple) -> tuple:
    out = []
    for p in path:
        if isinstance(p, RangeIndex):
            break
        out.append(p)
    return tuple(out)


def _content_end(tpl: Template, n: int) -> int:
    """End of the line's text before any trailing `# comment` (outside actions and quotes)."""
    line = tpl.lines[n]
    content = line.content
    quote = ""
    for i, ch in enumerate(content):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and (i == 0 or content[i - 1] in " :-[{,"):
            quote = ch
        elif ch == "#" and i > 0 and content[i - 1] in " \t":
            return len(line.text[:i].rstrip())
    return len(line.text.rstrip())


def _first_yaml(tpl: Template, block: list[int]) -> tuple[int, int]:
    for n in block:
        if tpl.lines[n].yaml:
            return n, tpl.lines[n].key_col
    n = block[0] if block else 0
    return n, tpl.lines[n].indent if n < len(tpl.lines) else 0


def _nested_lines(tpl: Template, block: list[int]) -> set[int]:
    """Lines of `block` that belong to a child key's value or a list item's body."""
    members = set(block)
    level = _child_level(tpl, block)
    items = set(_items(tpl, block))
    nested: set[int] = set()
    for n in block:
        line = tpl.lines[n]
        if not line.yaml or n in nested:
            continue
        if n in items:
            nested.update(m for m in _item_block(tpl, n)[1:] if m in members)
        elif line.key is not None and line.key_col == level:
            nested.update(m for m in _key_block(tpl, n)[1:] if m in members)
    return nested


def _child_level(tpl: Template, block: list[int]) -> int:
    cols = [tpl.lines[n].key_col for n in block if tpl.lines[n].yaml and tpl.lines[n].key is not None]
    return min(cols) if cols else -1


def _items(tpl: Template, block: list[int]) -> list[int]:
    dash_lines = [n for n in block if tpl.lines[n].yaml and tpl.lines[n].dashes]
    if not dash_lines:
        return []
    level = min(tpl.lines[n].dash_col for n in dash_lines)
    return [n for n in dash_lines if tpl.lines[n].dash_col == level]


def _literal_name(tpl: Template, item_line: int) -> str | None:
    """The literal `name:` of the list item starting at `item_line`, if any."""
    block = _item_block(tpl, item_line)
    level = tpl.lines[item_line].key_col
    for n in block:
        line = tpl.lines[n]
        if line.yaml and line.key == "name" and line.key_col == level:
            value = line.inline_value
            if "\x01" in value or not value:
                return None
            return value.split(" #", 1)[0].strip().strip("\"'")
    return None


def _key_block(tpl: Template, n: int) -> list[int]:
    """The key line and the lines of its value."""
    line = tpl.lines[n]
    col = line.key_col
    out = [n]
    if line.inline_value and not _opens_block_scalar(line.inline_value):
        return out                  # `key: value` or `key: {{ ... }}`: the value is on this line
    allow_same = not line.inline_value
    for m in range(n + 1, len(tpl.lines)):
        other = tpl.lines[m]
        if not other.yaml:
            out.append(m)
            continue
        if other.indent > col or (allow_same and other.indent == col and other.dashes and other.dash_col == col):
            out.append(m)
            continue
        break
    return _trim(tpl, out)


def _item_block(tpl: Template, n: int) -> list[int]:
    line = tpl.lines[n]
    out = [n]
    for m in range(n + 1, len(tpl.lines)):
        other = tpl.lines[m]
        if not other.yaml or other.indent > line.dash_col:
            out.append(m)
            continue
        break
    return _trim(tpl, out)


def _trim(tpl: Template, block: list[int]) -> list[int]:
    """Drop trailing lines without YAML (the `{{- end }}` after a block belongs outside)."""
    while len(block) > 1 and not tpl.lines[block[-1]].yaml and not tpl.lines[block[-1]].output_actions:
        block.pop()
    return block


def _opens_block_scalar(value: str) -> bool:
    return value[:1] in ("|", ">")


def _value_lines(tpl: Template, line: int, block: list[int]) -> list[int]:
    """The hit line and, for a collection, its first level of children."""
    level = _child_level(tpl, [n for n in block if n != line]) if len(block) > 1 else -1
    out = [line]
    for n in block:
        if n == line:
            continue
        other = tpl.lines[n]
        if other.yaml and other.key_col == level:
            out.append(n)
    return out


def _enclosing_range(tpl: Template, n: int, block: list[int]) -> Action | None:
    for opener in reversed(tpl.context_at(n)):
        if opener.word == "range":
            return opener
        if opener.word in ("define", "block"):
            return None
    return None


def _match_element(collection: Any, item: Any) -> Any:
    """Index (list) or key (map) of the element that rendered as `item`."""
    name = item.get("name") if isinstance(item, dict) else None
    if isinstance(collection, list):
        for i, element in enumerate(collection):
            if isinstance(name, str) and isinstance(element, dict) and element.get("name") == name:
                return i
        for i, element in enumerate(collection):
            if element == item:
                return i
    elif isinstance(collection, dict):
        if isinstance(name, str) and name in collection:
            return name
        for key, element in collection.items():
            if isinstance(name, str) and isinstance(element, dict) and element.get("name") == name:
                return key
            if element == item:
                return key
    return None


__all__ = ["TemplateMapper", "dotted"]
