"""gpulint.scan.forkpool: forked workers over pipes, for parallel scans."""

from __future__ import annotations

import os
import signal
import time

import pytest

from gpulint.scan import parallel
from gpulint.scan.forkpool import Forked

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="needs the fork start method")


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_forked_job_runs_beside_this_process_and_delivers_its_result() -> None:
    parent = os.getpid()
    child = Forked(lambda n: (os.getpid(), "x" * n), 200_000)   # more than a pipe holds
    (pid, text), ok = child.result()
    assert ok and pid != parent and len(text) == 200_000
    assert _no_children_left()


def test_a_forked_job_that_dies_fails_or_cannot_send_is_not_done() -> None:
    for job in (lambda n: os.kill(os.getpid(), signal.SIGKILL), lambda n: 1 / 0, lambda n: (lambda: n)):
        assert Forked(job, 1).result() == (None, False)
    assert _no_children_left()


def test_closing_a_forked_job_kills_and_reaps_it() -> None:
    child = Forked(lambda n: time.sleep(30), 1)
    started = time.monotonic()
    child.close()
    assert time.monotonic() - started < 10 and _no_children_left()


# --- run_shared: one queue, this process included -------------------------------------------


def test_a_shared_queue_runs_every_task_once_here_and_in_the_workers() -> None:
    from gpulint.scan.forkpool import run_shared

    parent = os.getpid()
    tasks = list(range(60))

    def work(n: int) -> tuple:
        time.sleep(0.002)   # long enough for both processes to take some
        return n * n, os.getpid(), "x" * n * 2000

    results, done = run_shared(2, work, tasks)
    assert done == [True] * 60
    assert [r[0] for r in results] == [n * n for n in tasks]
    assert [len(r[2]) for r in results] == [n * 2000 for n in tasks]   # more than a pipe holds
    pids = {r[1] for r in results}
    assert parent in pids and len(pids) == 2
    assert _no_children_left()


def test_a_shared_queue_reports_what_a_dead_worker_took_as_not_done() -> None:
    from gpulint.scan.forkpool import run_shared

    parent = os.getpid()

    def work(n: int) -> int:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)   # the worker dies at its first task
        time.sleep(0.05)                           # while this process is slow to take the rest
        return n

    results, done = run_shared(2, work, list(range(8)))
    assert done.count(False) == 1                  # the one task the worker took
    assert all(results[n] == n for n in range(8) if done[n])
    assert _no_children_left()


def test_a_shared_queue_leaves_unsendable_or_failing_tasks_to_the_caller() -> None:
    from gpulint.scan.forkpool import run_shared

    assert run_shared(2, lambda n: n, []) == ([], [])
    results, done = run_shared(1, lambda n: n if n != 2 else 1 / 0, [0, 1, 2, 3])
    assert done == [True, True, False, True] and results[3] == 3
    parent = os.getpid()

    def unsendable_in_workers(n: int) -> object:
        time.sleep(0.05)
        return n if os.getpid() == parent else (lambda: n)   # a lambda cannot be pickled

    results, done = run_shared(2, unsendable_in_workers, list(range(6)))
    assert 0 < done.count(True) < 6 and all(results[n] == n for n in range(6) if done[n])
    with pytest.raises(ValueError):
        from gpulint.scan.forkpool import MAX_SHARED_TASKS

        run_shared(2, lambda n: n, list(range(MAX_SHARED_TASKS + 1)))
