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
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any

from gpulint import __version__
from gpulint.api import Severity
from gpulint.load.locations import Span
from gpulint.model.objects import ObjectRef
from gpulint.results.findings import FileReport, Finding, MappedLocation, Suppression
from gpulint.results.scanning import ScanConfig, ScanResult

if TYPE_CHECKING:
    from gpulint.inputs.discovery import Input
    from gpulint.scan.reader import InputReader

FORMAT = 1
_RENDERED = ("chart", "kustomization")


def default_dir() -> str:
    """$XDG_CACHE_HOME/gpulint, else ~/.cache/gpulint."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpulint")


class ResultCache:
    """Scan results by key in `folder`; `context`: what the command line adds to the key."""

    def __init__(self, folder: str, context: str) -> None:
        self.folder = os.path.join(folder, f"v{FORMAT}")
        self.context = context

    def key(self, inputs: list[Input], config: ScanConfig, reader: InputReader) -> str:
        """The key of a scan of `inputs` (reading them; the reader keeps small files' bytes for the scan)."""
        digest = hashlib.sha256()
        _add(digest, f"gpulint {__version__} cache {FORMAT}", self.context, _code_stamp(config))
        for item in inputs:
            _add(digest, item.kind, item.display, str(item.real))
            if item.kind in _RENDERED:
                rendered = reader.rendered(item)
                failure = rendered.failure
                _add(digest, rendered.display, rendered.text if rendered.text is not None else "\0none",
                     repr(failure) if failure is not None else "")
            elif item.kind in ("manifest", "stdin", "dockerfile"):
                try:
                    data = reader.read(item)
                except Exception as error:  # noqa: BLE001 - unreadable: its error is part of the result
                    _add(digest, f"\0unreadable {type(error).__name__} {error}")
                    continue
                if item.kind == "manifest":
                    reader.keep(item, data)
                _add(digest, hashlib.sha256(data).hexdigest())
        return digest.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key + ".json")

    def load(self, key: str) -> ScanResult | None:
        """The result stored under `key`, or None (absent, unreadable, malformed, foreign)."""
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                stored = json.load(handle)
            if stored.get("format") != FORMAT or stored.get("key") != key:
                return None
            return _result_of(stored["result"])
        except Exception:  # noqa: BLE001 - never trusted: a bad entry is a miss
            return None

    def store(self, key: str, result: ScanResult) -> None:
        """Write the result under `key` (atomically); a scan that met a bug is not stored,
        and a folder that cannot be written is no error."""
        if result.internal_errors:
            return
        path = self._path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"format": FORMAT, "key": key, "result": _plain(result)}, handle,
                              separators=(",", ":"))
                os.replace(temp, path)
            except BaseException:
                os.unlink(temp)
                raise
        except OSError:
            return


def _add(digest: Any, *parts: str) -> None:
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)


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
            f.container, f.field_path, f.source,
            [f.suppressed.kind, f.suppressed.reason] if f.suppressed else None,
            [[m.role, m.file, list(m.span), m.description] for m in f.mapped]]


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def _int(value: Any) -> int:
    if type(value) is not int:
        raise ValueError("not an integer")
    return value


def _span(value: Any) -> Span:
    if not isinstance(value, list) or len(value) != 4:
        raise ValueError("not a span")
    return Span(*(_int(v) for v in value))


def _result_of(data: Any) -> ScanResult:
    files = []
    for r in data["files"]:
        report = FileReport(_str(r["file"]), _str(r["status"]), [], _int(r["documents"]), _int(r["objects"]),
                            _int(r["workloads"]))
        report.findings = [_finding_of(f) for f in r["findings"]]
        files.append(report)
    return ScanResult(files)


def _finding_of(f: Any) -> Finding:
    (rule_id, rule_name, severity, message, file, span, obj, container, field_path, source, suppressed,
     mapped) = f
    if obj is not None:
        api_version, kind, name, namespace = obj
        obj = ObjectRef(_str(api_version), _str(kind), _str(name), _opt_str(namespace))
    if source is not None and not (isinstance(source, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in source.items())):
        raise ValueError("not a source")
    if suppressed is not None:
        kind, reason = suppressed
        suppressed = Suppression(_str(kind), _str(reason))
    locations = []
    for role, where, at, description in mapped:
        locations.append(MappedLocation(_str(role), _str(where), _span(at), _str(description)))
    return Finding(_str(rule_id), _str(rule_name), Severity(_str(severity)), _str(message), _str(file), _span(span),
                   obj, _opt_str(container), _str(field_path), source, suppressed, locations)
