"""Object annotations that suppress findings: `gpulint.io/ignore` + `gpulint.io/ignore-reason`.

On a workload's `metadata.annotations` they cover every finding of the
workload; on a pod template's annotations, the findings of that pod spec (a
RayCluster's worker group, a PyTorchJob's Master replica). The annotations
travel with the object, so they survive Helm, Kustomize and `kubectl get -o
yaml` round trips, unlike comments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulint.api import LineAt, UnusedSuppression
from gpulint.model.ignores import IGNORE, ignores_of
from gpulint.model.workload import PodSpec, Workload
from gpulint.results.emit import Emitter
from gpulint.results.findings import Finding, Suppression
from gpulint.results.scanning import SuppressionContext
from gpulint.suppress.core import (
    KIND_ANNOTATION,
    NO_REASON,
    code_matches,
    unused_suppression_hook,
    unused_label,
)

if TYPE_CHECKING:
    from gpulint.load.yamlload import Document
    from gpulint.results.findings import FileReport
    from gpulint.results.scanning import ScanConfig, ScanResult

class AnnotationSuppressions:
    """The annotation suppressor, and the hook reporting annotation codes that matched nothing (GPU092)."""

    def __init__(self, about_suppressions: frozenset[str]) -> None:
        # Rules whose findings no annotation silences (core.about_suppressions).
        self.about_suppressions = about_suppressions
        # (file, document index, annotations path, code as written) that silenced a finding.
        self.used: set[tuple[str, int, tuple, str]] = set()
        # Whether GPU092 is enabled, for the last rule list seen (asked per document).
        self._reports_unused: tuple[list, bool] | None = None

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> Suppression | None:
        workload = ctx.workload
        if workload is None or finding.rule_id in self.about_suppressions:
            return None
        for ignore in ignores_of(workload):
            if ignore.pod is not None and not _in_pod(ignore.pod, workload, finding, ctx):
                continue
            for code in ignore.codes:
                if code_matches(code, finding):
                    obj = workload.obj
                    self.used.add((obj.file, obj.doc.index, ignore.annotations_path, code))
                    return Suppression(KIND_ANNOTATION, ignore.reason or NO_REASON)
        return None

    def text_done(self, report: "FileReport", text: str, line_offset: int, config: "ScanConfig") -> None:
        return None

    def document_done(self, report: "FileReport", doc: "Document", workloads: "list[Workload]",
                      config: "ScanConfig") -> None:
        # A workload's findings all come from its own document, so usage is complete here.
        if self._reports_unused is None or self._reports_unused[0] is not config.rules:
            self._reports_unused = (config.rules, any(r.check_suppression is not None for r in config.rules))
        if not self._reports_unused[1]:
            return
        from gpulint.results.findings import stable_path

        for workload in workloads:
            obj = workload.obj
            for ignore in ignores_of(workload):
                unused = [unused_label(code, config) for code in ignore.codes
                          if (obj.file, doc.index, ignore.annotations_path, code) not in self.used]
                if not unused:
                    continue
                span = doc.span(ignore.key_path)
                if span is None:
                    continue
                where = LineAt(span.line, span.column, span.end_line, span.end_column)
                Emitter(config).event(report, SuppressionContext(workload, None, obj, doc.text, doc.line_offset),
                                      unused_suppression_hook,
                                      UnusedSuppression(f"{IGNORE} ({obj.ref.describe()})", where, tuple(unused)),
                                      report.file, obj=obj, field_path=stable_path(obj, ignore.key_path))

    # A ParallelHook (see suppress.py). Usage is complete per document, so the
    # parent needs it only to end up in the same state as a single process.
    def take_state(self) -> set:
        state, self.used = self.used, set()
        return state

    def merge_state(self, state: set) -> None:
        self.used |= state

    def scan_done(self, result: "ScanResult", config: "ScanConfig") -> None:
        return None


def _in_pod(pod: PodSpec, workload: Workload, finding: Finding, ctx: SuppressionContext) -> bool:
    """Whether the finding belongs to `pod`: its container does, or its node is inside it."""
    if ctx.container is not None:
        return any(c is ctx.container for c in pod.containers)
    from gpulint.results.findings import stable_path

    prefix = stable_path(workload.obj, pod.path)
    return finding.field_path == prefix or finding.field_path.startswith((prefix + ".", prefix + "["))
