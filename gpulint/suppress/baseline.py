"""Baselines: accept today's findings, fail only on new ones.

An entry identifies a finding by what survives editing the file: rule, file
(relative to the baseline's directory), object identity (apiVersion, kind,
namespace, name), container and field path (list entries by name), never by
line. Findings with no field in an object (Dockerfiles, unreadable input) are
keyed by the whitespace-normalised text of their line instead. Each key has a
count, so a second copy of a baselined finding is new and still fails.

The file is JSON, sorted and indented, with a `version`, so that it diffs well
and two runs on the same tree write the same bytes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from gpulint.results.findings import Finding, Suppression
from gpulint.results.scanning import SuppressionContext
from gpulint.suppress.core import KIND_BASELINE

VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or written (a usage error)."""


class Key(NamedTuple):
    rule: str
    file: str
    api_version: str
    kind: str
    namespace: str
    name: str
    container: str
    field_path: str

    def as_entry(self, count: int) -> dict[str, Any]:
        entry: dict[str, Any] = {"rule": self.rule, "file": self.file}
        if self.kind:
            entry["object"] = {"apiVersion": self.api_version, "kind": self.kind,
                               "namespace": self.namespace or None, "name": self.name}
        if self.container:
            entry["container"] = self.container
        entry["field_path"] = self.field_path
        entry["count"] = count
        return entry

    @classmethod
    def from_entry(cls, entry: Any) -> "Key":
        obj = entry.get("object") or {}
        return cls(str(entry["rule"]), str(entry["file"]), str(obj.get("apiVersion") or ""),
                   str(obj.get("kind") or ""), str(obj.get("namespace") or ""), str(obj.get("name") or ""),
                   str(entry.get("container") or ""), str(entry["field_path"]))


def key_of(finding: Finding, ctx: SuppressionContext, root: Path) -> Key:
    obj = finding.obj
    field_path = finding.field_path
    if field_path.startswith("line:") or not field_path:
        text = ctx.line(finding.span.line)
        field_path = "text:" + " ".join(text.split()) if text is not None else field_path
    return Key(
        rule=finding.rule_id,
        file=_normalise(finding.file, root),
        api_version=obj.api_version if obj else "",
        kind=obj.kind if obj else "",
        namespace=(obj.namespace or "") if obj else "",
        name=obj.name if obj else "",
        container=finding.container or "",
        field_path=field_path,
    )


def _normalise(file: str, root: Path) -> str:
    """The file relative to the baseline's directory, with `/` separators."""
    if file == "-":
        return file
    rel = os.path.relpath(os.path.abspath(file), os.path.abspath(root))
    return rel.replace(os.sep, "/")


def load(path: Path) -> Counter:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found (create it with --write-baseline)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"{path}: cannot read baseline: {getattr(error, 'strerror', None) or error}") from None
    except json.JSONDecodeError as error:
        raise BaselineError(f"{path}:{error.lineno}:{error.colno}: invalid baseline JSON: {error.msg}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("entries"), list):
        raise BaselineError(f"{path}: not a gpulint baseline of version {VERSION} "
                            "(a JSON object with `version` and `entries`)")
    counts: Counter = Counter()
    for i, entry in enumerate(data["entries"]):
        try:
            count = entry.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise ValueError("count must be a positive integer")
            counts[Key.from_entry(entry)] += count
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise BaselineError(f"{path}: entry {i} is malformed ({error})") from None
    return counts


def render(counts: Counter) -> str:
    entries = [key.as_entry(count) for key, count in sorted(counts.items(), key=lambda kv: (kv[0].file, kv[0]))]
    return json.dumps({"version": VERSION, "entries": entries}, indent=2, sort_keys=True,
                      ensure_ascii=False) + "\n"


class BaselineSuppressor:
    """Suppresses findings the baseline holds, as many times as it holds each."""

    def __init__(self, path: Path, display: str | None = None, root: Path | None = None) -> None:
        self.root = path.parent if root is None else root
        self.remaining = load(path)
        self.reason = f"in baseline {display or path}"

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> Suppression | None:
        return self.decide(self.key(finding, ctx))

    # An OrderedSuppressor (see suppress.py): a parallel scan decides in scan order.
    def key(self, finding: Finding, ctx: SuppressionContext) -> Key:
        return key_of(finding, ctx, self.root)

    def decide(self, key: Key) -> Suppression | None:  # type: ignore[override]
        if self.remaining.get(key, 0) > 0:
            self.remaining[key] -= 1
            return Suppression(KIND_BASELINE, self.reason)
        return None


class BaselineWriter:
    """Records every finding that reaches it, and reports it as baselined.

    It sits where the baseline suppressor would (last), so findings suppressed
    by a comment, an annotation, the config or the system-component list are not
    copied into the baseline: they are already accounted for.
    """

    def __init__(self, path: Path, display: str | None = None) -> None:
        self.path = path
        self.root = path.parent
        self.counts: Counter = Counter()
        self.reason = f"written to baseline {display or path}"

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> Suppression:
        return self.decide(self.key(finding, ctx))

    def key(self, finding: Finding, ctx: SuppressionContext) -> Key:
        return key_of(finding, ctx, self.root)

    def decide(self, key: Key) -> Suppression:
        self.counts[key] += 1
        return Suppression(KIND_BASELINE, self.reason)

    def write(self) -> None:
        from gpulint.report.atomicfile import write_atomic

        try:
            write_atomic(str(self.path), render(self.counts))
        except OSError as error:
            raise BaselineError(f"cannot write baseline {self.path}: {error.strerror or error}") from None
