"""The one place a `Finding` is made (tests/test_architecture.py keeps it so).

Whatever reports something (a rule on a workload or a Dockerfile, the checks of
unreadable input, of renders and of suppressions), the finding is built here
the same way: the rule's name and effective severity, the object it is about,
the file of the repository that object was written in, the render it comes
from, and then the suppressors' verdict. A finding is never dropped by a
suppressor, only marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from gpulint.api import LineAt, Rule, RuleContext, Severity
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
    from gpulint.api import Violation
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


# Which hook of a rule checks an event of the input (api.py: InputProblem -> Rule.check_input, ...).
Hook = Callable[[Rule], "Callable[[Any, RuleContext], Iterable[Violation]] | None"]


class Emitter:
    """Builds, suppresses and files the findings of one scan.

    `renders`: the name each chart or kustomization render of the scan gives its
    output (RenderedFrom.name) -> that render, so that a finding on rendered
    output carries where it comes from without anyone parsing its file name.
    `rule_context`: each rule's context in this scan (default: its options and
    the settings, with an empty index).
    """

    def __init__(self, config: ScanConfig, renders: Mapping[str, RenderedFrom] | None = None,
                 rule_context: Callable[[Rule], RuleContext] | None = None) -> None:
        self.config = config
        self.renders = renders or {}
        self._rule_context = rule_context

    def rule_context(self, rule: Rule) -> RuleContext:
        if self._rule_context is not None:
            return self._rule_context(rule)
        from gpulint.model.index import ConfigIndex

        return RuleContext({**rule.options, **self.config.options.get(rule.id, {})}, ConfigIndex(),
                           self.config.settings)

    def event(self, report: FileReport, ctx: SuppressionContext, hook: Hook, event: object, file: str, *,
              obj: KubeObject | None = None, located_in: KubeObject | None = None, field_path: str | None = None,
              mapped: list[MappedLocation] | None = None) -> None:
        """Hand `event` (something of the input, api.py) to the enabled rules with that hook, and file
        their violations at `file` (positions: LineAt). `obj`, `located_in`, `field_path`: as for
        `finding`."""
        for rule in self.config.rules:
            check = hook(rule)
            if check is None:
                continue
            for violation in check(event, self.rule_context(rule)):
                where = violation.where
                span = (Span(where.line, where.column, where.end_line, where.end_column)
                        if isinstance(where, LineAt) else Span(1, 1, 1, 1))
                finding = self.finding(rule, violation.message, file, span, default=violation.severity, obj=obj,
                                       located_in=located_in, field_path=field_path,
                                       mapped=list(mapped) if mapped is not None else None)
                self.file(report, finding, ctx)

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
