"""Where the parts of a built object are written: the documents a fix of a kustomization's
build output may edit (gpulint/fix/kustomize.py picks the one an edit belongs in).

A built object is its resource file's document with the kustomizations' patches applied
over it. Each `Layer` is one document that writes part of the object: the resource, a
strategic-merge patch (a file, or an inline `|` block of kustomization.yaml, read at its own
lines and columns), or the `value` of a JSON 6902 `add`/`replace` operation; `mount` says
which node of the object the layer's node stands for. Layers come last applied first, so
the first one that writes a value is the one the build kept.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import KubeObject
from gpulint.record import record
from gpulint.render import kustomizefile as kz
from gpulint.render.boundary import inside
from gpulint.render.kustomizebuild import (
    _MERGE_KEYS as MERGE_KEYS,
    KustomizeMapper,
    _is_json6902_file,
    _pointer,
    _same_object,
    _selects,
    align,
)


@record(eq=True, repr=True)
class Layer:
    __slots__ = ("display", "real", "doc", "mount", "base", "what", "blocked")
    display: str
    real: Path
    doc: Document          # positions are those of the file (an inline patch: of kustomization.yaml)
    mount: tuple           # the node of the built object (path under the object) that `base` stands for
    base: tuple            # its path in `doc`
    what: str              # "resource", "patch", "inline patch", "JSON patch"
    blocked: str | None    # why this layer is not edited (an inline patch not written as a `|` block)

    def __init__(self, display: str, real: Path, doc: Document, mount: tuple, base: tuple, what: str,
                 blocked: str | None = None) -> None:
        self.display = display
        self.real = real
        self.doc = doc
        self.mount = mount
        self.base = base
        self.what = what
        self.blocked = blocked

    def line(self, path: tuple = ()) -> int:
        """The line of the node at `path` under the layer's node (of a JSON patch: the operation's line)."""
        span = self.doc.span((self.base + path) if path or not self.base else self.base[:1])
        return span.line if span is not None else self.doc.line_offset + 1


@record(eq=True, repr=True)
class Layers:
    __slots__ = ("found", "pointers", "why", "replaced")
    found: list[Layer]
    # Every JSON 6902 operation that applies to the object: (its path as a pointer, file, line).
    pointers: list[tuple[tuple, str, int]]
    why: str | None            # the object has no file to edit, and why
    # Fields of the object a `replacements` entry sets: (the field path's steps, file, line).
    replaced: list[tuple[tuple, str, int]]

    def __init__(self, found: list[Layer] | None = None, pointers: list[tuple[tuple, str, int]] | None = None,
                 why: str | None = None, replaced: list[tuple[tuple, str, int]] | None = None) -> None:
        self.found = [] if found is None else found
        self.pointers = [] if pointers is None else pointers
        self.why = why
        self.replaced = [] if replaced is None else replaced

    def replacing(self, rel: tuple, built: Any) -> tuple[str, int] | None:
        """The replacement (file, line) that sets the node at `rel` of the built object or one above it."""
        for steps, display, line in self.replaced:
            if len(steps) <= len(rel) and all(_step_matches(step, rel[:i + 1], built)
                                              for i, step in enumerate(steps)):
                return display, line
        return None


def layers(mapper: KustomizeMapper, obj: KubeObject) -> Layers:
    out = Layers()
    origin = mapper._origins.get(obj.doc.index)
    if origin is None or (origin.file is None and origin.display is None):
        out.why = "kustomize does not say which file the object comes from"
        return out
    if origin.file is None:
        out.why = f"the object comes from a remote base ({origin.display}), not a file of this repository"
        return out
    if origin.generated_by:
        out.why = f"the object is made by the kustomization's {origin.generated_by}, not written in a file"
        return out
    repository = mapper.repository
    for k in mapper._kustomizations():
        for patch in reversed(k.patches()):
            if patch.target and not _selects(patch.target, obj):
                continue
            if patch.file is not None:
                if not inside(patch.file, repository):
                    continue
                display = mapper._display_of(patch.file)
                docs = mapper._load(patch.file)
                if patch.json6902 or _is_json6902_file(docs):
                    for doc in reversed(docs):
                        _operations(out, doc, display, patch.file, "JSON patch")
                else:
                    out.found += [Layer(display, patch.file, doc, (), (), "patch") for doc in reversed(docs)
                                  if _same_object(doc.data, obj, not patch.target)]
            else:
                _inline(out, mapper, k, patch, obj)
        _replacements(out, mapper, k, obj)
    if not inside(origin.file, repository):
        out.why = "the object's resource file is outside the repository"
        return out
    docs = [doc for doc in mapper._load(origin.file) if _same_object(doc.data, obj, True)]
    exact = [doc for doc in docs if doc.data["metadata"]["name"] == obj.ref.name]   # no namePrefix/Suffix
    docs = exact or docs
    if len(docs) == 1:
        out.found.append(Layer(origin.display or "", origin.file, docs[0], (), (), "resource"))
    elif len(docs) > 1:
        out.why = f"several documents of {origin.display} could be the object's"
    else:
        out.why = f"the object is not written as one document of {origin.display}"
    return out


def _replacements(out: Layers, mapper: KustomizeMapper, k: kz.Kustomization, obj: KubeObject) -> None:
    """The field paths the kustomization's `replacements` (inline, or in files) set in the object."""
    entries = k.data.get("replacements")
    if not isinstance(entries, list) or k.doc is None:
        return
    for i, entry in enumerate(entries):
        span = k.doc.span(("replacements", i))
        display, line = mapper._display_of(k.file), span.line if span is not None else 1
        found: list = [entry]
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) and not kz.is_remote(entry["path"]):
            real = Path(os.path.normpath(k.directory / entry["path"]))
            display, line = mapper._display_of(real), 1
            found = []
            for doc in mapper._load(real):
                found += doc.data if isinstance(doc.data, list) else [doc.data]
        for replacement in found:
            targets = replacement.get("targets") if isinstance(replacement, dict) else None
            for target in targets if isinstance(targets, list) else []:
                select = target.get("select") if isinstance(target, dict) else None
                if not isinstance(select, dict) or not _selects(select, obj):
                    continue
                paths = target.get("fieldPaths")
                for path in paths if isinstance(paths, list) else []:
                    if isinstance(path, str):
                        out.replaced.append((field_steps(path), display, line))


def field_steps(path: str) -> tuple:
    r"""A kustomize field path (`spec.containers.[name=app].image`, `a\.b` a key with a dot) as steps."""
    steps: list[str] = []
    current, bracket, escaped = "", False, False
    for char in path:
        if escaped:
            current += char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            bracket = True
            current += char
        elif char == "]":
            bracket = False
            current += char
        elif char == "." and not bracket:
            steps.append(current)
            current = ""
        else:
            current += char
    steps.append(current)
    return tuple(steps)


def _step_matches(step: str, path: tuple, built: Any) -> bool:
    last = path[-1]
    if step == "*":
        return True
    if step.startswith("[") and step.endswith("]") and "=" in step:
        key, _eq, value = step[1:-1].partition("=")
        item = _get(built, path)
        return isinstance(last, int) and isinstance(item, dict) and str(item.get(key)) == value
    return step == str(last)


def _operations(out: Layers, doc: Document, display: str, real: Path, what: str) -> None:
    """The add/replace operations of a JSON 6902 patch, last first."""
    ops = doc.data
    if not isinstance(ops, list):
        return
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            continue
        pointer = _pointer(op["path"])
        span = doc.span((i,))
        out.pointers.append((pointer, display, span.line if span is not None else doc.line_offset + 1))
        if op.get("op") in ("add", "replace") and "value" in op:
            out.found.append(Layer(display, real, doc, pointer, (i, "value"), what))


def _inline(out: Layers, mapper: KustomizeMapper, k: kz.Kustomization, patch: kz.Patch, obj: KubeObject) -> None:
    doc = k.doc
    if doc is None:
        return
    display = mapper._display_of(k.file)
    text = block_text(doc, patch.inline_path)
    if text is None:
        value = _get(doc.data, patch.inline_path)
        # Read to know what it writes; its positions are not the file's, so it is never edited.
        body = [d for d in load_documents(value) if isinstance(d, Document)] if isinstance(value, str) else []
        first = len(out.found)
        for inner in reversed(body):
            if patch.json6902 or isinstance(inner.data, list):
                _operations(out, inner, display, k.file, "inline JSON patch")
            elif _same_object(inner.data, obj, not patch.target):
                out.found.append(Layer(display, k.file, inner, (), (), "inline patch"))
        for layer in out.found[first:]:
            layer.blocked = "the inline patch is not written as a literal `|` block"
        return
    for inner in reversed([d for d in load_documents(text) if isinstance(d, Document)]):
        if patch.json6902 or isinstance(inner.data, list):
            _operations(out, inner, display, k.file, "inline JSON patch")
        elif _same_object(inner.data, obj, not patch.target):
            out.found.append(Layer(display, k.file, inner, (), (), "inline patch"))


def block_text(doc: Document, path: tuple) -> str | None:
    """The kustomization file's text with only the literal block at `path` left (other lines
    blank, their line breaks kept): YAML whose positions are the file's."""
    node = doc.node(path)
    value = _get(doc.data, path)
    if node is None or node.style != "|" or not isinstance(value, str):
        return None
    body = value.rstrip("\n").split("\n")
    lines = doc.text.split("\n")
    first = node.span.line - doc.line_offset        # content starts on the line after `|`
    window = lines[first:first + len(body)]
    if len(window) != len(body) or any(a.strip() != b.strip() for a, b in zip(window, body)):
        return None
    kept = range(first, first + len(body))
    return "\n" * doc.line_offset + "\n".join(
        line if i in kept else ("\r" if line.endswith("\r") else "") for i, line in enumerate(lines))


def position(layer: Layer, rel: tuple, built: Any) -> tuple[tuple, int] | None:
    """Where the node at `rel` of the built object `built` is in `layer`: (its path in the layer's
    document, how many steps of `rel` it matched); None when the layer is not about that part."""
    mount = layer.mount
    if len(rel) < len(mount):
        return None
    for i, (step, want) in enumerate(zip(mount, rel)):
        if step == want:
            continue
        # `-` appends: the item it made is the one equal to the operation's value
        if step == "-" and isinstance(want, int) and i == len(mount) - 1 \
                and _get(built, rel[:i + 1]) == _get(layer.doc.data, layer.base):
            continue
        return None
    source = _get(layer.doc.data, layer.base)
    path, _complete = align(source, rel[len(mount):], _get(built, rel[:len(mount)]))
    return layer.base + path, len(mount) + len(path)


def by_place(layer: Layer, rel: tuple, built: Any, path: tuple) -> bool:
    """Whether a list item on `path` (the layer's path of `rel`) matched the built one only by its
    place in the list (no merge key such as `name`, not equal): in a patch, which item of the built
    list it writes is then not known."""
    mount = len(layer.mount)
    inner = path[len(layer.base):]
    for i, step in enumerate(inner):
        if isinstance(step, int):
            item = _get(built, rel[:mount + i + 1])
            keyed = isinstance(item, dict) and any(key in item for key in MERGE_KEYS)
            if not keyed and _get(layer.doc.data, path[:len(layer.base) + i + 1]) != item:
                return True
    return False


_MISSING = object()


def lookup(data: Any, path: tuple, missing: Any = _MISSING) -> Any:
    """The value at `path` (keys and list indices) in plain data, or `missing` where there is none."""
    for step in path:
        if isinstance(step, int) and isinstance(data, list) and 0 <= step < len(data):
            data = data[step]
        elif isinstance(data, dict) and step in data:
            data = data[step]
        else:
            return missing
    return data


def exists(data: Any, path: tuple) -> bool:
    return lookup(data, path) is not _MISSING


def _get(data: Any, path: tuple) -> Any:
    return lookup(data, path, None)


value_at = _get
