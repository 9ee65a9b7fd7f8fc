"""Forked processes for parallel scans, with plain pipes.

concurrent.futures and multiprocessing cost 17 ms to import (1.5 % of a parallel
scan of the benchmark corpus), and their helper threads take the parent's
interpreter lock while it works. A parallel scan needs less: fork (the
children inherit the scan's state; only task numbers and results are pickled),
hand out tasks as processes finish (run_shared: this process works too), run
one job beside this process (Forked), and learn what a child did not deliver
(killed, or a result that cannot be pickled), so that the caller does it.
A child never returns into the caller's code: it ends with os._exit.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from typing import Any, Callable


class Forked:
    """`function(argument)` run in one forked process while this one goes on;
    `result()` waits for it. Killed, or with a result that cannot be pickled,
    it reports not done, and the caller does the work itself."""

    def __init__(self, function: Callable[[Any], Any], argument: Any) -> None:
        def deliver(write_end: int) -> None:
            try:
                payload = pickle.dumps((True, function(argument)), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - not done: the caller does it
                payload = pickle.dumps((False, None), protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(write_end, payload)

        _flush()
        self._pid: int | None
        self._pid, self._read_end = _fork(deliver, [])

    def result(self) -> tuple[Any, bool]:
        """(the function's result, True), or (None, False) when the child did not deliver it."""
        try:
            data = _read_all(self._read_end)
        finally:
            self.close(kill=False)
        try:
            ok, value = pickle.loads(data)
        except Exception:  # noqa: BLE001 - nothing, or a truncated message
            return None, False
        return value, ok

    def close(self, kill: bool = True) -> None:
        """Reap the child (killing it first unless it is done: an interrupted scan leaves none)."""
        if self._pid is None:
            return
        try:
            os.close(self._read_end)
        except OSError:
            pass
        try:
            if kill:
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        except OSError:
            pass
        self._pid = None


# --- a shared queue, this process included ------------------------------------------------

_TASK = struct.Struct("<q")
# Task numbers are written to a pipe before anything reads it: at most this many fit.
MAX_SHARED_TASKS = 4096


def run_shared(workers: int, function: Callable[[Any], Any], tasks: list[Any]) -> tuple[list[Any], list[bool]]:
    """`function` over `tasks` in `workers` processes, this one being one of them:
    (results, whether each task was done; a task not done is the caller's).

    Every task number is written to one pipe first; each process takes the next
    by reading 8 bytes (a pipe read is atomic among readers) until the pipe is
    empty. Forked workers keep their results and send them all when the queue
    runs dry; this process's own need no pickling, and there is no thread to
    hand tasks out, so it can work as well (on 2 CPUs, one fork instead of two).
    A worker that dies loses its results: those tasks are reported not done.
    """
    if len(tasks) > MAX_SHARED_TASKS:
        raise ValueError(f"at most {MAX_SHARED_TASKS} tasks")
    results: list[Any] = [None] * len(tasks)
    done = [False] * len(tasks)
    if not tasks:
        return results, done
    _flush()
    queue_r, queue_w = os.pipe()
    try:
        _write_all(queue_w, b"".join(_TASK.pack(n) for n in range(len(tasks))))
    finally:
        os.close(queue_w)  # the queue ends at its last task, for every reader
    children: list[tuple[int, int]] = []
    finished = False
    try:
        def work(results_w: int) -> None:
            mine = {}
            for number in _take(queue_r):
                try:
                    mine[number] = pickle.dumps(function(tasks[number]), protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # noqa: BLE001 - not done: the parent redoes it
                    continue
            _write_all(results_w, pickle.dumps(mine, protocol=pickle.HIGHEST_PROTOCOL))

        for _ in range(min(workers, len(tasks)) - 1):
            children.append(_fork(work, [fd for _pid, fd in children]))
        for number in _take(queue_r):
            try:
                results[number] = function(tasks[number])
                done[number] = True
            except Exception:  # noqa: BLE001 - reported not done, like a worker's
                continue
        for pid, fd in children:
            data = _read_all(fd)
            try:
                for number, payload in (pickle.loads(data) if data else {}).items():
                    results[number] = pickle.loads(payload)
                    done[number] = True
            except Exception:  # noqa: BLE001 - a truncated message: those tasks are redone
                pass
        finished = True
    finally:
        os.close(queue_r)
        for pid, fd in children:
            try:
                os.close(fd)
            except OSError:
                pass
            try:
                if not finished:  # interrupted: the workers must not outlive the scan
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
    return results, done


def _flush() -> None:
    """A child must not write out what this process has buffered (and will write)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


def _fork(body: Callable[[int], None], inherited: list[int]) -> tuple[int, int]:
    """Fork a child that runs `body(write end of a new pipe)` and exits; (its pid, the read
    end). The child closes `inherited` (other children's pipes) and never returns."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_end)
            for fd in inherited:
                os.close(fd)
            body(write_end)
            code = 0
        except BaseException:  # noqa: BLE001 - an interrupted or broken child just ends
            pass
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def _take(queue_r: int) -> Any:
    """The task numbers this process takes from the queue, until it is empty."""
    while True:
        data = os.read(queue_r, _TASK.size)
        if len(data) < _TASK.size:
            return
        yield _TASK.unpack(data)[0]


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
