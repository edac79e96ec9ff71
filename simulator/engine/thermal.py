"""Thermal RC network and the Android step-wise thermal governor.

Node temperatures ``T`` obey ``C dT/dt = P - G (T - T_amb)`` where ``C`` holds
the heat capacities, ``G`` the conductance matrix (links between nodes plus
links to ambient) and ``P`` the power into each node. With ``theta = T - T_amb``
and power constant over a step ``dt`` the exact solution is

    theta(t + dt) = Phi theta(t) + Gamma P,   Phi = expm(A dt),
    Gamma = integral_0^dt expm(A s) ds C^-1,   A = -C^-1 G,

computed once per network from the augmented matrix exponential. A step
therefore costs one small matrix-vector product, whatever ``dt``. Longer
steps (a whole number of base steps, used while fast-forwarding) get their
own exact ``Phi``/``Gamma``, computed once per length.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import expm

from ..errors import ConfigError
from ..spec.soc import ThermalSpec
from .dvfs import FrequencyDomain

# Exact propagators kept for this many distinct step lengths, per cache (each two
# n x n arrays, n the nodes: ~3 kB on a phone, ~1 MB in all): a bound, not a
# measured need (estimate): a run repeats a handful of lengths (a pause, the rest
# of a step, the sampler's gaps, fast-forward's strides).
_EXACT_CACHE = 256


class ThermalNetwork:
    """An RC network stepped exactly over a fixed step.

    Args:
        spec: the thermal section of a device.
        initial: starting temperature of every node (°C); ambient if None.
    """

    def __init__(self, spec: ThermalSpec, initial: float | None = None):
        self.names = list(spec.nodes)
        self.index = {name: i for i, name in enumerate(self.names)}
        self._ambient_c = spec.ambient  # °C (see the ambient property)
        self.step = spec.step
        n = len(self.names)
        conductance = np.zeros((n, n))
        for link in spec.links:
            a, b = link.between
            if a == b:
                raise ConfigError(f"thermal link joins {a!r} to itself")
            for u, v in ((a, b), (b, a)):
                if u == "ambient":
                    continue
                i = self.index[u]
                conductance[i, i] += link.conductance
                if v != "ambient":
                    conductance[i, self.index[v]] -= link.conductance
        capacity = np.array([spec.nodes[name].capacity for name in self.names])
        self._check_grounded(conductance)
        self.conductance = conductance
        self._capacity = capacity
        self.phi, self.gamma = self._propagators(self.step)
        self._multi: dict[int, tuple[np.ndarray, np.ndarray]] = {1: (self.phi, self.gamma)}
        self._exact: dict[float, tuple[np.ndarray, np.ndarray]] = {}  # dt (s) -> pair
        start = self.ambient if initial is None else initial
        self.theta = np.full(n, start - self.ambient)
        self._ambient = np.full(n, self.ambient)  # °C per node (temperatures adds it)

    def _propagators(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``(Phi, Gamma)`` for a step of ``dt`` seconds at constant power."""
        n = len(self.names)
        augmented = np.zeros((2 * n, 2 * n))
        augmented[:n, :n] = -self.conductance / self._capacity[:, None] * dt
        augmented[:n, n:] = np.diag(1.0 / self._capacity) * dt
        exp = expm(augmented)
        return exp[:n, :n], exp[:n, n:]

    def _check_grounded(self, conductance: np.ndarray) -> None:
        """Every node must reach ambient, or its temperature would grow without bound."""
        n = len(self.names)
        grounded = [conductance[i].sum() > 1e-12 for i in range(n)]
        changed = True
        while changed:
            changed = False
            for i in range(n):
                if not grounded[i] and any(grounded[j] and conductance[i, j] < 0
                                           for j in range(n)):
                    grounded[i] = changed = True
        for i, ok in enumerate(grounded):
            if not ok:
                raise ConfigError(f"thermal node {self.names[i]!r} has no path to ambient")

    @property
    def ambient(self) -> float:
        """Ambient temperature (°C); setting it moves every node's reference."""
        return self._ambient_c

    @ambient.setter
    def ambient(self, celsius: float) -> None:
        self._ambient_c = celsius
        # temperatures() adds this array (kept in step with the float)
        self._ambient = np.full(len(self.names), celsius)
        # a new theta object, the same values: a copy of the temperatures kept while
        # ``theta`` is the same object (Device._temps_list) is then stale
        self.theta = self.theta.copy()

    @property
    def temperatures(self) -> np.ndarray:
        """Node temperatures (°C), in the order of :attr:`names`."""
        # an array of the ambient: the same additions as the float's, at a
        # fraction of numpy's cost of converting a Python float (every integration)
        return self.theta + self._ambient

    def temperature(self, node: str) -> float:
        """Temperature of one node (°C)."""
        return float(self.theta[self.index[node]] + self.ambient)

    def propagator(self, steps: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``(Phi, Gamma)`` of ``steps`` base steps, computed once per length."""
        pair = self._multi.get(steps)
        if pair is None:
            # Bounded like _exact: a run uses a few lengths (1 step, the lazy
            # sampler's gaps up to the next poll or sample, fast-forward's strides),
            # but fast-forward's strides up to a temperature limit vary with the
            # run, and a long one must not keep every length it ever took.
            if len(self._multi) >= _EXACT_CACHE:
                self._multi = {1: (self.phi, self.gamma)}
            pair = self._multi[steps] = self._propagators(self.step * steps)
        return pair

    def advance(self, power: np.ndarray, steps: int = 1) -> None:
        """Advance ``steps`` base steps with constant ``power`` (W per node)."""
        pair = self._multi.get(steps) or self.propagator(steps)
        # ndarray.dot: the same BLAS product as ``@`` (bit for bit), at half the
        # call overhead on these tiny matrices; this runs every thermal step
        self.theta = pair[0].dot(self.theta) + pair[1].dot(power)

    def advance_exact(self, power: np.ndarray, dt: float) -> None:
        """Advance ``dt`` seconds (any length) with constant ``power`` (W per node).
        The propagators are cached per length: a run repeats the same few lengths
        (a pause, the rest of a step after one), and a 14x14 matrix exponential
        costs as much as a few hundred steps."""
        pair = self._exact.get(dt)
        if pair is None:
            if len(self._exact) >= _EXACT_CACHE:  # bounded: lengths that never recur
                self._exact.clear()
            pair = self._exact[dt] = self._propagators(dt)
        self.theta = pair[0].dot(self.theta) + pair[1].dot(power)

    def modes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The network's decay modes: ``(rates 1/s, to_modes, from_modes)`` with
        ``theta = from_modes @ c`` and ``c = to_modes @ theta``; without power
        every mode coordinate ``c_i`` decays as ``exp(-rates[i] t)``. (``C^-1 G``
        is similar to the symmetric ``C^-1/2 G C^-1/2``: real modes.)"""
        root = np.sqrt(self._capacity)
        rates, vectors = np.linalg.eigh(self.conductance / root[:, None] / root[None, :])
        return rates, vectors.T * root[None, :], vectors / root[:, None]

    def steady_state(self, power: np.ndarray) -> np.ndarray:
        """Temperatures (°C) the network settles at under constant ``power``."""
        return np.linalg.solve(self.conductance, power) + self.ambient


class StepWiseGovernor:
    """Android's step-wise thermal governor over the trips of a device.

    Each poll, for every trip: above its temperature the caps of its domains
    drop one OPP; below ``temperature - hysteresis`` they rise one OPP. A
    domain named by several trips gets the lowest cap any of them sets.

    Args:
        trips: the trip points.
        domains: frequency domains by name.
        network: the thermal network (for sensor temperatures).
    """

    def __init__(self, trips, domains: dict[str, FrequencyDomain], network: ThermalNetwork):
        self.trips = list(trips)
        self.domains = domains
        self.network = network
        self.caps = {(t, d): domains[d].top for t, trip in enumerate(self.trips)
                     for d in trip.domains}

    def _floor(self, trip, domain: FrequencyDomain) -> int:
        """Lowest cap index ``trip`` may set on ``domain``."""
        return domain.index_at_least(trip.floor) if trip.floor else 0

    def noop_band(self, t: int) -> tuple[float, float]:
        """(lower, upper) sensor temperatures (°C) between which a poll leaves trip
        ``t``'s caps as they are: the hysteresis band, open at the bottom when
        every cap is at the top and at the top when every cap is at its floor."""
        trip = self.trips[t]
        caps = [(self.caps[(t, name)], self.domains[name]) for name in trip.domains]
        at_floor = all(cap == self._floor(trip, domain) for cap, domain in caps)
        at_top = all(cap == domain.top for cap, domain in caps)
        return (-math.inf if at_top else trip.temperature - trip.hysteresis,
                math.inf if at_floor else trip.temperature)

    def poll(self) -> None:
        """Update the caps from the current sensor temperatures."""
        for t, trip in enumerate(self.trips):
            temp = self.network.temperature(trip.sensor)
            for name in trip.domains:
                domain = self.domains[name]
                cap = self.caps[(t, name)]
                floor = self._floor(trip, domain)
                if temp > trip.temperature:
                    cap = max(cap - 1, floor)
                elif temp < trip.temperature - trip.hysteresis:
                    cap = min(cap + 1, domain.top)
                self.caps[(t, name)] = cap
        for name, domain in self.domains.items():
            caps = [cap for (t, d), cap in self.caps.items() if d == name]
            if caps:
                domain.set_cap(min(caps))
