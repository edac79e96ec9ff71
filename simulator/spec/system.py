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

Each direction of a link is its own FIFO channel (full duplex). Processors of
another device are named ``server:gpu`` in placements.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import BytesPerSecond, Seconds, Strict


class DeviceEntry(Strict):
    """A further device of the system."""

    soc: str = Field(description="SoC name under socs/ or a path")


class LinkSpec(Strict):
    """A network link between two devices.

    Attributes:
        between: the two device names (the first sends at ``bandwidth``).
        bandwidth: constant bandwidth first -> second.
        reverse_bandwidth: second -> first (default: ``bandwidth``).
        schedule: piecewise-constant bandwidth ``[[time, bandwidth], ...]`` (both
            directions), starting at time 0.
        period: repeat ``schedule`` with this period.
        latency: one-way propagation delay.
        switch: fixed per-transfer occupancy (protocol setup).
    """

    between: tuple[str, str]
    bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    reverse_bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    schedule: list[tuple[Seconds, BytesPerSecond]] | None = None
    period: Seconds | None = Field(default=None, gt=0)
    latency: Seconds = Field(default=0.0, ge=0)
    switch: Seconds = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _one_bandwidth(self) -> LinkSpec:
        if (self.bandwidth is None) == (self.schedule is None):
            raise ValueError("give exactly one of 'bandwidth' or 'schedule'")
        if self.schedule is not None:
            times = [t for t, _ in self.schedule]
            if not times or times[0] != 0 or times != sorted(times):
                raise ValueError("schedule times must start at 0 s and ascend")
            if any(bw <= 0 for _, bw in self.schedule):
                raise ValueError("schedule bandwidths must be positive")
        if self.between[0] == self.between[1]:
            raise ValueError("a link joins two different devices")
        return self
