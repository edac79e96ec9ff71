"""The app lifecycle benchmark: apps started and killed at random, once a second.

NestDNN (Fang et al., MobiCom'18) evaluates its scheduler on a synthetic but
realistic app mix: every second either a new app is started or a running one
is killed, at random; between ``min_apps`` and ``max_apps`` apps run at once;
each simulation lasts 60 s and 100 of them are averaged. This module is that
process, independent of any simulation engine:

* :class:`Lifecycle` draws one simulation's schedule of start/kill events from
  a seeded ``numpy.random.Generator``;
* :func:`concurrency_shares` turns a schedule into the share of time spent at
  each number of concurrent apps;
* :func:`fit_start_probability` derives the one free parameter (the
  probability that a second's event is a start) from target shares.

Each second the event is a start with probability ``p_start`` and a kill
otherwise; a start when ``max_apps`` already run, or a kill when only
``min_apps`` run, does nothing. The number of apps is then a birth-death chain
whose stationary distribution is geometric, ``pi(n+1) / pi(n) = p / (1 - p)``,
so ``p_start`` sets how strongly the mix leans towards many apps. By default a
simulation starts from a draw of that stationary distribution, so every second
of every simulation has the stationary shares in expectation (no start-up
bias over short horizons). Started apps are drawn uniformly among those not
running and killed ones among those running, so every app gets the same
running time on average.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from simulator.errors import ConfigError

START, KILL, PRIORITY = "start", "kill", "priority"


@dataclass(frozen=True)
class LifecycleEvent:
    """One event of a schedule.

    Attributes:
        time: when it happens (s).
        kind: ``start``, ``kill`` or ``priority`` (a running app's priority changes).
        app: the app concerned.
        priority: the app's new priority (``priority`` events; 1.0 otherwise).
    """

    time: float
    kind: str
    app: str
    priority: float = 1.0


@dataclass(frozen=True)
class Lifecycle:
    """The start/kill process of one simulation.

    Attributes:
        apps: the app names (each runs at most once at a time).
        p_start: probability that a second's event is a start (else a kill).
        min_apps: fewest apps running at once (kills below it do nothing).
        max_apps: most apps running at once (starts above it do nothing).
        period: time between events (s).
        duration: length of one simulation (s).
        initial: apps running at time 0; None draws it from the stationary
            distribution of the chain.
        p_priority: probability that a second also changes the priority of a
            running app (NestDNN's third scheduling trigger); 0 by default.
        priorities: the priorities such a change draws from, uniformly.
    """

    apps: tuple[str, ...]
    p_start: float
    min_apps: int = 2
    max_apps: int = 6
    period: float = 1.0
    duration: float = 60.0
    initial: int | None = None
    p_priority: float = 0.0
    priorities: tuple[float, ...] = field(default=(0.5, 1.0, 2.0))

    def __post_init__(self):
        if not 0.0 < self.p_start < 1.0:
            raise ConfigError(f"p_start must be in (0, 1); got {self.p_start!r}",
                              path="lifecycle.p_start")
        if not 1 <= self.min_apps <= self.max_apps <= len(self.apps):
            raise ConfigError(f"need 1 <= min_apps <= max_apps <= {len(self.apps)} apps; got "
                              f"{self.min_apps}..{self.max_apps}", path="lifecycle")
        if self.initial is not None and not self.min_apps <= self.initial <= self.max_apps:
            raise ConfigError(f"initial must be within {self.min_apps}..{self.max_apps}",
                              path="lifecycle.initial")
        if self.period <= 0 or self.duration <= 0:
            raise ConfigError("period and duration must be positive", path="lifecycle")
        if not 0.0 <= self.p_priority <= 1.0:
            raise ConfigError("p_priority must be in [0, 1]", path="lifecycle.p_priority")

    @property
    def levels(self) -> np.ndarray:
        """The possible numbers of running apps, ``min_apps..max_apps``."""
        return np.arange(self.min_apps, self.max_apps + 1)

    def stationary(self) -> np.ndarray:
        """Stationary probability of each level (geometric with ratio p / (1 - p))."""
        return stationary_shares(self.p_start, len(self.levels))

    def schedule(self, rng: np.random.Generator) -> list[LifecycleEvent]:
        """Draw one simulation's events, in time order (starts at time 0 first)."""
        running: list[str] = []
        events: list[LifecycleEvent] = []
        if self.initial is None:
            count = int(self.levels[rng.choice(len(self.levels), p=self.stationary())])
        else:
            count = self.initial
        for app in rng.permutation(self.apps)[:count]:
            running.append(str(app))
            events.append(LifecycleEvent(0.0, START, str(app)))
        steps = int(np.floor(self.duration / self.period + 1e-9))
        for step in range(1, steps):
            time = step * self.period
            if rng.random() < self.p_start:
                if len(running) < self.max_apps:
                    idle = [a for a in self.apps if a not in running]
                    app = idle[int(rng.integers(len(idle)))]
                    running.append(app)
                    events.append(LifecycleEvent(time, START, app))
            elif len(running) > self.min_apps:
                app = running.pop(int(rng.integers(len(running))))
                events.append(LifecycleEvent(time, KILL, app))
            if self.p_priority > 0 and rng.random() < self.p_priority:
                app = running[int(rng.integers(len(running)))]
                level = self.priorities[int(rng.integers(len(self.priorities)))]
                events.append(LifecycleEvent(time, PRIORITY, app, float(level)))
        return events


def stationary_shares(p_start: float, levels: int) -> np.ndarray:
    """Stationary distribution of the start/kill chain over ``levels`` levels."""
    ratio = p_start / (1.0 - p_start)
    weights = ratio ** np.arange(levels)
    return weights / weights.sum()


def concurrency_shares(events: Sequence[LifecycleEvent], duration: float,
                       levels: Sequence[int]) -> dict[int, float]:
    """Share of ``[0, duration)`` spent with each number of running apps.

    Args:
        events: a schedule (time order).
        duration: the simulated time (s).
        levels: the numbers of apps to report (others count towards none).

    Returns:
        level -> fraction of the time (fractions of reported levels sum to <= 1).
    """
    time_at = dict.fromkeys(levels, 0.0)
    running, last = 0, 0.0
    for event in events:
        if event.time > last and running in time_at:
            time_at[running] += min(event.time, duration) - last
        last = max(last, event.time)
        running += {START: 1, KILL: -1}.get(event.kind, 0)
    if duration > last and running in time_at:
        time_at[running] += duration - last
    return {level: t / duration for level, t in time_at.items()}


def fit_start_probability(shares: Sequence[float]) -> float:
    """The ``p_start`` whose stationary shares best match ``shares`` (least squares).

    Args:
        shares: target share of each level, lowest level first (any scale:
            they are normalised).

    Returns:
        the fitted probability in (0, 1).
    """
    from scipy.optimize import minimize_scalar

    target = np.asarray(shares, dtype=float)
    target = target / target.sum()

    def loss(p: float) -> float:
        return float(np.sum((stationary_shares(p, len(target)) - target) ** 2))

    return float(minimize_scalar(loss, bounds=(1e-3, 1 - 1e-3), method="bounded",
                                 options={"xatol": 1e-10}).x)
