"""What one run produced: :class:`RunResult`.

Its own module so that the run lifecycle (:mod:`simulator.engine.simulation`)
and the metrics collection (:mod:`simulator.metrics`) can both import it
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass
class RunResult:
    """Everything one run produced.

    Attributes:
        metrics: scalar metrics, units in the names (``latency_s``, ``energy_j``).
        kernels: one row per executed kernel (job, iteration, id, processor, start_s, end_s...).
        transfers: one row per channel transfer.
        timeseries: long table ``time_s, name, value`` (temperatures, frequencies, powers).
        wall_time_s: wall-clock seconds the run took.
        meta: run facts that are not metrics (the audit's counts).
    """

    metrics: dict[str, float]
    kernels: pd.DataFrame
    transfers: pd.DataFrame
    timeseries: pd.DataFrame
    wall_time_s: float = 0.0
    meta: dict = field(default_factory=dict)
