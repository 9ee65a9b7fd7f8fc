"""Forked worker processes for parallel scans, with plain pipes.

concurrent.futures and multiprocessing cost 17 ms to import, more than a tenth
of what a parallel scan takes off a 2 s scan, and their helper threads take the
parent's interpreter lock while its workers run. A parallel scan needs less:
fork (the workers inherit the scan's state; nothing but task numbers and results
is pickled), hand out tasks one at a time as workers finish (dynamic, so large
and small inputs balance), and learn which tasks a worker did not finish (it was
killed, or its result could not be pickled), so that the caller redoes those.

A message is a pickle behind its 8-byte length. A worker reads a task number,
calls `function(tasks[n])` and writes back (n, result); number -1 tells it to
exit. It never returns into the caller's code: it ends with os._exit.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
from typing import Any, Callable

_HEADER = struct.Struct("<Q")
_STOP = -1


class _Worker:
    def __init__(self, pid: int, tasks_w: int, results_r: int) -> None:
        self.pid = pid
        self.tasks_w = tasks_w
        self.results_r = results_r
        self.buffer = bytearray()
        self.current: int | None = None   # the task it is working on


class ForkPool:
    """`workers` forked processes running `function` over `tasks` (start, then finish)."""

    def __init__(self, workers: int, function: Callable[[Any], Any], tasks: list[Any]) -> None:
        self._tasks = tasks
        self._results: list[Any] = [None] * len(tasks)
        self._done = [False] * len(tasks)
        self._next = 0
        self._workers: list[_Worker] = []
        for stream in (sys.stdout, sys.stderr):  # a child must not flush what the parent will
            if stream is not None:
                stream.flush()
        try:
            for _ in range(min(workers, len(tasks))):
                self._workers.append(self._fork(function))
            for worker in list(self._workers):
                self._give(worker)
        except BaseException:
            self.close()
            raise

    def finish(self) -> tuple[list[Any], list[bool]]:
        """Wait for every task: (results, whether each was done; a task not done is the caller's)."""
        try:
            while any(w.current is not None for w in self._workers):
                busy = {w.results_r: w for w in self._workers if w.current is not None}
                ready, _, _ = select.select(list(busy), [], [])
                for fd in ready:
                    self._read(busy[fd])
        finally:
            self.close()
        return self._results, self._done

    def close(self) -> None:
        """Stop and reap every worker (also on an interrupt: none is left behind)."""
        for worker in self._workers:
            for fd in (worker.tasks_w, worker.results_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if worker.current is not None:  # still busy: interrupted, or stopping early
                try:
                    os.kill(worker.pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(worker.pid, 0)
            except OSError:
                pass
        self._workers = []

    # --- the parent's side --------------------------------------------------------------

    def _fork(self, function: Callable[[Any], Any]) -> _Worker:
        tasks_r, tasks_w = os.pipe()
        results_r, results_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                os.close(tasks_w)
                os.close(results_r)
                for other in self._workers:
                    os.close(other.tasks_w)
                    os.close(other.results_r)
                code = _serve(function, self._tasks, tasks_r, results_w)
            except BaseException:  # noqa: BLE001 - an interrupted or broken worker just ends
                pass
            finally:
                os._exit(code)
        os.close(tasks_r)
        os.close(results_w)
        return _Worker(pid, tasks_w, results_r)

    def _give(self, worker: _Worker) -> None:
        """Send the worker the next task, or tell it to stop."""
        if self._next < len(self._tasks):
            worker.current = self._next
            self._next += 1
            _send(worker.tasks_w, worker.current)
        else:
            worker.current = None
            try:
                _send(worker.tasks_w, _STOP)
            except OSError:
                pass

    def _read(self, worker: _Worker) -> None:
        chunk = os.read(worker.results_r, 1 << 20)
        if not chunk:  # the worker is gone: its task is left to the caller
            worker.current = None
            return
        worker.buffer += chunk
        while len(worker.buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(worker.buffer)
            if len(worker.buffer) < _HEADER.size + size:
                return
            payload = bytes(worker.buffer[_HEADER.size:_HEADER.size + size])
            del worker.buffer[:_HEADER.size + size]
            number, ok, result = pickle.loads(payload)
            if ok:
                self._results[number] = result
                self._done[number] = True
            try:
                self._give(worker)
            except OSError:  # it cannot take more: whatever it was given is the caller's
                worker.current = None


# --- the worker's side --------------------------------------------------------------------


def _serve(function: Callable[[Any], Any], tasks: list[Any], tasks_r: int, results_w: int) -> int:
    reader = os.fdopen(tasks_r, "rb")
    while True:
        header = reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return 0  # the parent is gone
        (size,) = _HEADER.unpack(header)
        number = pickle.loads(reader.read(size))
        if number == _STOP:
            return 0
        try:
            payload = pickle.dumps((number, True, function(tasks[number])), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - the parent redoes this task
            payload = pickle.dumps((number, False, None), protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(results_w, _HEADER.pack(len(payload)) + payload)


def _send(fd: int, value: Any) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(payload)) + payload)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


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
    for stream in (sys.stdout, sys.stderr):  # a child must not flush what the parent will
        if stream is not None:
            stream.flush()
    queue_r, queue_w = os.pipe()
    try:
        _write_all(queue_w, b"".join(_TASK.pack(n) for n in range(len(tasks))))
    finally:
        os.close(queue_w)  # the queue ends at its last task, for every reader
    children: list[tuple[int, int]] = []
    finished = False
    try:
        for _ in range(min(workers, len(tasks)) - 1):
            results_r, results_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # a worker: never returns
                code = 1
                try:
                    os.close(results_r)
                    for _pid, fd in children:
                        os.close(fd)
                    mine = {}
                    for number in _take(queue_r):
                        try:
                            mine[number] = pickle.dumps(function(tasks[number]), protocol=pickle.HIGHEST_PROTOCOL)
                        except Exception:  # noqa: BLE001 - not done: the parent redoes it
                            continue
                    _write_all(results_w, pickle.dumps(mine, protocol=pickle.HIGHEST_PROTOCOL))
                    code = 0
                except BaseException:  # noqa: BLE001 - an interrupted or broken worker just ends
                    pass
                finally:
                    os._exit(code)
            os.close(results_w)
            children.append((pid, results_r))
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

