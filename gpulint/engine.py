"""The scan: inputs -> documents -> objects -> workloads -> rules -> findings.

Every input ends with exactly one status (see findings.STATUSES), so the summary
accounts for every file. Unreadable or malformed input becomes a GPU000 finding
at the parser's position and the scan goes on.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from gpulint import dockerfile as dockerfile_mod
from gpulint.api import KeyAt, LineAt, Rule, RuleContext, Severity, TextAt, ValueAt, Violation
from gpulint.decode import BinaryInput, DecodeError, decode
from gpulint.discovery import Input
from gpulint.findings import (
    INVALID_INPUT, STATUS_BINARY, STATUS_ERROR, STATUS_NOT_KUBERNETES,
    STATUS_SCANNED, FileReport, Finding,
)
from gpulint.index import ConfigIndex
from gpulint.locations import Span
from gpulint.model import Container, Workload
from gpulint.objects import KubeObject, objects_in
from gpulint.podspecs import workload_of
from gpulint.render import Mapper, Rendered, RenderOptions, render, source_mapper
from gpulint.suppress import ScanHook, SuppressionContext, Suppressor, apply as apply_suppressors
from gpulint.yamlload import DEFAULT_LIMITS, Document, Limits, LoadError, load_documents

HELM_HINT = ("it looks like an unrendered Helm template: scan its chart directory, or render it first, "
             "e.g. `helm template RELEASE CHART | gpulint scan -`")
RENDERED_KINDS = ("chart", "kustomization")
_ROLE_WORDS = {"container": "container", "init": "init container", "ephemeral": "ephemeral container"}


@dataclass
class ScanConfig:
    rules: list[Rule]                                   # enabled rules, in id order
    all_rules: dict[str, Rule] = field(default_factory=dict)
    options: dict[str, dict] = field(default_factory=dict)       # per-rule option values
    severities: dict[str, Severity] = field(default_factory=dict)  # per-rule overrides
    settings: dict[str, Any] = field(default_factory=dict)
    limits: Limits = DEFAULT_LIMITS
    report_invalid_input: bool = True                   # GPU000 enabled
    suppressors: list[Suppressor] = field(default_factory=list)  # applied in order
    hooks: list[ScanHook] = field(default_factory=list)          # see suppress.ScanHook
    render: RenderOptions = field(default_factory=RenderOptions)  # Helm/Kustomize settings

    def severity_of(self, rule_id: str, default: Severity) -> Severity:
        return self.severities.get(rule_id, default)


@dataclass
class ScanResult:
    files: list[FileReport]
    internal_errors: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        out = [f for report in self.files for f in report.findings]
        out.sort(key=Finding.sort_key)
        return out


class InputReader:
    """Reads each input once; stdin can only be read once, so it is kept.

    Charts and kustomizations are rendered once too, for the index pass and the scan.
    """

    def __init__(self, render_options: RenderOptions | None = None) -> None:
        self._stdin: bytes | None = None
        self._render_options = render_options or RenderOptions()
        self._rendered: dict[str, Rendered] = {}

    def rendered(self, item: Input) -> Rendered:
        key = str(item.real)
        if key not in self._rendered:
            self._rendered[key] = render(item.kind, item.real, item.display, self._render_options)
        return self._rendered[key]

    def read(self, item: Input) -> bytes:
        if item.kind == "stdin":
            if self._stdin is None:
                self._stdin = sys.stdin.buffer.read()
            return self._stdin
        assert item.real is not None
        return item.real.read_bytes()


def scan(inputs: list[Input], config: ScanConfig, reader: InputReader | None = None) -> ScanResult:
    reader = reader or InputReader(config.render)
    index = build_index(inputs, reader, config.limits)
    result = ScanResult([])
    for item in inputs:
        try:
            result.files.append(scan_input(item, config, index, reader))
        except Exception as error:  # a bug in gpulint or a plugin: say where, keep going
            result.internal_errors.append(
                f"{item.display}: internal error: {type(error).__name__}: {error}"
            )
            result.files.append(FileReport(item.display, STATUS_ERROR))
    for hook in config.hooks:
        hook.scan_done(result, config)
    return result


def build_index(inputs: list[Input], reader: InputReader, limits: Limits) -> ConfigIndex:
    """First pass: ConfigMaps and Secrets of the whole scan."""
    index = ConfigIndex()
    for item in inputs:
        display = item.display
        if item.kind in RENDERED_KINDS:
            rendered = reader.rendered(item)
            if rendered.text is None or ("ConfigMap" not in rendered.text and "Secret" not in rendered.text):
                continue
            text, display = rendered.text, rendered.display
        elif item.kind in ("manifest", "stdin"):
            try:
                data = reader.read(item)
            except OSError:
                continue
            if b"ConfigMap" not in data and b"Secret" not in data:
                continue
            try:
                text = decode(data)
            except (BinaryInput, DecodeError):
                continue
        else:
            continue
        for doc in load_documents(text, limits):
            if isinstance(doc, Document):
                for obj in objects_in(display, doc):
                    index.add(obj)
    return index


def scan_input(item: Input, config: ScanConfig, index: ConfigIndex, reader: InputReader) -> FileReport:
    report = FileReport(item.display, STATUS_SCANNED)
    if item.kind in RENDERED_KINDS:
        rendered = reader.rendered(item)
        if rendered.failure is not None or rendered.text is None:
            failure = rendered.failure
            report.status = failure.status if failure else STATUS_ERROR
            _invalid(report, config, failure.span if failure else Span(1, 1, 1, 1),
                     failure.message if failure else "rendering produced no output",
                     file=failure.file if failure else None)
            return report
        _scan_text(report, rendered.display, rendered.text, config, _ContextFactory(config, index),
                   rendered.mapper)
        for hook in config.hooks:
            hook.file_done(report, rendered.text, config)
        return report
    if item.kind == "unreadable-dir":
        report.status = STATUS_ERROR
        _invalid(report, config, Span(1, 1, 1, 1), "cannot read directory")
        return report
    try:
        data = reader.read(item)
    except OSError as error:
        report.status = STATUS_ERROR
        _invalid(report, config, Span(1, 1, 1, 1), f"cannot read file: {error.strerror or error}")
        return report
    try:
        text = decode(data)
    except BinaryInput:
        report.status = STATUS_BINARY
        return report
    except DecodeError as error:
        report.status = STATUS_ERROR
        _invalid(report, config, Span(error.line, error.column, error.line, error.column + 1), error.message)
        return report

    ctx_for = _ContextFactory(config, index)
    if item.kind == "dockerfile":
        _scan_dockerfile(item.display, text, report, config, ctx_for)
        for hook in config.hooks:
            hook.file_done(report, text, config)
        return report
    _scan_text(report, item.display, text, config, ctx_for, source_mapper(text, config.render))
    for hook in config.hooks:
        hook.file_done(report, text, config)
    return report


def _scan_text(report: FileReport, display: str, text: str, config: ScanConfig, ctx_for: "_ContextFactory",
               mapper: Mapper | None) -> None:
    """Documents -> objects -> rules; `mapper` maps findings on rendered text back to their sources."""
    found_objects = False
    for doc in load_documents(text, config.limits):
        if isinstance(doc, LoadError):
            message = doc.message
            if "{{" in text:
                message = f"{message}; {HELM_HINT}"
            _invalid(report, config, Span(doc.line, doc.column, doc.line, doc.column + 1), message,
                     file=display, file_text=text)
            continue
        report.documents += 1
        objects = list(objects_in(display, doc))
        if mapper is not None:
            for obj in objects:
                mapper.prepare(obj)
        if objects:
            found_objects = True
            for problem in doc.problems:
                _invalid(report, config, problem.span, problem.message, doc=doc, file=display)
        for obj in objects:
            report.objects += 1
            workload = workload_of(obj)
            if workload is None:
                continue
            report.workloads += 1
            for type_problem in workload.problems:
                span = _locate(doc, ValueAt(type_problem.path))
                _invalid(report, config, span, f"{type_problem.message} (at {_dotted(obj, type_problem.path)})",
                         obj=obj, doc=doc, mapped=_mapped(mapper, display, obj, ValueAt(type_problem.path)))
            for rule in config.rules:
                if rule.check is None:
                    continue
                for violation in rule.check(workload, ctx_for(rule)):
                    finding = _finding(rule, violation, workload, config)
                    target = violation.located_in or obj
                    finding.mapped = _mapped(mapper, display, target, violation.where)
                    sctx = SuppressionContext(workload, violation.container, obj, target.doc.text,
                                              target.doc.line_offset)
                    report.findings.append(apply_suppressors(finding, sctx, config.suppressors))
    if not found_objects and not report.findings:
        report.status = STATUS_NOT_KUBERNETES



def _mapped(mapper: Mapper | None, display: str, obj: KubeObject, where: Any) -> list:
    """Template/values/origin locations; mapping is best effort and never costs a finding."""
    if mapper is None or obj.file != display:  # e.g. a ConfigMap of another input
        return []
    try:
        return mapper.map(obj, where)
    except Exception:  # noqa: BLE001 - a mapping bug must not hide the finding itself
        return []


class _ContextFactory:
    def __init__(self, config: ScanConfig, index: ConfigIndex) -> None:
        self._config = config
        self._index = index
        self._cache: dict[str, RuleContext] = {}

    def __call__(self, rule: Rule) -> RuleContext:
        ctx = self._cache.get(rule.id)
        if ctx is None:
            options = {**rule.options, **self._config.options.get(rule.id, {})}
            ctx = RuleContext(options, self._index, self._config.settings)
            self._cache[rule.id] = ctx
        return ctx


def _scan_dockerfile(display: str, text: str, report: FileReport, config: ScanConfig,
                     ctx_for: _ContextFactory) -> None:
    parsed = dockerfile_mod.parse(display, text)
    report.documents += 1
    for rule in config.rules:
        if rule.check_dockerfile is None:
            continue
        for violation in rule.check_dockerfile(parsed, ctx_for(rule)):
            where = violation.where
            span = (Span(where.line, where.column, where.end_line, where.end_column)
                    if isinstance(where, LineAt) else Span(1, 1, 1, 1))
            finding = Finding(
                rule.id, rule.name, violation.severity or config.severity_of(rule.id, rule.severity),
                violation.message, display, span, field_path=f"line:{span.line}",
            )
            sctx = SuppressionContext(None, None, None, text, 0)
            report.findings.append(apply_suppressors(finding, sctx, config.suppressors))


def _invalid(report: FileReport, config: ScanConfig, span: Span, message: str,
             obj: KubeObject | None = None, doc: Document | None = None, file: str | None = None,
             mapped: list | None = None, file_text: str | None = None) -> None:
    """Report GPU000. `file_text` (when there is no document) lets suppressors read the file's lines."""
    if not config.report_invalid_input:
        return
    rule = config.all_rules.get(INVALID_INPUT)
    name = rule.name if rule else "invalid-input"
    severity = config.severity_of(INVALID_INPUT, rule.severity if rule else Severity.ERROR)
    finding = Finding(
        INVALID_INPUT, name, severity, message, file or (obj.file if obj else report.file), span,
        obj=obj.ref if obj else None, field_path=f"line:{span.line}",
        source=_source_of(obj) if obj else None, mapped=mapped or [],
    )
    sctx = SuppressionContext(None, None, obj, doc.text if doc else file_text, doc.line_offset if doc else 0)
    report.findings.append(apply_suppressors(finding, sctx, config.suppressors))


def _finding(rule: Rule, violation: Violation, workload: Workload, config: ScanConfig) -> Finding:
    obj = workload.obj
    target = violation.located_in or obj
    span = _locate(target.doc, violation.where)
    container = violation.container
    where_path = getattr(violation.where, "path", ())
    return Finding(
        rule_id=rule.id,
        rule_name=rule.name,
        severity=violation.severity or config.severity_of(rule.id, rule.severity),
        message=f"{violation.message} ({_describe(obj, container)})",
        file=target.file,
        span=span,
        obj=obj.ref,
        container=container.name if container else None,
        field_path=_stable_path(target, where_path),
        source=_source_of(target),
    )


def _describe(obj: KubeObject, container: Container | None) -> str:
    text = obj.ref.describe()
    if container is not None:
        text += f', {_ROLE_WORDS.get(container.role, "container")} "{container.name}"'
    return text


def _source_of(obj: KubeObject) -> dict | None:
    if obj.template:
        return {"template": obj.template}
    if obj.origin and isinstance(obj.origin.get("path"), str):
        return {"origin": obj.origin["path"]}
    return None


def _locate(doc: Document, where: Any) -> Span:
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


def _stable_path(obj: KubeObject, path: Iterable) -> str:
    """A path that survives reordering: list entries with a name use the name."""
    rel = tuple(path)[len(obj.base):]
    data: Any = obj.data
    out = ""
    for item in rel:
        if isinstance(item, int):
            entry = data[item] if isinstance(data, list) and item < len(data) else None
            name = entry.get("name") if isinstance(entry, dict) else None
            out += f"[name={name}]" if isinstance(name, str) and name else f"[{item}]"
            data = entry
        else:
            out += f".{item}" if out else str(item)
            data = data.get(item) if isinstance(data, dict) else None
    return out


# Public: suppressors match a finding's field_path against pod templates.
stable_path = _stable_path


def _dotted(obj: KubeObject, path: tuple) -> str:
    rel = path[len(obj.base):]
    out = ""
    for item in rel:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def iter_findings(results: Iterable[FileReport]) -> Iterator[Finding]:
    for report in results:
        yield from report.findings
