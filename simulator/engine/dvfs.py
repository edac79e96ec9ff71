"""DVFS: frequency domains and their governors.

Each processor is one frequency domain with an OPP table. The effective OPP is
the governor's choice limited by the thermal cap. A change of OPP notifies the
domain's listeners (the processor), which re-time their running kernels: work
done so far is kept, the remainder runs at the new speed.

Governors are plugins registered by name in :data:`GOVERNORS`; each is a class
whose constructor takes explicit keyword parameters.
"""

from __future__ import annotations

import bisect
import math
import struct
from collections.abc import Callable

from ..errors import ConfigError
from ..registry import Registry
from ..spec.soc import OPP

GOVERNORS: Registry[type[Governor]] = Registry("governor", "socsim.governors")


class FrequencyDomain:
    """The OPP state of one processor.

    Args:
        name: dotted processor name.
        opps: ascending OPP table.
        min_frequency: the OS floor (Hz) no governor request goes below (the
            lowest OPP at or above it); None: the lowest OPP. The thermal cap
            still wins over it, as cpufreq's frequency QoS does.
    """

    def __init__(self, name: str, opps: list[OPP], min_frequency: float | None = None):
        self.name = name
        self.frequencies = [opp.frequency for opp in opps]
        self.voltages = [opp.voltage for opp in opps]
        self.top = len(opps) - 1
        self.floor = 0 if min_frequency is None else self.index_at_least(min_frequency)
        self.requested = self.top
        self.cap = self.top
        self.index = self.top
        # Called with True before an OPP change (settle work at the old speed)
        # and with False after it (re-time the rest).
        self.listeners: list[Callable[[bool], None]] = []
        # Bumped when the request or the cap changes (the OPP changes only then):
        # what a decision depends on is unchanged while it is (Device._wake)
        self.version = 0
        # Called after the OPP or the cap changed (what a time series records).
        self.level_watchers: list[Callable[[], None]] = []

    @property
    def frequency(self) -> float:
        """Current frequency (Hz)."""
        return self.frequencies[self.index]

    @property
    def voltage(self) -> float:
        """Current voltage (V)."""
        return self.voltages[self.index]

    @property
    def max_frequency(self) -> float:
        return self.frequencies[self.top]

    def index_at_least(self, frequency: float) -> int:
        """Lowest OPP index whose frequency is >= ``frequency`` (the top if none)."""
        return min(bisect.bisect_left(self.frequencies, frequency * (1 - 1e-9)), self.top)

    def index_at_most(self, frequency: float) -> int:
        """Highest OPP index whose frequency is <= ``frequency`` (0 if none)."""
        return max(bisect.bisect_right(self.frequencies, frequency * (1 + 1e-9)) - 1, 0)

    def request(self, index: int) -> None:
        """Governor request, raised to the OS floor; the thermal cap still applies."""
        requested = max(self.floor, min(index, self.top))
        if requested == self.requested:
            # Nothing changes: the OPP already is min(requested, cap) (every
            # request and cap change applies it). Governors repeat their request
            # every period, so this is the common case.
            return
        self.requested = requested
        self.version += 1
        self._apply()

    def set_cap(self, index: int) -> None:
        """Thermal cap (highest allowed OPP index)."""
        cap = max(0, min(index, self.top))
        if cap != self.cap:
            self.cap = cap
            self.version += 1
            for watcher in self.level_watchers:
                watcher()
        self._apply()

    def _apply(self) -> None:
        index = min(self.requested, self.cap)
        if index != self.index:
            for listener in self.listeners:
                listener(True)
            self.index = index
            for watcher in self.level_watchers:
                watcher()
            for listener in self.listeners:
                listener(False)


class Governor:
    """A DVFS governor for one domain.

    Subclasses implement :meth:`decide`; ``period`` is the sampling period in
    seconds (0 for governors that decide once).
    """

    period: float = 0.0
    # Whether update() reads only the domain and the utilisation and changes only
    # the domain: then a decision that left the domain as it was leaves it so again
    # while its ``version`` stays, and the device skips repeating it for an idle
    # processor. Declared by each class itself (a subclass with state of its own
    # does not inherit it: see Device._update_periodic).
    decides_from_domain: bool = False

    def start(self, domain: FrequencyDomain) -> None:
        """Set the initial OPP."""
        domain.request(domain.top)

    def decide(self, domain: FrequencyDomain, utilisation: float) -> int:
        """Return the OPP index to request given utilisation in [0, 1] over the period."""
        return domain.requested

    def update(self, domain: FrequencyDomain, utilisation: float) -> None:
        """One periodic decision (the device calls this every ``period``):
        request what :meth:`decide` returns."""
        domain.request(self.decide(domain, utilisation))


@GOVERNORS.register("performance")
class Performance(Governor):
    """Always the highest OPP."""

    decides_from_domain = True


@GOVERNORS.register("powersave")
class Powersave(Governor):
    """Always the lowest OPP the OS allows (the domain's floor)."""

    decides_from_domain = True

    def start(self, domain: FrequencyDomain) -> None:
        domain.request(0)

    def decide(self, domain: FrequencyDomain, utilisation: float) -> int:
        return 0


@GOVERNORS.register("userspace")
class Userspace(Governor):
    """A fixed frequency (the highest OPP not above it, and not below the
    domain's OS floor ``min_frequency``).

    Args:
        frequency: requested frequency in Hz.
    """

    decides_from_domain = True

    def __init__(self, frequency: float):
        if frequency <= 0:
            raise ConfigError(f"userspace frequency must be positive; got {frequency}")
        self.frequency = frequency

    def start(self, domain: FrequencyDomain) -> None:
        domain.request(domain.index_at_most(self.frequency))

    def decide(self, domain: FrequencyDomain, utilisation: float) -> int:
        return domain.index_at_most(self.frequency)


@GOVERNORS.register("schedutil")
class Schedutil(Governor):
    """Utilisation-driven, like Linux schedutil.

    Every ``period`` it requests the lowest OPP with frequency >=
    ``headroom * f_cur * utilisation`` (frequency-invariant utilisation scaled
    by 1.25 headroom, as in the kernel's ``map_util_freq``).

    Args:
        period: sampling period (s); the kernel's rate limit is usually 0.5-20 ms.
        headroom: utilisation headroom factor.
    """

    decides_from_domain = True  # (``_keeps`` is a cache of decisions)

    def __init__(self, period: float = 0.01, headroom: float = 1.25):
        if period <= 0 or headroom < 1:
            raise ConfigError("schedutil needs period > 0 and headroom >= 1")
        self.period = period
        self.headroom = headroom
        # (domain, OPP index, requested index) -> the utilisations that keep the
        # request (see update); at most domains x OPPs^2 entries
        self._keeps: dict[tuple, tuple[float, float]] = {}

    def update(self, domain: FrequencyDomain, utilisation: float) -> None:
        """:meth:`decide` and request, skipped when the decision is a fixed point.

        Most decisions change nothing (an idle processor at its floor, a busy
        one at the OPP its load asks for), and at a given OPP the request a
        decision leaves depends on the utilisation alone, monotonically (a
        product and a search over an ascending table, floored and capped).
        The utilisations that keep the current request are therefore an
        interval, found once per (OPP, request) by bisection over floats: a
        utilisation inside it skips :meth:`decide` and :meth:`request`, exactly.
        """
        key = (domain, domain.index, domain.requested)
        keeps = self._keeps.get(key)
        if keeps is None:
            keeps = self._keeps[key] = self._shared_keeping(domain)
        if keeps[0] <= utilisation <= keeps[1]:  # (NaN is outside: decided as before)
            return
        domain.request(self.decide(domain, utilisation))

    def _shared_keeping(self, domain: FrequencyDomain) -> tuple[float, float]:
        """:meth:`_keeping`, kept for the process: the interval is a function of the
        governor's class and headroom, the OPP table, the floor, the OPP and the
        request alone, and a sweep's runs meet the same ones (bisecting them again
        was ~15 % of a short run)."""
        key = (type(self), self.headroom, tuple(domain.frequencies), domain.floor,
               domain.index, domain.requested)
        keeps = _KEEPING.get(key)
        if keeps is None:
            if len(_KEEPING) >= _KEEPING_BOUND:
                _KEEPING.clear()
            keeps = _KEEPING[key] = self._keeping(domain)
        return keeps

    def _keeping(self, domain: FrequencyDomain) -> tuple[float, float]:
        """(low, high): the utilisations whose decision leaves ``domain.requested``
        as it is at the current OPP (empty: ``(inf, -inf)``); below 0 and above 1
        count as 0 and 1, as :meth:`decide` clamps them."""
        floor, top, requested = domain.floor, domain.top, domain.requested

        def kept_index(utilisation: float) -> int:  # what request() would make of it
            return max(floor, min(self.decide(domain, utilisation), top))

        def first(predicate) -> float | None:
            """Smallest float u in [0, 1] with predicate(u) (monotone), None if none:
            bisection over the bit patterns (ordered like the non-negative floats)."""
            if not predicate(1.0):
                return None
            if predicate(0.0):
                return 0.0
            low, high = 0, _bits(1.0)  # predicate false at low, true at high
            while high - low > 1:
                middle = (low + high) // 2
                if predicate(_float(middle)):
                    high = middle
                else:
                    low = middle
            return _float(high)

        low = first(lambda u: kept_index(u) >= requested)
        if low is None or kept_index(low) != requested:
            return (math.inf, -math.inf)
        above = first(lambda u: kept_index(u) > requested)
        high = math.inf if above is None else _float(_bits(above) - 1)
        return (-math.inf if low == 0.0 else low, high)

    def decide(self, domain: FrequencyDomain, utilisation: float) -> int:
        # runs every period on every domain: comparisons instead of min/max (the
        # same values, NaN and -0.0 included)
        if utilisation < 0.0:
            utilisation = 0.0
        elif utilisation > 1.0:
            utilisation = 1.0
        target = self.headroom * domain.frequencies[domain.index] * utilisation
        return domain.index_at_least(target)


# Schedutil's keep intervals by (class, headroom, OPP table, floor, OPP, request): a
# few dozen per SoC; the bound only guards a process that meets many tables.
_KEEPING: dict[tuple, tuple[float, float]] = {}
_KEEPING_BOUND = 4_096


def _bits(value: float) -> int:
    """The IEEE 754 bit pattern of a non-negative float, as an int (same order)."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


def _float(bits: int) -> float:
    """The float of a bit pattern (:func:`_bits`'s inverse)."""
    return struct.unpack("<d", struct.pack("<q", bits))[0]
