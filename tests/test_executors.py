"""The local process pool: which worker takes which task, and a worker that dies."""

from __future__ import annotations

import os

import pytest

from simulator.executors import ProcessPoolExecutor, WorkerDied, _Affinity


def _take(order: _Affinity, worker: int, count: int) -> list[int]:
    return [order.next(worker) for _ in range(count)]


def _run(fn, tasks: list, **options) -> dict:
    """``{position: value}`` of ``tasks`` on a fresh 2-worker pool, closed after."""
    pool = ProcessPoolExecutor(2)
    try:
        return dict(pool.map_unordered(fn, tasks, **options))
    finally:
        pool.close()


def test_a_worker_keeps_the_key_it_started_then_takes_the_next_unstarted_one():
    order = _Affinity(["a", "b", "a", "c", "b", "a", "c"])
    assert _take(order, 0, 2) == [0, 2]  # a's first two
    assert _take(order, 1, 1) == [1]  # b: a is taken
    assert _take(order, 0, 2) == [5, 3]  # a's last, then c (unstarted, in task order)
    assert _take(order, 1, 2) == [4, 6]  # b's last, then c's rest: the tail is shared
    assert order.next(0) is None and order.next(1) is None


def test_the_tail_is_shared_from_the_key_with_most_tasks_left():
    order = _Affinity(["a"] * 2 + ["b"] * 5)
    assert _take(order, 0, 1) == [0]
    assert _take(order, 1, 1) == [2]
    assert _take(order, 0, 2) == [1, 3]  # a done: every key started, b has most left
    assert _take(order, 1, 3) == [4, 5, 6]
    assert order.next(1) is None


def test_a_task_put_back_is_its_workers_next_even_when_its_key_had_run_out():
    order = _Affinity(["a", "b", "a"])
    assert _take(order, 0, 2) == [0, 2]  # a is done
    order.put_back(2)  # its worker died before taking it
    assert order.next(0) == 2 and order.next(0) == 1 and order.next(0) is None


def test_without_keys_tasks_go_in_order():
    order = _Affinity(range(4))
    assert [order.next(worker) for worker in (0, 1, 1, 0, 0)] == [0, 1, 2, 3, None]


def _pid_of(task: int) -> tuple[int, int]:
    return task, os.getpid()


def _die_on_three(task: int) -> int:
    if task == 3:
        os._exit(1)
    return task * 10


def test_the_pool_runs_every_task_once_and_starts_each_key_on_its_own_worker():
    keys = ["x"] * 6 + ["y"] * 6
    values = _run(_pid_of, list(range(12)), affinity=keys)
    assert sorted(values) == list(range(12))
    assert all(values[i][0] == i for i in range(12))
    # two keys, two workers: each key starts on its own worker (which takes which
    # task after that depends on their speeds; _Affinity's tests above pin it down)
    assert values[0][1] != values[6][1]


def _unpicklable(task: int):
    return lambda: task  # a lambda cannot be sent back


def test_a_value_or_a_task_that_cannot_be_sent_fails_alone():
    values = _run(_unpicklable, [0, 1])
    mixed = _run(_pid_of, [0, lambda: 1, 2])
    assert all("cannot be sent back" in str(value) for value in values.values())
    assert isinstance(mixed[1], Exception) and mixed[0][0] == 0 and mixed[2][0] == 2


def test_a_worker_that_dies_fails_only_the_tasks_it_held():
    # no keys: tasks in order; task 3's worker dies, a new one takes the rest
    values = _run(_die_on_three, list(range(10)))
    assert sorted(values) == list(range(10))
    failed = {i for i, value in values.items() if isinstance(value, Exception)}
    assert failed == {3}
    assert isinstance(values[3], WorkerDied)
    assert all(values[i] == i * 10 for i in range(10) if i not in failed)


def _refuse():
    raise TypeError("cannot be rebuilt here")


class _Unloadable:
    """Pickles, but unpickling it (in the parent) raises."""

    def __reduce__(self):
        return _refuse, ()


def _odd_unloadable(task: int):
    return _Unloadable() if task % 2 else task


def test_a_value_that_does_not_unpickle_fails_its_task_alone():
    values = _run(_odd_unloadable, list(range(6)))
    assert [values[i] for i in (0, 2, 4)] == [0, 2, 4]
    assert all(isinstance(values[i], TypeError) for i in (1, 3, 5))


def test_affinity_keys_must_match_the_tasks():
    with pytest.raises(ValueError, match="2 affinity keys for 3 tasks"):
        _run(_pid_of, [0, 1, 2], affinity=["a", "b"])
