"""The SD865 thermal case: sustained FP32 training on the four big cores.

Mandheling's MNN-FP32 VGG-16 (CIFAR-10, batch 64) training on the Xiaomi 10
heats the device from 29 °C to about 68 °C in about 2 minutes while the
big-core frequency cap falls from 2.8 to about 1.3 GHz. We simulate the same
load (4 threads over the prime and gold clusters, schedutil, trip governor on)
from 29 °C and report the time the big-core junction first reaches 68 °C and
the gold cluster's thermal cap averaged over the following minute.
"""

from __future__ import annotations

from functools import lru_cache

from simulator.checks import check
from simulator.engine.simulation import simulate
from simulator.spec.experiment import ExperimentSpec
from simulator.spec.soc import SocSpec
from validation.mandheling import refs

HORIZON_S = 240.0


ENGINE_POLICY = {"name": "single", "processor": ["cpu.prime", "cpu.gold"], "cores": 4}
VGG16 = {"model": "vgg16", "mode": "training", "batch": 64, "input_size": 32,
         "num_classes": 10}


def thermal_case(soc: SocSpec | None = None, policy: dict | None = None,
                 workload: dict | None = None) -> tuple[float, float, float]:
    """(seconds to reach 68 °C, mean gold cap in GHz over the next 60 s, peak °C).

    Args:
        soc: a SoC description replacing ``snapdragon865`` (fitting).
        policy: the training policy (default: 4 threads over the big cores).
        workload: the training workload (default: VGG-16, CIFAR-10, batch 64).
    """
    exp = ExperimentSpec.model_validate({
        "name": "sd865-thermal", "soc": "snapdragon865",
        "workload": {**(workload or VGG16), "iterations": 10_000},
        "policy": policy or ENGINE_POLICY,
        "thermal": {"initial": f"{refs.THERMAL_START_C} C"},
        "time_limit": f"{HORIZON_S} s",
        "outputs": {"sample_period": "0.5 s", "timeline": False, "kernels": False}})
    result = simulate(exp, soc=soc)
    series = result.timeseries.pivot_table(index="time_s", columns="name", values="value")
    temp = series["temp.cpu_big"]
    hot = temp[temp >= refs.THERMAL_PEAK_C]
    if hot.empty:
        return float("inf"), float(series["cap.cpu.gold"].iloc[-1] / 1e9), float(temp.max())
    reached = float(hot.index[0])
    cap = series["cap.cpu.gold"]
    after = cap[(cap.index >= reached) & (cap.index <= reached + 60.0)]
    return reached, float(after.mean() / 1e9), float(temp.max())


@lru_cache(maxsize=1)
def _case() -> tuple[float, float, float]:
    return thermal_case()


@check("sd865.thermal.time_to_68c", reference=refs.THERMAL_TIME_S, unit="s",
       tolerance_pct=25.0, source=refs.SOURCE + ", MNN-FP32 VGG-16 training thermal case",
       group="engine", status="calibration")  # validation.engine.fit_thermal
def _time_to_peak() -> float:
    return _case()[0]


@check("sd865.thermal.big_core_cap", reference=refs.THERMAL_FINAL_GHZ, unit="GHz",
       tolerance_pct=25.0, source=refs.SOURCE + ", MNN-FP32 VGG-16 training thermal case",
       group="engine", status="calibration")
def _final_cap() -> float:
    return _case()[1]
