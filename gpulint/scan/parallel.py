"""Scanning inputs in several processes with the result one process would give.

The parent builds the ConfigMap/Secret index (and renders charts) first, with a
forked helper process reading part of the files (IndexHelper); worker processes
are forked from it (concurrent.futures with the fork start method), so they start
with the index, the rendered text and the configuration without pickling any of
it: only batch numbers and results cross. The parent scans batches too, from the
other end of the queue (run_shared: with `--jobs 2`, the parent and one worker).
Each worker sends back, per input, its report, its internal errors, what the
scan hooks recorded (suppress.ParallelHook) and, for the suppressors whose
verdicts depend on order (suppress.OrderedSuppressor: the baseline), the keys
of the findings that reached them. The parent merges all of it in input
order and takes those verdicts in that order, then runs the hooks' scan_done:
the reports, the baseline written and every finding added at the end are the
same as with `--jobs 1`.

Inputs are batched (large ones alone) and the largest go first, so one big
file does not finish last. Stdin is read in the parent. Without the fork start
method (Windows, macOS, where forking is unsafe) scans stay in one process. If
a worker fails as a whole (killed, or its results cannot be sent), its batches
are scanned again in the parent, which then reports what that scan meets like
any other.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from gpulint.results.findings import (
    STATUS_ERROR,
    FileReport,
    Finding,
    internal_error_message,
)
from gpulint.results.scanning import SuppressionContext

if TYPE_CHECKING:
    from gpulint.inputs.discovery import Input
    from gpulint.model.index import ConfigIndex
    from gpulint.results.scanning import ScanConfig, ScanResult
    from gpulint.scan.reader import InputReader

# A scan of less input than this stays in one process: starting workers and
# sending reports back costs more than it saves (measured on 2 CPUs: break-even
# near 0.5 MB, 1.15x faster at 0.9 MB, 1.3x at 1.6 MB).
MIN_BYTES = 1 << 20
# Batches of small inputs: up to this many bytes or files each (on the benchmark
# corpus, 11 MB in 3,061 files, 512 KB batches scan 2% faster than 256 KB ones
# and 5% faster than 64 KB ones: fewer round trips; larger ones gain nothing more).
BATCH_BYTES = 512 << 10
BATCH_FILES = 96

@dataclass(frozen=True)
class Steps:
    """The engine's per-input steps. The engine hands them over so that this module,
    which the engine uses, never imports the engine back."""

    scan_input: Callable       # (input, config, index, reader, contexts) -> FileReport
    rule_contexts: Callable    # (config, index) -> the rules' contexts for a scan


# One input's outcome: report, internal errors, hook states, ordered-suppressor keys.
Outcome = tuple[FileReport, list[str], list[Any], list[tuple[int | None, list[tuple[int, Any]]]]]


def cpus() -> int:
    """The CPUs this process may run on."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return count() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_jobs() -> int:
    """Processes for a scan without `--jobs`: this one, plus one per CPU other work leaves idle.

    A worker on a CPU that other processes keep busy only adds the cost of forking and
    of sending reports back (measured on 2 CPUs under a load of 8: `--jobs 2` took 10-16 %
    more CPU time and more wall time than `--jobs 1`), so the default never asks for
    more workers than idle CPUs (the 1-minute load average says how many are busy)."""
    total = cpus()
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average (Windows): take every CPU
        return total
    return max(1, min(total, int(total - busy) + 1))


def can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def ordered_suppressors(config: "ScanConfig") -> list[int] | None:
    """Positions of the order-dependent suppressors, or None when they are not all at the end."""
    positions = [i for i, s in enumerate(config.suppressors) if hasattr(s, "decide") and hasattr(s, "key")]
    tail = list(range(len(config.suppressors) - len(positions), len(config.suppressors)))
    return positions if positions == tail else None


def workers_for(inputs: list["Input"], config: "ScanConfig", reader: "InputReader", jobs: int | None) -> int:
    """How many processes to scan `inputs` with (1: scan in this one)."""
    return plan(inputs, config, reader, jobs)[0]


def plan(inputs: list["Input"], config: "ScanConfig", reader: "InputReader",
         jobs: int | None) -> tuple[int, list[int | None]]:
    """(processes to scan `inputs` with, 1 meaning this one; bytes per input, None for stdin)."""
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1 or not can_fork() or ordered_suppressors(config) is None:
        return 1, []
    if not all(hasattr(hook, "take_state") and hasattr(hook, "merge_state") for hook in config.hooks):
        return 1, []
    sizes = _sizes(inputs, reader)
    known = [size for size in sizes if size is not None]
    if len(known) < 2 or sum(known) < MIN_BYTES:
        return 1, sizes
    return min(jobs, len(known)), sizes


def _sizes(inputs: list["Input"], reader: "InputReader") -> list[int | None]:
    """Bytes to scan per input; None for stdin (the parent reads it)."""
    out: list[int | None] = []
    for item in inputs:
        if item.kind == "stdin":
            out.append(None)
        elif item.kind in ("chart", "kustomization"):
            text = reader.rendered(item).text
            out.append(len(text) if text else 0)
        else:
            size = reader.kept_size(item)
            if size is None:
                try:
                    size = os.stat(item.real).st_size if item.real is not None else 0
                except OSError:
                    size = 0
            out.append(size)
    return out


def _batches(sizes: list[int | None]) -> list[list[int]]:
    """Indices of the inputs workers scan, batched, the largest first."""
    order = sorted((i for i, size in enumerate(sizes) if size is not None), key=lambda i: -sizes[i])  # type: ignore[operator]
    batches: list[list[int]] = []
    current: list[int] = []
    weight = 0
    for i in order:
        current.append(i)
        weight += sizes[i] or 0
        if weight >= BATCH_BYTES or len(current) >= BATCH_FILES:
            batches.append(current)
            current, weight = [], 0
    if current:
        batches.append(current)
    return batches


class _Recorder:
    """Stands in for an ordered suppressor where findings are made: keeps the key, decides nothing."""

    def __init__(self, suppressor: Any, position: int, calls: list) -> None:
        self.suppressor = suppressor
        self.position = position
        self.calls = calls   # (finding, position, key) in call order, shared by the recorders

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> None:
        self.calls.append((finding, self.position, self.suppressor.key(finding, ctx)))
        return None


class _Work:
    """What a batch is scanned with: in a worker, the forked copy of the parent's."""

    def __init__(self, inputs: list["Input"], config: "ScanConfig", index: "ConfigIndex",
                 reader: "InputReader", steps: Steps) -> None:
        self.inputs = inputs
        self.steps = steps
        self.index = index
        self.reader = reader
        self.calls: list[tuple[Finding, int, Any]] = []
        positions = ordered_suppressors(config) or []
        suppressors = list(config.suppressors)
        for position in positions:
            suppressors[position] = _Recorder(suppressors[position], position, self.calls)
        self.config = replace(config, suppressors=suppressors)
        self.contexts = steps.rule_contexts(self.config, index)

    def scan(self, batch: list[int]) -> dict[int, Outcome]:
        out: dict[int, Outcome] = {}
        for i in batch:
            item = self.inputs[i]
            errors: list[str] = []
            try:
                report = self.steps.scan_input(item, self.config, self.index, self.reader, self.contexts)
            except Exception as error:  # a bug in gpulint or a plugin: say where, keep going
                errors.append(internal_error_message(item.display, error))
                report = FileReport(item.display, STATUS_ERROR)
            states = [hook.take_state() for hook in self.config.hooks]  # type: ignore[attr-defined]
            out[i] = (report, errors, states, self._keys(report))
        return out

    def _keys(self, report: FileReport) -> list[tuple[int | None, list[tuple[int, Any]]]]:
        """The recorded keys per finding, in call order; a finding not in the report
        (its input failed part way) still counts, as it did for the suppressor."""
        where = {id(finding): n for n, finding in enumerate(report.findings)}
        out: list[tuple[int | None, list[tuple[int, Any]]]] = []
        last = None
        for finding, position, key in self.calls:
            if finding is not last:
                out.append((where.get(id(finding)), []))
                last = finding
            out[-1][1].append((position, key))
        self.calls.clear()
        return out


_WORK: _Work | None = None   # set in the parent just before forking
_INDEX_WORK: tuple | None = None  # (inputs, reader, limits, index_input) for IndexHelper, likewise


class IndexHelper:
    """Half of a parallel scan's index pass, in one forked process, while the parent
    reads the other half: the pass reads every file and parses every ConfigMap and
    Secret before any worker can start, a tenth of a scan that would otherwise stay
    serial. The helper sends back what it found (engine.Indexed: the objects, and the
    bytes and parsed documents the scan's workers then inherit from the parent).
    """

    def __init__(self, positions: set[int], process: Any, received: Any) -> None:
        self.positions = positions
        self._process = process     # a multiprocessing Process (fork)
        self._received = received   # the read end of its pipe

    @classmethod
    def start(cls, inputs: list["Input"], reader: "InputReader", limits: Any,
              sizes: list[int | None], index_input: Callable) -> "IndexHelper | None":
        """Fork the helper for half of the manifests (None: too few to share)."""
        global _INDEX_WORK
        # Every other manifest (the largest stays with the parent): what costs in this pass is
        # parsing ConfigMaps and Secrets, which small files hold as often as large ones.
        manifests = sorted((i for i, item in enumerate(inputs) if item.kind == "manifest" and sizes[i] is not None),
                           key=lambda i: -(sizes[i] or 0))
        share = manifests[1::2]
        if len(share) < 2:
            return None
        import multiprocessing

        context = multiprocessing.get_context("fork")
        received, send = context.Pipe(duplex=False)
        _INDEX_WORK = (inputs, reader, limits, index_input)
        try:
            _flush()
            process = context.Process(target=_deliver_index_share, args=(send, share), daemon=True)
            process.start()
        finally:
            _INDEX_WORK = None
            send.close()
        return cls(set(share), process, received)

    def results(self) -> dict[int, tuple]:
        """What the helper found, by input position; empty when it failed (killed, or
        its result could not be sent: the parent then reads its share itself)."""
        try:
            ok, found = self._received.recv()  # before join: a large result fills the pipe
        except Exception:  # noqa: BLE001 - nothing, or a truncated message
            ok, found = False, {}
        finally:
            self._received.close()
            self._process.join()
        return found if ok else {}

    def close(self) -> None:
        """Stop the helper (the parent was interrupted): no process outlives the scan."""
        self._received.close()
        self._process.kill()
        self._process.join()


def _deliver_index_share(send: Any, positions: list[int]) -> None:
    """In the helper: send (True, what _index_share found), or (False, None) when it failed."""
    try:
        send.send((True, _index_share(positions)))
    except Exception:  # noqa: BLE001 - not done: the parent reads the share itself
        send.send((False, None))


def _index_share(positions: list[int]) -> dict[int, tuple]:
    """engine.index_input for each position; bytes and parsed documents only up to half
    of what the parent's reader keeps (the rest would be dropped there anyway)."""
    assert _INDEX_WORK is not None
    inputs, reader, limits, index_input = _INDEX_WORK
    kept = parsed = 0
    out = {}
    for i in positions:
        objects, errors, data, chunks, size = index_input(inputs[i], reader, limits)
        if data is not None and kept + len(data) <= reader.CACHE_MAX // 2:
            kept += len(data)
            if chunks and parsed + size <= reader.PARSED_MAX // 2:
                parsed += size
            else:
                chunks = None
        else:
            data = chunks = None
        out[i] = (objects, errors, data, chunks, size)
    return out


def _run_batch(batch: list[int]) -> dict[int, Outcome]:
    assert _WORK is not None
    return _WORK.scan(batch)


def scan_parallel(inputs: list["Input"], config: "ScanConfig", index: "ConfigIndex", reader: "InputReader",
                  workers: int, sizes: list[int | None], result: "ScanResult", steps: Steps) -> None:
    """Scan `inputs` (of `sizes`, see plan) in `workers` processes into `result`
    (hooks' scan_done is left to the caller)."""
    global _WORK
    work = _Work(inputs, config, index, reader, steps)
    outcomes: dict[int, Outcome] = {}
    batches = _batches(sizes)
    # Stdin is read here: a forked worker would share the parent's file offset.
    outcomes.update(work.scan([i for i, size in enumerate(sizes) if size is None]))
    _WORK = work
    try:
        results, done = run_shared(workers, _run_batch, batches)
    finally:
        _WORK = None
    for batch, found, ok in zip(batches, results, done):
        # A batch whose worker died or whose results could not be sent is scanned here.
        outcomes.update(found if ok else work.scan(batch))
    for i in range(len(inputs)):
        report, errors, states, keys = outcomes[i]
        result.internal_errors.extend(errors)
        result.files.append(report)
        for hook, state in zip(config.hooks, states):
            hook.merge_state(state)  # type: ignore[attr-defined]
        for at, decisions in keys:
            for position, key in decisions:
                verdict = config.suppressors[position].decide(key)  # type: ignore[attr-defined]
                if verdict is not None:
                    if at is not None:
                        report.findings[at].suppressed = verdict
                    break


def run_shared(workers: int, function: Callable[[Any], Any], tasks: list[Any]) -> tuple[list[Any], list[bool]]:
    """`function` over `tasks` in `workers` processes, this one being one of them:
    (results, whether each task was done; a task not done is the caller's).

    `workers - 1` processes are forked (they inherit this one's state; `function`
    must be a module-level name) and take tasks from the front of the list while
    this process takes them from the back, so that on 2 CPUs one fork does what two
    would. A task that fails, whose result cannot be sent, or whose worker dies
    (the pool is then broken: every task it had not delivered) is reported not done.
    """
    results: list[Any] = [None] * len(tasks)
    done = [False] * len(tasks)
    pending = deque(range(len(tasks)))
    forks = min(workers - 1, len(tasks) - 1)
    if forks < 1:
        _run_here(function, tasks, pending, results, done, len(tasks))
        return results, done
    import concurrent.futures
    import multiprocessing

    _flush()
    executor = concurrent.futures.ProcessPoolExecutor(forks, mp_context=multiprocessing.get_context("fork"))
    in_flight: dict[concurrent.futures.Future, int] = {}
    broken = False
    finished = False
    try:
        while pending or in_flight:
            for future in [f for f in in_flight if f.done()]:
                _collect(future, in_flight.pop(future), results, done)
            while not broken and pending and len(in_flight) < 2 * forks:  # each worker has one more queued
                number = pending.popleft()
                try:
                    in_flight[executor.submit(function, tasks[number])] = number
                except concurrent.futures.BrokenExecutor:  # a worker died: the rest is done here
                    pending.appendleft(number)
                    broken = True
            if pending:
                _run_here(function, tasks, pending, results, done, 1)
            elif in_flight:
                concurrent.futures.wait(in_flight, return_when=concurrent.futures.FIRST_COMPLETED)
        finished = True
    finally:
        executor.shutdown(wait=finished, cancel_futures=True)
    return results, done


def _run_here(function: Callable[[Any], Any], tasks: list[Any], pending: deque, results: list[Any],
              done: list[bool], count: int) -> None:
    """Run up to `count` tasks from the back of `pending` in this process."""
    for _ in range(min(count, len(pending))):
        number = pending.pop()
        try:
            results[number] = function(tasks[number])
            done[number] = True
        except Exception:  # noqa: BLE001 - reported not done, like a worker's
            pass


def _collect(future: Any, number: int, results: list[Any], done: list[bool]) -> None:
    """A worker's result; a failed task, an unsendable result or a dead worker: not done."""
    try:
        results[number] = future.result()
        done[number] = True
    except Exception:  # noqa: BLE001 - BrokenProcessPool, a pickling error, the task's own
        pass


def _flush() -> None:
    """A child must not write out what this process has buffered (and will write)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
