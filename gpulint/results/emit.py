"""The one place a `Finding` is made (tests/test_architecture.py keeps it so).

Whatever reports something (a rule on a workload or a Dockerfile, the checks of
unreadable input, of renders and of suppressions), the finding is built here
the same way: the rule's name and effective severity, the object it is about,
the file of the repository that object was written in, the render it comes
from, and then the suppressors' verdict. A finding is never dropped by a
suppressor, only marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

from gpulint.api import Rule, Severity
from gpulint.load.locations import Span
from gpulint.model.objects import ObjectRef
from gpulint.results.findings import (
    FileReport,
    Finding,
    FindingSource,
    MappedLocation,
    RenderedFrom,
    Suppression,
)
from gpulint.results.scanning import ScanConfig, SuppressionContext, Suppressor

if TYPE_CHECKING:
    from gpulint.model.objects import KubeObject


def apply_suppressors(finding: Finding, ctx: SuppressionContext, suppressors: Iterable[Suppressor]) -> Finding:
    """Mark `finding` with the first suppressor's verdict, in order (see suppress/core.py)."""
    for suppressor in suppressors:
        verdict = suppressor(finding, ctx)
        if verdict is not None:
            finding.suppressed = verdict
            break
    return finding


def source_of(obj: KubeObject) -> FindingSource | None:
    """The template or origin file an object of rendered output was written in, when known."""
    if obj.template:
        return FindingSource("template", obj.template)
    if obj.origin and isinstance(obj.origin.get("path"), str):
        return FindingSource("origin", obj.origin["path"])
    return None


def stored_finding(rule_id: str, rule_name: str, severity: Severity, message: str, file: str, span: Span,
                   obj: ObjectRef | None, container: str | None, field_path: str, source: FindingSource | None,
                   suppressed: Suppression | None, mapped: list[MappedLocation],
                   rendered: RenderedFrom | None) -> Finding:
    """A finding read back from the result cache (scan/cache.py), exactly as it was stored."""
    return Finding(rule_id, rule_name, severity, message, file, span, obj, container, field_path, source, suppressed,
                   mapped, rendered)


class Emitter:
    """Builds, suppresses and files the findings of one scan.

    `renders`: the name each chart or kustomization render of the scan gives its
    output (RenderedFrom.name) -> that render, so that a finding on rendered
    output carries where it comes from without anyone parsing its file name.
    """

    def __init__(self, config: ScanConfig, renders: Mapping[str, RenderedFrom] | None = None) -> None:
        self.config = config
        self.renders = renders or {}

    def finding(self, rule: Rule, message: str, file: str, span: Span, *,
                severity: Severity | None = None, default: Severity | None = None,
                obj: KubeObject | None = None, located_in: KubeObject | None = None,
                container: str | None = None, field_path: str | None = None,
                mapped: list[MappedLocation] | None = None) -> Finding:
        """A finding of `rule`, not yet suppressed.

        Severity: `severity` when given (a violation's own), else the configured
        one for the rule, else `default` (what the rule says for this case), else
        the rule's. `obj`: the object the finding is about; `located_in`: the
        object its position is in (default `obj`), whose template or origin file
        is the finding's source. `field_path` defaults to `line:N`.
        """
        where = located_in if located_in is not None else obj
        return Finding(
            rule_id=rule.id,
            rule_name=rule.name,
            severity=severity or self.config.severity_of(rule.id, default or rule.severity),
            message=message,
            file=file,
            span=span,
            obj=obj.ref if obj is not None else None,
            container=container,
            field_path=f"line:{span.line}" if field_path is None else field_path,
            source=source_of(where) if where is not None else None,
            mapped=mapped if mapped is not None else [],
            rendered=self.renders.get(file),
        )

    def file(self, report: FileReport, finding: Finding, ctx: SuppressionContext) -> Finding:
        """Apply the scan's suppressors to `finding` and add it to `report`."""
        report.findings.append(apply_suppressors(finding, ctx, self.config.suppressors))
        return finding

    def emit(self, report: FileReport, ctx: SuppressionContext, rule: Rule, message: str, file: str, span: Span,
             *, severity: Severity | None = None, default: Severity | None = None,
             obj: KubeObject | None = None, field_path: str | None = None) -> Finding:
        """A finding (see `finding`), suppressed and added to `report`."""
        finding = self.finding(rule, message, file, span, severity=severity, default=default, obj=obj,
                               field_path=field_path)
        return self.file(report, finding, ctx)
