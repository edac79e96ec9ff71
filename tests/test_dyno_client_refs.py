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
    # PyTorch's kernels (the library the refs are costed with) move too
    torch, moved_torch = carmel.libraries["pytorch"], moved.libraries["pytorch"]
    assert moved_torch.efficiency == torch.efficiency
    # the per-operator cost is the same number of cycles at the host's clock
    for before, after in ((carmel, moved), (torch, moved_torch)):
        assert after.dispatch_overhead * host.frequency_hz == pytest.approx(
            before.dispatch_overhead * carmel.opps[-1].frequency)


@pytest.mark.parametrize("variant", ["10w", "10w-uc"])
def test_power_modes_state_pytorchs_per_operator_cycles_at_their_clock(variant):
    """Per-operator costs are Carmel work: each power mode's are MAXN's cycles (PyTorch's
    fitted ones and the processors' estimates) at its top Carmel clock (GPU launches are
    issued by a Carmel core), to the file's rounding."""
    maxn, mode = load_soc("jetson-agx-xavier"), load_soc(f"jetson-agx-xavier@{variant}")
    socs = (maxn, mode)
    clocks = [soc.cpu["carmel"].opps[-1].frequency for soc in socs]
    for name in ("cpu.carmel", "gpu"):
        cycles = [soc.processors()[name].libraries["pytorch"].dispatch_overhead * clock
                  for soc, clock in zip(socs, clocks)]
        assert cycles[1] == pytest.approx(cycles[0], rel=2e-3), name
        # and so are the processors' own (estimated) per-operator and per-call costs
        procs = [soc.processors()[name] for soc in socs]
        for key in ("dispatch_overhead", *procs[0].op_overhead):
            cycles = [(p.dispatch_overhead if key == "dispatch_overhead" else p.op_overhead[key])
                      * clock for p, clock in zip(procs, clocks)]
            assert cycles[1] == pytest.approx(cycles[0], rel=2e-3), (name, key)
    assert clocks[1] < clocks[0]
