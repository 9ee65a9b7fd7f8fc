"""Scanning plain inputs while the scan's renders run.

A plain file's findings depend on the rest of the scan only through the index
(model/index.py: the ConfigMaps, Secrets and DRA claims of every input, which a
workload's `envFrom`, volumes, scripts and claims are looked up in) and through
what is decided in input order (the hooks' state, the baseline's verdicts: the
same merge as a parallel scan's, parallel.merge). So, while renders are still
running, the plain files are indexed, then scanned one by one against the index
of the plain files alone (a RecordedIndex, which notes every question asked of
it and its answer). Once every render is in, the whole index is built, in input
order as always, and each early scan is kept only if every question it asked
gets the same answer from the whole index (the same ConfigMap object, the same
device classes): a render defining a name a plain file looks up, or replacing a
ConfigMap it found, sends that file to be scanned again with the rest. What is
left (the renders' outputs and those files) is scanned as before, in this
process or several, and all outcomes are merged in input order: the result is
the one a scan after the renders gives.

Used only while a render runs in the background (with the result cache on, its
key needs every render first, so nothing is left to overlap) and only when the
outcomes can be merged (parallel.mergeable).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Iterator

from gpulint.model.index import ConfigIndex
from gpulint.scan import parallel
from gpulint.scan.indexing import index_one

if TYPE_CHECKING:
    from gpulint.inputs.discovery import Input
    from gpulint.results.scanning import ScanConfig, ScanResult
    from gpulint.scan.reader import InputReader

# With several processes, plain files of at least this many bytes are left for them (parallel.MIN_BYTES:
# less than this scans in a few tenths of a second).
EARLY_MAX = parallel.MIN_BYTES

# The switch interval while this thread scans beside render threads (see scan_overlapped): 30 renders of
# figure 7 beside a busy thread took 1.15x their time alone with it, about 2x with the default 5 ms.
SWITCH_INTERVAL = 1e-4

# A question asked of the index: (method, arguments, answer); method None: something the
# answer of which cannot be checked again (the scan that asked it is always made again).
Asked = tuple[str | None, tuple, Any]


class RecordedIndex:
    """An index (of the plain files) that notes every question asked of it and its answer."""

    def __init__(self, index: ConfigIndex) -> None:
        self._index = index
        self.asked: list[Asked] = []

    def lookup(self, kind: str, namespace: str | None, name: str) -> Any:
        answer = self._index.lookup(kind, namespace, name)
        self.asked.append(("lookup", (kind, namespace, name), answer))
        return answer

    def claim_classes(self, kind: str, namespace: str | None, name: str) -> tuple[str, ...] | None:
        answer = self._index.claim_classes(kind, namespace, name)
        self.asked.append(("claim_classes", (kind, namespace, name), answer))
        return answer

    def extended_resource_class(self, name: str) -> str | None:
        answer = self._index.extended_resource_class(name)
        self.asked.append(("extended_resource_class", (name,), answer))
        return answer

    def __iter__(self) -> Iterator[Any]:
        answer = tuple(self._index)
        self.asked.append(("__iter__", (), answer))
        return iter(answer)

    def __len__(self) -> int:
        answer = len(self._index)
        self.asked.append(("__len__", (), answer))
        return answer

    def __getattr__(self, name: str) -> Any:
        # (called only for names the class does not define: a plugin reaching past the index's API)
        self.asked.append((None, (name,), None))
        return getattr(self._index, name)


def same_answers(asked: list[Asked], index: ConfigIndex) -> bool:
    """Whether `index` answers every question in `asked` as it was answered (a ConfigMap or
    Secret: the very same object, which the whole index shares with the plain files' one)."""
    for method, args, answer in asked:
        if method is None:
            return False
        if method == "__iter__":
            now = tuple(index)
            if len(now) != len(answer) or any(a is not b for a, b in zip(now, answer)):
                return False
        elif method == "__len__":
            if len(index) != answer:
                return False
        elif method == "lookup":
            if index.lookup(*args) is not answer:
                return False
        elif getattr(index, method)(*args) != answer:
            return False
    return True


def wanted(inputs: list[Input], config: ScanConfig, reader: InputReader) -> bool:
    """Whether to scan while renders run: some render still runs, and outcomes can be merged in
    input order."""
    return reader.renders_running() and parallel.mergeable(config)


def scan_overlapped(inputs: list[Input], config: ScanConfig, reader: InputReader, jobs: int | None,
                    result: ScanResult, steps: parallel.Steps,
                    progress: Callable[[int, int], None] | None = None) -> None:
    """Scan `inputs` into `result` (hooks' scan_done left to the caller), while renders run: the plain
    inputs, and each render's output once it is in (see the module's docstring)."""
    limits = config.limits
    found: dict[int, tuple[list, list[str]]] = {}
    plain = [i for i, item in enumerate(inputs) if not item.kind.rendered]
    renders = [i for i, item in enumerate(inputs) if item.kind.rendered]
    partial = ConfigIndex()          # what is in so far, in the order it came in
    for i in plain:
        indexed = index_one(inputs[i], reader, limits)
        if indexed is not None:
            found[i] = indexed
            for source in indexed[0]:
                partial.add_source(source)
    recorded = RecordedIndex(partial)
    early_work = parallel._Work(inputs, config, recorded, reader, steps)  # type: ignore[arg-type]
    several = jobs is None or jobs > 1
    early: dict[int, tuple[parallel.Outcome, list[Asked]]] = {}
    todo = iter(plain)
    next_render = 0     # renders are taken in input order (the reader's hooks see them in the scan's order)
    # A render thread needs the GIL for a moment at each step (starting its renderer, reading its
    # output, copying a chart): with this thread scanning, it waits up to the switch interval each
    # time (5 ms by default), which made renders take up to twice as long.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        while reader.renders_running():
            position = None
            if next_render < len(renders) and reader.render_ready(inputs[renders[next_render]]):
                position = _index_render(inputs, renders[next_render], reader, limits, found, partial)
                next_render += 1
            else:
                for i in todo:
                    # With several processes, a large file waits for them: scanned here, it could hold them
                    # up for as long as it takes after the renders are in.
                    if not several or (_size(inputs[i]) or 0) < EARLY_MAX:
                        position = i
                        break
                if position is None:   # nothing else to do: wait for the next render
                    if next_render >= len(renders):
                        break
                    position = _index_render(inputs, renders[next_render], reader, limits, found, partial)
                    next_render += 1
            recorded.asked = []
            early[position] = (early_work.scan([position])[position], recorded.asked)
            if progress is not None:
                progress(len(early), len(inputs))
    finally:
        sys.setswitchinterval(switch)
    for i in renders[next_render:]:
        _index_render(inputs, i, reader, limits, found, partial)
    index = ConfigIndex()            # the whole index, in input order as always
    for i in sorted(found):
        objects, errors = found[i]
        for source in objects:
            index.add_source(source)
        result.internal_errors.extend(errors)
    done = {i: outcome for i, (outcome, asked) in early.items() if same_answers(asked, index)}
    workers, sizes = 1, []
    if several and len(done) < len(inputs):
        reader.finish_renders()    # processes may be forked next: no render thread may run then
        workers, sizes = parallel.plan(inputs, config, reader, jobs, done)
    if workers > 1:
        parallel.scan_parallel(inputs, config, index, reader, workers, sizes, result, steps, done)
    else:
        work = parallel._Work(inputs, config, index, reader, steps)
        for i in range(len(inputs)):
            if i not in done:
                done.update(work.scan([i]))
                if progress is not None and len(early) < len(done) < len(inputs):   # (never back)
                    progress(len(done), len(inputs))
        parallel.merge(config, len(inputs), done, {}, result)
    if progress is not None:
        progress(len(inputs), len(inputs))


def _index_render(inputs: list[Input], position: int, reader: InputReader, limits: Any,
                  found: dict[int, tuple[list, list[str]]], partial: ConfigIndex) -> int:
    """Index the render at `position` (waiting for it), into `found` and the index so far."""
    indexed = index_one(inputs[position], reader, limits)
    assert indexed is not None
    found[position] = indexed
    for source in indexed[0]:
        partial.add_source(source)
    return position


def _size(item: Input) -> int | None:
    import os

    try:
        return os.stat(item.real).st_size if item.real is not None else None
    except OSError:
        return None
