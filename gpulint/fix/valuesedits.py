"""A fix of a chart's rendered object made in the values file the object's values come from.

Each edit of the rule's fix (by path of the rendered document) is placed at a values key:
- a scalar the fix sets or deletes, rendered exactly as the values key writes it (quotes aside);
- or a mapping or list the template copied whole (`toYaml .Values.resources`): the nearest
  rendered node above the edit that is equal, as data, to the values node the mapping
  names. The rest of the edit's path is followed from that values node, so `limits` added
  beside the rendered `requests` is added beside `requests` in the values file.
Equality is the evidence the template copied the values verbatim; a template that wrote
the node itself (literal keys, a function) renders something else and keeps "no fix".
The edits are then made in the values file's text as in any file (resolve.py). Whether
the chart, rendered again with them, shows what the same fix in a plain file would, is
checked before anything is written (`expected`, used by cli/fixcmd.py).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from gpulint.api import CopyOf, Edit, Fix
from gpulint.fix import resolve as plain
from gpulint.fix.resolve import NoFix, _content, _Text, resolve, scalar
from gpulint.results.findings import FindingFix, MappedLocation, TextEdit

Mapped = Callable[[tuple], "list[MappedLocation]"]
_MISSING = object()


def attach(finding: Any, violation: Any, doc: Any, rendered: bool, mapped: Mapped | None = None,
           origin: Any = None) -> None:
    """resolve.attach, with a rendered object's fix made in its values file where it can be.
    `mapped`: where a path of the rendered object comes from (template, values file); `origin`:
    a Kustomize build's fix in its resource or patch file (resolve.attach's)."""
    # (Only a render's fix is made in a values file: a file the user wrote asks for no closure.)
    values = None if mapped is None or not rendered else (lambda fix: _values_fix_or_none(doc, fix, mapped))
    plain.attach(finding, violation, doc, rendered, values, origin)


def _values_fix_or_none(doc: Any, fix: Fix, mapped: Mapped) -> FindingFix | str | None:
    """values_fix, where a bug costs the values fix (the finding keeps "no fix"), never the finding."""
    try:
        return values_fix(doc, fix, mapped)
    except Exception:  # noqa: BLE001 - best effort, like the mapping it stands on
        return None


def values_fix(doc: Any, fix: Fix, mapped: Mapped) -> FindingFix | str | None:
    """`fix` as edits of the one values file its values come from; or why not (a "no fix:"
    reason), or None when its values are not written literally in a values file."""
    if not fix.edits:
        return None
    # (Imported here: only a chart's render, which has imported them, asks; a plain scan does not.)
    from gpulint.render.values import values_document

    text = _Text(doc)
    placed: list[Edit] = []
    direct: list[TextEdit] = []
    file: str | None = None
    for edit in fix.edits:
        found = _place(text, edit, mapped)
        if isinstance(found, str) or found is None:
            return found
        site, edit_in_values, direct_edit = found
        if file is not None and site.file != file:
            return None   # two values files: one fix, one file
        file = site.file
        if direct_edit is not None:
            direct.append(direct_edit)
        else:
            placed.append(edit_in_values)
    assert file is not None
    from gpulint.render.values import values_document  # (a chart's render: render/ is loaded; a plain scan never is)

    values = values_document(file)
    if values is None:
        return None
    try:
        edits = list(resolve(values, Fix(fix.title, fix.applicability, tuple(placed)))) if placed else []
    except NoFix:
        return None
    edits += direct
    spans = sorted((e.span.line, e.span.column, e.span.end_line, e.span.end_column) for e in edits)
    if any(b[:2] < a[2:] for a, b in zip(spans, spans[1:])):   # two edits of one place
        return None
    edits.sort(key=lambda e: (e.span.line, e.span.column))
    return FindingFix(fix.title, fix.applicability.value, tuple(edits), file, fix.edits)


def _place(text: _Text, edit: Edit, mapped: Mapped) -> tuple[MappedLocation, Edit, TextEdit | None] | str | None:
    """The values key an edit is made at: (site, the edit by values path, or for a scalar set
    the text edit itself), a "no fix" reason, or None."""
    from gpulint.render.mapping import SET_NOTE  # (see values_fix)
    from gpulint.render.values import values_document

    data = text.doc.data
    start = edit.path if edit.op in ("set", "delete", "rename") else _existing(data, edit.path[:-1] if
                                                                                 edit.op == "add" else edit.path)
    for length in range(len(start), 0, -1):
        at = start[:length]
        node = _get(data, at)
        found = mapped(at)
        given = next((m for m in found if m.role == "template" and SET_NOTE in m.description), None)
        if given is not None:
            said = given.description.split(SET_NOTE, 1)[1].split(" (command line", 1)[0].strip()
            return f"no fix: the value is given on the command line (--set {said})"
        for site in found:
            if site.role != "values" or site.key_path is None or not _owned(site, found):
                continue
            values = values_document(site.file)
            if values is None:
                continue
            if isinstance(node, (dict, list)):
                if _get(values.data, site.key_path) != node:
                    continue
            elif length != len(edit.path) or not _same_scalar(text, at, site):
                continue
            rest = edit.path[length:]
            if edit.op == "set" and not rest:
                written = _set_scalar(text, edit, site)
                return None if written is None else (site, edit, written)
            value = edit.value
            if isinstance(value, CopyOf):
                if value.path[:length] == at:
                    value = CopyOf(site.key_path + value.path[length:])
                else:
                    value = _get(data, value.path)
                    if value is _MISSING or isinstance(value, (dict, list)):
                        return None
            return site, Edit(edit.op, site.key_path + rest, value), None
    return None


def _owned(site: MappedLocation, found: list[MappedLocation]) -> bool:
    """A values file given for the render, or the values.yaml of the chart whose template wrote the value
    (not a parent chart's, nor another chart's)."""
    if site.given:
        return True
    folder, _slash, name = site.file.rpartition("/")
    prefix = f"{folder}/templates/" if folder else "templates/"
    templates = [m.file for m in found if m.role == "template"]
    return name == "values.yaml" and bool(templates) and templates[0].startswith(prefix)


def _same_scalar(text: _Text, path: tuple, site: MappedLocation) -> bool:
    """The rendered scalar is the values scalar as written (quotes aside): no function changed it."""
    if site.scalar is None or site.written is None:
        return False
    try:
        node = text.node(path)
    except NoFix:
        return False
    if node.children is not None or node.style in ("|", ">"):
        return False
    content = _content(site.written)
    return content is not None and _content(text.text[node.start:node.end]) == content


def _set_scalar(text: _Text, edit: Edit, site: MappedLocation) -> TextEdit | None:
    """The values scalar replaced in its own quoting style (`'4'` becomes `'2'`)."""
    assert site.scalar is not None and site.written is not None
    quote = site.written[0] if site.written[:1] in ("'", '"') else None
    try:
        if isinstance(edit.value, CopyOf):
            raw = text.raw(edit.value)
            content = _content(raw)
            if content is None:
                return None
            new = content if quote is None and raw[:1] not in ("'", '"') else scalar(content, quote)
        elif quote is not None and not isinstance(edit.value, (bool, int)):
            new = scalar(edit.value, quote)
        else:
            new = scalar(edit.value, None)
    except NoFix:
        return None
    return TextEdit(site.scalar, new)


def _existing(data: Any, path: tuple) -> tuple:
    """The longest start of `path` that is in `data`."""
    for length in range(len(path), 0, -1):
        if _get(data, path[:length]) is not _MISSING:
            return path[:length]
    return ()


def _get(data: Any, path: tuple) -> Any:
    for step in path:
        if isinstance(step, int) and isinstance(data, list) and 0 <= step < len(data):
            data = data[step]
        elif isinstance(step, str) and isinstance(data, dict) and step in data:
            data = data[step]
        else:
            return _MISSING
    return data


# --- what the fix must render --------------------------------------------------------


def expected(data: Any, edits: tuple) -> Any:
    """The rendered document `data` as the rule's edits would leave it in a plain file (None
    when an edit does not apply): what the chart rendered with the edited values must show."""
    out = copy.deepcopy(data)
    try:
        for edit in sorted(edits, key=lambda e: e.op != "delete"):   # deletions first, as resolve() does
            _apply(out, data, edit)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return out


def _apply(out: Any, before: Any, edit: Edit) -> None:
    path = edit.path
    value = edit.value
    if isinstance(value, CopyOf):
        value = _get(before, value.path)
        if value is _MISSING:
            raise KeyError(value)
    if edit.op == "delete":
        # An entry left empty goes with its parent mapping's key (resolve.py's delete).
        while len(path) > 1 and isinstance(path[-2], str) and len(_at(out, path[:-1])) == 1:
            path = path[:-1]
        del _at(out, path[:-1])[path[-1]]
    elif edit.op == "set":
        _at(out, path[:-1])[path[-1]] = value
    elif edit.op == "rename":
        parent = _at(out, path[:-1])
        parent[value] = parent.pop(path[-1])
    elif edit.op == "add":
        _made(out, path[:-1])[path[-1]] = value
    elif edit.op == "append":
        _made(out, path[:-1]).setdefault(path[-1], []).append(value)


def _made(data: Any, path: tuple) -> Any:
    """The mapping at `path`, with the mappings missing on the way added."""
    for step in path:
        data = data.setdefault(step, {}) if isinstance(data, dict) else data[step]
    return data


def _at(data: Any, path: tuple) -> Any:
    for step in path:
        data = data[step]
    return data
