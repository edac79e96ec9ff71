"""A system: one or more devices joined by network links.

Processors are addressed by dotted names within a device (``cpu.gold``) and
by ``device:name`` across devices (``server:gpu``). Data moving between
address spaces follows a route of channels: the source accelerator's offload
channel, the network link between devices, the destination's offload channel.
"""

from __future__ import annotations

from .device import Device
from .links import Channel
from .processor import Processor


class System:
    """Devices and links of one run.

    Args:
        devices: devices by name; the first is the default device.
    """

    def __init__(self, devices: dict[str, Device]):
        self.devices = devices
        self.default = next(iter(devices))
        self.links: dict[tuple[str, str], Channel] = {}

    def device(self, name: str | None = None) -> Device:
        return self.devices[name or self.default]

    def add_link(self, a: str, b: str, forward: Channel, backward: Channel) -> None:
        """Join devices ``a`` and ``b``: ``forward`` carries a -> b, ``backward`` b -> a."""
        self.links[(a, b)] = forward
        self.links[(b, a)] = backward

    def resolve(self, processor: str, device: str | None = None) -> tuple[str, str]:
        """Split ``'server:gpu'`` into (device, local name); default to ``device``."""
        if ":" in processor:
            dev, local = processor.split(":", 1)
        else:
            dev, local = device or self.default, processor
        if dev not in self.devices:
            raise KeyError(f"unknown device {dev!r}")
        if local not in self.devices[dev].processors:
            raise KeyError(f"unknown processor {local!r} on device {dev!r} (has "
                           f"{', '.join(self.devices[dev].processors)})")
        return dev, local

    def processor(self, device: str, local: str) -> Processor:
        return self.devices[device].processors[local]

    def route(self, src: tuple[str, str], dst: tuple[str, str]) -> list[Channel]:
        """Channels that data crosses from processor ``src`` to ``dst``."""
        if src == dst:
            return []
        (sdev, sproc), (ddev, dproc) = src, dst
        route: list[Channel] = []
        src_chan = self.devices[sdev].channels.get(sproc)
        dst_chan = self.devices[ddev].channels.get(dproc)
        if src_chan is not None:
            route.append(src_chan)
        if sdev != ddev:
            link = self.links.get((sdev, ddev))
            if link is None:
                raise KeyError(f"no link between devices {sdev!r} and {ddev!r}")
            route.append(link)
        if dst_chan is not None:
            route.append(dst_chan)
        return route
