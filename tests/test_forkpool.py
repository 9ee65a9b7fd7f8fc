"""gpulint.forkpool: forked workers over pipes, for parallel scans."""

from __future__ import annotations

import os
import signal
import time

import pytest

from gpulint import parallel
from gpulint.forkpool import ForkPool

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="needs the fork start method")


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_every_task_runs_once_in_a_worker_and_results_come_back_in_task_order() -> None:
    parent = os.getpid()
    tasks = list(range(40))
    results, done = ForkPool(2, lambda n: (n * n, os.getpid(), "x" * n * 1000), tasks).finish()
    assert done == [True] * 40
    assert [r[0] for r in results] == [n * n for n in tasks]
    assert [len(r[2]) for r in results] == [n * 1000 for n in tasks]   # results larger than a pipe's buffer
    pids = {r[1] for r in results}
    assert parent not in pids and len(pids) == 2
    assert _no_children_left()


def test_a_killed_worker_leaves_its_task_to_the_caller_and_the_others_go_on() -> None:
    def work(n: int) -> int:
        if n == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return n

    results, done = ForkPool(2, work, list(range(10))).finish()
    assert done == [n != 3 for n in range(10)]
    assert [r for r, ok in zip(results, done) if ok] == [n for n in range(10) if n != 3]
    assert _no_children_left()


def test_a_result_that_cannot_be_sent_or_a_failing_task_is_left_to_the_caller() -> None:
    def work(n: int) -> object:
        if n == 1:
            return lambda: None       # cannot be pickled
        if n == 2:
            raise ValueError("boom")
        return n

    results, done = ForkPool(1, work, [0, 1, 2, 3]).finish()
    assert done == [True, False, False, True] and (results[0], results[3]) == (0, 3)


def test_closing_early_stops_and_reaps_busy_workers() -> None:
    pool = ForkPool(2, lambda n: time.sleep(30), [1, 2, 3])
    started = time.monotonic()
    pool.close()
    assert time.monotonic() - started < 10 and _no_children_left()


def test_no_workers_for_no_tasks() -> None:
    assert ForkPool(4, lambda n: n, []).finish() == ([], [])
