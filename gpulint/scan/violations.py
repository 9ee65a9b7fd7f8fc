"""From what the rules yield to findings: where a violation points, what its message says about
the object, and the events of the input handed to the input-level rules (GPU000, GPU010, GPU011,
GPU099), all made by the scan's emitter (results/emit.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpulint.api import (
    InputProblem,
    KeyAt,
    LineAt,
    RenderProblem,
    Rule,
    RuleContext,
    Severity,
    TemplateDocument,
    TextAt,
    UnreadInput,
    UnrenderedTemplate,
    Violation,
)
from gpulint.inputs.discovery import Input
from gpulint.load.decode import DecodeError
from gpulint.load.locations import Span
from gpulint.load.yamlload import Document, LoadError, Problem
from gpulint.model.index import ConfigIndex
from gpulint.model.objects import KubeObject
from gpulint.model.podpatch import outer_text
from gpulint.model.workload import Container, Workload
from gpulint.results.emit import Emitter
from gpulint.results.findings import STATUS_TEMPLATE, FileReport, Finding, RenderedFrom, stable_path
from gpulint.results.scanning import ScanConfig, SuppressionContext

if TYPE_CHECKING:
    from gpulint.render import Mapper


# Words whose presence in a value a duplicate key hides is worth naming in the message.
_HIDDEN_WORDS = ("NVIDIA_VISIBLE_DEVICES", "nvidia.com/gpu", "privileged", "hostPath", "/dev/nvidia",
                 "runtimeClassName", "docker.sock", "containerd.sock")


_ROLE_WORDS = {"container": "container", "init": "init container", "ephemeral": "ephemeral container"}


class ScanContext:
    """What every input of one scan is checked with: the configuration, the index, the
    emitter of its findings, and each rule's context (its options, the index, the
    settings), the same for every input, so made once (per rule) instead of per file."""

    def __init__(self, config: ScanConfig, index: ConfigIndex, inputs: list[Input]) -> None:
        self.config = config
        self._config = config
        self._index = index
        self.emitter = Emitter(config, render_names(inputs), self)
        self._cache: dict[str, RuleContext] = {}
        self._checks: list[tuple[Rule, Any, RuleContext]] | None = None

    def checks(self) -> list[tuple[Rule, Any, RuleContext]]:
        """(rule, its workload check, its context) for the enabled rules that check workloads."""
        if self._checks is None:
            self._checks = [(rule, rule.check, self(rule)) for rule in self._config.rules if rule.check is not None]
        return self._checks

    def __call__(self, rule: Rule) -> RuleContext:
        ctx = self._cache.get(rule.id)
        if ctx is None:
            options = {**rule.options, **self._config.options.get(rule.id, {})}
            ctx = RuleContext(options, self._index, self._config.settings)
            self._cache[rule.id] = ctx
        return ctx


def render_names(inputs: list[Input]) -> dict[str, RenderedFrom]:
    """The name of each render's output in the scan (what a finding on it has as its file) -> the render."""
    renders = (RenderedFrom.of(item.display, item.values.label if item.values is not None else None)
               for item in inputs if item.kind.rendered)
    return {render.name: render for render in renders}


def unread_input(report: FileReport, contexts: ScanContext, display: str, target: str | None) -> None:
    """An input not read: a link out of the scanned directory, a kernel filesystem (the rules with an
    unread hook: GPU099)."""
    contexts.emitter.event(report, SuppressionContext(None, None, None, None, 0), _unread_hook,
                           UnreadInput(display, target), display)


def invalid_input(report: FileReport, contexts: ScanContext, span: Span, message: str,
             obj: KubeObject | None = None, doc: Document | None = None, file: str | None = None,
             mapped: list | None = None, file_text: str | None = None, severity: Severity | None = None) -> None:
    """Input that cannot be read as manifests (the rules with an input hook: GPU000). `file_text` (when
    there is no document) lets suppressors read the file's lines."""
    sctx = SuppressionContext(None, None, obj, doc.text if doc else file_text, doc.line_offset if doc else 0)
    contexts.emitter.event(report, sctx, _input_hook, InputProblem(message, _line_at(span), severity),
                           file or (obj.file if obj else report.file), obj=obj, located_in=obj,
                           mapped=mapped or [])


def render_problem(report: FileReport, contexts: ScanContext, problem: Any) -> None:
    """Report GPU010 (render-failed) when it is enabled."""
    span = problem.span
    contexts.emitter.event(report, SuppressionContext(None, None, None, problem.text, problem.line_offset), _render_hook,
                           RenderProblem(problem.message, _line_at(span), problem.severity), problem.file)


def decode_problem(report: FileReport, contexts: ScanContext, error: DecodeError) -> None:
    invalid_input(report, contexts, Span(error.line, error.column, error.line, error.column + 1), error.message)


def unrendered_template(report: FileReport, contexts: ScanContext, display: str, templates: list[LoadError],
                file_text: str | None) -> None:
    """An unrendered template (the rules with a template hook: GPU011), from its documents that failed."""
    report.status = STATUS_TEMPLATE
    first = templates[0]
    # Infrastructure's findings are exempt only while roles exempt them (not with --no-default-exemptions).
    by_role = any(getattr(suppressor, "roles", False) for suppressor in contexts.config.suppressors)
    template = UnrenderedTemplate(display, tuple(
        TemplateDocument(error.line, error.column, error.message, error.literal_checked,
                         None if error.unknown is None else (error.unknown.line, error.unknown.column,
                                                             error.unknown.describe()),
                         error.workload_shaped, bool(error.infrastructure and by_role))
        for error in templates), first.template_syntax, first.helm)
    contexts.emitter.event(report, SuppressionContext(None, None, None, file_text, 0), _template_hook, template, display)


def workload_finding(emitter: Emitter, rule: Rule, violation: Violation, workload: Workload, span: Span,
             mapped: list) -> Finding:
    obj = workload.obj
    target = violation.located_in or obj
    container = violation.container
    where_path = getattr(violation.where, "path", ())
    return emitter.finding(rule, f"{violation.message} ({_describe(obj, container)})", target.file, span,
                           severity=violation.severity, obj=obj, located_in=target,
                           container=container.name if container else None,
                           field_path=stable_path(target, where_path), mapped=mapped)


def _describe(obj: KubeObject, container: Container | None) -> str:
    text = obj.ref.describe()
    if container is not None:
        text += f', {_ROLE_WORDS.get(container.role, "container")} "{container.name}"'
    return text


def locate(doc: Document, where: Any) -> Span:
    """Span of a violation's target; the nearest existing ancestor if the exact node is gone."""
    if isinstance(where, TextAt):
        span = doc.text_span(where.path, where.start, where.end)
        if span is not None:
            return span
    path = tuple(getattr(where, "path", ()))
    if isinstance(where, KeyAt):
        span = doc.span(path, key=True)
        if span is not None:
            return span
    while True:
        span = doc.span(path)
        if span is not None:
            return span
        if not path:
            return Span(doc.line_offset + 1, 1, doc.line_offset + 1, 1)
        path = path[:-1]


def dotted_path(obj: KubeObject, path: tuple) -> str:
    rel = path[len(obj.base):]
    out = ""
    for item in rel:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def mapped_locations(mapper: Mapper | None, display: str, obj: KubeObject, where: Any) -> list:
    """Template/values/origin locations; mapping is best effort and never costs a finding."""
    if mapper is None or obj.file != display:  # e.g. a ConfigMap of another input
        return []
    try:
        if obj.patch_of is not None:   # a pod-spec patch: mapped as text of the string holding it
            outer = outer_text(obj, tuple(getattr(where, "path", ())))
            if outer is None:
                return []
            obj, where = outer[0], TextAt(outer[1], outer[2], outer[3])
        return mapper.map(obj, where)
    except Exception:  # noqa: BLE001 - a mapping bug must not hide the finding itself
        return []


def about_placeholder(doc: Document, where: Any, span: Span) -> bool:
    """Whether a finding is about an unrendered `{{ ... }}` (at it, or at the key holding it)."""
    if doc.in_placeholder(span):
        return True
    if isinstance(where, KeyAt):
        value = doc.span(where.path)
        return value is not None and doc.in_placeholder(value)
    return False


def problem_finding(doc: Document, problem: Problem) -> tuple[str, Severity | None]:
    """A load problem's message and severity (None: the rule's); for a duplicate key, what the
    ignored value held. gpulint checks the value Kubernetes keeps (the last), so a first value
    cannot hide a bypass from the check: only one that holds what matters is an error (a reviewer
    reads GPU access that never applies, or misses where it moved); any other is info, shown and
    counted without failing the check (a repeated label, for instance)."""
    if problem.hidden_range is None:
        return problem.message, None
    start, end = problem.hidden_range
    hidden = doc.text[start:end]
    words = [word for word in _HIDDEN_WORDS if word in hidden]
    if words:
        return f"{problem.message}; the ignored value holds {', '.join(words)}", None
    return problem.message, Severity.INFO


# The hooks of the input-level rules (api.py), by the event each checks.
def _input_hook(rule: Rule) -> Any:
    return rule.check_input


def _render_hook(rule: Rule) -> Any:
    return rule.check_render


def _template_hook(rule: Rule) -> Any:
    return rule.check_template


def _unread_hook(rule: Rule) -> Any:
    return rule.check_unread


def _line_at(span: Span) -> LineAt:
    return LineAt(span.line, span.column, span.end_line, span.end_column)
