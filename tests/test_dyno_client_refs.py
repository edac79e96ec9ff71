"""The DynO client/server latency references and their host transfer (issue 17, item 1)."""

from __future__ import annotations

import pytest

from simulator.library import load_soc
from validation.dyno.client_refs import HOSTS, REFS
from validation.dyno.fit_clients import on_host


def test_reference_keys_are_unique_and_hosts_known():
    keys = [ref.key for ref in REFS]
    assert len(keys) == len(set(keys))
    assert all(ref.host is None or ref.host in HOSTS for ref in REFS)


def test_on_host_moves_the_hardware_and_keeps_the_kernels():
    soc = load_soc("jetson-agx-xavier")
    host = HOSTS["rpi4"]
    carmel = soc.cpu["carmel"]
    moved = on_host(soc, "cpu.carmel", "rpi4").cpu["carmel"]
    assert moved.units == host.units
    assert moved.opps[-1].frequency == host.frequency_hz
    assert moved.dram_bandwidth == pytest.approx(
        host.dram_bytes_per_s * soc.memory["dram"].efficiency)
    assert [c.size for c in moved.caches] == [host.l1_bytes, host.l2_bytes]
    assert moved.efficiency == carmel.efficiency
    assert moved.parallel_efficiency == carmel.parallel_efficiency
    # the per-operator cost is the same number of cycles at the host's clock
    assert moved.dispatch_overhead * host.frequency_hz == pytest.approx(
        carmel.dispatch_overhead * carmel.opps[-1].frequency)
