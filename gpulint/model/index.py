"""ConfigMaps and Secrets of the whole scan, for `envFrom`/`valueFrom`/volumes.

Filled in a first pass over the inputs that contain such objects, so that a
workload can be checked against a ConfigMap defined in another file.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Iterator

from gpulint.model.objects import KubeObject


@dataclass
class ConfigEntry:
    """One key of a ConfigMap or Secret."""

    key: str
    value: str | None        # decoded text (Secret `data` is base64), None if not text
    path: tuple              # document path of the value in `obj`


@dataclass
class ConfigSource:
    kind: str                # "configMap" or "secret"
    obj: KubeObject
    entries: dict[str, ConfigEntry] = field(default_factory=dict)


class ConfigIndex:
    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], ConfigSource] = {}

    def __len__(self) -> int:
        return len(self._items)

    def add(self, obj: KubeObject) -> None:
        kind = {"ConfigMap": "configMap", "Secret": "secret"}.get(obj.ref.kind)
        if kind is None or obj.ref.api_version != "v1":
            return
        source = ConfigSource(kind, obj)
        sections = ("data", "binaryData") if kind == "configMap" else ("data", "stringData")
        for section in sections:
            raw = obj.data.get(section)
            if not isinstance(raw, dict):
                continue
            for key, value in raw.items():
                text = _text_of(kind, section, value)
                source.entries[str(key)] = ConfigEntry(str(key), text, obj.path(section, key))
        self._items[(kind, obj.ref.namespace or "", obj.ref.name)] = source

    def lookup(self, kind: str, namespace: str | None, name: str) -> ConfigSource | None:
        """The ConfigMap/Secret a pod in `namespace` would see under `name`.

        A manifest without a namespace is applied into whatever namespace the
        user picks, so an unqualified side matches either way.
        """
        exact = self._items.get((kind, namespace or "", name))
        if exact is not None:
            return exact
        candidates = [src for (k, ns, n), src in self._items.items()
                      if k == kind and n == name and (not ns or not namespace)]
        return candidates[0] if len(candidates) == 1 else None

    def __iter__(self) -> Iterator[ConfigSource]:
        return iter(self._items.values())


def _text_of(kind: str, section: str, value: object) -> str | None:
    if not isinstance(value, str):
        return str(value) if isinstance(value, (int, float, bool)) else None
    if kind == "secret" and section == "data" or section == "binaryData":
        try:
            return base64.b64decode(value, validate=False).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
    return value
