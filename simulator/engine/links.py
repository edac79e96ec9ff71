"""Transfer channels: CPU<->accelerator copies and network links between devices.

A channel carries one transfer at a time (FIFO). A transfer of ``b`` bytes
occupies it for ``switch + b / bandwidth`` and arrives ``latency`` later, so
propagation overlaps the next transfer. Bandwidth may change over time
(piecewise constant); the occupancy is then found by walking the segments.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

import simpy


class BandwidthSchedule:
    """Piecewise-constant bandwidth: ``values[i]`` (B/s) from ``times[i]`` (s) on.

    Args:
        times: ascending change times, the first being 0.
        values: bandwidth in bytes/s for each segment, all positive.
        period: if given, the schedule repeats with this period (s).
    """

    def __init__(self, times: Sequence[float], values: Sequence[float],
                 period: float | None = None):
        if not times or times[0] != 0 or len(times) != len(values):
            raise ValueError("a bandwidth schedule needs matching times/values starting at 0")
        if any(v <= 0 for v in values):
            raise ValueError("bandwidths must be positive")
        if list(times) != sorted(times):
            raise ValueError("bandwidth schedule times must ascend")
        self.times = list(times)
        self.values = list(values)
        self.period = period

    @classmethod
    def constant(cls, bandwidth: float) -> BandwidthSchedule:
        return cls([0.0], [bandwidth])

    def at(self, t: float) -> float:
        """Bandwidth (B/s) at time ``t``."""
        if self.period:
            t = t % self.period
        return self.values[bisect.bisect_right(self.times, t) - 1]

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


class Channel:
    """A FIFO transfer channel.

    Args:
        env: the SimPy environment.
        name: shown in timelines (``dsp.fastrpc``, ``link.phone-server``).
        bandwidth: a schedule of bandwidth over time.
        latency: propagation delay per transfer (s).
        switch: fixed occupancy per transfer (s): RPC setup, context switch.
        record: receives ``(channel, start, end, nbytes, label)`` per transfer.
    """

    def __init__(self, env: simpy.Environment, name: str, bandwidth: BandwidthSchedule,
                 latency: float = 0.0, switch: float = 0.0,
                 record: Callable[[Channel, float, float, float, str], None] | None = None):
        self.env = env
        self.name = name
        self.bandwidth = bandwidth
        self.latency = latency
        self.switch = switch
        self.free_at = 0.0
        self.busy_time = 0.0
        self.bytes_sent = 0.0
        self._record = record

    def send(self, nbytes: float, on_arrival: Callable[[], None], label: str = "") -> float:
        """Queue a transfer; ``on_arrival`` runs when it has arrived. Returns arrival time."""
        now = self.env.now
        start = max(now, self.free_at)
        end = self.bandwidth.finish_time(start + self.switch, nbytes)
        self.free_at = end
        arrival = end + self.latency
        self.busy_time += end - start
        self.bytes_sent += nbytes
        if self._record is not None:
            self._record(self, start, end, nbytes, label)
        event = self.env.timeout(arrival - now)
        event.callbacks.append(lambda _event: on_arrival())
        return arrival
