"""Time-varying link conditions: bandwidth traces from a file or a generator.

Both give piecewise-constant schedules of the uplink and downlink bandwidth
and, optionally, of the one-way latency.

**Trace file** (CSV, one row per change, first row at time 0)::

    time_s,bandwidth_mbps,reverse_bandwidth_mbps,latency_ms,network
    0,866.7,866.7,1,wifi5
    20,12.4,15.1,26.55,4g
    40,1.6,6.1,31.75,3g

``bandwidth_mbps`` is the first device -> second (uplink); the other columns
are optional (downlink defaults to the uplink, latency to the link's).
``network`` names the network type, as a phone's OS would report it
(policies may keep estimates per type).

**Markov generator**: the link moves between ``states`` (preset names or
bandwidths), staying in each for an exponentially distributed time of mean
``mean_dwell`` and then jumping to another state chosen uniformly; within a
stay the bandwidth is redrawn every ``step`` as the state's value times a
log-normal factor of log-standard-deviation ``jitter`` (0: constant). The
network type is the state's name. The
draws come from the generator's own ``seed`` (so that runs of different
policies see the same trace) or else from a child of the run's generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine.links import BandwidthSchedule, StepSchedule
from ..errors import ConfigError
from ..units import UnitError, parse_quantity
from .presets import LINK_PRESETS, MBIT_S

TRACE_COLUMNS = ("time_s", "bandwidth_mbps", "reverse_bandwidth_mbps", "latency_ms",
                 "network")


class NetworkTypes:
    """The network type over time: ``names[i]`` from ``times[i]`` (s) on.

    Args:
        times: ascending change times, the first being 0.
        names: the type of each segment (``wifi5``, ``4g``...).
        period: repeat with this period (s), if given.
    """

    def __init__(self, times, names, period: float | None = None):
        self._index = StepSchedule(list(times), list(range(len(names))), period)
        self.names = [str(n) for n in names]

    @classmethod
    def constant(cls, name: str) -> NetworkTypes:
        return cls([0.0], [name])

    def at(self, t: float) -> str:
        return self.names[int(self._index.at(t))]

    def next_change(self, t: float) -> float:
        """The first change of type (s) after ``t`` (``inf`` if none)."""
        return self._index.next_change(t)


@dataclass
class LinkConditions:
    """Schedules of one link.

    Attributes:
        uplink: bandwidth first device -> second (B/s over time).
        downlink: bandwidth second -> first.
        latency: one-way latency (s), constant or over time.
        network: the network type over time, if known.
    """

    uplink: BandwidthSchedule
    downlink: BandwidthSchedule
    latency: float | StepSchedule
    network: NetworkTypes | None = None


def read_trace(path: Path, latency: float, period: float | None = None) -> LinkConditions:
    """Read a bandwidth trace CSV (format in the module docstring).

    Args:
        path: the file.
        latency: one-way latency (s) when the file has no ``latency_ms`` column.
        period: repeat the trace with this period (s), if given.

    Raises:
        ConfigError: missing file, missing or unknown columns, bad values.
    """
    try:
        table = pd.read_csv(path)
    except FileNotFoundError:
        raise ConfigError("bandwidth trace not found", file=str(path)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ConfigError(f"not a CSV bandwidth trace: {err}", file=str(path)) from None
    unknown = [c for c in table.columns if c not in TRACE_COLUMNS]
    missing = [c for c in TRACE_COLUMNS[:2] if c not in table.columns]
    if unknown or missing:
        raise ConfigError(f"columns must be {', '.join(TRACE_COLUMNS)} (the last three "
                          f"optional); missing {missing}, unknown {unknown}", file=str(path))
    try:
        times = table["time_s"].astype(float).tolist()
        up = (table["bandwidth_mbps"].astype(float) * MBIT_S).tolist()
        down = (table["reverse_bandwidth_mbps"].astype(float) * MBIT_S).tolist() \
            if "reverse_bandwidth_mbps" in table else up
        delays = ((table["latency_ms"].astype(float) * 1e-3).tolist()
                  if "latency_ms" in table else None)
        network = (NetworkTypes(times, table["network"].astype(str).tolist(), period)
                   if "network" in table else None)
        return LinkConditions(
            BandwidthSchedule(times, up, period), BandwidthSchedule(times, down, period),
            StepSchedule(times, delays, period) if delays is not None else latency, network)
    except ValueError as err:
        raise ConfigError(f"bad bandwidth trace: {err}", file=str(path)) from None


def _state(value: str, latency: float) -> tuple[float, float, float]:
    """(uplink B/s, downlink B/s, latency s) of a generator state."""
    preset = LINK_PRESETS.get(value)
    if preset is not None:
        return preset.uplink, preset.downlink, preset.rtt / 2
    try:
        bandwidth = parse_quantity(value, "bandwidth")
    except UnitError as err:
        raise ConfigError(f"a state is a link preset ({', '.join(LINK_PRESETS)}) or a "
                          f"bandwidth; {err}") from None
    if bandwidth <= 0:
        raise ConfigError(f"state bandwidth must be positive; got {value!r}")
    return bandwidth, bandwidth, latency


def markov_trace(states: list[str], mean_dwell: float, duration: float, jitter: float,
                 step: float, rng: np.random.Generator, latency: float) -> LinkConditions:
    """Generate link conditions moving between ``states`` (see the module docstring).

    Args:
        states: preset names or bandwidth strings; the trace starts in the first.
        mean_dwell: mean stay in a state (s).
        duration: length of the generated trace (s); the last value then holds.
        jitter: log-standard-deviation of the per-step bandwidth factor.
        step: time between bandwidth redraws within a stay (s).
        rng: the random generator.
        latency: one-way latency (s) for states given as bandwidths.
    """
    values = [_state(s, latency) for s in states]
    times, up, down, delay, names = [], [], [], [], []
    t, current = 0.0, 0
    while t < duration:
        stay = float(rng.exponential(mean_dwell))
        end = min(duration, t + max(stay, step))
        while t < end:
            factor = math.exp(float(rng.normal(0.0, jitter))) if jitter > 0 else 1.0
            u, d, lat = values[current]
            times.append(t)
            up.append(u * factor)
            down.append(d * factor)
            delay.append(lat)
            names.append(states[current])
            t = min(end, t + step)
        if len(values) > 1:
            current = (current + 1 + int(rng.integers(len(values) - 1))) % len(values)
    return LinkConditions(BandwidthSchedule(times, up), BandwidthSchedule(times, down),
                          StepSchedule(times, delay), NetworkTypes(times, names))
