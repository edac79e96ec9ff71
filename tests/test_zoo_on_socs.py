"""Every zoo model generates, round-trips through a file and runs on every SoC."""

from __future__ import annotations

import math
from functools import lru_cache

import pytest

from simulator.library import load_soc, soc_names
from simulator.trace import load_trace, save_trace
from validation.micro import run_trace
from workloads.generate import generate_trace
from workloads.zoo import MODELS

SMALL_INPUT = {"lenet5": 32, "alexnet": 63, "alexnet_caffe": 63,
               "googlenet_caffe": 64}  # inception_v3 at 32: its CIFAR stem


@lru_cache(maxsize=None)
def _trace(model: str, mode: str, precision: str = "fp32"):
    # small inputs keep the suite fast; MAC counts at full size are in test_zoo.py
    size = SMALL_INPUT.get(model, 32)
    return generate_trace(model, mode=mode, batch=2, input_size=size, precision=precision)


def _precision(spec) -> str:
    """FP32, or the precision of a device that has no FP32 datapath (the ZCU102's INT8
    accelerator)."""
    supported = {p for proc in spec.processors().values() for p in proc.ops_per_cycle}
    return "fp32" if "fp32" in supported else sorted(supported)[0]


@pytest.mark.parametrize("model", MODELS.names())
def test_model_round_trips_through_csv(tmp_path, model):
    trace = _trace(model, "training")
    path = tmp_path / f"{model}.csv"
    save_trace(trace, path)
    again = load_trace(path)
    assert len(again) == len(trace)
    assert again.total_flops == pytest.approx(trace.total_flops)


@pytest.mark.parametrize("soc", soc_names())
@pytest.mark.parametrize("model", MODELS.names())
def test_model_runs_on_soc(soc, model):
    spec = load_soc(soc)
    gpu = spec.gpu is not None
    policy = {"name": "single", "processor": "gpu"} if gpu else {"name": "heft"}
    result = run_trace(soc, _trace(model, "inference", _precision(spec)), policy)
    assert result.metrics["latency_s"] > 0 and math.isfinite(result.metrics["energy_j"])


@pytest.mark.parametrize("soc", soc_names())
def test_training_runs_on_every_cluster(soc):
    trace = _trace("resnet18", "training")
    for name in load_soc(soc).cpu:
        result = run_trace(soc, trace, {"name": "single", "processor": f"cpu.{name}"})
        assert result.metrics["completed"] == 1.0
