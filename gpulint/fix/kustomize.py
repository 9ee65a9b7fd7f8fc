"""A fix of a kustomization's build output, made in the file the user wrote.

The rule's edits are by path in the built object; each is moved into the one document
that writes that part of the object (render/kustomizesite.py lists them: the resource, a
strategic-merge patch, an inline patch, a JSON 6902 operation's value), and the text edits
are then placed there exactly as in a plain file (fix/resolve.py). All edits of a fix must
land in one document. Where the edit cannot be placed safely the finding keeps "no fix" and
says why: the value is changed after it is written (a transformer: images, replicas,
replacements, vars) or written in several files, a JSON patch addresses the list by index
(deleting an item before it would shift it), the value is a whole JSON patch operation's.
Whether the fix works is checked by building every kustomization that reads the file again
(cli/fixorigins.py).
"""

from __future__ import annotations

from typing import Any

from gpulint.api import CopyOf, Edit, Fix
from gpulint.fix.resolve import NoFix, resolve
from gpulint.model.objects import KubeObject
from gpulint.results.findings import FindingFix


def origin_fix(mapper: Any, obj: KubeObject, fix: Fix) -> FindingFix | str | None:
    """`fix` as text edits of the file that writes the value, or why there is none (None: the
    object is not a kustomization's build)."""
    from gpulint.render.kustomizebuild import KustomizeMapper
    from gpulint.render.kustomizesite import layers

    if not isinstance(mapper, KustomizeMapper) or obj.patch_of is not None:
        return None
    found = layers(mapper, obj)
    if found.why is not None:
        return found.why
    try:
        return _place(found, obj, fix)
    except NoFix as reason:
        return str(reason)


def _place(found: Any, obj: KubeObject, fix: Fix) -> FindingFix:
    from gpulint.render.kustomizesite import by_place, exists, position, value_at

    built = obj.data
    base = len(obj.base)
    chosen = None                     # the layer every edit goes to
    moved: list[tuple[Edit, tuple]] = []   # (edit, path in the layer's document)

    def writers(rel: tuple) -> list:
        out = []
        for layer in found.found:
            at = position(layer, rel, built)
            if at is not None and at[1] == len(rel) and exists(layer.doc.data, at[0]):
                out.append((layer, at[0]))
        return out

    def where(layer: Any, path: tuple) -> str:
        return f"{layer.display}:{layer.line(path[len(layer.base):])}"

    # Edits of existing nodes fix the layer; additions follow it.
    for edit in sorted(fix.edits, key=lambda e: e.op in ("add", "append")):
        rel = tuple(edit.path[base:])
        if edit.op in ("set", "delete", "rename"):
            written = writers(rel)
            if not written:
                raise NoFix("the value is not written in a file of the kustomization (a transformer or "
                            "generator makes it)")
            replaced = found.replacing(rel, built)
            if replaced is not None:
                raise NoFix(f"the replacement at {replaced[0]}:{replaced[1]} sets it")
            layer, path = written[0]
            if edit.op != "set" and len(written) > 1:
                raise NoFix("it is written in several files (" + ", ".join(where(*w) for w in written) + ")")
            if value_at(layer.doc.data, path) != value_at(built, rel):
                raise NoFix("a transformer (images, replicas, replacements, vars) changes the value on its way "
                            "into the build")
            if layer.base and edit.op == "delete" and len(_emptied(layer.doc.data, path)) <= len(layer.base):
                path = _whole_operation(layer, path, f"{layer.display}:{layer.line(())}")
            elif edit.op == "rename" and path == layer.base and layer.base:
                raise NoFix(f"the key is named by the JSON patch operation's path ({where(layer, path)})")
            if edit.op == "delete" and rel and isinstance(rel[-1], int):
                _shifts(found, rel)
        else:
            layer, path = _insertion(found, chosen, rel, built, edit.op)
        if chosen is not None and layer is not chosen:
            raise NoFix(f"its edits would be in two files ({chosen.display}, {layer.display})"
                        if chosen.display != layer.display else f"its edits would be in two places of {layer.display}")
        if layer.blocked:
            raise NoFix(layer.blocked)
        if layer.what != "resource" and by_place(layer, rel, built, path):
            raise NoFix(f"which item of a list {layer.display} writes is not known: the list's items have no "
                        "merge key (such as `name`) and are matched by their place")
        chosen = layer
        moved.append((edit, path))
    assert chosen is not None
    edits = []
    for edit, path in moved:
        value = edit.value
        if isinstance(value, CopyOf):
            rel = tuple(value.path[base:])
            at = position(chosen, rel, built)
            if at is not None and at[1] == len(rel) and value_at(chosen.doc.data, at[0]) == value_at(built, rel):
                value = CopyOf(at[0])
            else:   # written in another file: copied as the build has it
                value = value_at(built, rel)
                if not isinstance(value, (str, int)) or isinstance(value, bool):
                    raise NoFix("the value it copies is not a scalar")
        edits.append(Edit(edit.op, path, value))
    return FindingFix(fix.title, fix.applicability.value, resolve(chosen.doc, Fix(fix.title, fix.applicability,
                                                                                  tuple(edits))), chosen.display)


def _emptied(data: Any, path: tuple) -> tuple:
    """What deleting `path` deletes: mappings and lists it leaves empty go too (fix/resolve.py's rule)."""
    from gpulint.render.kustomizesite import value_at

    while len(path) > 1 and isinstance(path[-2], str):
        parent = value_at(data, path[:-1])
        if not isinstance(parent, (dict, list)) or len(parent) != 1:
            break
        path = path[:-1]
    return path


def _whole_operation(layer: Any, path: tuple, at: str) -> tuple:
    """Deleting all a JSON 6902 `add` operation adds is deleting the operation; a `replace` (the value
    before it would come back) or the patch's only operation is left to the user."""
    index = layer.base[0]
    ops = layer.doc.data
    if ops[index].get("op") != "add" or len(ops) < 2:
        raise NoFix(f"it is all the value of the JSON patch operation at {at}"
                    + ("" if ops[index].get("op") == "add" else ", which replaces another value")
                    + ("; removing the patch's only operation is left to you" if len(ops) < 2 else
                       "; removing it is left to you"))
    return (index,)


def _insertion(found: Any, chosen: Any, rel: tuple, built: Any, op: str) -> tuple[Any, tuple]:
    """The layer and path an `add` or `append` goes to: the layer the fix's other edits are in
    when it writes part of the path, else the one that writes the most of it (the last applied)."""
    from gpulint.render.kustomizesite import position

    best = None
    for layer in ([chosen] if chosen is not None else []) + list(found.found):
        at = position(layer, rel, built)
        if at is None:
            continue
        path, matched = at
        if layer is chosen and matched > 0:
            best = (layer, path, matched)
            break
        if best is None or matched > best[2]:
            best = (layer, path, matched)
    if best is None or best[2] == 0 and best[0].what != "resource":
        raise NoFix("no file of the kustomization writes the part of the object it adds to")
    layer, path, matched = best
    rest = rel[matched:]
    if any(not isinstance(step, str) for step in rest):
        raise NoFix("the list it adds to is not written in one file")
    return layer, path + rest


def _shifts(found: Any, rel: tuple) -> None:
    """NoFix when a JSON patch addresses the list `rel` deletes an item of at or after that item."""
    listed, index = rel[:-1], rel[-1]
    for pointer, display, line in found.pointers:
        if len(pointer) > len(listed) and pointer[:len(listed)] == listed and isinstance(pointer[len(listed)], int) \
                and pointer[len(listed)] >= index:
            raise NoFix(f"the JSON patch at {display}:{line} addresses that list by index, and deleting the "
                        "item would shift it")


