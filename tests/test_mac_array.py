"""A fabric accelerator's MAC array (``mac_array``, the Xilinx DPU's 8 x 16 x 16 on the
ZCU102): padded lanes computed from a layer's dimensions, in the cost model, and the
Xenos split handing each part its own dimensions. No simulation runs here."""

from __future__ import annotations

import pytest
from conftest import kernel

from policies.xenos.dos import SplitConfig, plan_parts
from simulator.hardware.cost import CostModel
from simulator.hardware.lanes import lane_fill
from simulator.hardware.mac_array import utilisation
from simulator.library import load_soc
from simulator.spec.processor import MacArray
from simulator.spec.soc import SocSpec

B4096 = MacArray(pixels=8, in_channels=16, out_channels=16)


def test_a_three_channel_convolution_fills_three_of_sixteen_input_lanes():
    # MobileNet's first convolution: 3 -> 32 channels, 112 x 112 output
    assert utilisation(B4096, 3, 32, 112, 112) == pytest.approx(3 / 16)


def test_each_dimension_pads_to_its_lanes():
    assert lane_fill(24, 16) == pytest.approx(24 / 32)
    assert lane_fill(0, 16) == 1.0  # unknown: taken as filling the array
    # a 7 x 7 map fills 7 of 8 pixel lanes; 1000 output channels 1000 of 1008
    assert utilisation(B4096, 512, 512, 7, 7) == pytest.approx(7 / 8)
    assert utilisation(B4096, 1024, 1000, 1, 1) == pytest.approx(1000 / 1008 / 8)
    # a matrix product over a 128-token sequence (one column): the rows fill the pixels
    assert utilisation(B4096, 512, 2048, 128, 1) == 1.0
    assert utilisation(B4096, 48, 20, 14, 10) == pytest.approx(1.0 * 20 / 32 * 10 / 16)


def _conv(**dims) -> dict:
    return kernel(0, op="conv", precision="int8", flops=2e9, nbytes=1e3, **dims)


def test_the_cost_model_divides_compute_by_the_utilisation(tiny_soc_dict):
    tiny_soc_dict["cpu"]["big"]["ops_per_cycle"]["int8"] = 64.0
    plain = CostModel(SocSpec.model_validate(tiny_soc_dict))
    tiny_soc_dict["cpu"]["big"]["mac_array"] = {"pixels": 8, "in_channels": 16,
                                                "out_channels": 16}
    array = CostModel(SocSpec.model_validate(tiny_soc_dict))
    row = _conv(in_channels=3, out_channels=32, out_h=112, out_w=112)
    ratio = (array.kernel_cost("cpu.big", 1, row).compute_cycles
             / plain.kernel_cost("cpu.big", 1, row).compute_cycles)
    assert ratio == pytest.approx(16 / 3)
    # element-wise kernels do not run on the array
    add = dict(row, op="add")
    assert (array.kernel_cost("cpu.big", 1, add).compute_cycles
            == plain.kernel_cost("cpu.big", 1, add).compute_cycles)


def test_the_zcu102_dpu_pads_in_both_xenos_libraries():
    soc = load_soc("zcu102")
    model = CostModel(soc)
    bare = CostModel(soc.model_copy(update={"npu": soc.npu.model_copy(
        update={"mac_array": None})}))
    row = _conv(in_channels=3, out_channels=32, out_h=112, out_w=112)
    for library in ("xenos", "operator-centric"):
        ratio = (model.kernel_cost("npu", 1, row, library).compute_cycles
                 / bare.kernel_cost("npu", 1, row, library).compute_cycles)
        assert ratio == pytest.approx(16 / 3)


def _record(**dims) -> dict:
    record = {"name": "c", "op": "conv", "pass": "fwd", "precision": "int8",
              "flops": 2e8, "bytes_in": 1e5, "bytes_out": 1e5, "weight_bytes": 1e3,
              "kernel": 3, "stride": 1, "in_h": 56, "in_w": 56}
    return record | dims


def test_a_split_part_carries_its_own_share_of_the_split_dimension():
    record = _record(in_channels=64, out_channels=64, out_h=56, out_w=56)
    # HO splits 64 output channels over 3 DPU cores: 21 each, the leftover one by rows
    ho = [p for (pieces, _) in plan_parts(record, SplitConfig(3, True, 1e9, 1e9))[0]
          for p in pieces]
    assert [p["out_channels"] for p in ho] == [21, 21, 21]
    assert [p["out_h"] for p in ho] == [56, 56, 56]
    # Vanilla's bands of rows: 19 + 19 + 18, all 64 channels each
    vanilla = [p for (pieces, _) in plan_parts(record, SplitConfig(3, False, 1e9, 1e9))[0]
               for p in pieces]
    assert [p["out_h"] for p in vanilla] == [19, 19, 18]
    assert [p["out_channels"] for p in vanilla] == [64, 64, 64]


def test_weight_budget_pieces_carry_their_own_channels():
    # ResNet-18's layer-4 3x3 conv: 512 -> 512 channels, 7 x 7, 2.36 MB of INT8 weights
    record = _record(in_channels=512, out_channels=512, out_h=7, out_w=7, in_h=7, in_w=7,
                     weight_bytes=512 * 512 * 9.0)
    weights = record["weight_bytes"]
    # three cores, each part (171 channels) twice its budget: two output-channel pieces
    chains = plan_parts(record, SplitConfig(3, True, weights / 3 / 2 * 1.01, 1e9))[0]
    for pieces, partial in chains:
        assert not partial and len(pieces) == 2
        assert [p["out_channels"] for p in pieces] == [86, 86]  # 171 / 2, not 171
        assert all(p["in_channels"] == 512 for p in pieces)
    # a budget too small for output channels alone: input-channel partial sums
    few = _record(in_channels=512, out_channels=2, out_h=7, out_w=7, in_h=7, in_w=7,
                  weight_bytes=2 * 512 * 9.0)
    (pieces, partial), = plan_parts(few, SplitConfig(1, True, few["weight_bytes"] / 4, 1e9))[0]
    assert partial and len(pieces) == 4
    assert [p["in_channels"] for p in pieces] == [128] * 4
    assert [p["out_channels"] for p in pieces] == [2] * 4


def test_shared_memory_slices_carry_their_own_rows():
    record = _record(in_channels=64, out_channels=64, out_h=56, out_w=56)
    # input + output twice the shared memory: two slices of 28 rows each
    slices = plan_parts(record, SplitConfig(1, True, 1e9, 1e5))
    assert len(slices) == 2
    assert [pieces[0]["out_h"] for chains in slices for pieces, _ in chains] == [28, 28]


def test_a_part_narrowed_to_one_column_fills_one_pixel_lane():
    # a 2-D map split by columns down to one column: one of 8 pixel lanes, not its rows
    assert utilisation(B4096, 64, 64, 56, 1, in_w=3) == pytest.approx(1 / 8)
    # a matrix product over a sequence (one input column, or untraced): its rows
    assert utilisation(B4096, 64, 64, 56, 1, in_w=1) == pytest.approx(56 / 56)
    assert utilisation(B4096, 64, 64, 56, 1) == pytest.approx(56 / 56)
    # through the split: a wide, short map split by columns over 3 cores
    record = _record(in_channels=16, out_channels=2, out_h=2, out_w=3, in_h=2, in_w=3)
    parts = [p for (pieces, _) in plan_parts(record, SplitConfig(3, True, 1e9, 1e9))[0]
             for p in pieces]
    assert [p["out_w"] for p in parts] == [1, 1, 1]
    assert all(utilisation(B4096, p["in_channels"], p["out_channels"], p["out_h"],
                           p["out_w"], p["in_w"]) == pytest.approx(1 / 8 * 2 / 16)
               for p in parts)
