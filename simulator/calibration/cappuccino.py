"""Fit the Java baseline's interpretation overhead to Cappuccino's Nexus 5 row.

One number is fitted: the overhead factor ``F`` of single-threaded Java over
scalar code, in the ``java`` kernel library of each phone (efficiency =
``renderscript-exact`` efficiency / ``F``). Single-threaded inference is
compute-bound, so its time is proportional to ``F``; the fit is the geometric
mean, over AlexNet, SqueezeNet and GoogLeNet, of measured over simulated time.
Everything else in the Cappuccino experiments is a prediction.

Run: ``python -m simulator.calibration.cappuccino`` (prints the table, the
fitted ``F`` and the ``java`` efficiencies to write in the three SoC files).
"""

from __future__ import annotations

import argparse
import math
from functools import lru_cache

from ..engine.simulation import simulate
from ..library import load_soc
from ..spec.experiment import ExperimentSpec
from ..validation import cappuccino_refs as refs

POLICIES = {"baseline": {"name": "single-thread"},
            "parallel": {"name": "cappuccino", "mode": "exact"},
            "imprecise": {"name": "cappuccino", "mode": "imprecise"}}
PHONES = ("snapdragon800", "snapdragon810", "snapdragon820")


def run(soc: str, model: str, mode: str, soc_spec=None):
    """One inference of ``model`` on ``soc`` in a Cappuccino column (performance
    governor, thermal governor off: the paper's benchmark setting)."""
    spec = ExperimentSpec.model_validate({
        "name": "cappuccino", "soc": soc, "workload": {"model": model},
        "policy": POLICIES[mode], "dvfs": {"governor": "performance"},
        "thermal": {"governor": False},
        "outputs": {"timeline": False, "kernels": False, "timeseries": False}})
    return simulate(spec, soc=soc_spec)


@lru_cache(maxsize=None)
def latency_ms(soc: str, model: str, mode: str) -> float:
    """Simulated latency (ms) with the SoC file as committed."""
    return run(soc, model, mode).metrics["latency_s"] * 1e3


def fit_overhead() -> tuple[float, dict[str, float]]:
    """The overhead factor ``F`` fitted to the Nexus 5 baseline row.

    Returns:
        ``F`` and the committed one's ratio measured / simulated per model.
    """
    soc = load_soc(refs.SOC)
    java = soc.cpu["big"].libraries["java"].efficiency["default"]
    exact = soc.cpu["big"].libraries["renderscript-exact"].efficiency["default"]
    committed = exact / java
    ratios = {model: ms[0] / latency_ms(refs.SOC, model, "baseline")
              for model, ms in refs.NEXUS5_MS.items()}
    scale = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
    return committed * scale, ratios


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    overhead, ratios = fit_overhead()
    print(f"fitted interpretation overhead F = {overhead:.2f} "
          f"(measured/simulated with the committed value: "
          + ", ".join(f"{m} {r:.3f}" for m, r in ratios.items()) + ")")
    for phone in PHONES:
        for name, proc in load_soc(phone).cpu.items():
            exact = proc.libraries["renderscript-exact"].efficiency["default"]
            print(f"  {phone} cpu.{name}: java efficiency = {exact:.4g} / {overhead:.2f} "
                  f"= {exact / overhead:.4g}")
    print(f"\n{'model':15s}" + "".join(f"{m:>22s}" for m in refs.MODES))
    for model, measured in refs.NEXUS5_MS.items():
        cells = []
        for mode, ms in zip(refs.MODES, measured):
            sim = latency_ms(refs.SOC, model, mode)
            cells.append(f"{sim:9.1f}/{ms:9.1f} ms")
        print(f"{model:15s}" + "".join(f"{c:>22s}" for c in cells))


if __name__ == "__main__":
    main()
