"""Winograd convolution in the cost model (issue 17, item 3): a processor whose kernel
library runs 3x3 stride-1 convolutions with a Winograd algorithm does ``1 / r`` of their
arithmetic; other shapes, other op kinds and the memory traffic are unchanged."""

from __future__ import annotations

import pytest

from simulator.hardware.cost import CostModel
from simulator.spec.soc import SocSpec


def _cycles(soc_dict: dict, reduction: float, **shape) -> float:
    soc_dict["cpu"]["big"]["winograd_reduction"] = reduction
    model = CostModel(SocSpec.model_validate(soc_dict))
    args = dict(op="conv", pass_="fwd", precision="fp32", flops=1e10, bytes_in=1e3,
                bytes_out=1e3, weight_bytes=1e3, kernel=3, stride=1)
    args.update(shape)
    return model.cost("cpu.big", 1, **args).cycles


def test_winograd_divides_the_arithmetic_of_3x3_stride_1_convolutions(tiny_soc_dict):
    direct = _cycles(tiny_soc_dict, 1.0)
    assert _cycles(tiny_soc_dict, 2.25) == pytest.approx(direct / 2.25, rel=1e-9)


@pytest.mark.parametrize("shape", [dict(stride=2), dict(kernel=1), dict(kernel=5),
                                   dict(op="dwconv")])
def test_other_shapes_and_kinds_stay_direct(tiny_soc_dict, shape):
    assert _cycles(tiny_soc_dict, 2.25, **shape) == pytest.approx(
        _cycles(tiny_soc_dict, 1.0, **shape), rel=1e-12)


def test_memory_bound_convolution_is_unchanged(tiny_soc_dict):
    """A 3x3 convolution with little arithmetic and much traffic: the memory time decides."""
    shape = dict(flops=1.0, bytes_in=1e9, bytes_out=1e9)
    assert _cycles(tiny_soc_dict, 4.0, **shape) == pytest.approx(
        _cycles(tiny_soc_dict, 1.0, **shape), rel=1e-12)


def test_reduction_below_one_is_rejected(tiny_soc_dict):
    tiny_soc_dict["cpu"]["big"]["winograd_reduction"] = 0.5
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        SocSpec.model_validate(tiny_soc_dict)
