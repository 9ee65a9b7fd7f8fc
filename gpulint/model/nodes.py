"""Typed view of a Node object (`kubectl get nodes -o yaml|json`), for rules about nodes.

A Node is given to rules as a `Workload` without pod specs whose `node` is this
view, so rules read labels and status through typed fields, never raw dicts.
Values of the wrong type are recorded as TypeProblems (GPU000) and left out.
"""

from __future__ import annotations

from typing import Any

from gpulint.model.objects import KubeObject
from gpulint.model.workload import Problems
from gpulint.record import record, set_field


@record(frozen=True)
class NodeView:
    """A Node object as the node rules read it."""
    __slots__ = ("name", "labels", "labels_path", "provider_id", "has_status", "capacity", "allocatable",
                 "status_path")
    name: str
    labels: dict[str, Any]           # label key -> value as written
    labels_path: tuple               # metadata.labels (may not exist)
    provider_id: str | None          # spec.providerID (aws://, gce://, azure://, alicloud://...)
    has_status: bool                 # a dump has a status; a hand-written manifest usually not
    capacity: dict[str, Any] | None  # status.capacity, None when absent
    allocatable: dict[str, Any] | None
    status_path: tuple

    def __init__(self, name: str, labels: dict[str, Any], labels_path: tuple, provider_id: str | None,
                 has_status: bool, capacity: dict[str, Any] | None, allocatable: dict[str, Any] | None,
                 status_path: tuple) -> None:
        set_field(self, "name", name)
        set_field(self, "labels", labels)
        set_field(self, "labels_path", labels_path)
        set_field(self, "provider_id", provider_id)
        set_field(self, "has_status", has_status)
        set_field(self, "capacity", capacity)
        set_field(self, "allocatable", allocatable)
        set_field(self, "status_path", status_path)

    def label_path(self, key: str) -> tuple:
        return self.labels_path + (key,)

    def capacity_path(self, name: str | None = None) -> tuple:
        return self.status_path + (("capacity", name) if name is not None else ("capacity",))

    def allocatable_path(self, name: str | None = None) -> tuple:
        return self.status_path + (("allocatable", name) if name is not None else ("allocatable",))


def is_node(obj: KubeObject) -> bool:
    return obj.ref.kind == "Node" and obj.ref.api_version == "v1"


def node_view(obj: KubeObject, problems: Problems) -> NodeView:
    data = obj.data
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    labels = problems.expect(meta.get("labels"), dict, obj.path("metadata", "labels"), "metadata.labels") or {}
    spec = data.get("spec")
    provider = spec.get("providerID") if isinstance(spec, dict) else None
    status = data.get("status")
    has_status = status is not None
    status = problems.expect(status, dict, obj.path("status"), "status") or {}
    sections: dict[str, dict | None] = {}
    for key in ("capacity", "allocatable"):
        section = problems.expect(status.get(key), dict, obj.path("status", key), f"status.{key}")
        sections[key] = {str(k): v for k, v in section.items()} if section is not None else None
    return NodeView(
        name=obj.ref.name,
        labels={str(k): v for k, v in labels.items()},
        labels_path=obj.path("metadata", "labels"),
        provider_id=provider if isinstance(provider, str) else None,
        has_status=has_status,
        capacity=sections["capacity"],
        allocatable=sections["allocatable"],
        status_path=obj.path("status"),
    )
