"""Kustomize: build with origin annotations, map objects back to resource and patch files.

The target is built through a throw-away wrapper kustomization in a temporary
directory (`resources: [<relative path to the target>]`, `buildMetadata:
[originAnnotations]`), so the user's files are never touched and the default
load restrictor still applies: a kustomization directory may sit outside the
wrapper, which is exactly how overlays reach `../base`. Kustomize then writes
`config.kubernetes.io/origin` on each object; gpulint records it and removes
the annotation from the text before any rule runs, so rendered positions are
those of a plain `kustomize build DIR`.

Before any build, every kustomization the target reaches is audited (kustomizefile.audit):
one naming a remote resource, base, component or Helm chart is not built at all
(nothing is fetched), nor one that names (itself or through a generator, transformer
or validator configuration, in a file, inline or in a directory) a path that resolves
outside the repository, nor one gpulint cannot read exactly as kustomize would (a YAML
tag such as `!!binary`, text that does not decode or parse). A build runs only with
kustomize's default load restrictor, never retried in a less restricted mode. A
kustomization that is not built, or whose build fails, is scanned the way a chart that
does not render is: its local resource and patch files as they are, their findings at
their own severity, and ONE GPU010 that says why. When the build fails, the plain build
is run to report the tool's own message (the wrapper's indirection would only add
noise); a kustomization that builds plainly but not through the wrapper is scanned
without origins.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from gpulint.api import KeyAt, TextAt, ValueAt
from gpulint.load.decode import BinaryInput, DecodeError, decode
from gpulint.load.locations import Span
from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import ORIGIN_ANNOTATION, KubeObject, parse_origin
from gpulint.render import kustomizefile as kz
from gpulint.render.boundary import repository_root
from gpulint.render.base import (
    Rendered,
    RenderFailure,
    RenderOptions,
    join_display,
    rendered_name,
)
from gpulint.render.tools import (
    ToolMissing,
    ancestor_paths,
    real_path,
    replace_paths,
    run,
    scratch_dir,
    which,
)
from gpulint.results.findings import STATUS_ERROR, MappedLocation

# What kustomize says when a kustomization reads a file outside its folder (LoadRestrictionsRootOnly).
_RESTRICTOR_MARK = "' is not in or below '"
INSTALL_HINT = ("install kubectl (it includes `kubectl kustomize`) or kustomize, or pass --kustomize PATH, "
                "or build it yourself: `kubectl kustomize {dir} | gpulint scan -`")


def _argv(tool: str, directory: str) -> list[str]:
    if Path(tool).name.startswith("kubectl"):
        return [tool, "kustomize", directory]
    return [tool, "build", directory]


def render_kustomization(real: Path, display: str, options: RenderOptions) -> Rendered:
    name = rendered_name(display)
    file = kz.kustomization_file(real)
    file_display = join_display(display, file.name if file else kz.KUSTOMIZATION_FILES[0])
    target = real_path(real)
    repository = repository_root(target, options.scan_roots)
    found = kz.audit(target, repository)
    if found.root_outside:
        return Rendered(name, failure=RenderFailure(
            f"not built: {Path(file_display).name} is a symbolic link to outside the repository (gpulint "
            "reads nothing outside the repository it scans)", file_display, Span(1, 1, 1, 1), STATUS_ERROR))
    if found.remote or found.outside or found.unreadable:
        return _not_built(name, display, target, found)
    try:
        tool = which(options.kustomize, "kustomize", "kubectl")
    except ToolMissing as missing:
        return _fallback(name, display, target, found,
                         f"Kustomization not built: {missing}; {INSTALL_HINT.format(dir=display)}", None)
    with scratch_dir() as scratch_name:
        scratch = Path(scratch_name).resolve()
        wrapper = scratch / "wrapper"
        wrapper.mkdir()
        relative = os.path.relpath(target, wrapper)
        (wrapper / "kustomization.yaml").write_text(
            "# Written by gpulint: builds the target with origin annotations.\n"
            f"resources:\n- {_quote(relative)}\n"
            "buildMetadata:\n- originAnnotations\n", encoding="utf-8")
        result = run(_argv(tool, str(wrapper)), None, options.timeout, scratch, options.memory)
        if result.ok:
            text, origins = strip_origins(result.stdout, wrapper, target, display)
            return Rendered(name, text, KustomizeMapper(target, display, origins, found.repository),
                            sources=found.digest())
        plain = result if result.timed_out else run(_argv(tool, str(real)), None, options.timeout, scratch,
                                                    options.memory)
        if plain.ok:
            text, origins = strip_origins(plain.stdout, wrapper, target, display)
            return Rendered(name, text, KustomizeMapper(target, display, origins, found.repository),
                            sources=found.digest())
        message = replace_paths(plain.message, [(str(scratch), "(temporary directory)"), (str(target), display),
                                                *ancestor_paths(target, display, repository)])
        if _RESTRICTOR_MARK in message:
            message += ("; kustomize reads no file outside the kustomization's folder (its load restrictor): "
                        "list the folder holding it, made a kustomization, instead (gpulint never builds "
                        "with --load-restrictor LoadRestrictionsNone)")
    return _fallback(name, display, target, found, f"kustomize build failed: {message}", message)


def _fallback(name: str, display: str, target: Path, found: kz.Audit, why: str, message: str | None) -> Rendered:
    """A kustomization that could not be built, scanned as a chart that does not render is: its
    local resource and patch files as they are (their findings keep their severity) and ONE
    GPU010 saying so, at the entry kustomize names when it names one."""
    plain = _plain_files(display, target, found)
    scanned = ("its local resources and patches were scanned as they are" if plain
               else "it has no local resource or patch file to scan")
    k = found.reached[0] if found.reached else None
    span = _failure_span(message or "", found)
    file = join_display(display, os.path.relpath(k.file, target)) if k is not None else \
        join_display(display, kz.KUSTOMIZATION_FILES[0])
    doc = k.doc if k is not None else None
    problem = RenderFailure(f"{why}; {scanned}", file, span, STATUS_ERROR, doc.text if doc is not None else None,
                            doc.line_offset if doc is not None else 0)
    return Rendered(name, problems=[problem], plain=plain, sources=found.digest())


def _plain_files(display: str, target: Path, found: kz.Audit) -> list[tuple[str, Path, str | None]]:
    plain: list[tuple[str, Path, str | None]] = [
        (join_display(display, os.path.relpath(path, target)), path, None) for path in found.manifests()]
    plain += [(join_display(display, os.path.relpath(file, target)), file, text) for file, text in found.inline()]
    return plain


_NAMED_RE = re.compile(r"accumulating resources from '([^']+)'")


def _failure_span(message: str, found: kz.Audit) -> Span:
    """The entry of the kustomization file that kustomize names (`accumulating resources from 'x'`)."""
    match = _NAMED_RE.search(message)
    if match and found.reached:
        for ref in kz.references(found.reached[0]):
            if ref.text == match.group(1):
                return ref.span()
    return Span(1, 1, 1, 1)


def _not_built(name: str, display: str, target: Path, found: kz.Audit) -> Rendered:
    """A kustomization that would fetch or read outside the repository is not built: each
    kustomization naming such a reference is reported once, and the resource and patch files
    of every local kustomization are scanned as they are, so a bypass in them is still found."""
    plain = _plain_files(display, target, found)
    scanned = ("its local resources and patches were scanned as they are" if plain
               else "it has no local resource or patch file to scan")
    problems: list[RenderFailure] = []
    for refs in found.remote:
        urls = ", ".join(ref.text for ref in refs[:3]) + (f" and {len(refs) - 3} more" if len(refs) > 3 else "")
        what = "remote resource" if len(refs) == 1 else "remote resources"
        problems.append(_problem(f"{what} not fetched: {urls} (gpulint never fetches, so the kustomization was "
                                 f"not built; {scanned}; build it yourself: "
                                 f"`kubectl kustomize {display} | gpulint scan -`)", display, target, refs[0]))
    by_owner: dict[Path, list[kz.Reference]] = {}
    for ref in found.outside:
        by_owner.setdefault(ref.owner.file, []).append(ref)
    for refs in by_owner.values():
        paths = ", ".join(ref.text for ref in refs)
        problems.append(_problem(f"not built: it reads {paths}, which resolves outside the repository "
                                 f"(gpulint reads nothing outside the repository it scans); {scanned}",
                                 display, target, refs[0]))
    for ref, why in found.unreadable:
        problems.append(_problem(f"not built: {why}, which gpulint cannot check the way kustomize would read it "
                                 f"(it builds only what it has checked); {scanned}", display, target, ref))
    return Rendered(name, problems=problems, plain=plain, sources=found.digest())


def _problem(message: str, display: str, target: Path, ref: kz.Reference) -> RenderFailure:
    file = join_display(display, os.path.relpath(ref.owner.file, target))
    doc = ref.owner.doc
    return RenderFailure(message, file, ref.span(), STATUS_ERROR, doc.text if doc is not None else None,
                         doc.line_offset if doc is not None else 0)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --- origin annotations -----------------------------------------------------------


class Origin:
    """Where kustomize says an object came from, as a real file and a display path."""

    def __init__(self, file: Path | None, display: str | None, generated_by: str | None = None) -> None:
        self.file = file
        self.display = display
        self.generated_by = generated_by


def strip_origins(text: str, wrapper: Path, target: Path, display: str) -> tuple[str, dict[int, Origin]]:
    """Remove the origin annotations from the build output; return them by document index."""
    lines = text.split("\n")
    drop: set[int] = set()
    origins: dict[int, Origin] = {}
    for doc in load_documents(text):
        if not isinstance(doc, Document) or not isinstance(doc.data, dict):
            continue
        meta = doc.data.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(annotations, dict) or not isinstance(annotations.get(ORIGIN_ANNOTATION), str):
            continue
        origins[doc.index] = _origin(parse_origin(annotations[ORIGIN_ANNOTATION]) or {}, wrapper, target, display)
        key = doc.span(("metadata", "annotations", ORIGIN_ANNOTATION), key=True)
        if key is None:
            continue
        first = key.line - 1
        block = _block_lines(lines, first)
        if len(annotations) == 1:
            parent = doc.span(("metadata", "annotations"), key=True)
            if parent is not None and parent.line - 1 == first - 1:
                block.add(first - 1)
        drop |= block
    if not drop:
        return text, origins
    return "\n".join(line for i, line in enumerate(lines) if i not in drop), origins


def _block_lines(lines: list[str], first: int) -> set[int]:
    """The key line and every following line indented deeper (its value)."""
    indent = len(lines[first]) - len(lines[first].lstrip(" "))
    out = {first}
    for i in range(first + 1, len(lines)):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
            break
        out.add(i)
    while len(out) > 1 and not lines[max(out)].strip():
        out.discard(max(out))
    return out


def _origin(data: dict, wrapper: Path, target: Path, display: str) -> Origin:
    if isinstance(data.get("repo"), str):
        repo = data["repo"]
        path = data.get("path") if isinstance(data.get("path"), str) else ""
        return Origin(None, f"{repo}/{path}".rstrip("/"))
    for key in ("path", "configuredIn"):
        value = data.get(key)
        if isinstance(value, str) and value:
            real = Path(os.path.normpath(wrapper / value))
            if real == wrapper / "kustomization.yaml":
                return Origin(None, None)
            shown = join_display(display, os.path.relpath(real, target))
            by = data.get("configuredBy")
            generator = by.get("kind") if key == "configuredIn" and isinstance(by, dict) else None
            return Origin(real, shown, generator if isinstance(generator, str) else None)
    return Origin(None, None)


# --- mapping ----------------------------------------------------------------------


class KustomizeMapper:
    """Maps built objects to the patch that set a value, or else to their resource file."""

    def __init__(self, root: Path, display: str, origins: dict[int, Origin], repository: Path | None = None) -> None:
        self._root = root
        self.repository = repository or root   # what the audit allowed the build to read
        self._display = display
        self._origins = origins
        self._chain: list[kz.Kustomization] | None = None
        self._docs: dict[Path, list[Document]] = {}

    def prepare(self, obj: KubeObject) -> None:
        origin = self._origins.get(obj.doc.index)
        if origin is not None and origin.display is not None:
            obj.origin = {"path": origin.display}
            if origin.generated_by:
                obj.origin["configuredBy"] = origin.generated_by

    def map(self, obj: KubeObject, where: Any) -> list[MappedLocation]:
        if not isinstance(where, (KeyAt, ValueAt, TextAt)):
            return []
        rel = tuple(where.path)[len(obj.base):]
        key = isinstance(where, KeyAt)
        out: list[MappedLocation] = []
        for patch_loc in self._patch_locations(obj, rel, key):
            out.append(patch_loc)
            break
        origin = self._origins.get(obj.doc.index)
        if origin is not None and origin.file is not None and origin.display is not None:
            if origin.generated_by:
                out.append(MappedLocation("origin", origin.display, Span(1, 1, 1, 1),
                                          f"kustomization whose {origin.generated_by} generated the object"))
            else:
                # After a patch that set the value, the resource only adds to it when it has the node too.
                found = self._in_file(origin.file, origin.display, obj, rel, key, "resource", exact=bool(out))
                if found is not None:
                    out.append(found)
        return out

    def _patch_locations(self, obj: KubeObject, rel: tuple, key: bool) -> list[MappedLocation]:
        out: list[MappedLocation] = []
        for k in self._kustomizations():
            for patch in reversed(k.patches()):
                if patch.target and not _selects(patch.target, obj):
                    continue
                display = self._display_of(k.file if patch.file is None else patch.file)
                if patch.file is not None:
                    found = (self._in_json6902(patch.file, display, obj, rel, key)
                             if patch.json6902 or _is_json6902_file(self._load(patch.file))
                             else self._in_file(patch.file, display, obj, rel, key, "patch", exact=True,
                                                match_name=not patch.target))
                else:
                    found = self._in_inline(k, patch, display, obj, rel, key)
                if found is not None:
                    out.append(found)
        return out

    def _kustomizations(self) -> list[kz.Kustomization]:
        if self._chain is None:
            self._chain = kz.chain(self._root)
        return self._chain

    def _display_of(self, real: Path) -> str:
        return join_display(self._display, os.path.relpath(real, self._root))

    def _load(self, file: Path) -> list[Document]:
        if file not in self._docs:
            try:
                text = decode(file.read_bytes())
            except (OSError, BinaryInput, DecodeError):
                text = ""
            self._docs[file] = [d for d in load_documents(text) if isinstance(d, Document)]
        return self._docs[file]

    def _in_file(self, file: Path, display: str, obj: KubeObject, rel: tuple, key: bool, what: str,
                 exact: bool = False, match_name: bool = True) -> MappedLocation | None:
        docs = [d for d in self._load(file) if _same_object(d.data, obj, match_name)]
        if match_name:   # a document named as the built object, before one whose name it only contains
            docs = [d for d in docs if d.data["metadata"]["name"] == obj.ref.name] or docs
        if not docs and not exact:
            docs = [d for d in self._load(file) if isinstance(d.data, dict) and d.data.get("kind") == obj.ref.kind]
        best: tuple[int, Document, tuple] | None = None
        for doc in docs:
            path, complete = align(doc.data, rel, obj.data)
            if complete:
                best = (len(rel) + 1, doc, path)
                break
            if best is None or len(path) > best[0]:
                best = (len(path), doc, path)
        if best is None:
            return None
        _score, doc, path = best
        complete = len(path) == len(rel) and _exists(doc.data, path)
        if exact and not complete:
            return None
        span = _span(doc, path, key and complete)
        description = f"kustomize {what}" if complete else f"kustomize {what}, nearest line"
        return MappedLocation("origin", display, span, description)

    def _in_json6902(self, file: Path, display: str, obj: KubeObject, rel: tuple,
                     key: bool) -> MappedLocation | None:
        for doc in self._load(file):
            found = _json6902_hit(doc, (), rel, obj.data, key)
            if found is not None:
                return MappedLocation("origin", display, found, "kustomize JSON patch")
        return None

    def _in_inline(self, k: kz.Kustomization, patch: kz.Patch, display: str, obj: KubeObject,
                   rel: tuple, key: bool) -> MappedLocation | None:
        doc = k.doc
        if doc is None:
            return None
        text = _value(doc.data, patch.inline_path)
        if not isinstance(text, str):
            return None
        # (a final newline keeps collection ends on the last line of `|-` text)
        inner = [d for d in load_documents(text if text.endswith("\n") else text + "\n") if isinstance(d, Document)]
        for d in inner:
            if patch.json6902 or isinstance(d.data, list):
                hit = _json6902_hit(d, (), rel, obj.data, key)
            else:
                if not _same_object(d.data, obj, not patch.target):
                    continue
                path, complete = align(d.data, rel, obj.data)
                hit = _span(d, path, key) if complete else None
            if hit is None:
                continue
            return MappedLocation("origin", display, _inline_to_file(doc, patch.inline_path, hit),
                                  "kustomize inline patch")
        return None


def _is_json6902_file(docs: list[Document]) -> bool:
    return bool(docs) and isinstance(docs[0].data, list) and all(
        isinstance(op, dict) and "op" in op for op in docs[0].data)


def _same_object(data: Any, obj: KubeObject, match_name: bool) -> bool:
    if not isinstance(data, dict) or data.get("kind") != obj.ref.kind:
        return False
    if not match_name:
        return True
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    # namePrefix/nameSuffix change the built name around the original one.
    return isinstance(name, str) and bool(name) and name in obj.ref.name


def _selects(target: dict, obj: KubeObject) -> bool:
    import re

    if isinstance(target.get("kind"), str) and target["kind"] != obj.ref.kind:
        return False
    name = target.get("name")
    if isinstance(name, str) and name:
        try:
            if not re.search(name, obj.ref.name):
                return False
        except re.error:
            return name in obj.ref.name
    return True


# --- aligning a rendered path with a source document ----------------------------

_MERGE_KEYS = ("name", "mountPath", "containerPort", "devicePath", "ip", "key", "topologyKey")


def align(source: Any, rel: tuple, rendered: Any) -> tuple[tuple, bool]:
    """The path in `source` of the node at `rel` in `rendered`; list items matched by merge key."""
    out: list = []
    for step in rel:
        r_child = rendered[step] if _has(rendered, step) else None
        if isinstance(step, int):
            if not isinstance(source, list):
                return tuple(out), False
            index = _match_item(source, r_child, step, rendered)
            if index is None:
                return tuple(out), False
            out.append(index)
            source = source[index]
        else:
            if not isinstance(source, dict) or step not in source:
                return tuple(out), False
            out.append(step)
            source = source[step]
        rendered = r_child
    return tuple(out), True


def _has(data: Any, step: Any) -> bool:
    if isinstance(step, int):
        return isinstance(data, list) and 0 <= step < len(data)
    return isinstance(data, dict) and step in data


def _match_item(source: list, item: Any, index: int, rendered_list: Any) -> int | None:
    if isinstance(item, dict):
        for merge_key in _MERGE_KEYS:
            if merge_key in item:
                for i, candidate in enumerate(source):
                    if isinstance(candidate, dict) and candidate.get(merge_key) == item[merge_key]:
                        return i
                return None
    for i, candidate in enumerate(source):
        if candidate == item:
            return i
    if isinstance(rendered_list, list) and len(rendered_list) == len(source):
        return index
    return None


def _exists(data: Any, path: tuple) -> bool:
    for step in path:
        if not _has(data, step):
            return False
        data = data[step]
    return True


def _value(data: Any, path: tuple) -> Any:
    for step in path:
        if not _has(data, step):
            return None
        data = data[step]
    return data


def _span(doc: Document, path: tuple, key: bool) -> Span:
    if key and path and isinstance(path[-1], str):
        found = doc.span(path, key=True)
        if found is not None:
            return found
    found = doc.span(path)
    return found if found is not None else Span(doc.line_offset + 1, 1, doc.line_offset + 1, 1)


def _json6902_hit(doc: Document, base: tuple, rel: tuple, rendered: Any, key: bool = False) -> Span | None:
    """The value of the last add/replace operation whose path covers `rel`."""
    ops = doc.data
    if not isinstance(ops, list):
        return None
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if not isinstance(op, dict) or op.get("op") not in ("add", "replace") or not isinstance(op.get("path"), str):
            continue
        pointer = _pointer(op["path"])
        if len(pointer) > len(rel):
            continue
        if not all(p == r or (p == "-" and isinstance(r, int)) for p, r in zip(pointer, rel)):
            continue
        remainder = rel[len(pointer):]
        rendered_at = _value(rendered, rel[: len(pointer)])
        path, complete = align(op.get("value"), remainder, rendered_at)
        where = base + (i, "value") + (path if complete else ())
        if key and complete and path and isinstance(path[-1], str):
            return doc.span(where, key=True) or doc.span(where)
        if key and complete and not path and pointer and isinstance(pointer[-1], str):
            return doc.span(base + (i, "path")) or doc.span(where)   # the key is named in the op's path
        return doc.span(where) or doc.span(base + (i,))
    return None


def _pointer(text: str) -> tuple:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in text.lstrip("/").split("/")] if text != "/" else []
    return tuple(int(p) if p.isdigit() else p for p in parts)


def _inline_to_file(doc: Document, path: tuple, inner: Span) -> Span:
    """A position inside an inline patch (a block scalar) -> the kustomization file."""
    node = doc.node(path)
    if node is None:
        return doc.span(path) or Span(1, 1, 1, 1)
    if node.style not in ("|", ">"):
        return node.span
    first = node.span.line + 1                 # content starts on the line after `|`
    line = first + inner.line - 1
    lines = doc.text.split("\n")
    index = first - 1 - doc.line_offset        # the first content line sets the block's indentation
    indent = len(lines[index]) - len(lines[index].lstrip(" ")) if 0 <= index < len(lines) else 0
    return Span(line, indent + inner.column, line + inner.end_line - inner.line, indent + inner.end_column)
