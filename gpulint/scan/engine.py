"""The scan: inputs -> documents -> objects -> workloads -> rules -> findings.

This module strings the passes together: renders started in the background, the
index pass (indexing.py), each input scanned by its kind (dispatch.py), in one
process or several (parallel.py), plain inputs scanned while renders still run
(overlap.py: the same result as a scan after them), the renders of one chart folded into one
report, then the hooks' end of scan. Every input ends with exactly one status
(see findings.STATUSES), so the summary accounts for every file.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from gpulint.api import Severity
from gpulint.inputs.discovery import Input
from gpulint.model.objects import HELM_VALUES_KIND
from gpulint.results.findings import (
    STATUS_CHART,
    STATUS_ERROR,
    STATUS_SCANNED,
    FileReport,
    Finding,
    internal_error_message,
)
from gpulint.results.inputkind import InputKind
from gpulint.results.repeats import drop_values_repeats, fold_repeats
from gpulint.results.scanning import ScanConfig, ScanResult
from gpulint.scan.dispatch import scan_input, scan_part
from gpulint.scan.indexing import build_index
from gpulint.scan.reader import InputReader
from gpulint.scan.violations import ScanContext

if TYPE_CHECKING:
    from gpulint.scan.cache import ResultCache


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
            cached = cache.load(key, config.fixes)
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
        cache.store(key, result, config.fixes)
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
    if reader.renders_running():
        from gpulint.scan import overlap

        if overlap.wanted(inputs, config, reader):
            from gpulint.scan import parallel

            overlap.scan_overlapped(inputs, config, reader, jobs, result,
                                    parallel.Steps(scan_input, ScanContext, scan_part), progress)
            return _finish(inputs, result, config)
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
    return _finish(inputs, result, config)


def _finish(inputs: list[Input], result: ScanResult, config: ScanConfig) -> ScanResult:
    """The reports of a chart's renders folded into one, repeats folded, then the hooks' end of scan."""
    rendered = {id(report) for item, report in zip(inputs, result.files) if item.kind.rendered}
    if any(item.values is not None for item in inputs):
        _merge_renders(inputs, result, config)
    fold_repeats(result.files, rendered)
    drop_values_repeats(result.files, HELM_VALUES_KIND)
    for hook in config.hooks:
        hook.scan_done(result, config)
    return result


def _merge_renders(inputs: list[Input], result: ScanResult, config: ScanConfig) -> None:
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
                                 for finding in owner.findings if _about_render(finding, config)]
        owner.findings.extend(report.findings)
        owner.documents += report.documents
        owner.objects += report.objects
        owner.workloads += report.workloads
        if owner.status != STATUS_SCANNED and report.status == STATUS_SCANNED:
            owner.status = STATUS_SCANNED   # rendered with some values, if not with its defaults
    result.files[:] = files


def _about_render(finding: Finding, config: ScanConfig) -> bool:
    """Whether a finding is a render problem's (a rule with a render hook made it)."""
    rule = config.all_rules.get(finding.rule_id)
    return rule is not None and rule.check_render is not None


def _rendered_instead(finding: Finding, label: str) -> Finding:
    """A chart's failed defaults render, once another render of it was checked."""
    if finding.severity == Severity.INFO or finding.suppressed is not None:
        return finding
    finding.severity = Severity.INFO
    finding.message += f"; the chart was rendered and checked with {label or 'other values'} instead"
    return finding


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


def iter_findings(results: Iterable[FileReport]) -> Iterator[Finding]:
    for report in results:
        yield from report.findings
