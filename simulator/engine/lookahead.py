"""Look-ahead: may the sampler take one long step instead of one per thermal poll?

While fast-forward replays iterations the power a device draws is held
constant between state changes (:meth:`Processor.hold`), so the temperature
of every node at any later instant is an exact linear function of the
temperatures and the power now: ``theta(k) = Phi_k theta + Gamma_k P``
(:class:`ThermalNetwork`). A long step (up to the next sample boundary, at most
``_MAX_POLLS`` polls) is
as good as the polls it replaces when, at every one of those polls:

* the step-wise governor would change nothing: every trip sensor stays inside
  the band where its polls are no-ops (below the trip temperature unless its
  caps are at their floor already, at or above the trip temperature minus the
  hysteresis unless they are at the top), ``_MARGIN_K`` inside it; and
* no node moves more than ``_DRIFT_K`` from where it is now, so that the
  leakage (evaluated at the step's start, doubling every 15-25 K) stays within
  ~1 % of what per-poll steps would have used.

This is what lets a device in a thermal limit cycle (caps stepping around a
trip: never a fixed point) be stepped once per sample period between the
crossings instead of once per poll; the crossings themselves are still found
at the poll they happen at.
"""

from __future__ import annotations

import numpy as np

from .thermal import StepWiseGovernor, ThermalNetwork

# K inside the no-op band at every predicted poll. The prediction holds the
# leakage at its value now, while per-poll steps would re-evaluate it: over a
# drift of at most _DRIFT_K that is ln 2 * 0.25 / 15 = 1.2 % of the leakage
# power, moving the temperatures by ~1 % of the drift (~0.003 K). The margin is
# ~15 times that, so a sensor predicted inside the band is inside it per poll
# too; a larger one would only refuse more long steps near the trip.
_MARGIN_K = 0.05
# K: largest predicted change of any node over the long step. It bounds the
# leakage error of holding the step's start temperature: 1.2 % of the leakage
# (doubling every 15-25 K), i.e. ~0.1-0.4 % of the power where leakage is
# 10-30 % of it, below the 1 % agreement goal with margin for repeated steps.
_DRIFT_K = 0.25
_MAX_POLLS = 40  # longest step, in polls (10 s at Android's 250 ms): the cost of a
# prediction grows with it, and a sample period of 1000 s would otherwise mean
# thousands of predicted polls per tick
# Step lengths whose stacks are kept: at most _MAX_POLLS polls x the nodes (14 on a
# phone) x 8 B each, ~125 kB a stack, so ~16 MB at most (estimate of a bound, not
# a measured need: a run repeats a handful of lengths).
_MAX_STACKS = 128


class LookAhead:
    """Predicts a device's temperatures over candidate long steps.

    Args:
        thermal: the device's thermal network.
        governor: its step-wise thermal governor (None: no trips).
        poll: base steps per thermal poll (the short step).
    """

    def __init__(self, thermal: ThermalNetwork, governor: StepWiseGovernor | None,
                 poll: int):
        self.thermal = thermal
        self.governor = governor
        self.poll = poll
        self._stacks: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._sensors = ([thermal.index[trip.sensor] for trip in governor.trips]
                         if governor is not None else [])

    def _stack(self, steps: int) -> tuple[np.ndarray, np.ndarray]:
        """``Phi``/``Gamma`` of every poll of a long step of ``steps`` base steps,
        stacked (K*n x n), computed once per length."""
        stack = self._stacks.get(steps)
        if stack is None:
            if len(self._stacks) >= _MAX_STACKS:
                self._stacks.clear()
            offsets = [*range(self.poll, steps, self.poll), steps]
            pairs = [self.thermal.propagator(k) for k in offsets]
            stack = self._stacks[steps] = (np.vstack([phi for phi, _ in pairs]),
                                           np.vstack([gamma for _, gamma in pairs]))
        return stack

    def longest(self, steps: int) -> int:
        """The longest step this predicts, up to ``steps`` base steps."""
        return min(steps, _MAX_POLLS * self.poll)

    def clear(self, steps: int, node_power: np.ndarray) -> bool:
        """Whether a long step of ``steps`` base steps (at most :meth:`longest`) at
        ``node_power`` (W per node) replaces its polls (see the module docstring)."""
        phi, gamma = self._stack(steps)
        theta = self.thermal.theta
        n = len(theta)
        ahead = (phi.dot(theta) + gamma.dot(node_power)).reshape(-1, n)
        if float(np.abs(ahead - theta).max()) > _DRIFT_K:
            return False
        governor = self.governor
        if governor is None:
            return True
        ambient = self.thermal.ambient
        for t, sensor in enumerate(self._sensors):
            lower, upper = governor.noop_band(t)  # a margin inside it (infinities stay)
            lower, upper = lower + _MARGIN_K, upper - _MARGIN_K
            temps = ahead[:, sensor] + ambient
            now = theta[sensor] + ambient
            if not (lower <= now <= upper and lower <= float(temps.min())
                    and float(temps.max()) <= upper):
                return False
        return True
