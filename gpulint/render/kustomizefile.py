"""Reading kustomization files: what they reference, and which ones are roots.

Discovery uses this to build each kustomization once and not scan its inputs
again as loose files; the Kustomize mapper uses it to find the patches that may
have set a value.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

from gpulint.load import events
from gpulint.load.decode import BinaryInput, DecodeError, decode
from gpulint.load.locations import Span
from gpulint.load.regular import read_regular
from gpulint.load.yamlload import Document, LoadError, event_reader, load_documents
from gpulint.record import record
from gpulint.render.tools import real_path, value_at

AUDIT_READ_MAX = 8 << 20     # a kustomization or generator configuration larger than this is not built

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomization_file(directory: Path) -> Path | None:
    for name in KUSTOMIZATION_FILES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


_SCP_RE = re.compile(r"^[\w.-]+@[\w.-]+:")              # git@github.com:org/repo, scp-like
_HOST_RE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?/")  # example.com/org/repo (no scheme)


def is_remote(ref: str) -> bool:
    """Git URLs and HTTP resources are fetched by kustomize, never by gpulint."""
    lower = ref.lower()
    return ("://" in lower or lower.startswith(("git@", "git::", "gh:", "github.com/", "gitlab.com/",
                                                "bitbucket.org/"))
            or bool(_SCP_RE.match(lower)) or any(q in lower for q in ("?ref=", "?version=", "?timeout=",
                                                                       "?submodules="))
            or "//" in ref.split("?", 1)[0].lstrip("/"))


def looks_like_host(ref: str) -> bool:
    """`example.com/org/repo`: a remote target when no such local path exists."""
    return bool(_HOST_RE.match(ref.lower()))


@record(eq=True, repr=True)
class Patch:
    """A patch a kustomization applies: a file, or inline text inside the kustomization file."""

    __slots__ = ("file", "inline_path", "target", "json6902")
    file: Path | None               # the patch file, when not inline
    inline_path: tuple              # path of the inline text inside the kustomization document
    target: dict                    # the `target` selector, if any
    json6902: bool

    def __init__(self, file: Path | None, inline_path: tuple = (), target: dict | None = None,
                 json6902: bool = False) -> None:
        self.file = file
        self.inline_path = inline_path
        self.target = {} if target is None else target
        self.json6902 = json6902


@record(eq=True, repr=True)
class Kustomization:
    __slots__ = ("directory", "file", "doc")
    directory: Path                 # resolved
    file: Path
    doc: Document | None

    def __init__(self, directory: Path, file: Path, doc: Document | None) -> None:
        self.directory = directory
        self.file = file
        self.doc = doc

    @property
    def data(self) -> dict:
        return self.doc.data if self.doc is not None and isinstance(self.doc.data, dict) else {}

    @property
    def is_component(self) -> bool:
        return self.data.get("kind") == "Component"

    def _local(self, refs: Iterable[Any]) -> list[Path]:
        out = []
        for ref in refs:
            if isinstance(ref, str) and ref and not is_remote(ref):
                out.append(Path(os.path.normpath(self.directory / ref)))
        return out

    def resource_dirs(self) -> list[Path]:
        """Other kustomizations this one builds on: resources, bases and components that are directories."""
        data = self.data
        refs = self._local(_strings(data.get("resources")) + _strings(data.get("bases"))
                           + _strings(data.get("components")))
        return [p for p in refs if p.is_dir()]

    def component_dirs(self) -> list[Path]:
        return [p for p in self._local(_strings(self.data.get("components"))) if p.is_dir()]

    def referenced_files(self) -> set[Path]:
        """Every local file this kustomization reads (resources, patches, generator inputs, ...)."""
        data = self.data
        refs: list[str] = []
        for key in ("resources", "bases", "crds", "configurations", "generators", "transformers", "validators"):
            refs += _strings(data.get(key))
        refs += [s for s in _strings(data.get("patchesStrategicMerge")) if "\n" not in s]
        for key in ("patches", "patchesJson6902", "replacements"):
            for entry in _list(data.get(key)):
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    refs.append(entry["path"])
        for key in ("configMapGenerator", "secretGenerator"):
            for entry in _list(data.get(key)):
                if not isinstance(entry, dict):
                    continue
                for item in _strings(entry.get("files")):
                    refs.append(item.split("=", 1)[-1])
                refs += _strings(entry.get("envs"))
                if isinstance(entry.get("env"), str):
                    refs.append(entry["env"])
        openapi = data.get("openapi")
        if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
            refs.append(openapi["path"])
        return {p for p in self._local(refs) if p.is_file()} | {real_path(self.file)}

    def object_files(self) -> set[Path]:
        """The files whose lines a finding on the build can point at: resources, patches and the
        kustomization file itself (inline patches). Generator inputs and configurations shape the
        output without a line of it coming from them."""
        data = self.data
        refs = _strings(data.get("resources")) + _strings(data.get("bases"))
        refs += [s for s in _strings(data.get("patchesStrategicMerge")) if "\n" not in s]
        for key in ("patches", "patchesJson6902"):
            refs += [entry["path"] for entry in _list(data.get(key))
                     if isinstance(entry, dict) and isinstance(entry.get("path"), str)]
        return {p for p in self._local(refs) if p.is_file()} | {real_path(self.file)}

    def patches(self) -> list[Patch]:
        """Patches in the order kustomize applies them (later ones win)."""
        data = self.data
        out: list[Patch] = []
        for i, entry in enumerate(_list(data.get("patchesStrategicMerge"))):
            if isinstance(entry, str) and "\n" not in entry and not is_remote(entry):
                out.append(Patch(Path(os.path.normpath(self.directory / entry))))
            elif isinstance(entry, str):
                out.append(Patch(None, ("patchesStrategicMerge", i)))
        for key, json6902 in (("patchesJson6902", True), ("patches", False)):
            for i, entry in enumerate(_list(data.get(key))):
                if not isinstance(entry, dict):
                    continue
                target = entry.get("target") if isinstance(entry.get("target"), dict) else {}
                if isinstance(entry.get("path"), str) and not is_remote(entry["path"]):
                    out.append(Patch(Path(os.path.normpath(self.directory / entry["path"])), (), target, json6902))
                elif isinstance(entry.get("patch"), str):
                    out.append(Patch(None, (key, i, "patch"), target, json6902))
        return out


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    return [v for v in _list(value) if isinstance(v, str)]


def load(directory: Path) -> Kustomization | None:
    file = kustomization_file(directory)
    if file is None:
        return None
    doc = None
    try:
        text = decode(read_regular(file, AUDIT_READ_MAX))
    except (OSError, BinaryInput, DecodeError):
        text = ""
    for item in load_documents(text):
        if isinstance(item, Document):
            doc = item
        break
    return Kustomization(real_path(directory), file, doc)


@record(eq=True, repr=True)
class Plan:
    """Which kustomizations of a scan to build, and which files they consume."""

    __slots__ = ("roots", "consumed")
    roots: list[Path]               # resolved directories, in discovery order
    consumed: set[Path]             # resolved files read by a built kustomization

    def __init__(self, roots: list[Path], consumed: set[Path]) -> None:
        self.roots = roots
        self.consumed = consumed


def plan(directories: list[Path]) -> Plan:
    """Roots are the kustomizations no other kustomization of the scan builds on.

    Components are never roots (they cannot be built alone). Files a built
    kustomization reads, directly or through the kustomizations it builds on,
    are consumed: they are scanned through the build, not again as loose files.
    """
    loaded = {real_path(d): k for d in directories if (k := load(d)) is not None}
    referenced: set[Path] = set()
    for k in loaded.values():
        referenced.update(real_path(p) for p in k.resource_dirs())
    roots = [d for d, k in loaded.items() if d not in referenced and not k.is_component]
    reached = _reach(roots, loaded)
    # A cycle leaves kustomizations unreached: build them rather than lose them.
    for d, k in loaded.items():
        if d not in reached and not k.is_component:
            roots.append(d)
            reached |= _reach([d], loaded)
    consumed: set[Path] = set()
    for d in reached:
        k = loaded.get(d)
        if k is not None:
            consumed |= {real_path(p) for p in k.referenced_files()}
    return Plan(roots, consumed)


def files_read(root: Path) -> tuple[set[Path], set[Path]]:
    """Every local file building `root` reads, and those of them a finding can point at
    (Kustomization.object_files); resolved, from `root` and the kustomizations it builds on
    inside its repository."""
    read: set[Path] = set()
    pointed: set[Path] = set()
    for directory in _reach([real_path(root)], {}):
        k = load(directory)
        if k is not None:
            read |= {real_path(p) for p in k.referenced_files()}
            pointed |= {real_path(p) for p in k.object_files()}
    return read, pointed


def _reach(starts: list[Path], loaded: dict[Path, Kustomization]) -> set[Path]:
    """Kustomizations the starts build on; one that was not discovered is read only inside the
    start's repository (see render.boundary)."""
    from gpulint.render.boundary import inside, repository_root

    seen: set[Path] = set()
    for start in starts:
        bound = repository_root(start)
        todo = [start]
        while todo:
            d = todo.pop()
            if d in seen:
                continue
            seen.add(d)
            k = loaded.get(d) or (load(d) if inside(d, bound) else None)
            if k is not None:
                todo.extend(real_path(p) for p in k.resource_dirs())
    return seen


def chain(root: Path) -> list[Kustomization]:
    """The root and every local kustomization it builds on, outermost first."""
    out: list[Kustomization] = []
    seen: set[Path] = set()

    def visit(directory: Path) -> None:
        directory = real_path(directory)
        if directory in seen:
            return
        seen.add(directory)
        k = load(directory)
        if k is None:
            return
        out.append(k)
        for component in reversed(k.component_dirs()):
            visit(component)
        for sub in reversed(k.resource_dirs()):
            visit(sub)

    visit(root)
    return out


# --- before a build: what it would fetch and read -----------------------------------

# Fields whose strings name files or directories the build reads (each a list of strings).
_PATH_LISTS = ("resources", "bases", "components", "crds", "configurations", "generators", "transformers",
               "validators")
_PATH_ENTRIES = ("patches", "patchesJson6902", "replacements")   # lists of {path: ...}
_GENERATORS = ("configMapGenerator", "secretGenerator")
_MANIFEST_LISTS = ("resources", "bases", "patchesStrategicMerge")  # files holding objects or merge patches


@record(eq=True, repr=True)
class Reference:
    """A file, directory or URL a kustomization names, and where it names it."""

    __slots__ = ("owner", "text", "where", "at")
    owner: Kustomization
    text: str                       # as written (for a generator file `key=path`, the path)
    where: tuple                    # path of the string in the kustomization document
    at: Span | None                 # where it is, when not at `where` (a tag, a configuration's entry)

    def __init__(self, owner: Kustomization, text: str, where: tuple, at: Span | None = None) -> None:
        self.owner = owner
        self.text = text
        self.where = where
        self.at = at

    def span(self) -> Span:
        if self.at is not None:
            return self.at
        found = self.owner.doc.span(self.where) if self.owner.doc is not None else None
        return found if found is not None else Span(1, 1, 1, 1)


@record(eq=True, repr=True)
class Audit:
    """What building a kustomization would read, found before the build runs."""

    __slots__ = ("repository", "reached", "remote", "outside", "unreadable", "root_outside", "configs")
    repository: Path
    reached: list[Kustomization]        # local kustomizations, outermost first
    remote: list[list[Reference]]       # per kustomization naming URLs
    outside: list[Reference]            # local paths outside the repository
    # What gpulint cannot read as kustomize would (a YAML tag, text that does not decode or parse, a
    # file that is no regular file): never built, since the audit could not see what the build reads.
    unreadable: list[tuple[Reference, str]]
    root_outside: bool                  # the kustomization file itself links out of the repository
    configs: list[Path]                 # generator/transformer/validator files read

    def __init__(self, repository: Path, reached: list[Kustomization] | None = None,
                 remote: list[list[Reference]] | None = None, outside: list[Reference] | None = None,
                 unreadable: list[tuple[Reference, str]] | None = None, root_outside: bool = False,
                 configs: list[Path] | None = None) -> None:
        self.repository = repository
        self.reached = [] if reached is None else reached
        self.remote = [] if remote is None else remote
        self.outside = [] if outside is None else outside
        self.unreadable = [] if unreadable is None else unreadable
        self.root_outside = root_outside
        self.configs = [] if configs is None else configs

    def digest(self) -> str:
        """A SHA-256 of every file the audit found the build reads (names and bytes): a result
        cache keys the render by it, so an edit that leaves the built text the same (a patch
        moved down a line) is still a new key (the mapped lines changed)."""
        import hashlib

        files: set[Path] = set(self.configs)
        for k in self.reached:
            files |= k.referenced_files()
        digest = hashlib.sha256()
        for path in sorted(files):
            digest.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
            try:
                data = read_regular(path, AUDIT_READ_MAX)
            except OSError as error:
                data = f"\0unread {type(error).__name__}".encode()
            digest.update(len(data).to_bytes(8, "little") + data)
        return digest.hexdigest()

    def inline(self) -> list[tuple[Path, str]]:
        """(kustomization file, text holding one of its inline patches) of every reached kustomization."""
        return [(k.file, text) for k in self.reached for text in inline_patches(k)]

    def manifests(self) -> list[Path]:
        """Local resource and patch files of every reached kustomization (what a reviewer would read)."""
        out: list[Path] = []
        for k in self.reached:
            for ref in references(k):
                if ref.where[0] in _MANIFEST_LISTS + ("patches",) and not is_remote(ref.text):
                    path = real_path(Path(os.path.normpath(k.directory / ref.text)))
                    if path.is_file() and _inside(path, self.repository) and path not in out:
                        out.append(path)
        return out


def inline_patches(k: Kustomization) -> list[str]:
    """For each literal-block (`|`) inline patch, the kustomization file's text with only that
    patch left, at its own lines and columns (a block indented as a whole is still YAML)."""
    doc = k.doc
    if doc is None:
        return []
    data = k.data
    paths = [("patchesStrategicMerge", i) for i, item in enumerate(_list(data.get("patchesStrategicMerge")))
             if isinstance(item, str) and "\n" in item]
    for key in ("patches", "patchesJson6902"):
        paths += [(key, i, "patch") for i, entry in enumerate(_list(data.get(key)))
                  if isinstance(entry, dict) and isinstance(entry.get("patch"), str) and "\n" in entry["patch"]]
    lines = doc.text.split("\n")
    out: list[str] = []
    for path in paths:
        node = doc.node(path)
        value = value_at(data, path)
        if node is None or node.style != "|" or not isinstance(value, str):
            continue
        body = value.rstrip("\n").split("\n")
        first = node.span.line - doc.line_offset        # content starts on the line after `|`
        window = lines[first:first + len(body)]
        if len(window) == len(body) and all(a.strip() == b.strip() for a, b in zip(window, body)):
            kept = range(first, first + len(body))
            out.append("\n" * doc.line_offset + "\n".join(line if i in kept else ""
                                                           for i, line in enumerate(lines)))
    return out




def references(k: Kustomization) -> list[Reference]:
    """Every file, directory or URL `k` names in the fields kustomize reads files from."""
    data = k.data
    out: list[Reference] = []

    def add(text: Any, *where: Any) -> None:
        if isinstance(text, str) and text.strip() and "\n" not in text:
            out.append(Reference(k, text.strip(), where))

    for key in _PATH_LISTS + ("patchesStrategicMerge",):
        for i, item in enumerate(_list(data.get(key))):
            add(item, key, i)
    for key in _PATH_ENTRIES:
        for i, entry in enumerate(_list(data.get(key))):
            if isinstance(entry, dict):
                add(entry.get("path"), key, i, "path")
    for key in _GENERATORS:
        for i, entry in enumerate(_list(data.get(key))):
            if not isinstance(entry, dict):
                continue
            for j, item in enumerate(_list(entry.get("files"))):
                if isinstance(item, str):
                    add(item.split("=", 1)[-1], key, i, "files", j)
            for j, item in enumerate(_list(entry.get("envs"))):
                add(item, key, i, "envs", j)
            add(entry.get("env"), key, i, "env")
    openapi = data.get("openapi")
    if isinstance(openapi, dict):
        add(openapi.get("path"), "openapi", "path")
    for i, chart in enumerate(_list(data.get("helmCharts"))):
        if isinstance(chart, dict):
            if isinstance(chart.get("repo"), str) and chart["repo"].strip():
                name = chart.get("name") if isinstance(chart.get("name"), str) else ""
                repo = chart["repo"].strip().rstrip("/")
                url = repo if repo.startswith("oci://") or not name else f"{repo}/{name}"
                out.append(Reference(k, url if "://" in url else f"helm repository {url}", ("helmCharts", i, "repo")))
            add(chart.get("valuesFile"), "helmCharts", i, "valuesFile")
    globals_ = data.get("helmGlobals")
    if isinstance(globals_, dict):
        add(globals_.get("chartHome"), "helmGlobals", "chartHome")
    return out


def audit(root: Path, repository: Path) -> Audit:
    """Walk every kustomization the build of `root` reaches, reading nothing outside `repository`.

    Generator, transformer and validator configurations (files, inline text, and directories
    whose resources are configurations) are read too, with every string in them that names a
    path: kustomize reads what they name. Each file is read with gpulint's loader and refused
    where that loader could see something else than kustomize's (a tag, a decoding or parse
    error), so the audit and the build never disagree about what a file says."""
    result = Audit(repository)
    seen: set[Path] = set()
    # (directory, the reference reaching it, for a directory of configurations: the kustomization using them)
    todo: list[tuple[Path, Reference | None, Kustomization | None]] = [(real_path(root), None, None)]
    while todo:
        directory, via, holds_configs = todo.pop(0)
        if directory in seen:
            continue
        seen.add(directory)
        file = kustomization_file(directory)
        if file is not None and not _inside(real_path(file), repository):
            if via is not None:
                result.outside.append(via)       # its kustomization file links out of the repository
            else:
                result.root_outside = True
            continue
        k = load(directory)
        if k is None:
            continue
        result.reached.append(k)
        why = _unreadable_file(k.file)
        if why is not None:
            result.unreadable.append((Reference(k, k.file.name, (), why[1]), why[0]))
            continue
        remote: list[Reference] = []
        for ref in references(k):
            local = os.path.normpath(k.directory / ref.text)
            if (is_remote(ref.text) or ref.where[0] == "helmCharts" and ref.where[-1] == "repo"
                    or looks_like_host(ref.text) and not os.path.lexists(local)):
                remote.append(ref)
                continue
            target = real_path(Path(local))
            if not _inside(target, repository):
                if os.path.lexists(local):
                    result.outside.append(ref)
                continue
            if not os.path.lexists(local):
                continue
            if target.is_dir():
                if ref.where[0] in ("resources", "bases", "components"):
                    todo.append((target, ref, holds_configs))
                elif ref.where[0] in _CONFIG_LISTS:
                    todo.append((target, ref, k))     # a directory of configurations
                continue
            if not os.path.isfile(target):
                result.unreadable.append((ref, f"{ref.text} is no regular file (a named pipe, device or socket)"))
                continue
            if ref.where[0] in _CONFIG_LISTS or holds_configs is not None and ref.where[0] in ("resources", "bases"):
                result.configs.append(target)
                why = _unreadable_file(target)
                if why is not None:
                    result.unreadable.append((ref, f"{ref.text}: {why[0]}"))
                    continue
                user = holds_configs.directory if holds_configs is not None else k.directory
                _audit_config(_file_data(target), k, ref, result, remote, user)
        for key in _CONFIG_LISTS:   # inline configurations
            for i, item in enumerate(_list(k.data.get(key))):
                if isinstance(item, str) and "\n" in item:
                    ref = Reference(k, "(inline configuration)", (key, i))
                    why = _unreadable_text(item)
                    if why is not None:
                        result.unreadable.append((ref, f"its inline {key} entry {i + 1}: {why[0]}"))
                        continue
                    _audit_config([d.data for d in load_documents(item) if isinstance(d, Document)], k, ref,
                                  result, remote)
        if remote:
            result.remote.append(remote)
    return result


_CONFIG_LISTS = ("generators", "transformers", "validators")
# Keys of generator and transformer configurations that kustomize reads as a file, directory or URL.
_CONFIG_PATH_KEYS = {"files", "envs", "env", "path", "valuesFile", "chartHome", "repo", "additionalValuesFiles",
                     "resources", "crds", "paths"}
_PLAIN_TAGS = {None, "!", "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq",
               "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
               "tag:yaml.org,2002:null"}


def _unreadable_file(path: Path) -> tuple[str, Span] | None:
    try:
        text = decode(read_regular(path, AUDIT_READ_MAX))
    except (BinaryInput, DecodeError) as error:
        return f"it does not decode as text ({error})", Span(1, 1, 1, 1)
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})", Span(1, 1, 1, 1)
    return _unreadable_text(text)


def _unreadable_text(text: str) -> tuple[str, Span] | None:
    """Why gpulint's reading of `text` could differ from kustomize's (and where), or None."""
    for item in load_documents(text):
        if isinstance(item, LoadError):
            return f"it does not parse (line {item.line}: {item.message})", Span(item.line, item.column,
                                                                                  item.line, item.column + 1)
    try:
        with events.parsing():
            for event in events.through_end(event_reader(text)):
                tag = event[events.TAG] if event[events.KIND] in _NODE_KINDS else None
                if tag is not None and str(tag) not in _PLAIN_TAGS:
                    mark = event[events.START_MARK]
                    shown = str(tag).replace("tag:yaml.org,2002:", "!!")
                    return (f"it uses the YAML tag {shown} (line {mark.line + 1}), which kustomize reads "
                            "otherwise than gpulint",
                            Span(mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 1))
    except Exception:  # noqa: BLE001 - what libyaml refuses here, load_documents reported above
        return None
    return None


_NODE_KINDS = (events.SCALAR, events.MAP_START, events.SEQ_START)


def _audit_config(docs: list[Any], k: Kustomization, via: Reference, result: Audit,
                  remote: list[Reference], user: Path | None = None) -> None:
    """The strings of a generator/transformer/validator configuration that name a path (relative to
    the kustomization naming it, and to the one using it when that is another) or, under a key
    kustomize reads a file from, a URL."""
    for data in docs:
        for key, text in _strings_in(data):
            for candidate in {text, text.split("=", 1)[-1]}:
                candidate = candidate.strip()
                if not candidate:
                    continue
                if key in _CONFIG_PATH_KEYS and (is_remote(candidate) or key == "repo"):
                    remote.append(Reference(k, candidate, via.where, via.at))
                    break
                bases = {k.directory, user or k.directory}
                if not ("/" in candidate or candidate.startswith(".")
                        or any(os.path.islink(os.path.normpath(base / candidate)) for base in bases)):
                    continue
                if any(os.path.lexists(local := os.path.normpath(base / candidate))
                       and not _inside(real_path(Path(local)), result.repository) for base in bases):
                    result.outside.append(Reference(k, candidate, via.where, via.at))
                    break


def _strings_in(data: Any, key: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """(the key it is under, string) of every one-line string in `data`."""
    if depth > 64:
        return []
    if isinstance(data, dict):
        return [pair for k, v in data.items() for pair in _strings_in(v, str(k), depth + 1)]
    if isinstance(data, list):
        return [pair for v in data for pair in _strings_in(v, key, depth + 1)]
    if isinstance(data, str) and "\n" not in data and len(data) < 4096:
        return [(key, data)]
    return []


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _file_data(path: Path) -> list[Any]:
    try:
        text = decode(read_regular(path, AUDIT_READ_MAX))
    except (OSError, BinaryInput, DecodeError):
        return []
    return [d.data for d in load_documents(text) if isinstance(d, Document)]
