"""Named network links: bandwidth each way, round-trip time and the client's radio.

``links: [{between: [device, server], preset: 4g}]`` takes the uplink (first
device -> second), downlink, one-way latency (half the round-trip time) and
radio of the preset; any of them given explicitly overrides the preset.

Cellular figures are UK national averages (Ofcom 2014, hardware-facts.md
§5c): the Mar-Jun 2014 wave for bandwidth (the "Ofcom 2014" average DynO most
likely used) and the Oct-Dec 2014 wave for latency (the only one that reports
it). Wi-Fi 5 and Gigabit Ethernet run at their nominal rates, as in DynO.
"""

from __future__ import annotations

from dataclasses import dataclass

MBIT_S = 1e6 / 8  # bytes/s per Mbit/s


@dataclass(frozen=True)
class LinkPreset:
    """A named link.

    Attributes:
        uplink: bandwidth from the client (first device) to the server (B/s).
        downlink: bandwidth from the server to the client (B/s).
        rtt: round-trip time (s); each direction gets half as latency.
        radio: radio profile of the client's end (``simulator.network.radio``), or None.
        source: where the numbers come from.
    """

    uplink: float
    downlink: float
    rtt: float
    radio: str | None
    source: str


LINK_PRESETS: dict[str, LinkPreset] = {
    "3g": LinkPreset(1.6 * MBIT_S, 6.1 * MBIT_S, 63.5e-3, "3g",
                     "Ofcom 2014 UK 3G averages: 1.6 Mbit/s up, 6.1 down (Mar-Jun, M), "
                     "63.5 ms latency (Oct-Dec, M)"),
    "4g": LinkPreset(12.4 * MBIT_S, 15.1 * MBIT_S, 53.1e-3, "lte",
                     "Ofcom 2014 UK 4G averages: 12.4 Mbit/s up, 15.1 down (Mar-Jun, M), "
                     "53.1 ms latency (Oct-Dec, M)"),
    "wifi5": LinkPreset(866.7 * MBIT_S, 866.7 * MBIT_S, 2e-3, "wifi",
                        "802.11ac nominal PHY rate, 2 spatial streams at 80 MHz: 866.7 Mbit/s "
                        "(V); 2 ms round trip on a LAN (E)"),
    "gbe": LinkPreset(1000 * MBIT_S, 1000 * MBIT_S, 0.2e-3, None,
                      "Gigabit Ethernet nominal rate (V); 0.2 ms round trip on a LAN (E)"),
}
