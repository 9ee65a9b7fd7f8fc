"""Pod specs written inside a string: a strategic-merge patch of the pod (Argo `podSpecPatch`).

A patch is YAML or JSON text held by one string scalar of the manifest. It is read
as a document of its own whose positions are the manifest's: a literal block
scalar (`podSpecPatch: |`) is parsed from the manifest's own lines, indentation
kept, so every node sits at its line and column in the file; a one-line quoted
or plain string without escapes is parsed from its own characters at their
column. Any other spelling (folded, escaped) is parsed from its value, placed
from the string's first character: exact up to its first escape or fold.
"""

from __future__ import annotations

from typing import Any

from gpulint.load.yamlload import Document, load_stream
from gpulint.model.objects import KubeObject, ObjectRef

# Bounded like any document of the scan: a patch is a few lines of a pod spec.
_MAX_PATCH = 256 * 1024


def patch_object(obj: KubeObject, rel: tuple) -> KubeObject | None:
    """The pod-spec patch held by the string at `rel` in `obj`, as an object whose document
    positions are the manifest's; None when the string is no mapping."""
    value = _value(obj.data, rel)
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_PATCH:
        return None
    node = obj.doc.node(obj.path(*rel))
    doc = None
    if node is not None and node.children is None:
        doc = _in_place(obj.doc, node, value)
    exact = doc is not None
    if doc is None and node is not None:
        # Placed from the string's first character: exact up to the first escape or fold.
        pad = node.span.column - 1 + (1 if node.style in ("'", '"') else 0) if "\n" not in value else 0
        doc = _parse(" " * pad + value, node.span.line - 1)
    if doc is None or not isinstance(doc.data, dict):
        return None
    ref = ObjectRef(obj.ref.api_version, obj.ref.kind, obj.ref.name, obj.ref.namespace)
    return KubeObject(obj.file, doc, (), doc.data, ref, obj.template, obj.origin,
                      patch_of=(obj, obj.path(*rel), exact))


def outer_text(patch: KubeObject, path: tuple) -> tuple[KubeObject, tuple, int, int] | None:
    """Where the node at `path` of a patch sits in the string holding the patch: (the object
    holding the string, the string's document path, start and end in the string), found by the
    node's first source line; None when it is not found. A rendered template is mapped through
    this (its mapper knows the manifest's paths, not the string's)."""
    if patch.patch_of is None:
        return None
    outer, string_path, _exact = patch.patch_of
    value = _value(outer.doc.data, string_path)
    node = patch.doc.node(path)
    while node is None and path:
        path = path[:-1]
        node = patch.doc.node(path)
    if not isinstance(value, str) or node is None:
        return None
    line = patch.doc.text[node.start:node.end].split("\n", 1)[0].strip()
    start = value.find(line) if line else -1
    if start < 0:
        return None
    return outer, string_path, start, start + len(line)


def _in_place(outer: Document, node: Any, value: str) -> Document | None:
    """The patch parsed from the manifest's own text when that gives the same data."""
    raw = outer.text[node.start:node.end]
    first_line = node.span.line - 1   # 0-based line of the scalar's first character
    if node.style == "|":
        # The lines after the indicator line, as written (indentation is no change of meaning
        # for a YAML document: its root may start at any column).
        newline = raw.find("\n")
        if newline < 0:
            return None
        text, line = raw[newline + 1:], first_line + 1
    elif node.style in ("", "'", '"') and "\n" not in raw:
        quote = 1 if node.style else 0
        text, line = " " * (node.span.column - 1 + quote) + raw[quote:len(raw) - quote], first_line
    else:
        return None
    doc = _parse(text, line)
    expected = _parse(value, line)
    if doc is None or expected is None or doc.data != expected.data:
        return None
    return doc


def _parse(text: str, line: int) -> Document | None:
    for item in load_stream([text], unrendered=False, first_line=line):
        return item if isinstance(item, Document) else None
    return None


def _value(data: Any, rel: tuple) -> Any:
    for item in rel:
        try:
            data = data[item]
        except (KeyError, IndexError, TypeError):
            return None
    return data
