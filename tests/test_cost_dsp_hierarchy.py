"""The DSP's memory path in the cost model (issue 16): a replacement law per processor
(``lru``: an in-order sweep longer than a level misses it entirely), a processor's own
cap on its path to a shared memory (the DSP's port to the SLC), and a batch padding
that pads the buffers but not the arithmetic."""

from __future__ import annotations

import pytest

from simulator.hardware.cost import CostModel, miss_ratio
from simulator.spec.soc import SocSpec

MiB = 1024 ** 2


def _dsp_soc(soc_dict: dict, **dsp) -> SocSpec:
    """The tiny SoC with an SLC between the DSP's 1 MiB L2 and DRAM."""
    soc_dict["memory"]["slc"] = {"size": "3 MiB", "bandwidth": "60 GB/s"}
    soc_dict["dsp"]["shared_memories"] = ["slc", "dram"]
    soc_dict["dsp"].update(dsp)
    return SocSpec.model_validate(soc_dict)


def _traffic(soc: SocSpec, nbytes: float, **args) -> dict[str, float]:
    """Bytes each level serves for an element-wise kernel over ``nbytes`` in and out."""
    cost = CostModel(soc).cost("dsp", 1, op="relu", pass_="fwd", precision="int8",
                               flops=nbytes, bytes_in=nbytes, bytes_out=nbytes,
                               weight_bytes=0.0, **args)
    return dict(cost.level_bytes)


def test_miss_ratio_laws():
    assert miss_ratio(2 * MiB, MiB) == pytest.approx(0.5)
    assert miss_ratio(2 * MiB, MiB, "lru") == 1.0
    assert miss_ratio(MiB, MiB, "lru") == 0.0


@pytest.mark.parametrize("replacement, dram_share", [("random", 1 - 3 / 4), ("lru", 1.0)])
def test_a_sweep_longer_than_the_slc_misses_it_by_the_law(tiny_soc_dict, replacement,
                                                          dram_share):
    soc = _dsp_soc(tiny_soc_dict, replacement=replacement)
    traffic = _traffic(soc, 2 * MiB)  # 4 MiB working set: over the L2 and the SLC
    assert traffic["dram"] == pytest.approx(4 * MiB * dram_share)


def test_a_working_set_the_slc_holds_stops_there(tiny_soc_dict):
    soc = _dsp_soc(tiny_soc_dict, replacement="lru")
    traffic = _traffic(soc, 1 * MiB)  # 2 MiB: misses the 1 MiB L2, fits the 3 MiB SLC
    assert traffic["slc"] == pytest.approx(2 * MiB)
    assert traffic["dram"] == 0.0


def test_the_processor_caps_its_own_path_to_a_shared_memory(tiny_soc_dict):
    fast = _dsp_soc(tiny_soc_dict, replacement="lru")
    slow = _dsp_soc(tiny_soc_dict, replacement="lru", memory_bandwidth={"slc": "1 GB/s"})
    args = dict(op="relu", pass_="fwd", precision="int8", flops=1.0, bytes_in=MiB,
                bytes_out=MiB, weight_bytes=0.0)
    assert CostModel(slow).cost("dsp", 1, **args).fixed == pytest.approx(2 * MiB / 1e9)
    assert CostModel(fast).cost("dsp", 1, **args).fixed == pytest.approx(2 * MiB / 60e9)


@pytest.mark.parametrize("cap, message", [({"dram": "1 GB/s"}, "dram_bandwidth"),
                                          ({"l3": "1 GB/s"}, "not one of shared_memories")])
def test_a_cap_must_name_a_shared_memory_other_than_dram(tiny_soc_dict, cap, message):
    with pytest.raises(ValueError, match=message):
        _dsp_soc(tiny_soc_dict, memory_bandwidth=cap)


@pytest.mark.parametrize("levels, ok", [(["l2"], True), (["dram"], True), (["l9"], False)])
def test_a_library_stalls_only_on_levels_the_processor_has(tiny_soc_dict, levels, ok):
    libraries = {"nn": {"stall_levels": levels}}
    if ok:
        assert _dsp_soc(tiny_soc_dict, libraries=libraries).dsp.libraries["nn"].stall_levels \
            == levels
    else:
        with pytest.raises(ValueError, match="libraries.nn.stall_levels: no memory level 'l9'"):
            _dsp_soc(tiny_soc_dict, libraries=libraries)


@pytest.mark.parametrize("compute, flops_scale", [(True, 4.0), (False, 1.0)])
def test_batch_padding_pads_the_buffers_and_the_arithmetic_only_if_computed(
        tiny_soc_dict, compute, flops_scale):
    soc = _dsp_soc(tiny_soc_dict, batch_padding={"above": 4, "multiple": 32,
                                                 "compute": compute})
    cost = CostModel(soc).cost("dsp", 1, op="conv", pass_="fwd", precision="int8",
                               flops=1e9, bytes_in=MiB, bytes_out=MiB, weight_bytes=0.0,
                               batch=8, kernel=3, stride=1)
    assert cost.flops == pytest.approx(1e9 * flops_scale)
    # the buffers hold 32 images either way: 8 MiB of activations miss the 1 MiB L2
    assert dict(cost.level_bytes)["slc"] > 4 * MiB
