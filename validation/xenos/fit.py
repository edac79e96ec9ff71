"""Fit the TMS320C6678 board to Xenos' horizontal-optimisation range.

The calibration figure: horizontal optimisation (the DSP-aware operator split)
alone cuts inference time by 17.9-43.9 % against Vanilla over the seven
benchmark models. Two physically meaningful, otherwise unknown numbers are
fitted, by least squares on the log ratio of the simulated smallest and
largest reduction to 17.9 and 43.9 %:

* the Vanilla (operator-centric) library's efficiency on the MAC-bound kernels
  (``conv``, ``deconv``, ``matmul``, ``fc``, ``lstm``: one value, the fraction
  of the 16 FP32 FLOP/cycle peak its compiled loops reach; the processor's
  table, which the ``xenos`` library overrides for these kernels);
* the sustained fraction of the DDR3-1600 bandwidth (``memory.dram.efficiency``).

Xenos' own MAC kernels are not fitted: they run at the rate of TI's C66x
DSPLIB GEMM (the ``xenos`` library in ``socs/tms320c6678.yaml``: the SP
kernel's inner loop at peak, 12 MAC slots per output as TI's measured DP
kernel), which anchors the board's absolute time scale.

Without vertical optimisation every feature map goes through DDR3 between
operators (the trace's ``spill``, :mod:`policies.xenos.linking`), in Vanilla
and in HO alike, so the DDR3 rate weighs on both ends of the range: the
smallest cuts are the memory-bound ShuffleNet's and SqueezeNet's (they gain
less the slower DDR3 is) and the compute-bound CenterNet's (it gains what the
Vanilla kernels' lower rate and stalls cost), the largest LSTM's and
ResNet-18's, and the fit balances them (0.605 / 0.773 from 0.6 / 0.45, 30
Nelder-Mead iterations: HO 16.5-52.3 %). Nelder-Mead from near the optimum, at
most 30 iterations.

The clock, peaks, caches, MSMC and the libraries' memory overlap stay at the
facts and estimates of ``socs/tms320c6678.yaml``. Everything else (the
vertical optimisation, d-Xenos) is a prediction.

Run: ``python -m validation.xenos.fit [--fit]``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.optimize import minimize

from simulator.engine.simulation import simulate
from simulator.library import load_soc
from simulator.spec.experiment import ExperimentSpec
from validation.xenos import refs

MAC_KERNELS = ("conv", "deconv", "matmul", "fc", "lstm")
CONFIGS = {"vanilla": (False, False), "HO": (True, False), "HO+VO": (True, True)}


def latency_s(model: str, config: str, soc_spec=None, soc: str = refs.SOC) -> float:
    """One inference of ``model`` on board ``soc`` under a Xenos configuration (on the
    board's multi-unit processor, :data:`refs.PROCESSOR`)."""
    horizontal, vertical = CONFIGS[config]
    spec = ExperimentSpec.model_validate({
        "name": "xenos", "soc": soc, "workload": {"model": model},
        "policy": {"name": "xenos", "horizontal": horizontal, "vertical": vertical,
                   "processor": refs.PROCESSOR[soc]},
        "outputs": {"timeline": False, "kernels": False, "timeseries": False}})
    return simulate(spec, soc=soc_spec).metrics["latency_s"]


def reductions(soc_spec=None, first: str = "vanilla", second: str = "HO",
               soc: str = refs.SOC) -> list[float]:
    """Per model, the % of ``first``'s time that ``second`` saves on board ``soc``."""
    return [100.0 * (1.0 - latency_s(m, second, soc_spec, soc)
                     / latency_s(m, first, soc_spec, soc))
            for m in refs.MODELS]


def with_parameters(mac_efficiency: float, dram_efficiency: float):
    """The committed board with the two fitted numbers replaced."""
    soc = load_soc(refs.SOC)
    efficiency = dict(soc.dsp.efficiency)
    efficiency.update(dict.fromkeys(MAC_KERNELS, mac_efficiency))
    memory = dict(soc.memory)
    memory["dram"] = memory["dram"].model_copy(update={"efficiency": dram_efficiency})
    return soc.model_copy(update={"dsp": soc.dsp.model_copy(update={"efficiency": efficiency}),
                                  "memory": memory})


def objective(x: np.ndarray) -> float:
    mac, dram = (1.0 / (1.0 + math.exp(-v)) for v in x)  # both in (0, 1)
    red = reductions(with_parameters(mac, dram))
    low, high = min(red), max(red)
    if low <= 0:
        return 1e3
    return (math.log(low / refs.HO_REDUCTION_PCT[0]) ** 2
            + math.log(high / refs.HO_REDUCTION_PCT[1]) ** 2)


def fit(start: tuple[float, float] = (0.605, 0.773)) -> tuple[float, float]:
    """Nelder-Mead from ``start`` (deterministic); returns (MAC efficiency, DRAM efficiency)."""
    x0 = np.array([math.log(v / (1 - v)) for v in start])
    result = minimize(objective, x0, method="Nelder-Mead",
                      options={"xatol": 1e-3, "fatol": 1e-5, "maxiter": 30})
    return tuple(1.0 / (1.0 + math.exp(-v)) for v in result.x)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit the two numbers")
    args = parser.parse_args(argv)
    soc = None
    if args.fit:
        mac, dram = fit()
        print(f"fitted: MAC-kernel efficiency {mac:.3f}, DRAM efficiency {dram:.3f}")
        soc = with_parameters(mac, dram)
    ho = reductions(soc)
    vo = reductions(soc, "HO", "HO+VO")
    print(f"{'model':15s} {'HO vs vanilla':>14s} {'VO vs HO':>10s}")
    for model, h, v in zip(refs.MODELS, ho, vo):
        print(f"{model:15s} {h:13.1f}% {v:9.1f}%")
    print(f"HO range {min(ho):.1f}-{max(ho):.1f} % (paper {refs.HO_REDUCTION_PCT[0]}-"
          f"{refs.HO_REDUCTION_PCT[1]} %); VO range {min(vo):.1f}-{max(vo):.1f} %")


if __name__ == "__main__":
    main()
