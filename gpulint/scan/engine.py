"""The scan: inputs -> documents -> objects -> workloads -> rules -> findings.

Every input ends with exactly one status (see findings.STATUSES), so the summary
accounts for every file. Unreadable or malformed input becomes a GPU000 finding
at the parser's position and the scan goes on; but a file that does not parse
and shows no sign of being a Kubernetes object (load/sniff.py) is counted as
not Kubernetes, with no finding, and an unrendered template outside a chart is
one GPU011 finding for the whole file.
"""

from __future__ import annotations

import errno
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from gpulint.api import (
    KeyAt,
    LineAt,
    Rule,
    RuleContext,
    Severity,
    TextAt,
    ValueAt,
    Violation,
)
from gpulint.config.render import RenderOptions
from gpulint.fix.resolve import attach as attach_fix
from gpulint.inputs.discovery import Input
from gpulint.inputs.notread import not_read_report
from gpulint.load.decode import (
    BinaryInput,
    DecodeError,
    ReadError,
    Text,
    decode_lenient,
)
from gpulint.load.locations import Span
from gpulint.load.yamlload import (
    KEEPS_LAST,
    Document,
    Limits,
    LoadError,
    ParsedChunks,
    Problem,
    load_documents,
    load_stream,
)
from gpulint.model.index import ConfigIndex, ConfigSource, source_of
from gpulint.model.objects import HELM_VALUES_KIND, KubeObject, objects_in
from gpulint.model.podspecs import workload_of
from gpulint.model.valuesfile import is_remote_values, values_objects
from gpulint.model.workload import Container, Workload
from gpulint.results.emit import Emitter
from gpulint.results.findings import (
    INVALID_INPUT,
    RENDER_FAILED,
    STATUS_BINARY,
    STATUS_CHART,
    STATUS_ERROR,
    STATUS_NOT_KUBERNETES,
    STATUS_SCANNED,
    STATUS_TEMPLATE,
    STATUS_UNPARSEABLE,
    UNRENDERED_TEMPLATE,
    FileReport,
    Finding,
    RenderedFrom,
    internal_error_message,
    stable_path,
)
from gpulint.results.repeats import drop_values_repeats, fold_repeats
from gpulint.results.scanning import ScanConfig, ScanResult, SuppressionContext
from gpulint.rules.gpu000_invalid_input import RULE as INVALID_INPUT_RULE
from gpulint.results.inputkind import InputKind
from gpulint.scan.reader import InputReader

if TYPE_CHECKING:
    from gpulint.render import Mapper
    from gpulint.scan.cache import ResultCache

HELM_RENDER_HINT = ("scan its chart directory, or render it first, e.g. "
                    "`helm template RELEASE CHART | gpulint scan -`")
LITERAL_NOTE = "only its literal text was checked, each action read as a placeholder"
# An operator's operand manifests are named for the order it applies them in (`0500_daemonset.yaml`).
_APPLY_ORDER_RE = re.compile(r"(?:\A|[/\\])\d+[_-][^/\\]*\Z")
# Documents of one file that fail to load are listed up to this many; the rest is counted.
MAX_LOAD_ERRORS = 100
# Words whose presence in a value a duplicate key hides is worth naming in the message.
_HIDDEN_WORDS = ("NVIDIA_VISIBLE_DEVICES", "nvidia.com/gpu", "privileged", "hostPath", "/dev/nvidia",
                 "runtimeClassName", "docker.sock", "containerd.sock")
_ROLE_WORDS = {"container": "container", "init": "init container", "ephemeral": "ephemeral container"}


def _documents(source: Text, limits: Limits, only: tuple[str, ...] = (), strict_json: bool = False,
               record: ParsedChunks | None = None,
               parsed: ParsedChunks | None = None) -> Iterator[Document | LoadError]:
    whole = source.whole
    if whole is not None:
        return load_documents(whole, limits, only=only, strict_json=strict_json, record=record, parsed=parsed)
    assert source.blocks is not None
    return load_stream(source.blocks, limits, only=only, strict_json=strict_json)


def scan(inputs: list[Input], config: ScanConfig, reader: InputReader | None = None,
         jobs: int | None = 1, progress: Callable[[int, int], None] | None = None,
         cache: ResultCache | None = None) -> ScanResult:
    """Scan `inputs`. `jobs`: processes to scan files in (None: one per idle CPU); the
    result is the same for any number (see parallel.py), and small scans use one.
    `progress(done, total)` is called as inputs are scanned (by a parallel scan, once
    all are). `cache`: where an unchanged scan's result is read from and a new one stored (cache.py)."""
    reader = reader or InputReader(config.render)
    jobs = _start_renders(inputs, reader, jobs)
    try:
        key = cache.key(inputs, config, reader) if cache is not None else None
        if key is not None:
            assert cache is not None
            cached = cache.load(key)
            if cached is not None:
                return cached
        result = _scan(inputs, config, reader, jobs, progress)
    except BaseException:
        reader.finish_renders(interrupted=True)    # no renderer outlives the scan
        raise
    finally:
        reader.finish_renders()
    if key is not None:
        assert cache is not None
        cache.store(key, result)
    return result


def _start_renders(inputs: list[Input], reader: InputReader, jobs: int | None) -> int | None:
    """Start the scan's renders in the background (parallel.render_workers at a time); the jobs
    the scan then plans with: the default is taken now, before the renders load the machine."""
    renders = sum(1 for item in inputs if item.kind.rendered)
    if not renders:
        return jobs
    from gpulint.scan import parallel

    planned = parallel.default_jobs() if jobs is None else jobs
    reader.start_renders(inputs, parallel.render_workers(jobs, renders))
    return planned


def _scan(inputs: list[Input], config: ScanConfig, reader: InputReader, jobs: int | None,
          progress: Callable[[int, int], None] | None) -> ScanResult:
    result = ScanResult([])
    workers = 1
    if (jobs is None or jobs > 1) and (len(inputs) > 1 or inputs and _large(inputs[0])):
        from gpulint.scan import parallel

        workers, sizes = parallel.plan(inputs, config, reader, jobs)
        if workers > 1:
            reader.finish_renders()    # processes are forked next: no render thread may run then
    index = build_index(inputs, reader, config.limits, result.internal_errors, sizes if workers > 1 else None)
    if workers > 1:
        parallel.scan_parallel(inputs, config, index, reader, workers, sizes, result,
                               parallel.Steps(scan_input, ScanContext, scan_part))
        if progress is not None:
            progress(len(inputs), len(inputs))
    else:
        contexts = ScanContext(config, index, inputs)
        for done, item in enumerate(inputs, 1):
            try:
                result.files.append(scan_input(item, config, index, reader, contexts))
            except Exception as error:  # a bug in gpulint or a plugin: say where, keep going
                result.internal_errors.append(internal_error_message(item.display, error))
                result.files.append(FileReport(item.display, STATUS_ERROR))
            if progress is not None:
                progress(done, len(inputs))
    rendered = {id(report) for item, report in zip(inputs, result.files) if item.kind.rendered}
    if any(item.values is not None for item in inputs):
        _merge_renders(inputs, result)
    fold_repeats(result.files, rendered)
    drop_values_repeats(result.files, HELM_VALUES_KIND)
    for hook in config.hooks:
        hook.scan_done(result, config)
    return result


def _rendered_instead(finding: Finding, label: str) -> Finding:
    """A chart's failed defaults render, once another render of it was checked."""
    if finding.severity == Severity.INFO or finding.suppressed is not None:
        return finding
    finding.severity = Severity.INFO
    finding.message += f"; the chart was rendered and checked with {label or 'other values'} instead"
    return finding


def _merge_renders(inputs: list[Input], result: ScanResult) -> None:
    """Fold the reports of a chart's other renders (ci values files, configured values)
    into its defaults report: the chart stays one input in the summary, while each
    finding keeps the name of the render it comes from.

    A finding other renders repeat is folded afterwards (results/repeats.py).
    """
    owners: dict[str | None, FileReport] = {}
    files: list[FileReport] = []
    for item, report in zip(inputs, result.files):
        owner = owners.get(item.real) if item.values is not None else None
        if owner is None:
            files.append(report)
            if item.kind.rendered:
                owners[item.real] = report
            continue
        if owner.status == STATUS_CHART and report.status == STATUS_SCANNED:
            # The defaults did not render and their templates were read as literal text; this
            # render checked them rendered: its findings stand, the literal ones go, and the
            # defaults' failure hides nothing any more (info, saying which render was checked).
            owner.findings[:] = [_rendered_instead(finding, item.values.label if item.values else "")
                                 for finding in owner.findings if finding.rule_id == RENDER_FAILED]
        owner.findings.extend(report.findings)
        owner.documents += report.documents
        owner.objects += report.objects
        owner.workloads += report.workloads
        if owner.status != STATUS_SCANNED and report.status == STATUS_SCANNED:
            owner.status = STATUS_SCANNED   # rendered with some values, if not with its defaults
    result.files[:] = files


def _large(item: Input) -> bool:
    """Whether one input alone may be worth scanning in parts (parallel.SPLIT_MIN)."""
    if item.kind is not InputKind.MANIFEST or item.real is None:
        return False
    try:
        size = os.stat(item.real).st_size
    except OSError:
        return False
    if size < 1 << 20:
        return False
    from gpulint.scan.parallel import SPLIT_MIN

    return size >= SPLIT_MIN


# (Substrings of the documents to index: "ResourceClaim" covers ResourceClaimTemplate too.)
_INDEXED_KINDS = ("ConfigMap", "Secret", "ResourceClaim")
_INDEXED_KINDS_UTF8 = tuple(kind.encode() for kind in _INDEXED_KINDS)


# What the index pass found in one input: its ConfigMaps and Secrets (index.source_of),
# internal errors, and for the scan its bytes and parsed chunks with their size in characters.
Indexed = tuple[list[ConfigSource], list[str], "bytes | None", "ParsedChunks | None", int]


def build_index(inputs: list[Input], reader: InputReader, limits: Limits,
                internal_errors: list[str] | None = None, sizes: list[int | None] | None = None) -> ConfigIndex:
    """First pass: ConfigMaps, Secrets and DRA claims (their device classes) of the whole scan.

    Input errors are ignored here: the second pass reads the same input and
    reports them. A bug is recorded in `internal_errors` and the scan goes on.
    With `sizes` (a parallel scan's, see parallel.plan), a forked helper reads
    about half of the manifests meanwhile (parallel.IndexHelper); either way
    the index takes the inputs in their order.
    """
    helper = None
    if sizes is not None:
        from gpulint.scan.parallel import IndexHelper

        helper = IndexHelper.start(inputs, reader, limits, sizes, index_input)
    mine: dict[int, tuple[list[ConfigSource], list[str]]] = {}
    # Files first, renders last: renders still running in the background (InputReader.start_renders)
    # go on meanwhile. The index takes the inputs in their order whatever the order they are read in.
    order = sorted(range(len(inputs)), key=lambda position: inputs[position].kind.rendered)
    try:
        for position in order:
            item = inputs[position]
            if helper is not None and position in helper.positions:
                continue
            if item.kind.rendered:
                rendered = reader.rendered(item)
                text = rendered.text
                texts = [(rendered.display, text)] if text is not None else []
                texts += [(display, given if given is not None else _read_quietly(path))
                          for display, path, given in (*rendered.plain, *rendered.literal)]
                try:
                    mine[position] = ([source for display, part in texts
                                       if any(kind in part for kind in _INDEXED_KINDS)
                                       for source in _sources(display, load_documents(part, limits,
                                                                                      only=_INDEXED_KINDS))], [])
                except Exception as error:  # a bug in gpulint: say where, keep going
                    mine[position] = ([], [internal_error_message(item.display, error)])
            elif item.kind.manifests:
                mine[position] = _keep(reader, item, index_input(item, reader, limits))
    except BaseException:
        if helper is not None:
            helper.close()
        raise
    found = helper.results() if helper is not None else {}
    index = ConfigIndex()
    for position, item in enumerate(inputs):
        if position in mine:
            objects, errors = mine[position]
        elif position in found:
            objects, errors = _keep(reader, item, found[position])
        elif helper is not None and position in helper.positions:  # the helper failed: read it here
            objects, errors = _keep(reader, item, index_input(item, reader, limits))
        else:
            continue
        for source in objects:
            index.add_source(source)
        if internal_errors is not None:
            internal_errors.extend(errors)
    return index


def _read_quietly(path: Any) -> str:
    """A file's text for the index pass (the scan reports what is wrong with it)."""
    try:
        return decode_lenient(path.read_bytes())[0]
    except (OSError, BinaryInput):
        return ""


def _keep(reader: InputReader, item: Input, indexed: Indexed) -> tuple[list[ConfigSource], list[str]]:
    """Hand an input's bytes and parsed documents to the reader (which keeps what fits) for the scan."""
    objects, errors, data, chunks, size = indexed
    if data is not None:
        reader.keep(item, data)
        if chunks:
            reader.keep_parsed(item, chunks, size)
    return objects, errors


def index_input(item: Input, reader: InputReader, limits: Limits) -> Indexed:
    """What the index pass finds in a manifest or stdin (nothing when it cannot be read)."""
    try:
        data = reader.small(item)
        if data is not None:
            return _index_text(item, Text.of(data), limits)
        with reader.open(item) as stream:
            return _index_text(item, Text(stream), limits)
    except (OSError, ReadError, BinaryInput):
        return [], [], None, None, 0
    except Exception as error:  # a bug in gpulint: say where, keep going
        return [], [internal_error_message(item.display, error)], None, None, 0


def _index_text(item: Input, source: Text, limits: Limits) -> Indexed:
    data = source.data
    if not source.may_contain(_INDEXED_KINDS_UTF8):
        return [], [], data, None, 0
    record: ParsedChunks | None = {} if data is not None else None
    sources = _sources(item.display, _documents(source, limits, only=_INDEXED_KINDS, record=record))
    return sources, [], data, record or None, len(source.whole or "") if record else 0


def _sources(display: str, documents: Iterable[Document | LoadError]) -> list[ConfigSource]:
    """The ConfigMaps and Secrets of `documents`, each made as it is read (its document let go)."""
    return [source for doc in documents if isinstance(doc, Document) for obj in objects_in(display, doc)
            if (source := source_of(obj)) is not None]


def scan_input(item: Input, config: ScanConfig, index: ConfigIndex, reader: InputReader,
               contexts: ScanContext | None = None) -> FileReport:
    """Scan one input. `contexts`: the scan's context for `config` and `index`, made once
    per scan by the caller (made here when not given)."""
    contexts = contexts or ScanContext(config, index, [item])
    if not item.kind.read:
        return not_read_report(item, contexts.emitter)
    report = FileReport(item.display, STATUS_SCANNED)
    if item.kind.rendered:
        _scan_rendered(report, reader.rendered(item), config, contexts)
        return report
    if item.kind is InputKind.UNREADABLE_DIR:
        report.status = STATUS_ERROR
        _invalid(report, contexts, Span(1, 1, 1, 1), "cannot read directory")
        return report
    try:
        data = reader.small(item)
        if data is not None:
            _scan_text(report, item, Text.of(data), config, contexts, reader)
            return report
        with reader.open(item) as stream:
            if item.kind is InputKind.DOCKERFILE:
                text, decode_error = decode_lenient(stream.read())
                if decode_error is not None:
                    _decode_problem(report, contexts, decode_error)
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
            _invalid(report, contexts, Span(1, 1, 1, 1), f"symbolic link to {target}, which does not exist: "
                     "nothing to scan", default=Severity.INFO)
            return report
        _invalid(report, contexts, Span(1, 1, 1, 1), f"cannot read file: {reason}")
        return report
    return report


def _scan_rendered(report: FileReport, rendered: Any, config: ScanConfig, contexts: ScanContext) -> None:
    """A chart or kustomization: its render problems (GPU010), then its rendered text, or the
    files scanned as they are when it was not built (see render.Rendered)."""
    from gpulint.render.base import RenderFailure  # a chart or kustomization was rendered: already imported

    for problem in rendered.problems:
        _render_problem(report, contexts, problem)
    failure = rendered.failure
    if failure is None and rendered.text is None and not rendered.plain and not rendered.problems:
        failure = RenderFailure("rendering produced no output", report.file, Span(1, 1, 1, 1), STATUS_ERROR)
    if failure is not None:
        report.status = failure.status
        if not failure.repeat:   # a chart's other render failing as its defaults did: said once, there
            if rendered.literal:
                failure = _scan_literal(report, rendered.literal, failure, config, contexts)
            _render_problem(report, contexts, failure)
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
    import dataclasses

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
    return dataclasses.replace(failure, message=message)


def _plain_text(report: FileReport, contexts: ScanContext, display: str, path: Any) -> str | None:
    """A local file of a kustomization that was not built, decoded; a problem with it is GPU000."""
    try:
        text, problem = decode_lenient(path.read_bytes())
    except BinaryInput:
        return None
    except OSError as error:
        _invalid(report, contexts, Span(1, 1, 1, 1), f"cannot read file: {error.strerror or error}", file=display)
        return None
    if problem is not None:
        _invalid(report, contexts, Span(problem.line, problem.column, problem.line, problem.column + 1),
                 problem.message, file=display)
    return text


def _render_problem(report: FileReport, contexts: ScanContext, problem: Any) -> None:
    """Report GPU010 (render-failed) when it is enabled."""
    config = contexts.config
    rule = config.all_rules.get(RENDER_FAILED)
    if rule is None or not config.report_render_failed:
        return
    contexts.emitter.emit(report, SuppressionContext(None, None, None, problem.text, problem.line_offset),
                          rule, problem.message, problem.file, problem.span, default=problem.severity)


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
    documents = _documents(source, config.limits, strict_json=item.display.lower().endswith(".json"),
                           parsed=reader.parsed(item))
    kubernetes = _scan_documents(report, item.display, documents, config, contexts,
                                 _source_mapper(whole, config.render) if whole is not None else None,
                                 whole, values_file=item.values_role == "values" or None)
    if source.error is not None:  # known once the stream has been read past it
        _decode_problem(report, contexts, source.error)
    if not kubernetes and not report.findings and report.status == STATUS_SCANNED:
        report.status = STATUS_NOT_KUBERNETES
    if whole is not None:  # a streamed input's text is handed over document by document
        _text_done(report, whole, 0, config)


def _source_mapper(text: str, options: RenderOptions) -> Mapper | None:
    """A mapper back to the chart for Helm output (render.source_mapper), imported only when it may apply."""
    if "# Source:" not in text:
        return None
    from gpulint.render import source_mapper

    return source_mapper(text, options)


def _decode_problem(report: FileReport, contexts: ScanContext, error: DecodeError) -> None:
    _invalid(report, contexts, Span(error.line, error.column, error.line, error.column + 1), error.message)


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
                message = _problem_message(doc, problem)
                if not manifest:   # a values file: Helm, not Kubernetes, reads it
                    message = message.replace(KEEPS_LAST, "Helm keeps only the last value")
                _invalid(report, contexts, problem.span, message, doc=doc, file=display)
        workloads = []
        for obj in objects:
            report.objects += 1
            workload = workload_of(obj)
            if workload is None:
                continue
            report.workloads += 1
            workloads.append(workload)
            for type_problem in workload.problems:
                span = _locate(doc, ValueAt(type_problem.path))
                if doc.placeholders and doc.in_placeholder(span):
                    continue  # the value is an unrendered `{{ ... }}`
                _invalid(report, contexts, span, f"{type_problem.message} (at {_dotted(obj, type_problem.path)})",
                         obj=obj, doc=doc, mapped=_mapped(mapper, display, obj, ValueAt(type_problem.path)))
            for rule, check, ctx in checks:
                for violation in check(workload, ctx):
                    target = violation.located_in or obj
                    span = _locate(target.doc, violation.where)
                    if target.doc.placeholders and _about_placeholder(target.doc, violation.where, span):
                        continue  # about a value the template has not rendered yet
                    finding = _finding(contexts.emitter, rule, violation, workload, span,
                                       _mapped(mapper, display, target, violation.where))
                    if violation.fix is not None or violation.no_fix is not None:
                        attach_fix(finding, violation, target.doc, not plain)
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
            _invalid(report, contexts, Span(error.line, error.column, error.line, error.column + 1), error.message,
                     file=display, file_text=file_text)
    if templates:
        _unrendered(report, contexts, display, templates, file_text)
    if unlisted is not None:
        _invalid(report, contexts, Span(unlisted.line, unlisted.column, unlisted.line, unlisted.column + 1),
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


def _unrendered(report: FileReport, contexts: ScanContext, display: str, templates: list[LoadError],
                file_text: str | None) -> None:
    """The one GPU011 finding of an unrendered template: a warning at the first action that could
    hide a GPU bypass (load/unknowns.py), else info at its first document that failed."""
    report.status = STATUS_TEMPLATE
    first = templates[0]
    go = first.template_syntax == "go"
    operator = go and not first.helm and _APPLY_ORDER_RE.search(display) is not None
    if operator:
        what = ("Go template of an operator's operand manifest (`{{ ... }}`, named for the order it is applied "
                "in, using none of Helm's objects), rendered by the operator itself")
        hint = ""
    elif go and first.helm:
        what = "unrendered Helm template (`{{ ... }}`) outside its chart"
        hint = HELM_RENDER_HINT
    elif go:
        what = "unrendered Go template (`{{ ... }}`, not Helm: it uses none of Helm's objects)"
        hint = "render it with the program it is written for, then scan the output"
    elif first.template_syntax == "jinja":
        what = "unrendered Jinja template (`{{ ... }}`, `{% ... %}`: Ansible, Jinja2)"
        hint = "render it (e.g. Ansible's template module), then scan the output"
    else:
        what = "unrendered template (`${...}`: Terraform templatefile, envsubst)"
        hint = "render it (e.g. `terraform console`, `envsubst`), then scan the output"
    if all(error.literal_checked for error in templates):
        checked = LITERAL_NOTE
    elif any(error.literal_checked for error in templates):
        unread = [error for error in templates if not error.literal_checked]
        checked = (f"{LITERAL_NOTE}; {len(unread)} of its {len(templates)} documents could not be read even "
                   f"so (from line {unread[0].line}: {unread[0].message})")
    else:
        checked = f"it could not be read even with its actions masked, so it was not checked ({first.message})"
    # Infrastructure's findings are exempt only while roles exempt them (not with --no-default-exemptions).
    by_role = any(getattr(suppressor, "roles", False) for suppressor in contexts.config.suppressors)
    unknown = next((error.unknown for error in templates
                    if error.unknown is not None and not (error.infrastructure and by_role)), None)
    hidden = next((error for error in templates if not error.literal_checked and error.workload_shaped), None)
    span = Span(first.line, first.column, first.line, first.column + 1)
    if unknown is not None:
        if not operator:
            span = Span(unknown.line, unknown.column, unknown.line, unknown.column + 1)
        risk = f"{unknown.describe()} is unknown until it is rendered and could hide a GPU bypass"
    elif hidden is not None:
        risk = "the containers of its unread documents could hide a GPU bypass"
    elif any(error.unknown is not None for error in templates):
        risk = ("its pods are GPU infrastructure (by what they mount), whose findings are exempt: what its "
                "actions render cannot hide a bypass")
    else:
        risk = ("no action fills a field that decides GPU access (env, securityContext, command, args, "
                "resources, volumes, runtimeClassName, annotations, the image of a container without a GPU "
                "limit)")
    message = f"{what}: {risk}; {checked}" + (f"; {hint}" if hint else "")
    config = contexts.config
    rule = config.all_rules.get(UNRENDERED_TEMPLATE)
    if rule is None or not any(enabled.id == UNRENDERED_TEMPLATE for enabled in config.rules):
        return
    quiet = operator or (unknown is None and hidden is None)
    contexts.emitter.emit(report, SuppressionContext(None, None, None, file_text, 0), rule, message, display, span,
                          default=Severity.INFO if quiet else None)


def _about_placeholder(doc: Document, where: Any, span: Span) -> bool:
    """Whether a finding is about an unrendered `{{ ... }}` (at it, or at the key holding it)."""
    if doc.in_placeholder(span):
        return True
    if isinstance(where, KeyAt):
        value = doc.span(where.path)
        return value is not None and doc.in_placeholder(value)
    return False


def _mapped(mapper: Mapper | None, display: str, obj: KubeObject, where: Any) -> list:
    """Template/values/origin locations; mapping is best effort and never costs a finding."""
    if mapper is None or obj.file != display:  # e.g. a ConfigMap of another input
        return []
    try:
        return mapper.map(obj, where)
    except Exception:  # noqa: BLE001 - a mapping bug must not hide the finding itself
        return []


def _problem_message(doc: Document, problem: Problem) -> str:
    """A load problem's message; for a duplicate key, what the ignored value held."""
    if problem.hidden_range is None:
        return problem.message
    start, end = problem.hidden_range
    hidden = doc.text[start:end]
    words = [word for word in _HIDDEN_WORDS if word in hidden]
    if words:
        return f"{problem.message}; the ignored value holds {', '.join(words)}"
    return problem.message


class ScanContext:
    """What every input of one scan is checked with: the configuration, the index, the
    emitter of its findings, and each rule's context (its options, the index, the
    settings), the same for every input, so made once (per rule) instead of per file."""

    def __init__(self, config: ScanConfig, index: ConfigIndex, inputs: list[Input]) -> None:
        self.config = config
        self._config = config
        self._index = index
        self.emitter = Emitter(config, render_names(inputs))
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


def _invalid(report: FileReport, contexts: ScanContext, span: Span, message: str,
             obj: KubeObject | None = None, doc: Document | None = None, file: str | None = None,
             mapped: list | None = None, file_text: str | None = None, default: Severity | None = None) -> None:
    """Report GPU000. `file_text` (when there is no document) lets suppressors read the file's lines;
    `default` replaces the rule's own severity (a configured one still wins)."""
    config = contexts.config
    if not config.report_invalid_input:
        return
    rule = config.all_rules.get(INVALID_INPUT) or INVALID_INPUT_RULE
    finding = contexts.emitter.finding(rule, message, file or (obj.file if obj else report.file), span, obj=obj,
                                       located_in=obj, mapped=mapped or [], default=default)
    sctx = SuppressionContext(None, None, obj, doc.text if doc else file_text, doc.line_offset if doc else 0)
    contexts.emitter.file(report, finding, sctx)


def _dangling_target(item: Input) -> str | None:
    """What a symbolic link that resolves to no file names (None: not such a link)."""
    if item.real is None or not os.path.islink(item.real) or os.path.exists(item.real):
        return None
    try:
        return os.readlink(item.real)
    except OSError:
        return None


def _finding(emitter: Emitter, rule: Rule, violation: Violation, workload: Workload, span: Span,
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


def _dotted(obj: KubeObject, path: tuple) -> str:
    rel = path[len(obj.base):]
    out = ""
    for item in rel:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def render_names(inputs: list[Input]) -> dict[str, RenderedFrom]:
    """The name of each render's output in the scan (what a finding on it has as its file) -> the render."""
    renders = (RenderedFrom.of(item.display, item.values.label if item.values is not None else None)
               for item in inputs if item.kind.rendered)
    return {render.name: render for render in renders}


def iter_findings(results: Iterable[FileReport]) -> Iterator[Finding]:
    for report in results:
        yield from report.findings
