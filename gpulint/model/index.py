"""ConfigMaps and Secrets of the whole scan, for `envFrom`/`valueFrom`/volumes, and
the device classes of its DRA ResourceClaims and ResourceClaimTemplates (whose
claims are NVIDIA GPU evidence only when a class is NVIDIA's).

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
        self._claims: dict[tuple[str, str, str], tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def add(self, obj: KubeObject) -> None:
        if obj.ref.kind in _CLAIM_KINDS and obj.ref.api_version.startswith("resource.k8s.io/"):
            self._claims[(obj.ref.kind, obj.ref.namespace or "", obj.ref.name)] = _device_classes(obj)
            return
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

    def claim_classes(self, kind: str, namespace: str | None, name: str) -> tuple[str, ...] | None:
        """Device class names a ResourceClaim(Template) of the scan requests; None when it is not in the scan."""
        exact = self._claims.get((kind, namespace or "", name))
        if exact is not None:
            return exact
        candidates = [classes for (k, ns, n), classes in self._claims.items()
                      if k == kind and n == name and (not ns or not namespace)]
        return candidates[0] if len(candidates) == 1 else None


_CLAIM_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate"})


def _device_classes(obj: KubeObject) -> tuple[str, ...]:
    """`deviceClassName`s of a claim's requests (v1beta1 `requests[]`, v1beta2/v1 `exactly` and
    `firstAvailable[]`); a template holds the claim spec one level down (`spec.spec`)."""
    spec = obj.data.get("spec")
    if obj.ref.kind == "ResourceClaimTemplate":
        spec = spec.get("spec") if isinstance(spec, dict) else None
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    found: list[str] = []
    for request in requests if isinstance(requests, list) else ():
        if not isinstance(request, dict):
            continue
        options = [request, request.get("exactly")]
        alternatives = request.get("firstAvailable")
        options += alternatives if isinstance(alternatives, list) else []
        for option in options:
            if isinstance(option, dict) and isinstance(option.get("deviceClassName"), str):
                found.append(option["deviceClassName"])
    return tuple(found)


def _text_of(kind: str, section: str, value: object) -> str | None:
    if not isinstance(value, str):
        return str(value) if isinstance(value, (int, float, bool)) else None
    if kind == "secret" and section == "data" or section == "binaryData":
        try:
            return base64.b64decode(value, validate=False).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
    return value
