"""Predict MNN training of larger CNNs on the Snapdragon 855 (nothing here is fitted to them).

AlexNet, GoogLeNet, SqueezeNet and MobileNetV2, batches 1, 8 and 16, MNN on the
four big cores (policy ``mnn-fp32``, pool ``big4``), at the default governor and
at 1.7088 GHz: the set-ups of the LeNet calibration rows
(:mod:`validation.training`). Inputs are 224x224 ImageNet-size images with the
models' own class counts (MobileNetV2: MNN's demo model, 1001 classes);
AlexNet, GoogLeNet and SqueezeNet are the zoo's paper definitions (MNN's
repository has no demo model for them). Step time is the mean of the measured
iterations; energy is per step above the idle phone.

Run: ``python -m validation.training.predict`` (prints a Markdown table).
"""

from __future__ import annotations

from simulator.engine.simulation import simulate
from simulator.library import load_soc
from simulator.spec.experiment import ExperimentSpec
from validation import training

MODELS = {"alexnet": {}, "googlenet": {}, "squeezenet1_0": {}, "mobilenet_v2_mnn": {}}
BATCHES = (1, 8, 16)
SETUPS = {"default": training.SETUPS["mi9"], "1.7088 GHz": training.SETUPS["meizu-1708"]}
WARMUP, MEASURED = 2, 3


def predict(model: str, batch: int, setup: str) -> tuple[float, float]:
    """(seconds, joules above idle) of one step."""
    soc = load_soc(training.SOC)
    exp = ExperimentSpec.model_validate({
        "name": f"{model}-{batch}", "soc": training.SOC,
        "workload": {"model": model, "mode": "training", "batch": batch,
                     "iterations": WARMUP + MEASURED, **MODELS[model]},
        "policy": {"name": training.POLICY, "cpu": "big4"}, "dvfs": SETUPS[setup],
        "outputs": {"timeline": False, "kernels": True, "timeseries": False}, "seed": 0})
    result = simulate(exp, soc=soc)
    spans = result.kernels.groupby("iteration").agg(start=("start_s", "min"),
                                                    end=("end_s", "max"))
    seconds = float((spans["end"] - spans["start"]).iloc[WARMUP:].mean())
    joules = result.metrics["energy_per_iteration_j"]
    return seconds, joules - training.idle_power(soc) * seconds


def main() -> None:
    print("| model | batch | default: step (ms) | default: energy (J) "
          "| 1.7088 GHz: step (ms) | 1.7088 GHz: energy (J) |")
    print("|---|---|---|---|---|---|")
    for model in MODELS:
        for batch in BATCHES:
            cells = []
            for setup in SETUPS:
                seconds, joules = predict(model, batch, setup)
                cells += [f"{seconds * 1e3:.0f}", f"{joules:.3f}"]
            print(f"| {model} | {batch} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
