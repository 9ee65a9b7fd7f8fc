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
from typing import TYPE_CHECKING, Any, Callable

from gpulint.record import record, replace, set_field
from gpulint.results.inputkind import InputKind
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

# A manifest of at least this many bytes is scanned in parts of about PART_BYTES, cut
# at `---` lines, by all the processes (one large `helm template` stream is otherwise one
# unit of work); the parts' reports are merged in order into the report of one piece.
SPLIT_MIN = 16 << 20
PART_BYTES = 4 << 20
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


@record(eq=True, frozen=True)
class Steps:
    """The engine's per-input steps. The engine hands them over so that this module,
    which the engine uses, never imports the engine back."""

    __slots__ = ("scan_input", "scan_context", "scan_part")
    scan_input: Callable       # (input, config, index, reader, context) -> FileReport
    scan_context: Callable     # (config, index, inputs) -> what every input of the scan is checked with
    scan_part: Callable        # (input, config, contexts, part) -> (FileReport, found objects); dispatch.scan_part

    def __init__(self, scan_input: Callable, scan_context: Callable, scan_part: Callable) -> None:
        set_field(self, "scan_input", scan_input)
        set_field(self, "scan_context", scan_context)
        set_field(self, "scan_part", scan_part)


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


def render_workers(jobs: int | None, renders: int) -> int:
    """Renders to run at once (threads of this process, each waiting on its renderer): `jobs`
    of them, or by default one per CPU whatever the load. A render is a process of its own,
    not a fork of this one: running a second one beside the first costs no copy of the scan
    and no report sent back, and on a busy machine two at once take no longer than one
    after the other, so the default never makes renders slower than `--jobs 1`."""
    return max(1, min(renders, cpus() if jobs is None else jobs))


def can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def ordered_suppressors(config: "ScanConfig") -> list[int] | None:
    """Positions of the order-dependent suppressors, or None when they are not all at the end."""
    positions = [i for i, s in enumerate(config.suppressors) if hasattr(s, "decide") and hasattr(s, "key")]
    tail = list(range(len(config.suppressors) - len(positions), len(config.suppressors)))
    return positions if positions == tail else None


def mergeable(config: "ScanConfig") -> bool:
    """Whether inputs may be scanned apart and their outcomes merged in input order (_Work, merge):
    the order-dependent suppressors come last and every hook hands over its state."""
    return ordered_suppressors(config) is not None and all(
        hasattr(hook, "take_state") and hasattr(hook, "merge_state") for hook in config.hooks)


def workers_for(inputs: list["Input"], config: "ScanConfig", reader: "InputReader", jobs: int | None) -> int:
    """How many processes to scan `inputs` with (1: scan in this one)."""
    return plan(inputs, config, reader, jobs)[0]


def plan(inputs: list["Input"], config: "ScanConfig", reader: "InputReader",
         jobs: int | None, done: "set[int] | dict[int, Any]" = frozenset()) -> tuple[int, list[int | None]]:
    """(processes to scan `inputs` with, 1 meaning this one; bytes per input, None for stdin).
    `done`: positions already scanned (scan/overlap.py), left out of the plan."""
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1 or not can_fork() or not mergeable(config):
        return 1, []
    sizes = _sizes(inputs, reader)
    known = [size for i, size in enumerate(sizes) if size is not None and i not in done]
    units = sum(max(1, size // PART_BYTES) if _splittable(inputs[i], size) else 1
                for i, size in enumerate(sizes) if size is not None and i not in done)
    if units < 2 or sum(known) < MIN_BYTES:
        return 1, sizes
    return min(jobs, units), sizes


def _splittable(item: "Input", size: int | None) -> bool:
    """A manifest large enough to split, read as a stream (not whole: a whole text may get
    a Helm source mapper) and not JSON (read with its own rules)."""
    from gpulint.load import decode

    return (item.kind is InputKind.MANIFEST and item.real is not None and size is not None
            and size >= max(SPLIT_MIN, decode.WHOLE_MAX + 1) and not item.display.lower().endswith(".json"))


def split_points(path: str, part_bytes: int | None = None) -> list[tuple[int, int, int, int]] | None:
    """Parts of a large multi-document UTF-8 file: (first byte, end byte, 0-based first line,
    document number base) each, cut before `---` lines about every `part_bytes`; None when the
    file is not to be split (a byte-order mark, NUL or CR bytes: text the reader decodes or
    splits otherwise; fewer than two parts). Reads the file once, a block at a time."""
    part_bytes = part_bytes or PART_BYTES
    cuts: list[tuple[int, int]] = [(0, 0)]        # (byte, lines before it)
    with open(path, "rb") as handle:
        if handle.read(3).startswith(_BOMS):
            return None
        handle.seek(0)
        carry = b""
        base = 0                # file offset of carry + block
        counted, lines = 0, 0   # newlines in the file before byte `counted`
        target = part_bytes
        while True:
            block = handle.read(8 << 20)
            if not block:
                break
            if b"\0" in block or b"\r" in block:
                return None
            buf = carry + block
            searched = len(buf) - 8   # the last bytes are searched again with the next block
            pos = max(0, target - base)
            while pos < searched:
                found = buf.find(b"\n---", pos, searched)
                if found < 0:
                    break
                start = found + 1
                previous = buf.rfind(b"\n", 0, found) + 1
                if buf[start + 3:start + 4] in (b" ", b"\t", b"\n") and buf[previous:previous + 1] != b"%" \
                        and previous > 0:
                    lines += buf.count(b"\n", counted - base, start)
                    counted = base + start
                    cuts.append((counted, lines))
                    target = counted + part_bytes
                pos = max(start, target - base)
            keep = max(0, len(buf) - 8)
            lines += buf.count(b"\n", max(0, counted - base), keep)
            counted = max(counted, base + keep)
            carry = buf[keep:]
            base += keep
        size = base + len(carry)
    if len(cuts) < 2:
        return None
    ends = [byte for byte, _lines in cuts[1:]] + [size]
    return [(byte, end, line, number << 32) for number, ((byte, line), end) in enumerate(zip(cuts, ends))]



def _sizes(inputs: list["Input"], reader: "InputReader") -> list[int | None]:
    """Bytes to scan per input; None for stdin (the parent reads it)."""
    out: list[int | None] = []
    for item in inputs:
        if item.kind is InputKind.STDIN:
            out.append(None)
        elif not item.kind.read:
            out.append(0)
        elif item.kind.rendered:
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


def _batches(sizes: list[int | None], skip: set[int] = frozenset()) -> list[list[int]]:  # type: ignore[assignment]
    """Indices of the inputs workers scan (but `skip`), batched, the largest first."""
    order = sorted((i for i, size in enumerate(sizes) if size is not None and i not in skip),
                   key=lambda i: -sizes[i])  # type: ignore[operator]
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
        self.contexts = steps.scan_context(self.config, index, inputs)

    def scan_part(self, i: int, part: tuple[int, int, int, int]) -> tuple[Outcome, bool] | None:
        """One part of input `i` (dispatch.scan_part): its outcome and whether it held objects;
        None when the input must be scanned whole (dispatch.PartFailed, or a bug met)."""
        try:
            report, found = self.steps.scan_part(self.inputs[i], self.config, self.contexts, part)
        except Exception:  # noqa: BLE001 - PartFailed or a bug: the whole input is scanned again
            self.calls.clear()
            for hook in self.config.hooks:
                hook.take_state()  # type: ignore[attr-defined]
            return None
        states = [hook.take_state() for hook in self.config.hooks]  # type: ignore[attr-defined]
        return (report, [], states, self._keys(report)), found

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
    serial. The helper sends back what it found (indexing.Indexed: the objects, and the
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
        manifests = sorted((i for i, item in enumerate(inputs) if item.kind is InputKind.MANIFEST and sizes[i] is not None),
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
    """indexing.index_input for each position; bytes and parsed documents only up to half
    of what the parent's reader keeps (the rest would be dropped there anyway)."""
    assert _INDEX_WORK is not None
    inputs, reader, limits, index_input = _INDEX_WORK
    kept = parsed = 0
    out = {}
    for i in positions:
        objects, errors, data, chunks, size, split = index_input(inputs[i], reader, limits)
        if data is not None and kept + len(data) <= reader.CACHE_MAX // 2:
            kept += len(data)
            if chunks and parsed + size <= reader.PARSED_MAX // 2:
                parsed += size
            else:
                chunks = split = None
        else:
            data = chunks = split = None
        out[i] = (objects, errors, data, chunks, size, split)
    return out


def _run_batch(batch: "list[int] | tuple[int, tuple[int, int, int, int]]") -> Any:
    """A batch of inputs, or one part of an input ((input, part), see split_points)."""
    assert _WORK is not None
    if isinstance(batch, tuple):
        return _WORK.scan_part(*batch)
    return _WORK.scan(batch)


def _merge_parts(item_display: str, pieces: list[tuple[Outcome, bool]]) -> tuple[Outcome, list[list[Any]]]:
    """The outcome of an input scanned in parts (reports and keys joined in order), and the
    hook states of each part, to be merged in that order."""
    from gpulint.results.findings import STATUS_NOT_KUBERNETES, STATUS_SCANNED

    report = FileReport(item_display, STATUS_SCANNED)
    states: list[Any] = []
    keys: list[tuple[int | None, list[tuple[int, Any]]]] = []
    found = False
    for (part, _errors, part_states, part_keys), part_found in pieces:
        offset = len(report.findings)
        keys.extend((None if at is None else at + offset, decisions) for at, decisions in part_keys)
        report.findings.extend(part.findings)
        report.documents += part.documents
        report.objects += part.objects
        report.workloads += part.workloads
        states.append(part_states)
        found = found or part_found
    if not found and not report.findings:
        report.status = STATUS_NOT_KUBERNETES
    return (report, [], [], keys), states


def scan_parallel(inputs: list["Input"], config: "ScanConfig", index: "ConfigIndex", reader: "InputReader",
                  workers: int, sizes: list[int | None], result: "ScanResult", steps: Steps,
                  done: "dict[int, Outcome] | None" = None) -> None:
    """Scan `inputs` (of `sizes`, see plan) in `workers` processes into `result`
    (hooks' scan_done is left to the caller). `done`: the outcomes of inputs already
    scanned (scan/overlap.py), merged in their place."""
    global _WORK
    work = _Work(inputs, config, index, reader, steps)
    outcomes: dict[int, Outcome] = dict(done or {})
    parts: dict[int, list[tuple[int, int, int, int]]] = {}
    for i, item in enumerate(inputs):
        if i not in outcomes and _splittable(item, sizes[i]):
            try:
                points = split_points(item.real)  # type: ignore[arg-type]
            except OSError:
                points = None
            if points is not None:
                parts[i] = points
    part_tasks = [(i, part) for i, points in parts.items() for part in points]
    batches: list[Any] = [*part_tasks, *_batches(sizes, set(parts) | set(outcomes))]  # the parts first: the largest
    # Stdin is read here: a forked worker would share the parent's file offset.
    outcomes.update(work.scan([i for i, size in enumerate(sizes) if size is None and i not in outcomes]))
    _WORK = work
    try:
        results, done = run_shared(workers, _run_batch, batches)
    finally:
        _WORK = None
    pieces: dict[int, list[tuple[Outcome, bool] | None]] = {i: [] for i in parts}
    for batch, found, ok in zip(batches, results, done):
        if isinstance(batch, tuple):
            pieces[batch[0]].append(found if ok else None)
        else:
            # A batch whose worker died or whose results could not be sent is scanned here.
            outcomes.update(found if ok else work.scan(batch))
    part_states: dict[int, list[list[Any]]] = {}
    for i, got in pieces.items():
        if all(piece is not None for piece in got):
            outcomes[i], part_states[i] = _merge_parts(inputs[i].display, got)  # type: ignore[arg-type]
        else:  # a part failed: the input is scanned in one piece, here
            outcomes.update(work.scan([i]))
    merge(config, len(inputs), outcomes, part_states, result)


def merge(config: "ScanConfig", count: int, outcomes: dict[int, Outcome], part_states: dict[int, list[list[Any]]],
          result: "ScanResult") -> None:
    """The outcomes of inputs 0..count-1 into `result`, in input order: reports, internal errors,
    hook states (`part_states`: an input scanned in parts, per part), and the ordered suppressors'
    verdicts, taken in that order: what one process scanning them in turn gives."""
    for i in range(count):
        report, errors, states, keys = outcomes[i]
        result.internal_errors.extend(errors)
        result.files.append(report)
        for state_list in part_states.get(i, [states]):
            for hook, state in zip(config.hooks, state_list):
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
