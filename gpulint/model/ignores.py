"""What a workload's `gpulint.io/ignore` and `gpulint.io/ignore-reason` annotations say.

Read by the annotation suppressor and by the rules that check the annotations
themselves (GPU090, GPU091).
"""

from __future__ import annotations

from typing import Iterator

from gpulint.lazypattern import lazy
from gpulint.model.workload import PodSpec, Workload
from gpulint.record import record, set_field

IGNORE = "gpulint.io/ignore"
IGNORE_REASON = "gpulint.io/ignore-reason"
_SPLIT_RE = lazy(r"[\s,]+")


@record(frozen=True)
class AnnotationIgnore:
    """One `gpulint.io/ignore` annotation and where it is written."""

    __slots__ = ("codes", "reason", "annotations_path", "pod")
    codes: tuple[str, ...]
    reason: str                   # "" when missing or blank
    annotations_path: tuple       # document path of the annotations mapping
    pod: PodSpec | None           # None: on the workload itself

    def __init__(self, codes: tuple[str, ...], reason: str, annotations_path: tuple, pod: PodSpec | None) -> None:
        set_field(self, "codes", codes)
        set_field(self, "reason", reason)
        set_field(self, "annotations_path", annotations_path)
        set_field(self, "pod", pod)

    @property
    def key_path(self) -> tuple:
        return self.annotations_path + (IGNORE,)

    @property
    def reason_path(self) -> tuple:
        return self.annotations_path + (IGNORE_REASON,)


def parse_codes(value: object) -> tuple[str, ...]:
    if not isinstance(value, str):
        return ()
    return tuple(code for code in _SPLIT_RE.split(value) if code)


def ignores_of(workload: Workload) -> tuple[AnnotationIgnore, ...]:
    """Every `gpulint.io/ignore` of the workload: its own, then its pod templates'.
    Read once per workload: the annotation suppressor asks for every finding."""
    ignores = workload.memo.get("ignores.ignores_of")
    if ignores is None:
        ignores = workload.memo["ignores.ignores_of"] = tuple(_ignores_of(workload))
    return ignores


def _ignores_of(workload: Workload) -> Iterator[AnnotationIgnore]:
    own_meta = workload.obj.path("metadata")
    own = workload.annotations
    if IGNORE in own:
        yield _make(own, own_meta + ("annotations",), None)
    for pod in workload.pod_specs:
        # A bare Pod's template metadata is the object's own metadata.
        if IGNORE not in pod.annotations or pod.metadata_path is None or pod.metadata_path == own_meta:
            continue
        yield _make(pod.annotations, pod.metadata_path + ("annotations",), pod)


def _make(annotations: dict, path: tuple, pod: PodSpec | None) -> AnnotationIgnore:
    reason = annotations.get(IGNORE_REASON)
    reason = reason.strip() if isinstance(reason, str) else ""
    return AnnotationIgnore(parse_codes(annotations.get(IGNORE)), reason, path, pod)
