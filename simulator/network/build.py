"""Building an experiment's ``links:`` into channels (and radios) of a system.

Each link becomes two FIFO channels (``link.<a>-<b>`` and ``link.<b>-<a>``,
full duplex) with their bandwidth schedules and latency, from explicit values,
a preset, a trace file or a generator (:mod:`.traces`). A link with a radio
gives the first device a :class:`~.radio.Radio` through which both channels
pass: promotions delay transfers, and the device charges its energy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..engine.links import BandwidthSchedule, Channel, Port
from ..errors import ConfigError
from ..spec.system import LinkSpec
from .presets import LINK_PRESETS
from .radio import RADIO_PROFILES, Radio
from .traces import LinkConditions, NetworkTypes, markov_trace, read_trace


def link_conditions(link: LinkSpec, rng: np.random.Generator, base: Path | None = None,
                    path: str = "links") -> LinkConditions:
    """Bandwidth schedules and latency of ``link``.

    Args:
        link: the link's spec.
        rng: the run's generator (a child of it drives an unseeded generator).
        base: folder a relative trace path is resolved against.
        path: YAML path of the link, for errors.
    """
    preset = LINK_PRESETS.get(link.preset) if link.preset else None
    latency = link.latency if link.latency is not None else (preset.rtt / 2 if preset else 0.0)
    if link.trace is not None:
        trace = Path(link.trace)
        if not trace.is_absolute() and base is not None:
            trace = base / trace
        try:
            return read_trace(trace, latency, link.period)
        except ConfigError as err:
            raise ConfigError(err.message, file=err.file, path=f"{path}.trace") from None
    if link.generator is not None:
        gen = link.generator
        stream = (np.random.default_rng(gen.seed) if gen.seed is not None
                  else rng.spawn(1)[0])
        try:
            return markov_trace(gen.states, gen.mean_dwell, gen.duration, gen.jitter,
                                gen.step, stream, latency)
        except ConfigError as err:
            raise err.within(prefix=f"{path}.generator.states") from None
    network = NetworkTypes.constant(link.preset) if link.preset else None
    if link.schedule is not None:
        schedule = BandwidthSchedule([t for t, _ in link.schedule],
                                     [bw for _, bw in link.schedule], link.period)
        return LinkConditions(schedule, schedule, latency, network)
    up = link.bandwidth if link.bandwidth is not None else preset.uplink
    if link.reverse_bandwidth is not None:
        down = link.reverse_bandwidth
    else:
        down = link.bandwidth if link.bandwidth is not None else preset.downlink
    return LinkConditions(BandwidthSchedule.constant(up), BandwidthSchedule.constant(down),
                          latency, network)


def radio_profile(link: LinkSpec) -> str | None:
    """The radio profile of ``link``'s first device (None: no radio)."""
    name = link.radio
    if name is None and link.preset is not None:
        name = LINK_PRESETS[link.preset].radio
    return None if name in (None, "none") else name


def build_links(env, links: list[LinkSpec], system, rng: np.random.Generator,
                record=None, base: Path | None = None,
                port_bandwidths: dict[str, float | None] | None = None) -> None:
    """Add the channels (and radios) of ``links`` to ``system``.

    Args:
        env: the SimPy environment.
        links: the experiment's links.
        system: the :class:`~simulator.engine.system.System` with its devices.
        rng: the run's random generator.
        record: receives every transfer (the run's recorder).
        base: folder relative paths are resolved against.
        port_bandwidths: per device, the bandwidth of its one network port (all
            its links share it), or None.

    Raises:
        ConfigError: a link names an unknown device or has a bad trace.
    """
    devices = system.devices
    ports: dict[tuple[str, str], Port] = {}
    for name, bandwidth in (port_bandwidths or {}).items():
        if bandwidth is not None and name in devices:
            ports[name, "out"] = Port(f"{name}.port.out", bandwidth)
            ports[name, "in"] = Port(f"{name}.port.in", bandwidth)

    def through(src: str, dst: str) -> list[Port]:
        return [p for p in (ports.get((src, "out")), ports.get((dst, "in"))) if p is not None]

    for i, link in enumerate(links):
        for end in link.between:
            if end not in devices:
                raise ConfigError(f"unknown device {end!r}; devices are "
                                  f"{', '.join(devices)}", path=f"links[{i}].between")
        a, b = link.between
        conditions = link_conditions(link, rng, base, path=f"links[{i}]")
        profile = radio_profile(link)
        radio = Radio(RADIO_PROFILES[profile], f"{a}.radio") if profile else None
        forward = Channel(env, f"link.{a}-{b}", conditions.uplink, latency=conditions.latency,
                          switch=link.switch, record=record, radio=radio, uplink=True,
                          network=conditions.network, ports=through(a, b))
        backward = Channel(env, f"link.{b}-{a}", conditions.downlink,
                           latency=conditions.latency, switch=link.switch, record=record,
                           radio=radio, uplink=False, network=conditions.network,
                           ports=through(b, a))
        system.add_link(a, b, forward, backward)
        if radio is not None:
            devices[a].attach_radio(radio)
