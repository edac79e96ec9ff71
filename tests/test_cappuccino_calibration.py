"""The Cappuccino fit: every phone's RenderScript and Java libraries follow from the
overheads fitted on the Nexus 5 (``K``, ``R``, Dalvik's ``F``) and the phone's Java
runtime, and each overhead moves simulated time the way its mechanism says."""

from __future__ import annotations

import pytest

from simulator.hardware.cost import CostModel
from simulator.library import load_soc
from validation.cappuccino import fit


@pytest.mark.parametrize("phone", fit.PHONES)
def test_every_phone_carries_the_nexus5_overheads_and_its_own_runtime(phone):
    nexus5 = load_soc("snapdragon800")
    code, dalvik = fit.committed_overheads(nexus5)
    row = fit.committed_row_cycles(nexus5)
    soc = load_soc(phone)
    java = fit.java_overhead(phone, dalvik)
    for cluster, proc in soc.cpu.items():
        for name, (eff, cycles) in fit.library_values(soc, cluster, code, row, java).items():
            written = proc.libraries[name]
            assert written.efficiency["default"] == pytest.approx(eff, rel=2e-3), (phone, name)
            assert (written.row_overhead_cycles or 0.0) == pytest.approx(cycles or 0.0,
                                                                         rel=2e-3)


def test_java_overhead_follows_the_runtime_not_the_phone():
    # Android 6.0's ART runs the same Java loop faster than Android 4.4's Dalvik
    assert fit.PHONE_RUNTIME["snapdragon800"][1] == "dalvik"
    assert fit.java_overhead("snapdragon810", 9.0) < fit.java_overhead("snapdragon800", 9.0)
    assert fit.java_overhead("snapdragon820", 9.0) == fit.java_overhead("snapdragon810", 9.0)


def test_with_overheads_round_trips_and_slows_exact_mode_in_proportion():
    soc = load_soc("snapdragon800")
    code, java = fit.committed_overheads(soc)
    assert fit.committed_overheads(fit.with_overheads(soc, code, java)) == pytest.approx(
        (code, java), rel=1e-12)
    base = fit.run("snapdragon800", "squeezenet1_0", "parallel", soc).metrics["latency_s"]
    slower = fit.run("snapdragon800", "squeezenet1_0", "parallel",
                     fit.with_overheads(soc, 2 * code, java, row_cycles=0.0)
                     ).metrics["latency_s"]
    flat = fit.run("snapdragon800", "squeezenet1_0", "parallel",
                   fit.with_overheads(soc, code, java, row_cycles=0.0)).metrics["latency_s"]
    # compute-bound scalar code: twice the overhead, nearly twice the time
    assert 1.8 < slower / flat <= 2.0
    assert flat < base  # the row loops cost time
    # Java is the same code F times slower: K F and R F are what it sees
    row = fit.committed_row_cycles(soc)
    java_time = fit.run("snapdragon800", "squeezenet1_0", "baseline",
                        fit.with_overheads(soc, 2 * code, java / 2, row_cycles=2 * row)
                        ).metrics["latency_s"]
    assert java_time == pytest.approx(
        fit.run("snapdragon800", "squeezenet1_0", "baseline",
                fit.with_overheads(soc, code, java)).metrics["latency_s"], rel=1e-9)


def _conv(kernel: int, channels: int) -> dict:
    # the same multiply-accumulates with kernel x kernel taps over `channels` inputs
    out = 64 * 28 * 28
    flops = 2.0 * out * channels * kernel * kernel
    return {"op": "conv", "pass": "fwd", "precision": "fp32", "flops": flops,
            "bytes_in": 4.0 * channels * 28 * 28, "bytes_out": 4.0 * out,
            "weight_bytes": 4.0 * 64 * channels * kernel * kernel, "kernel": kernel,
            "stride": 1}


def test_row_loops_make_1x1_convolutions_dearer_per_flop_than_wide_kernels():
    soc = load_soc("snapdragon800")
    model = CostModel(soc)
    f = soc.cpu["big"].opps[-1].frequency

    def per_flop(record, library):
        return model.kernel_cost("cpu.big", 4, record, library).duration(f) / record["flops"]

    one, three = _conv(1, 576), _conv(3, 64)  # equal flops
    assert one["flops"] == three["flops"]
    exact = per_flop(one, "renderscript-exact") / per_flop(three, "renderscript-exact")
    assert exact > 1.5  # a row loop per multiply-accumulate against one per three
    # map-major float4 code loops along channels: no row cost, so no such gap
    vector = per_flop(one, "renderscript-imprecise") / per_flop(three, "renderscript-imprecise")
    assert vector == pytest.approx(1.0, rel=0.05)
