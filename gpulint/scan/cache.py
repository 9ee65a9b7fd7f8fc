"""A result cache: an unchanged re-scan reads its result instead of scanning.

One entry per scan, named by a SHA-256 of everything the result depends on:
each input's kind, name and bytes (a chart's or kustomization's rendered text),
the context the command line gives (options, the configuration, baseline and
values files' bytes), and gpulint itself (its version and every file of its
package, of the rule package and of plugin rules, by size and modification time).
A change to any of them, a ConfigMap in another file included, is another name:
the result is scanned again. Entries are JSON (never pickle: a cache folder is
writable by whoever shares it) and are checked field by field when read; an entry
that is unreadable, malformed or recorded under another key is ignored.

A rendered input is keyed by its rendered text and by the bytes of every file the render
read (Rendered.sources) and of the files scanned instead of a render: a finding's template,
values and origin lines come from those, and an edit can move them without changing the
rendered text.

The folder is trusted only when it is ours: not a symbolic link, owned by the user running
gpulint, writable by nobody else (else anyone who can write there could plant an entry that
turns a scan's errors into "No findings"); otherwise the cache is off and `problem` says why
(the command line prints it once). Folders gpulint makes are private (0700).

An answer from the cache costs reading every input (its key) and the entry: no
input is parsed, the entry is not written again, and large files are hashed as
streams (bench/run.py figure 6 measures it against a scan).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from gpulint import __version__
from gpulint.api import CopyOf, Edit, Severity
from gpulint.load.decode import read_small_file
from gpulint.load.locations import Span
from gpulint.model.objects import ObjectRef
from gpulint.results.emit import stored_finding
from gpulint.results.findings import (
    FileReport,
    Finding,
    FindingFix,
    FindingSource,
    MappedLocation,
    RenderedFrom,
    Suppression,
    TextEdit,
)
from gpulint.results.inputkind import InputKind
from gpulint.results.scanning import ScanConfig, ScanResult

if TYPE_CHECKING:
    from gpulint.inputs.discovery import Input
    from gpulint.scan.reader import InputReader

FORMAT = 3   # 3: findings carry their fix
_CHUNK = 1 << 20


def default_dir() -> str:
    """$XDG_CACHE_HOME/gpulint, else ~/.cache/gpulint."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpulint")


class ResultCache:
    """Scan results by key in `folder`; `context`: what the command line adds to the key."""

    def __init__(self, folder: str, context: str) -> None:
        self.folder = os.path.join(folder, f"v{FORMAT}")
        self.context = context
        self.problem = _untrusted(folder) or _untrusted(self.folder)   # why the cache is off, or None

    def key(self, inputs: list[Input], config: ScanConfig, reader: InputReader) -> str:
        """The key of a scan of `inputs` (reading them; the reader keeps small files' bytes for the scan)."""
        digest = hashlib.sha256()
        _add(digest, f"gpulint {__version__} cache {FORMAT}", self.context, _code_stamp(config))
        for item in inputs:
            _add(digest, item.kind, item.display, str(item.real), item.values_role)
            if item.kind.rendered:
                rendered = reader.rendered(item)
                failure = rendered.failure
                _add(digest, rendered.display, rendered.text if rendered.text is not None else "\0none",
                     repr(failure) if failure is not None else "", repr(rendered.problems), rendered.sources)
                for display, path, given in (*rendered.plain, *rendered.literal):
                    _add(digest, display, str(path), given if given is not None else _bytes_of(path))
            elif item.kind.manifests or item.kind is InputKind.DOCKERFILE:
                try:
                    _add_content(digest, item, reader)
                except Exception as error:  # noqa: BLE001 - unreadable: its error is part of the result
                    _add(digest, f"\0unreadable {type(error).__name__} {error}")
        return digest.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key + ".json")

    def load(self, key: str, fixes: bool = True) -> ScanResult | None:
        """The result stored under `key`, or None (absent, unreadable, malformed, foreign, or a
        folder that is not ours; or, with `fixes`, stored by a scan that left fixes out)."""
        if self.problem is not None or _untrusted(os.path.dirname(self._path(key))) is not None:
            return None
        # The entry's objects hold no reference cycles: the cyclic collector, which
        # would walk them again and again while they are made, is paused meanwhile.
        collecting = gc.isenabled()
        gc.disable()
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                stored = json.load(handle)
            if stored.get("format") != FORMAT or stored.get("key") != key:
                return None
            if fixes and stored.get("fixes") is False:   # its reports showed no fixes, so it has none
                return None
            return _result_of(stored["result"])
        except Exception:  # noqa: BLE001 - never trusted: a bad entry is a miss
            return None
        finally:
            if collecting:
                gc.enable()

    def store(self, key: str, result: ScanResult, fixes: bool = True) -> None:
        """Write the result under `key` (atomically); a scan that met a bug is not stored,
        and a folder that cannot be written is no error. `fixes`: whether the scan resolved
        fixes (one that did not answers only scans that need none)."""
        if result.internal_errors or self.problem is not None:
            return
        path = self._path(key)
        import tempfile

        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            if _untrusted(os.path.dirname(path)) is not None:
                return
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"format": FORMAT, "key": key, "fixes": fixes, "result": _plain(result)}, handle,
                              separators=(",", ":"))
                os.replace(temp, path)
            except BaseException:
                os.unlink(temp)
                raise
        except OSError:
            return


def _untrusted(folder: str) -> str | None:
    """Why `folder` may not hold cache entries (a symbolic link, another owner, writable by others),
    or None (also when it does not exist yet: gpulint makes it, private)."""
    import stat

    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{folder} cannot be read ({error.strerror or error})"
    if stat.S_ISLNK(info.st_mode):
        return f"{folder} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a directory"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"{folder} belongs to another user"
    if info.st_mode & 0o022:
        return f"{folder} is writable by other users"
    return None


def _bytes_of(path: Any) -> str:
    """A file scanned in place of a render, for the key (its digest, or why it was not read)."""
    from gpulint.load.regular import read_regular

    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except OSError as error:
        return f"\0unread {type(error).__name__} {error}"


def _add(digest: Any, *parts: str) -> None:
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)


def _add_content(digest: Any, item: Input, reader: InputReader) -> None:
    """The bytes of `item` into `digest`: a small regular file read whole (and kept by the
    reader for the scan, which then does not open it again), anything else as a stream in
    chunks (a 200 MB file is never in memory whole for its key)."""
    data = read_small_file(item.real) if item.kind is not InputKind.STDIN and item.real is not None else None
    if data is not None:
        reader.keep(item, data)
        digest.update(b"w" + len(data).to_bytes(8, "little"))
        digest.update(data)
        return
    streamed = hashlib.sha256()
    with reader.open(item) as stream:
        for chunk in iter(lambda: stream.read(_CHUNK), b""):
            streamed.update(chunk)
    digest.update(b"s" + streamed.digest())


def _code_stamp(config: ScanConfig) -> str:
    """Every rule (id, severity, options), and the size and time of each file of gpulint's
    package, of the rule package and of plugin rules' modules: a changed rule is a new key."""
    import sys

    import gpulint

    folders = {os.path.dirname(gpulint.__file__)}
    files = set()
    for rule in config.all_rules.values():
        module = sys.modules.get(getattr(rule.check or rule.check_dockerfile, "__module__", "") or "")
        path = getattr(module, "__file__", None)
        if path:
            files.add(path)
            if os.path.basename(path) != "__init__.py":
                folders.add(os.path.dirname(path))
    parts = [repr(sorted((r.id, r.name, str(r.severity), repr(sorted(r.options.items())))
                         for r in config.all_rules.values()))]
    for folder in sorted(folders):
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            files.update(os.path.join(root, name) for name in names if not name.endswith((".pyc", ".tmp")))
    for path in sorted(files):
        try:
            stat = os.stat(path)
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            parts.append(f"{path}:missing")
    return "\n".join(parts)


# --- JSON, and back with every field checked ----------------------------------------------


def _plain(result: ScanResult) -> dict:
    return {"files": [{"file": r.file, "status": r.status, "documents": r.documents, "objects": r.objects,
                       "workloads": r.workloads, "findings": [_plain_finding(f) for f in r.findings]}
                      for r in result.files]}


def _plain_finding(f: Finding) -> list:
    return [f.rule_id, f.rule_name, f.severity.value, f.message, f.file, list(f.span),
            [f.obj.api_version, f.obj.kind, f.obj.name, f.obj.namespace] if f.obj else None,
            f.container, f.field_path, [f.source.role, f.source.path] if f.source else None,
            [f.suppressed.kind, f.suppressed.reason] if f.suppressed else None,
            [[m.role, m.file, list(m.span), m.description] for m in f.mapped],
            [f.rendered.target, f.rendered.values] if f.rendered else None,
            None if f.fix is None else [f.fix.title, f.fix.applicability,
                                        [[list(e.span), e.text] for e in f.fix.edits], f.fix.file,
                                        [_plain_edit(e) for e in f.fix.rendered]],
            f.no_fix]


def _plain_edit(edit: Edit) -> list:
    """A values fix's edit of the rendered document (its value plain data, or a copied path)."""
    copied = isinstance(edit.value, CopyOf)
    return [edit.op, list(edit.path), copied, list(edit.value.path) if copied else edit.value]


def _edit_of(data: Any) -> Edit:
    op, path, copied, value = data
    if type(op) is not str or type(path) is not list or not all(type(p) in (str, int) for p in path):
        raise ValueError("not an edit")
    if copied:
        if type(value) is not list or not all(type(p) in (str, int) for p in value):
            raise ValueError("not an edit")
        value = CopyOf(tuple(value))
    return Edit(op, tuple(path), value)


_SEVERITIES = {severity.value: severity for severity in Severity}
_STR, _NONE, _INT = {str}, {str, type(None)}, {int}


def _strings(*values: Any) -> None:
    if not {*map(type, values)} <= _STR:
        raise ValueError("not a string")


def _span(value: Any) -> Span:
    # `type(...) is` and sets of types: a cached re-scan checks every field of thousands of
    # findings, and this is most of what it does (bench/run.py figure 6).
    if type(value) is not list or len(value) != 4 or {*map(type, value)} != _INT:
        raise ValueError("not a span")
    return Span(*value)


def _result_of(data: Any) -> ScanResult:
    files = []
    objects: dict[tuple, ObjectRef] = {}   # a workload's findings share its ObjectRef, as in a scan
    for r in data["files"]:
        file, status, documents, count, workloads = r["file"], r["status"], r["documents"], r["objects"], r["workloads"]
        _strings(file, status)
        if {type(documents), type(count), type(workloads)} != _INT:
            raise ValueError("not an integer")
        files.append(FileReport(file, status, [_finding_of(f, objects) for f in r["findings"]], documents, count,
                                workloads))
    return ScanResult(files)


def _finding_of(f: Any, objects: dict[tuple, ObjectRef]) -> Finding:
    (rule_id, rule_name, severity, message, file, span, obj, container, field_path, source, suppressed,
     mapped, rendered, fix, no_fix) = f
    _strings(rule_id, rule_name, message, file, field_path)
    if type(container) is not str and container is not None:
        raise ValueError("not a container")
    if obj is not None:
        if type(obj) is not list or len(obj) != 4 or not {*map(type, obj[:3])} <= _STR or type(obj[3]) not in _NONE:
            raise ValueError("not an object")
        key = tuple(obj)
        ref = objects.get(key)
        if ref is None:
            ref = objects[key] = ObjectRef(*key)
        obj = ref
    if source is not None:
        role, path = source
        _strings(role, path)
        source = FindingSource(role, path)
    if rendered is not None:
        target, values = rendered
        _strings(target, values)
        rendered = RenderedFrom(target, values)
    if suppressed is not None:
        kind, reason = suppressed
        _strings(kind, reason)
        suppressed = Suppression(kind, reason)
    locations = []
    for role, where, at, description in mapped:
        _strings(role, where, description)
        locations.append(MappedLocation(role, where, _span(at), description))
    finding = stored_finding(rule_id, rule_name, _SEVERITIES[severity], message, file, _span(span), obj, container,
                             field_path, source, suppressed, locations, rendered)
    if fix is not None:
        title, applicability, edits, *rest = fix
        _strings(title, applicability)
        file = rest[0] if rest else None
        if file is not None:
            _strings(file)
        changes = []
        for at, text in edits:
            _strings(text)
            changes.append(TextEdit(_span(at), text))
        rendered = tuple(_edit_of(e) for e in rest[1]) if len(rest) > 1 and type(rest[1]) is list else ()
        finding.fix = FindingFix(title, applicability, tuple(changes), file, rendered)
    if no_fix is not None:
        _strings(no_fix)
        finding.no_fix = no_fix
    return finding
