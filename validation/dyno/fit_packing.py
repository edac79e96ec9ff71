"""Fit the CNN-ISPM activation statistics and packing times to DynO's packing figures.

Sizes: the real codec (ISQuant + bit shuffle + LZ4) on tensors drawn from the
per-layer activation statistics (:mod:`workloads.packing.activations`). The
sparsity levels per model are sourced estimates (``profiles.yaml``); three shape
parameters shared by every model are fitted jointly, by least squares on the log
of the packed size, to all three packing figures of the notes at once
(:mod:`validation.dyno.refs`), each error in units of its check's tolerance:

* ResNet-18's ~200 KB ReLU activation loses 30 % to lossless packing;
* ... and up to 95 % to 4-bit ISQuant + shuffle + LZ4;
* VGG19's ReLU layers reach a whole-pipeline ratio of 60x (the best of its ReLU
  tensors at 3-8 bits).

The parameters: ``correlation`` (spatial correlation length, pixels), ``scale_spread``
(log-sd of the per-channel scale) and ``dead_share`` (share of zeros from dead
channels), on a grid (``GRID``), then on a finer grid around its best point. The quantisation-only ratios (4-10.6x) do not depend
on them and are predictions.

Times, then, with those sizes: the Jetson Carmel's ``int8`` efficiency of
``bitshuffle`` and ``compress`` (one value): lossless packing takes 0.1 ms; its
``quantize`` efficiency: 4-bit packing takes 0.32 ms (DynO's bounds, read as
equalities).

Run: ``python -m validation.dyno.fit_packing`` (prints the grid's best and the
figures; about 5 minutes on one core).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from scipy.optimize import brentq

from simulator.hardware.cost import CostModel
from simulator.library import load_soc
from validation.dyno import refs
from workloads.generate import generate_trace
from workloads.packing.codec import LOSSLESS
from workloads.packing.kernels import pack_rows
from workloads.splits.cuts import CutTensor, split_points
from workloads.splits.profile import SplitProfile

SOC = "jetson-agx-xavier"
CPU = "cpu.carmel"
VGG19_BITS = range(3, 9)
# the fitted shape parameters and their grid
GRID = {"correlation": (0.5, 1.0, 2.0, 3.0),
        "scale_spread": (0.25, 0.5, 0.75, 1.0),
        "dead_share": (0.0, 0.25, 0.5)}


def reference_tensor() -> CutTensor:
    """The ~200 KB ReLU activation of ResNet-18 the figures are about."""
    for point in split_points(generate_trace(refs.RELU_MODEL)):
        for tensor in point.tensors:
            if tensor.layer == refs.RELU_LAYER:
                return tensor
    raise LookupError(f"{refs.RELU_LAYER} not found in {refs.RELU_MODEL}")


@lru_cache(maxsize=4)
def _profile(model: str) -> SplitProfile:
    return SplitProfile(generate_trace(model), model)


def _with(model: str, params: dict | None) -> SplitProfile:
    """``model``'s profile with trial shape parameters (the profile defaults if None)."""
    profile = _profile(model)
    if params:
        fresh = SplitProfile(profile.trace, model)
        fresh.stats = profile.stats.model_copy(update=params)
        return fresh
    return profile


def packed(tensor: CutTensor, bits: int, params: dict | None = None) -> float:
    """Packed bytes of ResNet-18's reference tensor (or any of its tensors)."""
    return _with(refs.RELU_MODEL, params).tensor_bytes(tensor, bits)


def reduction_pct(tensor: CutTensor, bits: int, params: dict | None = None) -> float:
    """Size removed by packing ``tensor`` (of ResNet-18) at ``bits`` (%)."""
    return 100.0 * (1.0 - packed(tensor, bits, params) / tensor.nbytes)


def vgg19_best_ratio(params: dict | None = None) -> float:
    """The best FP32 / packed ratio over VGG19's ReLU tensors at 3-8 bits."""
    profile = _with("vgg19", params)
    return max(tensor.nbytes / profile.tensor_bytes(tensor, bits)
               for split in profile.candidates for tensor in split.tensors if tensor.relu
               for bits in VGG19_BITS)


def figures(params: dict | None = None) -> dict[str, float]:
    """The three packing figures the shape parameters are fitted to."""
    tensor = reference_tensor()
    return {"lossless_reduction_pct": reduction_pct(tensor, LOSSLESS, params),
            "isquant4_reduction_pct": reduction_pct(tensor, 4, params),
            "vgg19_best_ratio": vgg19_best_ratio(params)}


def misfit(values: dict[str, float]) -> float:
    """Sum over the three figures of the squared error, each in units of its check's
    tolerance (how closely the notes state it)."""
    pairs = ((values["lossless_reduction_pct"], refs.LOSSLESS_REDUCTION_PCT,
              refs.LOSSLESS_REDUCTION_TOL_PCT),
             (values["isquant4_reduction_pct"], refs.ISQUANT4_REDUCTION_PCT,
              refs.ISQUANT4_REDUCTION_TOL_PCT),
             (values["vgg19_best_ratio"], refs.VGG19_MAX_RATIO, refs.VGG19_MAX_RATIO_TOL_PCT))
    return float(sum(((sim / ref - 1) * 100 / tol) ** 2 for sim, ref, tol in pairs))


def _search(grid: dict, best=None):
    for combo in itertools.product(*grid.values()):
        params = dict(zip(grid, combo))
        values = figures(params)
        score = misfit(values)
        print(params, {k: round(v, 2) for k, v in values.items()}, round(score, 4),
              flush=True)
        if best is None or score < best[0]:
            best = (score, params, values)
    return best


def _finer(grid: dict, params: dict) -> dict:
    """Half steps around ``params`` on ``grid``."""
    out = {}
    for name, values in grid.items():
        i = values.index(params[name])
        lo = (values[i - 1] + values[i]) / 2 if i > 0 else values[i]
        hi = (values[i] + values[i + 1]) / 2 if i + 1 < len(values) else values[i]
        out[name] = tuple(sorted({round(lo, 3), values[i], round(hi, 3)}))
    return out


def fit_shape() -> tuple[dict, dict]:
    """The point with the least misfit (coarse grid, then half steps around its best),
    and its figures."""
    best = _search(GRID)
    best = _search(_finer(GRID, best[1]), best)
    return best[1], best[2]


def packing_ms(tensor: CutTensor, bits: int, soc=None) -> float:
    """Time (ms) of ``tensor``'s packing kernels on one Carmel core at its top OPP."""
    soc = soc or load_soc(SOC)
    model = CostModel(soc)
    freq = soc.processors()[CPU].opps[-1].frequency
    rows = pack_rows(tensor.layer, tensor.elements, bits, packed(tensor, bits))
    return sum(model.kernel_cost(CPU, 1, row).duration(freq) for row in rows) * 1e3


def _with_efficiency(soc, quantize: float | None = None, pack: float | None = None):
    cpu = soc.cpu["carmel"]
    table = dict(cpu.efficiency)
    int8 = dict(table.get("int8", {}))
    if quantize is not None:
        table["quantize"] = quantize
    if pack is not None:
        int8.update(bitshuffle=pack, compress=pack)
    table["int8"] = int8
    return soc.model_copy(update={"cpu": {"carmel": cpu.model_copy(
        update={"efficiency": table})}})


def fit_times() -> dict[str, float]:
    """The Carmel's packing efficiencies (with the profile's current sizes)."""
    tensor = reference_tensor()
    soc = load_soc(SOC)
    pack = brentq(lambda e: packing_ms(tensor, LOSSLESS, _with_efficiency(soc, pack=e))
                  - refs.LOSSLESS_TIME_MS, 1e-3, 1.0, xtol=1e-6)
    quantize = brentq(lambda e: packing_ms(tensor, 4, _with_efficiency(soc, e, pack))
                      - refs.ISQUANT4_TIME_MS, 1e-3, 1.0, xtol=1e-6)
    return {"carmel_int8_bitshuffle_compress_efficiency": pack,
            "carmel_quantize_efficiency": quantize}


if __name__ == "__main__":
    import sys

    if "--times-only" not in sys.argv:
        params, values = fit_shape()
        for name, value in {**params, **values}.items():
            print(f"{name:44s} {value:10.4g}")
    for name, value in fit_times().items():
        print(f"{name:44s} {value:10.4g}")
