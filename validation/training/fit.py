"""Fit MNN's per-operator cost, its kernel speed and the A76 power of the SD855 to LeNet.

Three parameters of ``socs/snapdragon855.yaml`` (the prime and gold A76 clusters,
``libraries.mnn``), least squares on log(simulated / measured):

1. time (the 9 step times of the three set-ups): ``dispatch_overhead``, MNN's
   per-operator work (graph build, shape inference, session build, allocation:
   what LeNet's step time mostly is), and ``speed``, one factor on the
   efficiencies of MNN's table (transferred from SD888's Table 7 fit, whose
   ratios between forward, error-gradient and weight-gradient kernels are kept):
   how fast MNN's kernels run on LeNet's per-sample work;
2. energy (the 3 energies at 1.7088 GHz): ``power``, one factor on the A76
   clusters' EAS dynamic-power coefficients.

Run ``python -m validation.training.fit`` for the table with the file's values,
``--fit`` to fit and print the values to write back.
"""

from __future__ import annotations

import argparse

import numpy as np

from simulator.library import load_soc
from simulator.spec.soc import SocSpec
from validation import training
from validation.fitting import least_squares_log

CLUSTERS = ("prime", "gold")
LIBRARY = "mnn"


def _scaled(table: dict, factor: float) -> dict:
    return {key: (_scaled(value, factor) if isinstance(value, dict) else value * factor)
            for key, value in table.items()}


def with_parameters(soc: SocSpec, overhead_s: float, speed: float = 1.0,
                    power: float = 1.0) -> SocSpec:
    """``soc`` with the A76 clusters' MNN per-operator cost, MNN efficiencies x
    ``speed`` and dynamic-power coefficient x ``power``."""
    cpu = dict(soc.cpu)
    for name in CLUSTERS:
        spec = cpu[name]
        library = spec.libraries[LIBRARY]
        efficiency = _scaled(library.efficiency, speed)
        library = library.model_copy(update={"dispatch_overhead": overhead_s,
                                             "efficiency": efficiency})
        update = {"libraries": {**spec.libraries, LIBRARY: library}}
        if power != 1.0:
            update["power"] = spec.power.model_copy(update={"ceff": spec.power.ceff * power})
        cpu[name] = spec.model_copy(update=update)
    return soc.model_copy(update={"cpu": cpu})


def rows(soc: SocSpec, energy: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(simulated, measured) step times in ms, or energies in J (1.7088 GHz rows)."""
    data = training.load()
    if energy:
        data = data[data["energy_j"].notna()]
    sim, ref = [], []
    for row in data.itertuples():
        step = training.simulate_step(row.setup, int(row.batch), soc)
        sim.append(step.joules_above_idle if energy else step.seconds * 1e3)
        ref.append(row.energy_j if energy else row.train_ms)
    return np.array(sim), np.array(ref)


def fit() -> dict[str, float]:
    """Fit from the file's values; returns the three parameters."""
    soc = load_soc(training.SOC)
    library = soc.cpu["prime"].libraries[LIBRARY]
    start = [library.dispatch_overhead * 1e6, 1.0]

    def time_residuals(x):
        sim, ref = rows(with_parameters(soc, x[0] * 1e-6, x[1]))
        return np.log(sim / ref)

    time = least_squares_log(time_residuals, start, [0, 0.05], [1000, 2], log=False,
                             diff_step=1e-3, xtol=1e-4)
    overhead_s, speed = time[0] * 1e-6, time[1]

    def energy_residuals(x):
        sim, ref = rows(with_parameters(soc, overhead_s, speed, x[0]), energy=True)
        return np.log(sim / ref)

    energy = least_squares_log(energy_residuals, [1.0], [0.1], [10], log=False,
                               diff_step=1e-3, xtol=1e-4)
    return {"dispatch_overhead_us": overhead_s * 1e6, "speed": speed, "power": energy[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit, then print the table")
    args = parser.parse_args()
    soc = load_soc(training.SOC)
    if args.fit:
        params = fit()
        print("fitted: " + ", ".join(f"{k} = {v:.4g}" for k, v in params.items()))
        base = soc.cpu["prime"].libraries[LIBRARY].efficiency
        print("write: mnn dispatch_overhead, efficiencies x speed:",
              {k: (round(v * params["speed"], 3) if not isinstance(v, dict) else
                   {i: round(j * params["speed"], 4) for i, j in v.items()})
               for k, v in base.items()})
        print("       ceff: prime", round(soc.cpu["prime"].power.ceff * 1e9 * params["power"], 3),
              "nF, gold", round(soc.cpu["gold"].power.ceff * 1e9 * params["power"], 3), "nF")
        soc = with_parameters(soc, params["dispatch_overhead_us"] * 1e-6, params["speed"],
                              params["power"])
    print(f"{'setup':12s} {'batch':>5s} {'time ms sim/meas':>22s} {'energy mJ sim/meas':>24s}")
    for row in training.load().itertuples():
        step = training.simulate_step(row.setup, int(row.batch), soc)
        line = (f"{row.setup:12s} {row.batch:5d} {step.seconds * 1e3:7.2f} / {row.train_ms:6.2f}"
                f" ({100 * (step.seconds * 1e3 / row.train_ms - 1):+4.0f}%)")
        if not np.isnan(row.energy_j):
            line += (f" {step.joules_above_idle * 1e3:7.2f} / {row.energy_j * 1e3:6.2f}"
                     f" ({100 * (step.joules_above_idle / row.energy_j - 1):+4.0f}%)")
        print(line)


if __name__ == "__main__":
    main()
