"""Limit cycles: a periodic steady state whose whole periods fast-forward skips.

A device that throttles under a long replayed job often never reaches a
thermal fixed point: its caps step down when a trip sensor crosses the trip
temperature and back up when it falls below the hysteresis, for ever (a *limit
cycle*: on the SD888 with VGG-11 INT8 training, ~100 s at one cap, ~600 s at
the one below). Fast-forward's steady blocks (:mod:`simulator.engine.fast_forward`)
need a fixed point; this module recognises the periodic state instead, from
the device's trajectory alone (nothing specific to a policy, a governor or a
workload: any periodic job replayed at constant per-state rates).

While iterations are replayed one by one, the device logs one row per sampler
tick: tick count, time, the job's replayed progress (iterations, fractional),
temperatures, cumulative energy per component and every domain's frequency and
cap. A tick at which any OPP or cap changed is a *mark*, with the discrete
state then (every domain's OPP, cap and request, the trip governor's caps).
At a mark ``n`` the log looks back for the latest mark ``m`` with the same
discrete state and temperatures within ``_CYCLE_K``; the state is *periodic*
when the period before it (marks ``l..m``) was the same: the same sequence of
discrete states, the same number of base steps between each (give or take a
thermal poll), temperatures and energy within tolerance, and the drift the
last period's change implies for the periods to come (mode by mode of the
thermal network, :meth:`CycleLog._drift`) within ``_CYCLE_K`` too. Phase 0 of the cycle is then now, and the state after
any whole number of periods is the state now (a Poincaré map at its fixed point):
:meth:`CycleLog.extrapolate` gives the time, energy, progress, iteration ends
and time series samples of ``N`` more periods from the last one, exactly as
far as the rows go (progress and energy are piecewise linear between ticks: the
power held by a replay is constant within a tick). The caller
(:meth:`FastForward._leap`) moves the clock.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple

import numpy as np

# K: largest temperature difference between two phase-0 states (and largest drift
# left, _drift). Leakage doubles every 15-25 K, so 0.01 K moves it by at most
# ln 2 * 0.01 / 15 = 0.05 %, twenty times below the 1 % by which fast-forward must
# agree with kernel level; and it is far below any trip's hysteresis (1-5 K), so
# two states this close cross the same trips at the same polls.
_CYCLE_K = 0.01
# Relative difference of two consecutive periods' energy. An extrapolation of N
# periods repeats the last one, so its energy is off by at most this fraction:
# ten times below the 1 % goal. Looser would take a cycle still converging (the
# board warming) for a periodic one; tighter would refuse real cycles whose
# periods differ by one thermal poll (the ``slack``: 0.25 s of a >= 100 s period is
# <= 0.25 % of its time, spent at an adjacent OPP whose power differs by well under
# 40 % (estimate from the SoC files' OPP tables), so <= ~0.1 % of its energy).
_CYCLE_ENERGY = 1e-3
# Longest period recognised, in marks (OPP or cap changes). One trip stepping
# its domains down and up is 2-4 marks a period; 12 covers three trips or a
# staircase of several OPPs per crossing. The search compares rows for every
# candidate, once per mark, so a longer look-back costs at every mark.
_MAX_PERIOD_MARKS = 12
_MAX_ROWS = 200_000  # rows kept (~50 MB at most; a period of up to ~14 h at 0.25 s)


class _Leap(NamedTuple):
    """Whole periods skipped: see :meth:`Device.leap`."""

    time: float  # s
    ticks: int  # base thermal steps
    energy: list[float]  # J per component
    progress: float  # iterations
    ends: list[float]  # s: end of every iteration completed in the skipped time
    samples: list[tuple]  # (time s, temperatures °C, levels Hz, cumulative J)


class CycleLog:
    """Rows and marks of one stretch of one-by-one replay (see the module docstring).

    Args:
        n_temps: thermal nodes.
        n_energy: energy components.
        n_levels: domains times two (frequency, cap).
        modes: the thermal network's decay modes (:meth:`ThermalNetwork.modes`):
            the drift left after the last period is bounded mode by mode.
        slack: base steps by which the spans between marks of two periods may
            differ (a thermal poll: a trip crossing is seen at the first poll
            after it, so a converged cycle's spans still differ by one poll).
    """

    def __init__(self, n_temps: int, n_energy: int, n_levels: int, slack: int = 0,
                 modes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None):
        self.slack = slack
        self.modes = modes
        self.width = 3 + n_temps + n_energy + n_levels
        self._temps = slice(3, 3 + n_temps)
        self._energy = slice(3 + n_temps, 3 + n_temps + n_energy)
        self._levels = slice(3 + n_temps + n_energy, self.width)
        self.rows = array("d")
        self.first = 0  # absolute index of the first row kept
        self.count = 0  # rows appended, kept or not
        self.marks: list[tuple[int, tuple]] = []  # (absolute row, discrete state)

    def clear(self) -> None:
        """Forget everything (the stretch of one-by-one replay ended)."""
        del self.rows[:]
        self.first = self.count = 0
        self.marks.clear()

    def append(self, ticks: int, time: float, progress: float, temps: list[float],
               energy, levels: list[float]) -> None:
        """One row (a sampler tick)."""
        rows = self.rows
        rows.append(ticks)
        rows.append(time)
        rows.append(progress)
        rows.extend(temps)
        rows.extend(energy)
        rows.extend(levels)
        self.count += 1
        if not self.marks:  # no period can start before the first mark
            self._trim(self.count - 1)
        elif self.count - self.first > _MAX_ROWS:
            self._trim(self.count - _MAX_ROWS)

    def mark(self, state: tuple) -> int | None:
        """The last row is a mark with discrete ``state``; returns the absolute row
        of phase 0 of the previous period if the state is periodic, else None."""
        self.marks.append((self.count - 1, state))
        if len(self.marks) > 2 * _MAX_PERIOD_MARKS + 1:
            del self.marks[0]
            self._trim(self.marks[0][0])
        return self._period()

    def _trim(self, first: int) -> None:
        if first > self.first:
            del self.rows[:(first - self.first) * self.width]
            self.first = first
            self.marks = [(row, state) for row, state in self.marks if row >= first]

    def _row(self, absolute: int) -> np.ndarray:
        start = (absolute - self.first) * self.width
        return np.array(self.rows[start:start + self.width])  # a copy: rows may shrink

    def _close(self, a: int, b: int) -> bool:
        ra, rb = self._row(a), self._row(b)
        return float(np.abs(ra[self._temps] - rb[self._temps]).max()) < _CYCLE_K

    def _period(self) -> int | None:
        """Marks ``older..mid`` and ``mid..n`` (``n`` the last) are two equal periods:
        returns ``mid``'s absolute row, else None (see the module docstring)."""
        marks = self.marks
        n = len(marks) - 1
        row_n, state_n = marks[n]
        for mid in range(n - 1, max(-1, n - 1 - _MAX_PERIOD_MARKS), -1):
            if marks[mid][1] == state_n and self._close(marks[mid][0], row_n):
                break
        else:
            return None
        q = n - mid  # marks per period
        older = mid - q
        if older < 0 or not self._close(marks[older][0], marks[mid][0]):
            return None
        ticks = [self._row(row)[0] for row, _state in marks[older:n + 1]]
        for j in range(q):
            if (marks[older + j][1] != marks[mid + j][1]
                    or abs(ticks[j + 1] - ticks[j] - ticks[q + j + 1] + ticks[q + j])
                    > self.slack):
                return None
        first, second = (self._row(marks[b][0])[self._energy].sum()
                         - self._row(marks[a][0])[self._energy].sum()
                         for a, b in ((older, mid), (mid, n)))
        if abs(first - second) > _CYCLE_ENERGY * abs(second):
            return None
        if self._drift(marks[mid][0], row_n) >= _CYCLE_K:
            return None
        return marks[mid][0]

    def _drift(self, m: int, n: int) -> float:
        """How far (K) the phase-0 state may still move after row ``n``, given its
        change ``d`` over the last period (rows ``m`` to ``n``): the map from one
        phase 0 to the next converges mode by mode, a mode of rate ``r`` by
        ``rho = exp(-r T)`` a period, so what is left of its change is
        ``c rho / (1 - rho)``. Slow modes drifting a little per short period
        (a board still warming under a fast cycle) have much left; a fast node's
        jitter (a crossing seen at the poll after it) has almost none."""
        if self.modes is None:
            return 0.0
        rates, to_modes, from_modes = self.modes
        row_m, row_n = self._row(m), self._row(n)
        period = float(row_n[1] - row_m[1])
        rho = np.exp(-rates * period)
        change = to_modes.dot(row_n[self._temps] - row_m[self._temps])
        left = np.abs(from_modes).dot(np.abs(change) * rho / (1.0 - rho))
        return float(left.max())

    def extrapolate(self, m: int, periods_for, sample_every: int):
        """``N`` more periods after the last row, the period being rows ``m`` to
        the last (``N`` from ``periods_for(period s, progress per period,
        progress now)``; no leap if it is below 1).

        Returns:
            None, or a :class:`_Leap`.
        """
        n = self.count - 1
        start = (m - self.first) * self.width
        block = np.array(self.rows[start:start + (n - m + 1) * self.width]).reshape(-1, self.width)
        ticks, times, progress = block[:, 0], block[:, 1], block[:, 2]
        period_ticks = int(ticks[-1] - ticks[0])
        period = float(times[-1] - times[0])
        gain_progress = float(progress[-1] - progress[0])
        if period_ticks <= 0 or period <= 0 or gain_progress <= 0:
            return None
        now, progress_now = float(times[-1]), float(progress[-1])
        periods = periods_for(period, gain_progress, progress_now)
        if periods < 1:
            return None
        energy = block[:, self._energy]
        gain = energy[-1] - energy[0]
        # Iteration ends: where the progress crosses an integer. Within a period
        # progress is piecewise linear between rows, and each period adds the same.
        targets = np.arange(np.floor(progress_now) + 1,
                            np.floor(progress_now + periods * gain_progress) + 1) - progress_now
        whole = np.floor(targets / gain_progress)
        phase = np.interp(targets - whole * gain_progress, progress - progress[0],
                          times - times[0])
        ends = now + whole * period + phase
        # Samples: every multiple of sample_every ticks in the skipped ticks; the
        # state at phase p of a later period is the state at ticks[0] + p.
        last = int(ticks[-1])
        first = (last // sample_every + 1) * sample_every
        sample_ticks = np.arange(first, last + periods * period_ticks + 1, sample_every,
                                 dtype=float)
        offset = sample_ticks - last
        before = np.floor((offset - 1) / period_ticks)  # whole periods before the sample
        at = ticks[0] + offset - before * period_ticks  # in (ticks[0], ticks[-1]]
        laps = before + 1
        sample_times = np.interp(at, ticks, times) + laps * period
        temps = np.column_stack([np.interp(at, ticks, block[:, c])
                                 for c in range(self._temps.start, self._temps.stop)])
        cumulative = np.column_stack([np.interp(at, ticks, energy[:, c])
                                      for c in range(energy.shape[1])]) + np.outer(laps, gain)
        level_rows = block[np.searchsorted(ticks, at, side="left"), self._levels]
        samples = [(t, tp.tolist(), lv.tolist(), e.tolist()) for t, tp, lv, e in
                   zip(sample_times.tolist(), temps, level_rows, cumulative)]
        return _Leap(periods * period, periods * period_ticks,
                     (periods * gain).tolist(), periods * gain_progress, ends.tolist(), samples)
