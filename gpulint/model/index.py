"""ConfigMaps and Secrets of the whole scan, for `envFrom`/`valueFrom`/volumes, and
the device classes of its DRA ResourceClaims and ResourceClaimTemplates (whose
claims are NVIDIA GPU evidence only when a class is NVIDIA's).

Filled in a first pass over the inputs that contain such objects, so that a
workload can be checked against a ConfigMap defined in another file.
"""

from __future__ import annotations

import base64
import binascii
from typing import Iterator

from gpulint.load.yamlload import Document
from gpulint.model.objects import KubeObject, ObjectRef, objects_in
from gpulint.record import record, set_field


@record
class ConfigEntry:
    """One key of a ConfigMap or Secret."""

    __slots__ = ("key", "value", "path")
    key: str
    value: str | None        # decoded text (Secret `data` is base64), None if not text
    path: tuple              # document path of the value in `obj`

    def __init__(self, key: str, value: str | None, path: tuple) -> None:
        self.key = key
        self.value = value
        self.path = path


# The largest document text whose object `ConfigSource(keep=True)` keeps whole (see there).
KEPT_TEXT_MAX = 16 << 10


class ConfigSource:
    """A ConfigMap or Secret of the scan: its identity and file, and on demand its entries
    and the object itself.

    An index may hold tens of thousands of these (a large `helm template` stream is a
    quarter ConfigMaps) while lookups find few, so only the document's text is kept: the
    first use of `entries` or `obj` parses it again (and keeps what that gives). With
    `keep` (a file read whole, whose documents the index pass builds without their event
    trees for the scan), the object of a small document is kept as it is: its data costs
    about twice its text, and spares the parse again of each ConfigMap a workload reads.
    """

    __slots__ = ("kind", "ref", "file", "_doc", "_base", "_obj", "_entries")

    def __init__(self, kind: str, obj: KubeObject, keep: bool = False) -> None:
        self.kind = kind                 # "configMap" or "secret"
        self.ref = obj.ref
        self.file = obj.file
        self._base = obj.base
        self._obj: KubeObject | None = None
        self._doc: Document | None = None
        if keep and len(obj.doc.text) <= KEPT_TEXT_MAX:
            self._obj = obj
        else:
            self._doc = obj.doc.without_data()
        self._entries: dict[str, ConfigEntry] | None = None

    @property
    def held(self) -> Document | None:
        """The document of the object when this source keeps it whole (see `keep`), else None."""
        return self._obj.doc if self._obj is not None else None

    @property
    def obj(self) -> KubeObject:
        """The ConfigMap/Secret object (unless kept, parsed again from its text on first use)."""
        if self._obj is None:
            assert self._doc is not None
            doc = self._doc.reparsed()
            self._obj = next(obj for obj in objects_in(self.file, doc) if obj.base == self._base)
        return self._obj

    @property
    def entries(self) -> dict[str, ConfigEntry]:
        """Its keys and their values (Secret `data` decoded)."""
        if self._entries is None:
            self._entries = _entries_of(self.kind, self.obj)
        return self._entries


class ConfigIndex:
    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], ConfigSource] = {}
        self._claims: dict[tuple[str, str, str], tuple[str, ...]] = {}
        # KEP-5004: extended resource name -> the DeviceClass that declares it.
        self._extended: dict[str, str] = {}
        # The same sources by (kind, name), then namespace: a lookup that misses its exact
        # key finds its only candidate in constant time instead of scanning every source.
        self._by_name: dict[tuple[str, str], dict[str, ConfigSource]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def add(self, obj: KubeObject) -> None:
        """Index `obj` when it is a v1 ConfigMap or Secret, or a DRA claim."""
        source = source_of(obj)
        if source is not None:
            self.add_source(source)

    def add_source(self, source: "ConfigSource | ClaimSource | ExtendedResourceSource") -> None:
        """Index a source made by `source_of` (a later one of the same key replaces an earlier one)."""
        namespace = source.ref.namespace or ""
        if isinstance(source, ExtendedResourceSource):
            self._extended[source.name] = source.ref.name
            return
        if isinstance(source, ClaimSource):
            self._claims[(source.ref.kind, namespace, source.ref.name)] = source.classes
            return
        self._items[(source.kind, namespace, source.ref.name)] = source
        self._by_name.setdefault((source.kind, source.ref.name), {})[namespace] = source

    def lookup(self, kind: str, namespace: str | None, name: str) -> ConfigSource | None:
        """The ConfigMap/Secret a pod in `namespace` would see under `name`.

        A manifest without a namespace is applied into whatever namespace the
        user picks, so an unqualified side matches either way.
        """
        exact = self._items.get((kind, namespace or "", name))
        if exact is not None:
            return exact
        if namespace:  # the only other candidate: the same name without a namespace
            return self._items.get((kind, "", name))
        # An unqualified reference missing (kind, "", name): every namespaced source of that
        # name is a candidate; it is found only when there is exactly one.
        named = self._by_name.get((kind, name))
        if named is not None and len(named) == 1:
            return next(iter(named.values()))
        return None

    def __iter__(self) -> Iterator[ConfigSource]:
        return iter(self._items.values())

    def extended_resource_class(self, name: str) -> str | None:
        """The DeviceClass of the scan whose `extendedResourceName` is `name` (KEP-5004: a pod
        requesting it gets a DRA claim for that class), or None."""
        return self._extended.get(name)

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


@record(frozen=True)
class ClaimSource:
    """What the index keeps of a DRA ResourceClaim or ResourceClaimTemplate: its device classes."""

    __slots__ = ("ref", "classes")
    ref: ObjectRef
    classes: tuple[str, ...]

    def __init__(self, ref: ObjectRef, classes: tuple[str, ...]) -> None:
        set_field(self, "ref", ref)
        set_field(self, "classes", classes)


@record(frozen=True, repr=True)
class ExtendedResourceSource:
    """What the index keeps of a DRA DeviceClass that declares an extended resource name (KEP-5004)."""

    __slots__ = ("ref", "name")
    ref: ObjectRef
    name: str

    def __init__(self, ref: ObjectRef, name: str) -> None:
        set_field(self, "ref", ref)
        set_field(self, "name", name)


def source_of(obj: KubeObject, keep: bool = False) -> "ConfigSource | ClaimSource | ExtendedResourceSource | None":
    """What the index keeps of `obj`: None unless it is a v1 ConfigMap or Secret, a DRA claim,
    or a DeviceClass declaring an extended resource name. Made as each object is read, so
    that a large stream's index pass holds no object's data for long. `keep`: see ConfigSource."""
    if obj.ref.kind in _CLAIM_KINDS and obj.ref.api_version.startswith("resource.k8s.io/"):
        return ClaimSource(obj.ref, _device_classes(obj))
    if obj.ref.kind == "DeviceClass" and obj.ref.api_version.startswith("resource.k8s.io/"):
        spec = obj.data.get("spec")
        name = spec.get("extendedResourceName") if isinstance(spec, dict) else None
        return ExtendedResourceSource(obj.ref, name) if isinstance(name, str) and name else None
    kind = {"ConfigMap": "configMap", "Secret": "secret"}.get(obj.ref.kind)
    if kind is None or obj.ref.api_version != "v1":
        return None
    return ConfigSource(kind, obj, keep)


def _entries_of(kind: str, obj: KubeObject) -> dict[str, ConfigEntry]:
    entries = {}
    sections = ("data", "binaryData") if kind == "configMap" else ("data", "stringData")
    for section in sections:
        raw = obj.data.get(section)
        if not isinstance(raw, dict):
            continue
        for key, value in raw.items():
            text = _text_of(kind, section, value)
            entries[str(key)] = ConfigEntry(str(key), text, obj.path(section, key))
    return entries


def _text_of(kind: str, section: str, value: object) -> str | None:
    if not isinstance(value, str):
        return str(value) if isinstance(value, (int, float, bool)) else None
    if kind == "secret" and section == "data" or section == "binaryData":
        try:
            return base64.b64decode(value, validate=False).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
    return value
