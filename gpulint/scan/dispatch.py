"""Scanning one input, by its kind: a manifest or stdin (whole, streamed or in parts), a Dockerfile,
a chart or kustomization (its render, or its files as they are when it was not built).

Unreadable or malformed input becomes a GPU000 finding at the parser's position
and the scan goes on; but a file that does not parse and shows no sign of being
a Kubernetes object (load/sniff.py) is counted as not Kubernetes, with no
finding, and an unrendered template outside a chart is one GPU011 finding for
the whole file.
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from gpulint.api import LITERAL_NOTE, LineAt, Severity, ValueAt
from gpulint.config.render import RenderOptions
from gpulint.fix.valuesedits import attach as attach_fix
from gpulint.inputs.discovery import Input
from gpulint.inputs.notread import not_read_report
from gpulint.load.decode import BinaryInput, ReadError, Text, decode_lenient
from gpulint.load.locations import Span
from gpulint.load.yamlload import KEEPS_LAST, Document, Limits, LoadError, load_documents, load_stream
from gpulint.model.index import ConfigIndex
from gpulint.model.objects import objects_in
from gpulint.model.podspecs import workload_of
from gpulint.model.valuesfile import is_remote_values, values_objects
from gpulint.model.workload import Workload
from gpulint.results.findings import (
    STATUS_BINARY,
    STATUS_ERROR,
    STATUS_NOT_KUBERNETES,
    STATUS_SCANNED,
    STATUS_UNPARSEABLE,
    FileReport,
)
from gpulint.results.inputkind import InputKind
from gpulint.results.scanning import ScanConfig, SuppressionContext
from gpulint.scan.indexing import documents_of
from gpulint.scan.reader import InputReader
from gpulint.scan.violations import (
    ScanContext,
    about_placeholder,
    decode_problem,
    dotted_path,
    invalid_input,
    locate,
    mapped_locations,
    problem_finding,
    render_problem,
    unread_input,
    unrendered_template,
    workload_finding,
)

if TYPE_CHECKING:
    from gpulint.render import Mapper


# Documents of one file that fail to load are listed up to this many; the rest is counted.
MAX_LOAD_ERRORS = 100


def scan_input(item: Input, config: ScanConfig, index: ConfigIndex, reader: InputReader,
               contexts: ScanContext | None = None) -> FileReport:
    """Scan one input. `contexts`: the scan's context for `config` and `index`, made once
    per scan by the caller (made here when not given)."""
    contexts = contexts or ScanContext(config, index, [item])
    if not item.kind.read:
        report = not_read_report(item)
        if item.kind is InputKind.NOT_FOLLOWED:
            unread_input(report, contexts, item.display, item.target)
        return report
    report = FileReport(item.display, STATUS_SCANNED)
    if item.kind.rendered:
        _scan_rendered(report, reader.rendered(item), config, contexts)
        return report
    if item.kind is InputKind.UNREADABLE_DIR:
        report.status = STATUS_ERROR
        invalid_input(report, contexts, Span(1, 1, 1, 1), "cannot read directory")
        return report
    try:
        if item.real is not None and config.limits.max_file_size is not None:
            from gpulint.load.regular import check_size     # (an oversized file is never opened)

            check_size(item.real, config.limits.max_file_size)
        data = reader.small(item)
        if data is not None:
            _scan_text(report, item, Text.of(data), config, contexts, reader)
            return report
        with reader.open(item) as stream:
            if item.kind is InputKind.DOCKERFILE:
                text, decode_error = decode_lenient(stream.read())
                if decode_error is not None:
                    decode_problem(report, contexts, decode_error)
                _scan_dockerfile(item.display, text, report, config, contexts)
                _text_done(report, text, 0, config)
                return report
            _scan_text(report, item, Text(stream), config, contexts, reader)
    except BinaryInput:
        report.status = STATUS_BINARY
        return report
    except (OSError, ReadError) as error:
        reason = error.reason if isinstance(error, ReadError) else (error.strerror or str(error))
        if not report.documents:
            report.status = STATUS_ERROR
        target = _dangling_target(item) if isinstance(error, OSError) and error.errno == errno.ENOENT else None
        if target is not None:
            # No file behind it: nothing a bypass could hide in, and nothing Kubernetes is ever given.
            invalid_input(report, contexts, Span(1, 1, 1, 1), f"symbolic link to {target}, which does not exist: "
                          "nothing to scan", severity=Severity.INFO)
            return report
        invalid_input(report, contexts, Span(1, 1, 1, 1), f"cannot read file: {reason}")
        return report
    return report


def _scan_rendered(report: FileReport, rendered: Any, config: ScanConfig, contexts: ScanContext) -> None:
    """A chart or kustomization: its render problems (GPU010), then its rendered text, or the
    files scanned as they are when it was not built (see render.Rendered)."""
    from gpulint.render.base import RenderFailure  # a chart or kustomization was rendered: already imported

    for problem in rendered.problems:
        render_problem(report, contexts, problem)
    failure = rendered.failure
    if failure is None and rendered.text is None and not rendered.plain and not rendered.problems:
        failure = RenderFailure("rendering produced no output", report.file, Span(1, 1, 1, 1), STATUS_ERROR)
    if failure is not None:
        report.status = failure.status
        if not failure.repeat:   # a chart's other render failing as its defaults did: said once, there
            if rendered.literal:
                failure = _scan_literal(report, rendered.literal, failure, config, contexts)
            render_problem(report, contexts, failure)
        return
    found = False
    if rendered.text is not None:
        found = _scan_documents(report, rendered.display, load_documents(rendered.text, config.limits),
                                config, contexts, rendered.mapper, rendered.text, plain=False)
        _text_done(report, rendered.text, 0, config)
    for display, path, given in rendered.plain:
        text = given if given is not None else _plain_text(report, contexts, display, path)
        if text is not None:
            found |= _scan_documents(report, display, load_documents(text, config.limits), config, contexts,
                                     None, text)
    if not found and rendered.problems and rendered.text is None:
        report.status = rendered.problems[0].status   # not built, and nothing of it scanned
    elif not found and not report.findings:
        report.status = STATUS_NOT_KUBERNETES


def _scan_literal(report: FileReport, files: list, failure: Any, config: ScanConfig,
                  contexts: ScanContext) -> Any:
    """A chart Helm did not render: its templates checked as literal text, as a loose template
    is (load/unrendered.py), findings at template lines. No GPU011 per template: the chart's
    failure (returned, its message completed) says it once, with what could not be read even so."""
    from gpulint.record import replace

    unread: list[tuple[str, LoadError]] = []
    for display, path, given in files:
        text = given if given is not None else _plain_text(report, contexts, display, path)
        if text is None:
            continue
        errors: list[LoadError] = []
        _scan_documents(report, display, load_documents(text, config.limits), config, contexts, None, text,
                        unread=errors)
        unread += [(display, error) for error in errors if error.kubernetes and not error.literal_checked]
    message = (f"{failure.message}; the chart was not rendered, so its {len(files)} template "
               f"{'file was' if len(files) == 1 else 'files were'} read as literal text instead: {LITERAL_NOTE}")
    if unread:
        display, first = unread[0]
        message += (f"; {len(unread)} {'document' if len(unread) == 1 else 'documents'} could not be read even "
                    f"so (first: {display}:{first.line}: {first.message})")
    return replace(failure, message=message)


def _plain_text(report: FileReport, contexts: ScanContext, display: str, path: Any) -> str | None:
    """A local file of a kustomization that was not built, decoded; a problem with it is GPU000."""
    try:
        text, problem = decode_lenient(path.read_bytes())
    except BinaryInput:
        return None
    except OSError as error:
        invalid_input(report, contexts, Span(1, 1, 1, 1), f"cannot read file: {error.strerror or error}", file=display)
        return None
    if problem is not None:
        invalid_input(report, contexts, Span(problem.line, problem.column, problem.line, problem.column + 1),
                 problem.message, file=display)
    return text


class PartFailed(Exception):
    """A part of a stream that cannot be scanned on its own (text that does not decode, a
    document that does not load): the caller scans the whole input in one piece instead."""


# A part of a large stream (see parallel.split_points): its first and end byte, and the
# 0-based line and the document number it starts at.
Part = tuple[int, int, int, int]


def scan_part(item: Input, config: ScanConfig, contexts: ScanContext, part: Part) -> tuple[FileReport, bool]:
    """Scan the documents of one part of a large UTF-8 manifest: (its report, whether it held
    Kubernetes objects). The parts' reports, in order, add up to the input's (parallel.py
    merges them); PartFailed when the input must be scanned whole instead."""
    import codecs

    start, end, first_line, first_index = part
    report = FileReport(item.display, STATUS_SCANNED)
    assert item.real is not None
    with open(item.real, "rb") as handle:
        handle.seek(start)

        def blocks() -> Iterator[str]:
            decoder = codecs.getincrementaldecoder("utf-8")("strict")
            left = end - start
            while left > 0:
                data = handle.read(min(left, 1 << 20))
                if not data:
                    raise PartFailed("the file changed")
                left -= len(data)
                if b"\0" in data or b"\r" in data:
                    raise PartFailed("text the stream reader treats specially")
                try:
                    yield decoder.decode(data, final=left <= 0)
                except UnicodeDecodeError as error:
                    raise PartFailed("not UTF-8") from error

        documents = load_stream(blocks(), config.limits, first_line=first_line, first_index=first_index)
        found = _scan_documents(report, item.display, _loaded_only(documents), config, contexts, None, None)
    return report, found


def _loaded_only(documents: Iterable[Document | LoadError]) -> Iterator[Document]:
    for doc in documents:
        if isinstance(doc, LoadError):  # its report depends on the errors before it (MAX_LOAD_ERRORS)
            raise PartFailed(doc.message)
        yield doc


def _scan_text(report: FileReport, item: Input, source: Text, config: ScanConfig, contexts: ScanContext,
               reader: InputReader) -> None:
    """Scan a manifest's text (whole, or streamed while `source`'s stream is open)."""
    whole = source.whole
    documents = documents_of(source, config.limits, strict_json=item.display.lower().endswith(".json"),
                           parsed=reader.parsed(item), split=reader.split(item))
    kubernetes = _scan_documents(report, item.display, documents, config, contexts,
                                 _source_mapper(whole, config.render) if whole is not None else None,
                                 whole, values_file=item.values_role == "values" or None)
    if source.error is not None:  # known once the stream has been read past it
        decode_problem(report, contexts, source.error)
    if not kubernetes and not report.findings and report.status == STATUS_SCANNED:
        report.status = STATUS_NOT_KUBERNETES
    if whole is not None:  # a streamed input's text is handed over document by document
        _text_done(report, whole, 0, config)


def _origin_fix(mapper: Any, obj: Any) -> Any:
    """A Kustomize build's fix made in the file that writes the value (fix/kustomize.py)."""
    def made(fix: Any) -> Any:
        from gpulint.fix.kustomize import origin_fix

        try:
            return origin_fix(mapper, obj, fix)
        except Exception:  # noqa: BLE001 - a bug placing the fix must not cost the finding
            return None
    return made


def _source_mapper(text: str, options: RenderOptions) -> Mapper | None:
    """A mapper back to the chart for Helm output (render.source_mapper), imported only when it may apply."""
    if "# Source:" not in text:
        return None
    from gpulint.render import source_mapper

    return source_mapper(text, options)


def _text_done(report: FileReport, text: str, line_offset: int, config: ScanConfig) -> None:
    for hook in config.hooks:
        hook.text_done(report, text, line_offset, config)


def _scan_documents(report: FileReport, display: str, documents: Iterable[Document | LoadError],
                    config: ScanConfig, contexts: ScanContext, mapper: Mapper | None,
                    file_text: str | None, plain: bool = True, unread: list[LoadError] | None = None,
                    values_file: bool | None = None) -> bool:
    """Documents -> objects -> rules; whether the input is Kubernetes (it has objects, or a
    document that failed to load looks like one).

    `mapper` maps findings on rendered text back to their template, values or
    origin files; `file_text` (None when streamed) lets suppressors read lines
    where no document could be loaded. Load errors are reported once the whole
    input is read: with `plain` (a file as written, not a renderer's output),
    those of an input that is not Kubernetes are dropped (its status says so),
    and an unrendered template is one GPU011 finding however many documents it has.
    With `unread` (a chart's template read as literal text), load errors are handed
    there instead of reported: Helm's failure is the chart's finding.
    """
    checks = contexts.checks()
    found_objects = False
    errors: list[LoadError] = []
    load_errors = 0
    unlisted: LoadError | None = None
    for doc in documents:
        if isinstance(doc, LoadError):
            load_errors += 1
            if load_errors > MAX_LOAD_ERRORS:
                unlisted = unlisted or doc  # a file of garbage must not make a million findings
            else:
                errors.append(doc)
            continue
        report.documents += 1
        objects = list(objects_in(display, doc))
        manifest = bool(objects)
        if not objects and plain and (is_remote_values(display) if values_file is None else values_file):
            objects = values_objects(display, doc)   # a values file for a chart not in the tree
        if mapper is not None:
            for obj in objects:
                mapper.prepare(obj)
        if objects:
            found_objects = True
            for problem in doc.problems:
                message, severity = problem_finding(doc, problem)
                if not manifest:   # a values file: Helm, not Kubernetes, reads it
                    message = message.replace(KEEPS_LAST, "Helm keeps only the last value")
                invalid_input(report, contexts, problem.span, message, doc=doc, file=display, severity=severity)
        workloads = []
        for obj in objects:
            report.objects += 1
            workload = workload_of(obj)
            if workload is None:
                continue
            report.workloads += 1
            workloads.append(workload)
            for type_problem in workload.problems:
                span = locate(doc, ValueAt(type_problem.path))
                if doc.placeholders and doc.in_placeholder(span):
                    continue  # the value is an unrendered `{{ ... }}`
                invalid_input(report, contexts, span, f"{type_problem.message} (at {dotted_path(obj, type_problem.path)})",
                         obj=obj, doc=doc, mapped=mapped_locations(mapper, display, obj, ValueAt(type_problem.path)))
            for rule, check, ctx in checks:
                for violation in check(workload, ctx):
                    target = violation.located_in or obj
                    span = locate(target.doc, violation.where)
                    if target.doc.placeholders and about_placeholder(target.doc, violation.where, span):
                        continue  # about a value the template has not rendered yet
                    finding = workload_finding(contexts.emitter, rule, violation, workload, span,
                                       mapped_locations(mapper, display, target, violation.where))
                    if config.fixes and (violation.fix is not None or violation.no_fix is not None):
                        attach_fix(finding, violation, target.doc, not plain,
                                   lambda path, target=target: mapped_locations(mapper, display, target, ValueAt(path)),
                                   _origin_fix(mapper, target) if mapper is not None else None)
                    sctx = SuppressionContext(workload, violation.container, obj, target.doc.text,
                                              target.doc.line_offset)
                    contexts.emitter.file(report, finding, sctx)
        if doc.placeholders and errors and errors[-1].literal_checked and errors[-1].line > doc.line_offset:
            _note_infrastructure(errors[-1], workloads, config.settings)   # the template this doc was read from
        for hook in config.hooks:
            if file_text is None:
                hook.text_done(report, doc.text, doc.line_offset, config)
            hook.document_done(report, doc, workloads, config)
    kubernetes = found_objects or any(error.kubernetes for error in errors)
    if unread is not None:
        unread += errors + ([unlisted] if unlisted is not None else [])
        return kubernetes
    if plain and not kubernetes and (errors or unlisted is not None):
        # Not a manifest: its syntax is not gpulint's business. Limits (nesting, alias bombs) still count.
        if unlisted is not None or any(error.syntax and not error.jsonc for error in errors):
            report.status = STATUS_UNPARSEABLE
        errors = [error for error in errors if not error.syntax]
        unlisted = unlisted if unlisted is not None and not unlisted.syntax else None
    templates = [error for error in errors if error.template]
    for error in errors:
        if not error.template:
            invalid_input(report, contexts, Span(error.line, error.column, error.line, error.column + 1), error.message,
                     file=display, file_text=file_text)
    if templates:
        unrendered_template(report, contexts, display, templates, file_text)
    if unlisted is not None:
        invalid_input(report, contexts, Span(unlisted.line, unlisted.column, unlisted.line, unlisted.column + 1),
                 f"{load_errors - MAX_LOAD_ERRORS} more documents from here on could not be loaded "
                 f"(only the first {MAX_LOAD_ERRORS} are listed)")
    return kubernetes


def _note_infrastructure(error: LoadError, workloads: list[Workload], settings: Any) -> None:
    """Record on a template's error whether every pod of its literal text is GPU infrastructure
    (knowledge/roles.py): its findings are exempt, so what its actions render cannot hide a bypass."""
    from gpulint.knowledge.roles import pod_roles

    roles = [pod_roles(workload, pod, settings) for workload in workloads for pod in workload.pod_specs]
    infrastructure = bool(roles) and all(roles)
    error.infrastructure = infrastructure if error.infrastructure is None else error.infrastructure and infrastructure


def _dangling_target(item: Input) -> str | None:
    """What a symbolic link that resolves to no file names (None: not such a link)."""
    if item.real is None or not os.path.islink(item.real) or os.path.exists(item.real):
        return None
    try:
        return os.readlink(item.real)
    except OSError:
        return None


def _scan_dockerfile(display: str, text: str, report: FileReport, config: ScanConfig,
                     contexts: ScanContext) -> None:
    from gpulint.load import dockerfile as dockerfile_mod

    parsed = dockerfile_mod.parse(display, text)
    image_env = {name: pair.value for name, pair in parsed.effective_env().items()}
    report.documents += 1
    for rule in config.rules:
        if rule.check_dockerfile is None:
            continue
        for violation in rule.check_dockerfile(parsed, contexts(rule)):
            where = violation.where
            span = (Span(where.line, where.column, where.end_line, where.end_column)
                    if isinstance(where, LineAt) else Span(1, 1, 1, 1))
            contexts.emitter.emit(report, SuppressionContext(None, None, None, text, 0, image_env), rule,
                                  violation.message, display, span, severity=violation.severity)
