"""Flash storage at run time: page-in/page-out traffic as time and energy.

A phone's storage (UFS, eMMC) serves reads and writes one request at a time
per direction (UFS is full duplex): a read of ``b`` bytes occupies the read
channel for ``latency + b / read_bandwidth`` and a write the write channel for
``latency + b / write_bandwidth``; requests queue behind each other (FIFO,
:class:`~simulator.engine.links.Channel`). While a channel is busy the device
draws ``read_power`` / ``write_power`` (the storage device and its host
interface); the bytes read are written into DRAM and the bytes written are
read from it, charged at the DRAM's energy per byte. Loading a model (or the
extra filters of a larger descendant) is a read; releasing a read-only model
from memory moves no data.

Loading a model is more than reading it (:meth:`Storage.load`): a CPU core
then deserialises the parameters, allocates memory and initialises the model
for ``load_latency + b / load_bandwidth`` at ``load_power`` (one loader, FIFO,
after the read). That CPU work is the ``model_load`` energy component; it
delays the model's readiness like the read does. (It is charged apart from the
cluster's kernels, so it does not slow them down: a simplification for loads
that take a small share of one core.)

The device integrates the power exactly over each sampler step
(:meth:`Storage.energy`, :meth:`Storage.load_energy`, :meth:`Storage.dram_bytes`)
and reports it as the ``storage`` and ``model_load`` energy components, heating
the board node.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import simpy

from ..spec.soc import StorageSpec
from .links import BandwidthSchedule, Channel


class _Direction:
    """One direction of the storage: a FIFO channel and its busy intervals."""

    def __init__(self, env: simpy.Environment, name: str, bandwidth: float, latency: float,
                 power: float, record: Callable | None):
        # The access latency occupies the device, so it is the channel's switch time.
        self.channel = Channel(env, name, BandwidthSchedule.constant(bandwidth),
                               switch=latency, record=record)
        self.power = power
        # (start, end, bytes) of transfers not yet fully accounted, in time order
        self.busy: deque[tuple[float, float, float]] = deque()

    def send(self, nbytes: float, done: Callable[[], None], label: str) -> float:
        end = self.channel.send(nbytes, done, label)
        start = end - (self.channel.switch + nbytes / self.channel.bandwidth.at(0.0))
        self.busy.append((start, end, nbytes))
        return end

    def window(self, t0: float, t1: float) -> tuple[float, float]:
        """(busy seconds, bytes moved) within ``[t0, t1]``; forgets what ended by ``t1``."""
        seconds = moved = 0.0
        for start, end, nbytes in self.busy:
            if start >= t1:
                break
            overlap = min(end, t1) - max(start, t0)
            if overlap > 0 and end > start:
                seconds += overlap
                moved += nbytes * overlap / (end - start)
        while self.busy and self.busy[0][1] <= t1:
            self.busy.popleft()
        return seconds, moved


class Storage:
    """A device's flash storage.

    Args:
        env: the SimPy environment.
        spec: the storage description.
        prefix: device prefix of channel names (multi-device systems).
        record: receives each transfer (timeline, transfer records).
    """

    def __init__(self, env: simpy.Environment, spec: StorageSpec, prefix: str = "",
                 record: Callable | None = None):
        self.env = env
        self.spec = spec
        self._read = _Direction(env, f"{prefix}storage.read", spec.read_bandwidth,
                                spec.latency, spec.read_power, record)
        write_bw = spec.write_bandwidth or spec.read_bandwidth
        self._write = _Direction(env, f"{prefix}storage.write", write_bw, spec.latency,
                                 spec.write_power if spec.write_power is not None
                                 else spec.read_power, record)
        self._loader = (_Direction(env, f"{prefix}storage.load", spec.load_bandwidth,
                                   spec.load_latency, spec.load_power, record)
                        if spec.load_bandwidth is not None else None)
        self.bytes_loaded = 0.0
        self._dram = 0.0  # bytes moved to or from DRAM in the window just integrated
        self.bytes_read = 0.0
        self.bytes_written = 0.0

    def read(self, nbytes: float, done: Callable[[], None] | None = None,
             label: str = "page-in") -> float:
        """Read ``nbytes`` into memory; ``done`` runs when they are there.

        Returns:
            the completion time (s).
        """
        self.bytes_read += nbytes
        return self._read.send(nbytes, done or (lambda: None), label)

    def load(self, nbytes: float, done: Callable[[], None] | None = None,
             label: str = "model load") -> None:
        """Load ``nbytes`` of model: read them, then the CPU makes the model ready.

        ``done`` runs when the model is ready (read and, when the storage
        describes it, deserialised and initialised).
        """
        finish = done or (lambda: None)
        if self._loader is None:
            self.read(nbytes, finish, label)
            return

        def deserialise() -> None:
            self.bytes_loaded += nbytes
            self._loader.send(nbytes, finish, label)

        self.read(nbytes, deserialise, label)

    def load_energy(self, t0: float, t1: float) -> float:
        """Energy (J) of the loading CPU work in ``[t0, t1]``; consecutive windows."""
        if self._loader is None:
            return 0.0
        seconds, _ = self._loader.window(t0, t1)
        return seconds * self._loader.power

    def write(self, nbytes: float, done: Callable[[], None] | None = None,
              label: str = "page-out") -> float:
        """Write ``nbytes`` from memory to flash; ``done`` runs when written.

        Returns:
            the completion time (s).
        """
        self.bytes_written += nbytes
        return self._write.send(nbytes, done or (lambda: None), label)

    def energy(self, t0: float, t1: float) -> float:
        """Energy (J) the storage drew in ``[t0, t1]``; call with consecutive windows.

        Also sets :meth:`dram_bytes` for the same window.
        """
        joules, self._dram = 0.0, 0.0
        for direction in (self._read, self._write):
            seconds, moved = direction.window(t0, t1)
            joules += seconds * direction.power
            self._dram += moved
        return joules

    def dram_bytes(self) -> float:
        """Bytes moved between storage and DRAM in the window of the last :meth:`energy`."""
        return self._dram
