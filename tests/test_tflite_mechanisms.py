"""Cost-model mechanisms for TFLite on the Pixel 4 (issue 15, item 5): per-precision
thread scaling, single-threaded kernels, grouped convolution as its own kind, narrow
convolutions, the per-kernel cost of element-wise kernels and window re-reads served
on chip. Each test runs the engine on the tiny SoC with one mechanism switched on."""

from __future__ import annotations

import pytest
from conftest import kernel, make_trace, run

from simulator.hardware.cost import CostModel, lookup
from simulator.spec.soc import SocSpec
from workloads.importers.mobile_ml_benchmark import import_mobile_ml_benchmark

BIG = {"name": "single", "processor": "cpu.big", "cores": 2}
ONE = {"name": "single", "processor": "cpu.big", "cores": 1}


def _soc(tiny_soc_dict, **big) -> SocSpec:
    tiny_soc_dict["cpu"]["big"].update(big)
    return SocSpec.model_validate(tiny_soc_dict)


def _latency(soc, rows, policy=BIG) -> float:
    return run(soc, make_trace(rows), policy).metrics["latency_s"]


def test_parallel_efficiency_per_precision(tiny_soc_dict):
    soc = _soc(tiny_soc_dict, parallel_efficiency={"fp32": 1.0, "int8": 0.5})
    for precision, speedup in (("fp32", 2.0), ("int8", 1.5)):
        rows = [kernel(0, precision=precision, flops=8e8, nbytes=10)]
        assert _latency(soc, rows, ONE) / _latency(soc, rows) == pytest.approx(speedup,
                                                                               rel=1e-6)


def test_parallel_efficiency_mapping_is_validated(tiny_soc_dict):
    with pytest.raises(ValueError, match="precision"):
        _soc(tiny_soc_dict, parallel_efficiency={"fp64": 0.5})
    with pytest.raises(ValueError, match="parallel efficiency"):
        _soc(tiny_soc_dict, parallel_efficiency={"int8": 0.0})


def test_serial_ops_do_not_scale_with_cores(tiny_soc_dict):
    soc = _soc(tiny_soc_dict, serial_ops=["group_conv"])
    grouped = [kernel(0, op="group_conv", flops=8e8, nbytes=10)]
    dense = [kernel(0, op="conv", flops=8e8, nbytes=10)]
    assert _latency(soc, grouped) == pytest.approx(_latency(soc, grouped, ONE), rel=1e-9)
    assert _latency(soc, dense) == pytest.approx(_latency(soc, dense, ONE) / 2, rel=1e-6)


def test_group_conv_has_its_own_efficiency_and_falls_back_to_conv():
    table = {"conv": 0.6, "group_conv": 0.05, "int8": {"conv": 0.5}}
    assert lookup(table, "fp32", "group_conv", "fwd") == 0.05
    assert lookup({"conv": 0.6, "default": 0.1}, "fp32", "group_conv", "fwd") == 0.6
    assert lookup({"int8": {"conv": 0.5}, "default": 0.1}, "int8", "group_conv", "fwd") == 0.5


def test_importer_emits_group_conv_for_grouped_convolutions(tmp_path):
    csv = tmp_path / "ops.csv"
    csv.write_text(
        "model,operation,feature\n"
        "m,CONV_2D,\"{'Input_shape': '8', 'Input_channel': 16, 'Output_shape': '8', "
        "'Stride': '1', 'Kernel': '1', 'Filter': '16', 'Group': '1', 'FLOPS': '-'}\"\n"
        "m,CONV_2D_GROUP,\"{'Input_shape': '10', 'Input_channel': 16, 'Output_shape': '8', "
        "'Stride': '1', 'Kernel': '3', 'Filter': '16', 'Group': '4', 'FLOPS': '-'}\"\n")
    table = import_mobile_ml_benchmark(csv, None)["m"].table
    assert table["op"].tolist() == ["conv", "group_conv"]
    # 8 x 8 outputs x 16 channels x (16 / 4) inputs x 9 taps x 2
    assert table["flops"].iloc[1] == 8 * 8 * 16 * 4 * 9 * 2


def test_narrow_convolutions_reach_less_of_the_peak(tiny_soc_dict):
    soc = _soc(tiny_soc_dict, gemm_half_channels=16.0)
    wide = _latency(soc, [kernel(0, flops=8e8, nbytes=10, out_channels=1008)], ONE)
    narrow = _latency(soc, [kernel(0, flops=8e8, nbytes=10, out_channels=16)], ONE)
    # 16 channels: half the efficiency; 1008: 1008 / 1024 of it
    assert narrow / wide == pytest.approx(2 * 1008 / 1024, rel=1e-6)
    # depthwise kernels and rows without out_channels are not GEMMs: unchanged
    plain = SocSpec.model_validate({**tiny_soc_dict, "cpu": {
        **tiny_soc_dict["cpu"], "big": {**tiny_soc_dict["cpu"]["big"], "gemm_half_channels": 0}}})
    dw = [kernel(0, op="dwconv", flops=8e8, nbytes=10, out_channels=16)]
    assert _latency(soc, dw, ONE) == pytest.approx(_latency(plain, dw, ONE), rel=1e-12)


def test_op_overhead_replaces_the_dispatch_overhead_for_its_kinds(tiny_soc_dict):
    soc = _soc(tiny_soc_dict, dispatch_overhead="40 us",
               op_overhead={"elementwise": "0 us", "add": "2 us"})
    tiny = dict(flops=1.0, nbytes=1.0)
    assert _latency(soc, [kernel(0, op="conv", **tiny)], ONE) == pytest.approx(40e-6, rel=1e-3)
    assert _latency(soc, [kernel(0, op="relu", **tiny)], ONE) == pytest.approx(0.0, abs=1e-8)
    assert _latency(soc, [kernel(0, op="add", **tiny)], ONE) == pytest.approx(2e-6, rel=1e-3)
    with pytest.raises(ValueError, match="unknown op kind or category"):
        _soc(tiny_soc_dict, op_overhead={"elementwse": "1 us"})


def test_window_re_reads_served_on_chip(tiny_soc_dict):
    """A 7x7 depthwise layer on a tensor far larger than the cache: its 48 re-reads
    per input come from DRAM unless the processor keeps window rows on chip."""
    cost = {}
    for on_chip in (False, True):
        soc = _soc(tiny_soc_dict, window_reads_on_chip=on_chip)
        cost[on_chip] = CostModel(soc).cost(
            "cpu.big", 1, op="dwconv", pass_="fwd", precision="fp32", flops=1e3,
            bytes_in=8e6, bytes_out=8e6, weight_bytes=0.0, kernel=7, stride=1)
    # off chip: DRAM moves the window re-reads too (49 x input + output)
    assert cost[False].dram_bytes == pytest.approx(49 * 8e6 + 8e6, rel=0.05)
    # on chip: DRAM moves each tensor about once; the nearest level serves the re-reads
    assert cost[True].dram_bytes == pytest.approx(16e6, rel=0.05)
    assert cost[True].level_bytes[0][1] == pytest.approx(49 * 8e6 + 8e6)


def test_grouped_convolutions_amortise_their_inner_loop(tiny_soc_dict):
    soc = _soc(tiny_soc_dict, group_half_channels=4.0)
    # 3x3 groups of C_g input channels: flops = 2 outputs 9 C_g, outputs = bytes_out / 4
    def grouped(channels: float) -> list[dict]:
        return [kernel(0, op="group_conv", flops=7.2e8, nbytes=7.2e8 * 4 / (18 * channels),
                       kernel=3)]
    # C_g = 4: half the table efficiency; C_g = 12: 12 / 16 of it
    assert _latency(soc, grouped(4), ONE) / _latency(soc, grouped(12), ONE) == pytest.approx(
        1.5, rel=1e-6)
    # dense convolutions keep their efficiency
    plain = _soc(tiny_soc_dict, group_half_channels=0.0)
    dense = [kernel(0, op="conv", flops=7.2e8, nbytes=7.2e8 * 4 / (18 * 4), kernel=3)]
    assert _latency(soc, dense, ONE) == pytest.approx(_latency(plain, dense, ONE), rel=1e-12)


def test_im2col_copy_runs_on_one_thread(tiny_soc_dict):
    # 8 output channels: the im2col buffer holds flops / 16 elements, 4 bytes each, copied at
    # 1 byte per cycle = flops / 4 cycles: as long as the product on one core (8 x 0.5 per cycle)
    soc = _soc(tiny_soc_dict, im2col_bytes_per_cycle=1.0)
    three = [kernel(0, op="conv", flops=8e8, nbytes=10, out_channels=8, kernel=3, stride=1)]
    # two cores halve the product only: (1/4 + 1/4) / (1/8 + 1/4) = 4/3
    assert _latency(soc, three, ONE) / _latency(soc, three) == pytest.approx(4 / 3, rel=1e-6)
    assert _latency(soc, three, ONE) == pytest.approx(2 * 8e8 / 4 / 2e9, rel=1e-6)
    # a 1x1 stride-1 convolution is a plain matrix product: no copy, full speed-up
    one = [kernel(0, op="conv", flops=8e8, nbytes=10, out_channels=8, kernel=1, stride=1)]
    assert _latency(soc, one, ONE) / _latency(soc, one) == pytest.approx(2.0, rel=1e-6)
    # strided 1x1 convolutions are copied too
    strided = [kernel(0, op="conv", flops=8e8, nbytes=10, out_channels=8, kernel=1, stride=2)]
    assert _latency(soc, strided, ONE) == pytest.approx(_latency(soc, three, ONE), rel=1e-6)
