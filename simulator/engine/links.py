"""Transfer channels: CPU<->accelerator copies and network links between devices.

A channel carries one transfer at a time (FIFO). A transfer of ``b`` bytes
occupies it for ``switch + b / bandwidth`` and arrives ``latency`` later, so
propagation overlaps the next transfer. Bandwidth (and latency) may change over
time (piecewise constant); the occupancy is then found by walking the segments.

A channel may belong to a radio (a phone's LTE/3G/Wi-Fi interface, see
:mod:`simulator.network.radio`): a transfer then waits for the radio to be
promoted out of its idle state, and the radio accounts the energy of the
transfer and of the tail that follows.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

import simpy
from simpy.events import Timeout


class StepSchedule:
    """A piecewise-constant quantity: ``values[i]`` from ``times[i]`` (s) on.

    Args:
        times: ascending change times, the first being 0.
        values: the value of each segment (SI units), all >= 0.
        period: if given, the schedule repeats with this period (s).
    """

    def __init__(self, times: Sequence[float], values: Sequence[float],
                 period: float | None = None):
        if not times or times[0] != 0 or len(times) != len(values):
            raise ValueError("a schedule needs matching times/values starting at 0")
        if any(v < 0 for v in values):
            raise ValueError("schedule values must not be negative")
        if list(times) != sorted(times):
            raise ValueError("schedule times must ascend")
        self.times = list(times)
        self.values = list(values)
        self.period = period

    @classmethod
    def constant(cls, value: float):
        return cls([0.0], [value])

    def at(self, t: float) -> float:
        """The value at time ``t``."""
        if self.period:
            t = t % self.period
        return self.values[bisect.bisect_right(self.times, t) - 1]

    def next_change(self, t: float) -> float:
        """The first change time (s) after ``t`` (``inf`` if none): where a
        periodic pipeline's fast-forward must stop (:mod:`simulator.engine.pipeline`).
        The end of a period counts as a change."""
        if len(self.times) == 1:
            return float("inf")
        if self.period:
            local = t % self.period
            i = bisect.bisect_right(self.times, local)
            return t - local + (self.times[i] if i < len(self.times) else self.period)
        i = bisect.bisect_right(self.times, t)
        return self.times[i] if i < len(self.times) else float("inf")


class BandwidthSchedule(StepSchedule):
    """Piecewise-constant bandwidth: ``values[i]`` (B/s, all positive) from ``times[i]`` on.

    Args:
        times: ascending change times, the first being 0.
        values: bandwidth in bytes/s for each segment, all positive.
        period: if given, the schedule repeats with this period (s).
    """

    def __init__(self, times: Sequence[float], values: Sequence[float],
                 period: float | None = None):
        if any(v <= 0 for v in values):
            raise ValueError("bandwidths must be positive")
        super().__init__(times, values, period)

    def finish_time(self, start: float, nbytes: float) -> float:
        """Time when ``nbytes`` started at ``start`` have been sent."""
        if len(self.values) == 1:
            return start + nbytes / self.values[0]
        t, left = start, nbytes
        for _ in range(1_000_000):
            local = t % self.period if self.period else t
            i = bisect.bisect_right(self.times, local) - 1
            if i + 1 < len(self.times):
                seg_end = t + (self.times[i + 1] - local)
            elif self.period:
                seg_end = t + (self.period - local)
            else:
                seg_end = float("inf")
            capacity = (seg_end - t) * self.values[i]
            if capacity >= left:
                return t + left / self.values[i]
            left -= capacity
            t = seg_end
        raise RuntimeError("bandwidth schedule did not converge")


class Port:
    """One direction of a device's network port, shared by all its links.

    A transfer holds the sender's outgoing and the receiver's incoming port for
    as long as it occupies its link (store-and-forward reservation in the order
    transfers are queued), and moves no faster than the slowest of the three.

    Args:
        name: shown in errors (``board0.out``).
        bandwidth: bytes/s.
    """

    def __init__(self, name: str, bandwidth: float):
        if bandwidth <= 0:
            raise ValueError("a port's bandwidth must be positive")
        self.name = name
        self.bandwidth = bandwidth
        self.free_at = 0.0
        self.bytes_sent = 0.0


class Channel:
    """A FIFO transfer channel.

    Args:
        env: the SimPy environment.
        name: shown in timelines (``dsp.fastrpc``, ``link.phone-server``).
        bandwidth: a schedule of bandwidth over time.
        latency: propagation delay per transfer (s), or a schedule of it over time.
        switch: fixed occupancy per transfer (s): RPC setup, context switch.
        record: receives ``(channel, start, end, nbytes, label)`` per transfer.
        radio: the radio this channel goes through (None: wired / on-chip).
        uplink: the direction of this channel seen from the radio's device.
        network: the network type over time (an object with ``at(t)`` giving a name
            such as ``wifi5`` or ``4g``), as an OS reports it; None if unknown.
        ports: the device ports the channel goes through (:class:`Port`).

    Attributes:
        last_transfer: ``(ready, start, end, arrival)`` of the most recent transfer
            (s): the channel was free for it at ``ready``, data flowed from
            ``start`` (later when a radio had to be promoted) to ``end``.
    """

    def __init__(self, env: simpy.Environment, name: str, bandwidth: BandwidthSchedule,
                 latency: float | StepSchedule = 0.0, switch: float = 0.0,
                 record: Callable[[Channel, float, float, float, str], None] | None = None,
                 radio=None, uplink: bool = True, network=None,
                 ports: Sequence[Port] = ()):
        self.env = env
        self.ports = tuple(ports)
        self.network = network
        self.name = name
        self.bandwidth = bandwidth
        self.latency = latency
        self.switch = switch
        self.free_at = 0.0
        self.busy_time = 0.0
        self.bytes_sent = 0.0
        self._record = record
        self.radio = radio
        self.uplink = uplink
        self.last_transfer = (0.0, 0.0, 0.0, 0.0)

    def network_at(self, t: float) -> str | None:
        """The network type at time ``t`` (None if unknown)."""
        return self.network.at(t) if self.network is not None else None

    def port_bandwidth(self) -> float:
        """The narrowest port's bandwidth (B/s; ``inf`` without ports)."""
        return min((p.bandwidth for p in self.ports), default=float("inf"))

    def latency_at(self, t: float) -> float:
        """Propagation delay (s) of a transfer ending at time ``t``."""
        latency = self.latency
        return latency.at(t) if isinstance(latency, StepSchedule) else latency

    def send(self, nbytes: float, on_arrival: Callable[[], None], label: str = "") -> float:
        """Queue a transfer; ``on_arrival`` runs when it has arrived. Returns arrival time."""
        now = self.env.now
        start = ready = max(now, self.free_at, *(p.free_at for p in self.ports))
        if self.radio is not None:
            start = self.radio.wake(ready)  # promotion out of an idle radio state
        end = self.bandwidth.finish_time(start + self.switch, nbytes)
        for port in self.ports:  # a shared port may be slower than the link
            end = max(end, start + self.switch + nbytes / port.bandwidth)
        self.free_at = end
        for port in self.ports:
            port.free_at = end
            port.bytes_sent += nbytes
        arrival = end + self.latency_at(end)
        self.busy_time += end - start
        self.bytes_sent += nbytes
        self.last_transfer = (ready, start, end, arrival)
        if self.radio is not None:
            self.radio.transfer(start, end, nbytes, self.uplink)
        if self._record is not None:
            self._record(self, start, end, nbytes, label)
        event = Timeout(self.env, arrival - now)  # env.timeout, without its indirection
        event.channel = self  # a transfer's arrival (what a pipeline fast-forward moves)
        event.callbacks.append(lambda _event: on_arrival())
        return arrival
