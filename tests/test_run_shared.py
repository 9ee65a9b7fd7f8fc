"""gpulint.scan.parallel.run_shared: a shared queue of tasks, this process and forked workers."""

from __future__ import annotations

import os
import signal
import time

import pytest

from gpulint.scan import parallel
from gpulint.scan.parallel import run_shared

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="needs the fork start method")

PARENT = os.getpid()


def _no_children_left() -> bool:
    import multiprocessing

    for child in multiprocessing.active_children():  # reaps what has ended
        child.join(10)
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def _square_where(n: int) -> tuple:
    time.sleep(0.01)   # long enough for both processes to take some
    return n * n, os.getpid(), "x" * n * 2000


def test_every_task_runs_once_here_and_in_the_workers() -> None:
    tasks = list(range(60))
    results, done = run_shared(2, _square_where, tasks)
    assert done == [True] * 60
    assert [r[0] for r in results] == [n * n for n in tasks]
    assert [len(r[2]) for r in results] == [n * 2000 for n in tasks]   # more than a pipe holds
    pids = {r[1] for r in results}
    assert PARENT in pids and len(pids) == 2
    assert _no_children_left()


def _die_in_workers(n: int) -> int:
    if os.getpid() != PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)   # this process is slow to take the rest
    return n


def test_what_a_dead_worker_took_is_reported_not_done() -> None:
    results, done = run_shared(2, _die_in_workers, list(range(8)))
    assert 0 < done.count(False) < 8
    assert all(results[n] == n for n in range(8) if done[n])
    assert _no_children_left()


def _fail_at_two(n: int) -> int:
    return n if n != 2 else 1 // 0


def _unsendable_in_workers(n: int) -> object:
    time.sleep(0.05)
    return n if os.getpid() == PARENT else (lambda: n)   # a lambda cannot be pickled


def test_failing_or_unsendable_tasks_are_left_to_the_caller() -> None:
    assert run_shared(2, _fail_at_two, []) == ([], [])
    results, done = run_shared(1, _fail_at_two, [0, 1, 2, 3])
    assert done == [True, True, False, True] and results[3] == 3
    results, done = run_shared(2, _fail_at_two, [0, 1, 2, 3])
    assert done == [True, True, False, True] and results[3] == 3
    results, done = run_shared(2, _unsendable_in_workers, list(range(6)))
    assert 0 < done.count(True) < 6 and all(results[n] == n for n in range(6) if done[n])
    assert _no_children_left()


def test_one_job_or_one_task_forks_nothing() -> None:
    results, done = run_shared(4, _square_where, [3])
    assert done == [True] and results[0][1] == PARENT
    results, done = run_shared(1, _square_where, [1, 2])
    assert {r[1] for r in results} == {PARENT}
