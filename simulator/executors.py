"""Executors: where the runs of a sweep execute.

An executor maps a picklable function over tasks and yields ``(position,
value)`` pairs as runs finish, in any order; the runner puts results back in
run order, so the output does not depend on the executor. If the executor
itself loses a task (a worker process died), the value is the exception.

* :class:`InProcessExecutor` - one after another in this process (``--workers 1``).
* :class:`ProcessPoolExecutor` - a local pool of worker processes (the default).
* :class:`DaskExecutor` - a Dask cluster (``--scheduler-address tcp://host:port``).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any

from .errors import ConfigError


def default_workers() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class InProcessExecutor:
    """Run tasks one after another in the calling process."""

    def describe(self) -> dict[str, Any]:
        """What ran the sweep (for the manifest)."""
        return {"kind": "in-process", "workers": 1}

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Sequence[Any]
                      ) -> Iterator[tuple[int, Any]]:
        """Yield ``(position, fn(task))`` per task."""
        for position, task in enumerate(tasks):
            yield position, fn(task)

    def close(self) -> None:
        """Nothing to release."""


def _die_with(parent: int) -> None:
    """End this worker when ``parent`` dies, even by ``kill -9`` (no clean-up runs
    there): otherwise workers finish their runs as orphans and hold the caller's
    pipes open. Linux delivers SIGKILL at the parent's death (PR_SET_PDEATHSIG);
    elsewhere a daemon thread polls for the parent's disappearance."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent:  # it died before the request took effect
                os._exit(1)
            return
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="socsim-parent-watch", daemon=True).start()


def _init_worker(parent: int) -> None:
    _die_with(parent)
    # Ctrl-C reaches the whole process group; only the parent should react to it,
    # so workers do not print a traceback each.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # One run is single-threaded Python; BLAS threads (the thermal model's small
    # matrices) only oversubscribe the CPUs the other workers use.
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(1)


def _start_method() -> str:
    # fork is unsafe on macOS (system frameworks) and absent on Windows.
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return "fork" if sys.platform.startswith("linux") and "fork" in methods else "spawn"


class ProcessPoolExecutor:
    """A pool of local worker processes.

    Workers are forked where that is safe (Linux: fast start, modules already
    imported) and spawned elsewhere. They share this machine's files, so they
    write their runs' folders themselves.

    Each worker is one process at the end of a pipe, and this process chooses which
    worker runs which task: tasks with the same affinity key (the runs of one
    workload, which build the same trace) stay with the worker that started them
    (see :class:`_Affinity`). A worker holds one task at a time and is handed the
    next as soon as it answers (~0.05 ms; a pool of queues and feeder threads took
    ~0.6 ms a task). No Python thread runs in this process, so forking a worker, also
    a replacement, copies no lock another thread holds (pyarrow's allocator thread
    is fork-safe). A worker that dies fails the task it was running
    (:class:`WorkerDied`) and a new one takes its place; a task it was handed but
    never received goes back to the queue. Workers are daemonic, like
    ``multiprocessing.Pool``'s: a task cannot start processes of its own.

    Args:
        workers: number of processes.
    """

    shares_files = True
    keeps_affinity = True
    # Times a task goes back to the queue because its worker died before receiving
    # it (a worker that dies at start-up would otherwise be replaced forever).
    RESENDS = 2

    def __init__(self, workers: int):
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1; got {workers}")
        self.workers = workers
        self._workers: list[_Worker] = []

    def describe(self) -> dict[str, Any]:
        """What ran the sweep (for the manifest)."""
        return {"kind": "process-pool", "workers": self.workers}

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Sequence[Any],
                      affinity: Sequence[Hashable] | None = None
                      ) -> Iterator[tuple[int, Any]]:
        """Run all tasks; yield ``(position, value)`` as they complete.

        Args:
            fn: a picklable function of one task.
            tasks: its arguments.
            affinity: a key per task (None: every task its own); see :class:`_Affinity`.
        """
        if affinity is not None and len(affinity) != len(tasks):
            raise ValueError(f"{len(affinity)} affinity keys for {len(tasks)} tasks")
        self.close()  # a previous map's workers, if it was not closed
        if not tasks:
            return
        order = _Affinity(range(len(tasks)) if affinity is None else affinity)
        resends: dict[int, int] = {}
        for slot in range(min(self.workers, len(tasks))):  # all forked before any task
            self._workers.append(_Worker(slot))
        finished: list[tuple[int, Any]] = []
        for worker in list(self._workers):
            finished += self._hand(worker, order, fn, tasks, resends)
        while True:
            yield from finished
            finished.clear()
            busy = [worker for worker in self._workers if worker.position is not None]
            if not busy:
                return
            for worker in _ready(busy):
                finished.append(worker.receive())
                if not worker.alive:
                    worker = self._replace(worker)
                finished += self._hand(worker, order, fn, tasks, resends)

    def _hand(self, worker: _Worker, order: _Affinity, fn: Callable, tasks: Sequence[Any],
              resends: dict[int, int]) -> list[tuple[int, Any]]:
        """Send ``worker`` its next task; returns the tasks that failed on the way
        (one that does not pickle, or one whose worker kept dying before receiving)."""
        failed = []
        while (position := order.next(worker.slot)) is not None:
            try:
                worker.send(position, fn, tasks[position])
                return failed
            except OSError:  # the worker died: the task never reached it
                died = worker.died()
                worker = self._replace(worker)
                resends[position] = resends.get(position, 0) + 1
                if resends[position] <= self.RESENDS:
                    order.put_back(position)
                else:
                    failed.append((position, died))
            except Exception as exc:  # noqa: BLE001 - a task that does not pickle
                failed.append((position, exc))
        return failed

    def _replace(self, worker: _Worker) -> _Worker:
        worker.stop()
        self._workers[worker.slot] = new = _Worker(worker.slot)
        return new

    def close(self) -> None:
        """Stop the workers, including runs still executing (after an interrupt)."""
        while self._workers:
            self._workers.pop().stop()


def _ready(busy: list[_Worker]) -> list[_Worker]:
    """The busy workers with an answer or an end to read, waiting for one."""
    from multiprocessing.connection import wait

    if sys.platform == "win32":
        # Windows waits on at most 63 handles (a dead worker's pipe is ready too)
        ready = set(wait([worker.pipe for worker in busy]))
    else:  # the end of a process, also one whose pipe another process holds open
        ready = set(wait([end for worker in busy for end in (worker.pipe, worker.sentinel)]))
    return [worker for worker in busy if worker.pipe in ready or worker.sentinel in ready]


class WorkerDied(Exception):
    """The local worker process running a task ended (killed, out of memory, a crash)."""


class _Worker:
    """One worker process and the pipe to it.

    Args:
        slot: the worker's index in the pool (its affinity: :class:`_Affinity`).

    Attributes:
        position: the task it holds (None when idle).
        alive: False once it is known to have died.
    """

    def __init__(self, slot: int):
        import multiprocessing

        context = multiprocessing.get_context(_start_method())
        self.pipe, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, os.getpid()), daemon=True,
                                       name=f"socsim-worker-{slot}")
        self.process.start()
        child.close()
        self.slot = slot
        self.sentinel = self.process.sentinel
        self.position: int | None = None
        self.alive = True

    def send(self, position: int, fn: Callable, task: Any) -> None:
        """Hand the worker a task (the worker is idle: this never waits for it)."""
        self.pipe.send((position, fn, task))
        self.position = position

    def receive(self) -> tuple[int, Any]:
        """The held task's ``(position, value)``; the worker was seen ready."""
        position = self.position
        try:
            if not self.pipe.poll():  # ended without an answer
                raise EOFError
            _, value = self.pipe.recv()
        except (EOFError, OSError):
            return position, self.died()
        except Exception as exc:  # noqa: BLE001 - a value that does not unpickle here
            value = exc
        self.position = None
        return position, value

    def died(self) -> WorkerDied:
        """Mark the worker dead; the failure of the task it held."""
        self.alive = False
        self.process.join(timeout=5)
        code = self.process.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return WorkerDied(f"the worker process running this task ended ({how})")

    def stop(self) -> None:
        self.pipe.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(timeout=5)


def _serve(pipe, parent: int) -> None:
    """A worker's loop: a task in, its value (or the exception it raised) out. It ends
    when stopped (``terminate``), with its parent (:func:`_die_with`), or at the end
    of its pipe (spawned workers: forked ones share the parent's end with it)."""
    _init_worker(parent)
    while True:
        try:
            position, fn, task = pipe.recv()
        except EOFError:
            return
        try:
            value = fn(task)
        except Exception as exc:  # noqa: BLE001 - the parent records it
            value = exc
        try:
            pipe.send((position, value))
        except Exception as exc:  # noqa: BLE001 - a value that does not pickle
            pipe.send((position, RuntimeError(f"the task's value cannot be sent back: "
                                              f"{type(exc).__name__}: {exc}")))


class _Affinity:
    """Which task a worker takes next, keeping tasks of one key on one worker.

    A worker takes the next task of the key it took last while that key has tasks
    left; then the first key no worker has started (in task order); when every key
    has started, it joins the key with the most tasks left (the sweep's tail is shared,
    at the price of one more worker building that key's trace).

    Args:
        keys: a hashable key per task, by position.
    """

    def __init__(self, keys: Iterable[Hashable]):
        self.keys = list(keys)
        self.left: dict[Hashable, deque[int]] = {}
        for position, key in enumerate(self.keys):
            self.left.setdefault(key, deque()).append(position)
        self.unstarted = deque(self.left)
        self.current: dict[int, Hashable] = {}

    def next(self, worker: int) -> int | None:
        """The position of the task ``worker`` runs next; None when none is left."""
        if self.current.get(worker, _NO_KEY) in self.left:
            key = self.current[worker]
        elif self.left:
            key = self.current[worker] = self._new_key()
        else:
            return None
        tasks = self.left[key]
        position = tasks.popleft()
        if not tasks:
            del self.left[key]
        return position

    def put_back(self, position: int) -> None:
        """Queue a task again, first of its key (its worker died before taking it)."""
        key = self.keys[position]
        if key not in self.left:
            self.left[key] = deque()
            self.unstarted.appendleft(key)
        self.left[key].appendleft(position)

    def _new_key(self) -> Hashable:
        while self.unstarted:
            key = self.unstarted.popleft()
            if key in self.left:
                return key
        return max(self.left, key=lambda key: len(self.left[key]))


_NO_KEY = object()  # a worker that has taken no task yet


class DaskExecutor:
    """Runs on a Dask cluster; every worker needs socsim installed and the input files.

    Args:
        address: the scheduler, e.g. ``tcp://10.0.0.5:8786``.
        timeout: seconds to wait for the connection.
        workers_timeout: seconds to wait for a first worker to join.
        run_timeout: wall seconds a run may take once the scheduler has handed it to a
            worker (None: no limit); a run over it is given up as failed
            (:class:`RunTimeout`) and its worker restarted when a nanny manages it.
    """

    POLL_S = 1.0  # how often running runs are checked against run_timeout

    def __init__(self, address: str, timeout: float = 10.0, workers_timeout: float = 60.0,
                 run_timeout: float | None = None):
        try:
            from dask.distributed import Client
        except ImportError:
            raise ConfigError("--scheduler-address needs Dask: pip install 'socsim[dask]'"
                              ) from None
        try:
            self._client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ConfigError(f"cannot connect to the Dask scheduler at {address!r}: "
                              f"{exc}") from None
        self.address = address
        self.run_timeout = run_timeout
        self._futures: list = []
        try:
            self._client.wait_for_workers(1, timeout=workers_timeout)
        except (TimeoutError, OSError) as exc:
            self._client.close()
            raise ConfigError(f"no Dask worker joined the scheduler at {address!r} within "
                              f"{workers_timeout:g} s ({type(exc).__name__})") from None
        try:
            versions = self._client.run(_socsim_version)
        except Exception as exc:  # a worker without socsim (ImportError), or gone
            self._client.close()
            raise ConfigError(f"a Dask worker of {address!r} cannot run socsim: "
                              f"{type(exc).__name__}: {exc}") from None
        try:
            check_worker_versions(versions, address)
        except ConfigError:
            self._client.close()
            raise

    def describe(self) -> dict[str, Any]:
        """What ran the sweep (for the manifest)."""
        workers = self._client.scheduler_info().get("workers", {})
        return {"kind": "dask", "scheduler": self.address, "workers": len(workers),
                "threads": sum(w.get("nthreads", 0) for w in workers.values())}

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Sequence[Any]
                      ) -> Iterator[tuple[int, Any]]:
        """Submit all tasks; yield ``(position, value)`` as they complete.

        A task that fails on the cluster (a killed worker) yields its exception; one
        running longer than ``run_timeout`` yields a :class:`RunTimeout`.
        """
        from dask.distributed import as_completed

        self._futures = [self._client.submit(fn, task, pure=False) for task in tasks]
        positions = {future.key: i for i, future in enumerate(self._futures)}
        if self.run_timeout is None:
            for future in as_completed(self._futures, loop=self._client.loop):
                yield positions[future.key], _value(future)
            return
        yield from self._with_timeout(positions)

    def _with_timeout(self, positions: dict) -> Iterator[tuple[int, Any]]:
        """Like ``as_completed``, giving up runs that run longer than ``run_timeout``.

        A run's clock starts when the scheduler hands it to a worker
        (``Client.processing``); with Dask's default queueing that is when a
        thread is free for it, give or take one run.
        """
        from dask.distributed import as_completed

        pending = {future.key: future for future in self._futures}
        finished = as_completed(self._futures, loop=self._client.loop)
        started: dict = {}
        while pending:
            until = time.monotonic() + self.POLL_S
            while not finished.has_ready() and time.monotonic() < until:
                time.sleep(0.02)
            done = [f for f in finished.next_batch(block=False) if f.key in pending]
            for future in sorted(done, key=lambda f: positions[f.key]):
                del pending[future.key]
                yield positions[future.key], _value(future)
            now = time.monotonic()
            for worker, keys in self._client.processing().items():
                for key in keys:
                    if key in pending:
                        started.setdefault(key, (now, worker))
            late = [(key, worker) for key, (start, worker) in started.items()
                    if key in pending and now - start > self.run_timeout]
            for key, worker in sorted(late, key=lambda item: positions[item[0]]):
                if key not in pending:
                    continue
                self._client.cancel([pending.pop(key)])
                message, restarted = self._give_up(worker)
                if restarted:  # its other runs start again elsewhere: new clocks
                    started = {k: v for k, v in started.items() if v[1] != worker}
                yield positions[key], RunTimeout(message)

    def _give_up(self, worker: str) -> tuple[str, bool]:
        """Free the worker of a run over time (Dask cannot stop a running task): restart
        it when a nanny manages it. Returns the failure message and whether it was."""
        message = (f"the run took longer than --run-timeout {self.run_timeout:g} s on Dask "
                   f"worker {worker}")
        try:
            self._client.restart_workers([worker], timeout=30)
        except Exception:  # noqa: BLE001 - no nanny (an in-process worker): it runs on
            return (f"{message}; the worker (no nanny to restart it) finishes it unseen",
                    False)
        return f"{message}; the worker was restarted", True

    def close(self) -> None:
        """Cancel what is left and disconnect (the cluster keeps running)."""
        pending = [future for future in self._futures if not future.done()]
        if pending:
            self._client.cancel(pending)
        self._futures = []
        self._client.close()


class RunTimeout(Exception):
    """A run went over ``--run-timeout`` on a Dask worker (recorded as a failed run)."""


def _value(future) -> Any:
    """A finished future's result, or the exception it ended with (KilledWorker, ...)."""
    try:
        value = future.result()
    except Exception as exc:  # noqa: BLE001 - a failure of the cluster is the run's result
        value = exc
    future.release()
    return value


def _socsim_version() -> str:
    """What a worker reports: the socsim version it imports (runs on the worker)."""
    import simulator

    return simulator.__version__


def check_worker_versions(versions: dict[str, str], address: str) -> None:
    """Refuse a cluster whose workers import another socsim version than this process
    (their runs would not be this version's results).

    Args:
        versions: worker address -> the version it imports.
        address: the scheduler (for the message).

    Raises:
        ConfigError: naming the workers that differ.
    """
    from . import __version__

    other = {worker: version for worker, version in sorted(versions.items())
             if version != __version__}
    if other:
        listed = ", ".join(f"{worker} has {version}" for worker, version in other.items())
        raise ConfigError(f"Dask workers of {address!r} run another socsim than this "
                          f"one ({__version__}): {listed}")


def make_executor(workers: int | None = None, scheduler_address: str | None = None,
                  run_timeout: float | None = None):
    """The executor for the CLI options.

    Args:
        workers: local processes (``None``: one per CPU; 1: in-process).
        scheduler_address: a Dask scheduler; overrides ``workers``.
        run_timeout: wall seconds per run on a Dask cluster (None: no limit).

    Raises:
        ConfigError: a ``run_timeout`` without a Dask scheduler.
    """
    if scheduler_address:
        return DaskExecutor(scheduler_address, run_timeout=run_timeout)
    if run_timeout is not None:
        raise ConfigError("--run-timeout applies to runs on a Dask cluster "
                          "(--scheduler-address)", path="--run-timeout")
    workers = default_workers() if workers is None else workers
    if workers == 1:
        return InProcessExecutor()
    return ProcessPoolExecutor(workers)
