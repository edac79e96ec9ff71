"""Several devices in one experiment, joined by network links.

::

    soc: snapdragon865              # the experiment's own device, named "device"
    devices:
      server: {soc: path/to/server.yaml}
    links:
      - between: [device, server]
        bandwidth: 15.1 Mbit/s       # device -> server
        reverse_bandwidth: 12.4 Mbit/s  # server -> device (default: same)
        latency: 26.5 ms             # one way
      - between: [device, edge]
        schedule: [[0 s, 100 Mbit/s], [10 s, 2 Mbit/s]]   # piecewise constant
        period: 20 s                 # repeat the schedule
      - between: [device, cloud]
        preset: 4g                   # Ofcom 2014 averages + an LTE radio on "device"
        trace: traces/commute.csv    # or a generator: {states: [wifi5, 4g, 3g], ...}

Each direction of a link is its own FIFO channel (full duplex). A device may
have one network ``port`` (``devices: {server: {soc: ..., port: 2 GB/s}}``)
that all its links attach to: a transfer then also holds the sender's outgoing
and the receiver's incoming side of their ports. Processors of
another device are named ``server:gpu`` in placements. A link with a radio
(from its preset or ``radio:``) charges the first device's ``radio`` energy
component from an RRC state machine (:mod:`simulator.network.radio`).

The experiment's own device may appear under ``devices`` without a ``soc``
to set its options: ``devices: {device: {slowdown: 20}}``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import BytesPerSecond, Fraction, Seconds, Strict


class DeviceEntry(Strict):
    """A further device of the system (or options of the experiment's own device).

    Attributes:
        soc: SoC name under socs/ (``name@variant`` for a variant) or a path;
            required except for the experiment's own device, named ``device``.
        slowdown: every kernel on this device takes this many times longer (a
            slower device of the same kind, e.g. a device tier; DynO's proxy).
        port: bandwidth of the device's one network port (each direction, full
            duplex). Every link of the device goes through it, so transfers on
            different links share it: a parameter server's port carries every
            board's traffic. None: each link is limited only by itself.
    """

    soc: str | None = Field(default=None, description="SoC name under socs/ or a path")
    slowdown: float = Field(default=1.0, gt=0)
    port: BytesPerSecond | None = Field(default=None, gt=0)


class BandwidthGenerator(Strict):
    """A generated bandwidth trace (see :mod:`simulator.network.traces`).

    Attributes:
        kind: the generator (``markov``: moves between states).
        states: link presets (``wifi5``, ``4g``...) or bandwidths; starts in the first.
        mean_dwell: mean time spent in a state.
        duration: length of the generated trace; the last value then holds.
        jitter: log-standard-deviation of the bandwidth's variation within a state.
        step: how often the bandwidth is redrawn within a state.
        seed: seed of the generator's own random stream (None: from the run's seed).
    """

    kind: Literal["markov"] = "markov"
    states: list[str] = Field(min_length=1)
    mean_dwell: Seconds = Field(gt=0)
    duration: Seconds = Field(gt=0)
    jitter: Fraction = Field(default=0.0, ge=0)
    step: Seconds = Field(default=1.0, gt=0)
    seed: int | None = Field(default=None, ge=0)


class LinkSpec(Strict):
    """A network link between two devices.

    Attributes:
        between: the two device names (the first sends at ``bandwidth``; with a
            radio, the first is the client whose radio it is).
        preset: a named link (``3g``, ``4g``, ``wifi5``, ``gbe``;
            :mod:`simulator.network.presets`) giving bandwidths, latency and
            radio; fields given explicitly override it.
        bandwidth: constant bandwidth first -> second.
        reverse_bandwidth: second -> first (default: ``bandwidth``).
        schedule: piecewise-constant bandwidth ``[[time, bandwidth], ...]`` (both
            directions), starting at time 0.
        trace: a bandwidth trace CSV (relative to the experiment file).
        generator: a generated bandwidth trace.
        period: repeat ``schedule`` or ``trace`` with this period.
        latency: one-way propagation delay (default: the preset's, else 0).
        switch: fixed per-transfer occupancy (protocol setup).
        radio: radio profile of the first device's end (``lte``, ``3g``,
            ``wifi``) or ``none``; default: the preset's.
    """

    between: tuple[str, str]
    preset: str | None = None
    bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    reverse_bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    schedule: list[tuple[Seconds, BytesPerSecond]] | None = None
    trace: str | None = None
    generator: BandwidthGenerator | None = None
    period: Seconds | None = Field(default=None, gt=0)
    latency: Seconds | None = Field(default=None, ge=0)
    switch: Seconds = Field(default=0.0, ge=0)
    radio: str | None = None

    @model_validator(mode="after")
    def _one_bandwidth(self) -> LinkSpec:
        from ..network.presets import LINK_PRESETS
        from ..network.radio import RADIO_PROFILES

        if self.preset is not None and self.preset not in LINK_PRESETS:
            raise ValueError(f"unknown link preset {self.preset!r}; known: "
                             f"{', '.join(LINK_PRESETS)}")
        if self.radio is not None and self.radio != "none" and self.radio not in RADIO_PROFILES:
            raise ValueError(f"unknown radio {self.radio!r}; known: "
                             f"{', '.join(RADIO_PROFILES)}, none")
        given = [k for k in ("bandwidth", "schedule", "trace", "generator")
                 if getattr(self, k) is not None]
        if len(given) > 1 or (not given and self.preset is None):
            raise ValueError("give exactly one of 'bandwidth', 'schedule', 'trace' or "
                             "'generator' (or a 'preset')")
        if self.schedule is not None:
            times = [t for t, _ in self.schedule]
            if not times or times[0] != 0 or times != sorted(times):
                raise ValueError("schedule times must start at 0 s and ascend")
            if any(bw <= 0 for _, bw in self.schedule):
                raise ValueError("schedule bandwidths must be positive")
        if self.between[0] == self.between[1]:
            raise ValueError("a link joins two different devices")
        return self
