"""Radio interfaces as RRC state machines: promotion, transfer power, tail, idle.

A cellular or Wi-Fi radio is not simply "on while sending". From idle it must
first be *promoted* to the connected state (LTE: 0.26 s at 1.21 W), which
delays the first transfer; while data flows it draws a power that grows with
the throughput, ``P = alpha_up * t_up + alpha_down * t_down + beta`` (``t`` in
Mbit/s, Huang et al., MobiSys'12); after the last packet it stays in *tail*
states (LTE: continuous reception, then short and long DRX; 3G: DCH then FACH)
for seconds before it falls back to idle, drawing power all along. A transfer
that arrives during a tail state needs no promotion from idle (3G's FACH still
needs a shorter FACH->DCH promotion).

:class:`Radio` keeps the promotions and transfers of one interface and
integrates its power exactly over any window (:meth:`Radio.energy`); the
channels of a link call :meth:`Radio.wake` and :meth:`Radio.transfer`, and the
device adds the energy to its ``radio`` component.

Profiles (numbers in :data:`RADIO_PROFILES`, sources in ``hardware-facts.md`` §5):

* ``lte``: AT&T ARO's default LTE profile (C) built from Huang et al.;
* ``3g``: ARO's UMTS profile of the Samsung i997 (C): flat DCH power while
  sending, DCH then FACH tails, FACH->DCH promotion;
* ``wifi``: Huang et al.'s Wi-Fi parameters (U, not re-verified against the
  paper's table) with ARO's Wi-Fi standby power (C).

The throughput-linear power was fitted to throughputs of tens of Mbit/s; above
``max_throughput`` the throughput term is held at its value there rather than
extrapolated (802.11ac reaches hundreds of Mbit/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MBIT = 1e6  # bits per Mbit


@dataclass(frozen=True)
class TailState:
    """One state the radio passes through after its last transfer.

    Attributes:
        name: state name (``dch_tail``, ``long_drx``).
        duration: time spent in it before the next state (s).
        power: average power in it (W), DRX wake-ups included.
        promotion: time to get back to the transferring state from it (s).
        promotion_power: power during that promotion (W).
    """

    name: str
    duration: float
    power: float
    promotion: float = 0.0
    promotion_power: float = 0.0


@dataclass(frozen=True)
class RadioProfile:
    """Parameters of one radio technology.

    Attributes:
        name: profile name.
        promotion: idle -> connected promotion time (s).
        promotion_power: power during it (W).
        beta: power while transferring at (near) zero throughput (W).
        alpha_up: extra power per Mbit/s sent (W per Mbit/s).
        alpha_down: extra power per Mbit/s received (W per Mbit/s).
        max_throughput: throughput (Mbit/s) above which the throughput terms stop growing.
        tail: states after the last transfer, in order; then idle.
        idle_power: average idle power (W), paging included.
        source: where the numbers come from.
    """

    name: str
    promotion: float
    promotion_power: float
    beta: float
    alpha_up: float
    alpha_down: float
    max_throughput: float
    tail: tuple[TailState, ...]
    idle_power: float
    source: str

    @property
    def tail_time(self) -> float:
        """Total time (s) from the last transfer to idle."""
        return sum(state.duration for state in self.tail)

    def transfer_power(self, up_mbps: float, down_mbps: float) -> float:
        """Power (W) while sending ``up_mbps`` and receiving ``down_mbps`` Mbit/s."""
        cap = self.max_throughput
        return (self.beta + self.alpha_up * min(up_mbps, cap)
                + self.alpha_down * min(down_mbps, cap))


def _drx(base: float, ping_power: float, on: float, cycle: float) -> float:
    """Average power of a DRX state: ``base`` plus ``on`` s at ``ping_power`` per ``cycle``."""
    return base + (ping_power - base) * on / cycle


_LTE_TAIL = 1.06  # W, ARO LTE tail base power (C)
_LTE_PING = 1.68  # W, DRX on-duration power (C)

RADIO_PROFILES: dict[str, RadioProfile] = {
    "lte": RadioProfile(
        name="lte", promotion=0.26, promotion_power=1.21,
        beta=1.2, alpha_up=0.43839, alpha_down=0.05197,
        max_throughput=50.0,  # E: beyond the paper's measured LTE range
        tail=(TailState("continuous_reception", 0.1, _LTE_TAIL),
              TailState("short_drx", 0.02, _drx(_LTE_TAIL, _LTE_PING, 0.002, 0.02)),
              TailState("long_drx", 10.0, _drx(_LTE_TAIL, _LTE_PING, 0.002, 0.04))),
        idle_power=0.594 * 0.043 / 1.28,  # paging: 43 ms at 0.594 W every 1.28 s (C)
        source="AT&T ARO lte.conf (hardware-facts.md §5a, C): promotion 0.26 s @ 1.21 W, "
               "inactivity 0.1 s, short DRX 0.02 s / 0.02 s cycle, long DRX 10 s / 0.04 s "
               "cycle, ping 2 ms @ 1.68 W, tail base 1.06 W, alpha_u 438.39 / alpha_d "
               "51.97 mW/Mbps, beta 1.2 W; idle paging 43 ms @ 0.594 W per 1.28 s"),
    "3g": RadioProfile(
        name="3g", promotion=2.0, promotion_power=0.65,
        beta=1.30, alpha_up=0.0, alpha_down=0.0, max_throughput=math.inf,
        tail=(TailState("dch_tail", 4.0, 1.30),
              TailState("fach", 10.0, 0.30, promotion=1.5, promotion_power=0.80)),
        idle_power=0.0,
        source="AT&T ARO i997.conf (hardware-facts.md §5b, C): DCH 1.30 W, FACH 0.30 W, "
               "IDLE->DCH 2.0 s avg @ 0.65 W, FACH->DCH 1.5 s avg @ 0.80 W, DCH->FACH 4 s, "
               "FACH->IDLE 10 s; flat DCH power while sending"),
    "wifi": RadioProfile(
        name="wifi", promotion=0.079, promotion_power=0.124,
        beta=0.13286, alpha_up=0.28317, alpha_down=0.13701,
        max_throughput=50.0,  # E: beyond the paper's measured Wi-Fi range
        tail=(TailState("tail", 0.238, 0.119),),
        idle_power=0.02,
        source="Huang et al. MobiSys'12 Wi-Fi (hardware-facts.md §5a, U): promotion 79 ms "
               "@ 124 mW, tail 238 ms @ 119 mW, alpha_u 283.17 / alpha_d 137.01 mW/Mbps, "
               "beta 132.86 mW; standby 0.02 W from ARO WiFi.conf (C)"),
}


class Radio:
    """Run-time state of one radio interface.

    Args:
        profile: the technology's parameters.
        name: label for records (``device.radio``).
    """

    def __init__(self, profile: RadioProfile, name: str = "radio"):
        self.profile = profile
        self.name = name
        # (start, end, kind, value): kind "promotion" (value: W) or "transfer"
        # (value: (up Mbit/s, down Mbit/s)); pruned once they no longer matter.
        self._activities: list[tuple[float, float, str, object]] = []
        self.promotions = 0
        # s after an activity's end at which its tail changes state
        offsets = [0.0]
        for state in profile.tail:
            offsets.append(offsets[-1] + state.duration)
        self._tail_offsets = tuple(offsets[1:])
        # The stretch of constant power the last energy() fell in: (its start s, the
        # next edge s, W),
        # valid until an activity is added (None). The device integrates every
        # thermal step and the power changes only at activities' edges and tail
        # states: most integrations fall inside one stretch, and scanning every
        # activity of the last tail (10 s on LTE: hundreds in a pipelined run) for
        # each was ~5 % of a DynO run.
        self._stretch: tuple[float, float, float] | None = None

    # -- the state machine ------------------------------------------------------
    def _last_end(self, t: float) -> float | None:
        """End of the latest activity that ended by ``t`` (None: none known)."""
        ends = [end for _, end, _, _ in self._activities if end <= t]
        return max(ends) if ends else None

    def _covering(self, t: float) -> list[tuple[float, float, str, object]]:
        return [a for a in self._activities if a[0] <= t < a[1]]

    def _tail_state(self, since: float) -> TailState | None:
        """The tail state ``since`` seconds after the last activity (None: idle)."""
        elapsed = 0.0
        for state in self.profile.tail:
            elapsed += state.duration
            if since < elapsed:
                return state
        return None

    def wake(self, t: float) -> float:
        """When data asked to flow at ``t`` can start flowing (s).

        From idle (or a tail state that needs one) a promotion starts at ``t``
        and is recorded; during a promotion in progress the data waits for its end.
        """
        covering = self._covering(t)
        if covering:
            promotions = [end for _, end, kind, _ in covering if kind == "promotion"]
            transfers = [a for a in covering if a[2] == "transfer"]
            return t if transfers or not promotions else max(promotions)
        last = self._last_end(t)
        state = None if last is None else self._tail_state(t - last)
        if state is None:
            duration, power = self.profile.promotion, self.profile.promotion_power
        else:
            duration, power = state.promotion, state.promotion_power
        if duration > 0:
            self._activities.append((t, t + duration, "promotion", power))
            self._stretch = None
            self.promotions += 1
        return t + duration

    def transfer(self, start: float, end: float, nbytes: float, uplink: bool) -> None:
        """Record a transfer of ``nbytes`` occupying [start, end] (s)."""
        if end <= start:
            return
        mbps = nbytes * 8 / (end - start) / MBIT
        self._activities.append((start, end, "transfer", (mbps, 0.0) if uplink else (0.0, mbps)))
        self._stretch = None

    # -- power and energy --------------------------------------------------------
    def power_at(self, t: float) -> float:
        """Power (W) at time ``t`` given the activities known so far."""
        covering = self._covering(t)
        transfers = [value for _, _, kind, value in covering if kind == "transfer"]
        if transfers:
            return self.profile.transfer_power(sum(u for u, _ in transfers),
                                               sum(d for _, d in transfers))
        promotions = [value for _, _, kind, value in covering if kind == "promotion"]
        if promotions:
            return max(promotions)
        last = self._last_end(t)
        state = None if last is None else self._tail_state(t - last)
        return self.profile.idle_power if state is None else state.power

    def energy(self, a: float, b: float) -> float:
        """Energy (J) drawn over [a, b] (exact: the power is piecewise constant)."""
        if b <= a:
            return 0.0
        stretch = self._stretch
        if stretch is not None and stretch[0] <= a and b <= stretch[1]:
            # what the lines below give for an interval with no edge inside: one
            # term, summed from 0
            return 0 + stretch[2] * (b - a)
        horizon = a - self.profile.tail_time
        # Activities that ended a whole tail before ``a`` cannot shape [a, b] any more.
        self._activities = [act for act in self._activities if act[1] >= horizon]
        points = {a, b}
        edge = math.inf  # the first edge at or after b
        for start, end, _, _ in self._activities:
            for t in (start, end, *(end + off for off in self._tail_offsets)):
                if a < t < b:
                    points.add(t)
                elif b <= t < edge:
                    edge = t
        if len(points) == 2:
            # No edge inside: the power is constant from a to the next edge. (Only
            # forward from a: activities pruned above may have edges before it.)
            power = self.power_at(0.5 * (a + b))
            self._stretch = (a, edge, power)
            return 0 + power * (b - a)
        times = sorted(points)
        return sum(self.power_at(0.5 * (x + y)) * (y - x) for x, y in zip(times, times[1:]))
