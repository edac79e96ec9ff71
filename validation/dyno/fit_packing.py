"""Fit the CNN-ISPM size and time models to DynO's packing figures.

Three parameters, each from one figure about the ~200 KB ReLU activation of
ResNet-18 (the layer3 block output; :mod:`validation.dyno.refs`):

* ``sparsity_first`` of ``workloads/splits/profiles.yaml`` (ReLU sparsity at the
  first layer; the slope to the last layer stays 0.35): lossless packing
  removes 30 %;
* the Jetson Carmel's ``int8`` efficiency of ``bitshuffle`` and ``compress``
  (one value): lossless packing takes 0.1 ms;
* its ``quantize`` efficiency: 4-bit ISQuant + bit shuffle + LZ4 take 0.32 ms.

DynO gives the times as upper bounds ("under"); they are read as equalities.
The 4-bit size (up to 95 % smaller) is not fitted: it validates the model.

Run: ``python -m validation.dyno.fit_packing``.
"""

from __future__ import annotations

from scipy.optimize import brentq

from simulator.hardware.cost import CostModel
from simulator.library import load_soc
from validation.dyno import refs
from workloads.generate import generate_trace
from workloads.packing.codec import LOSSLESS
from workloads.packing.kernels import pack_rows
from workloads.packing.model import TensorStats, packed_bytes
from workloads.splits.accuracy import model_defaults
from workloads.splits.cuts import CutTensor, split_points

SOC = "jetson-agx-xavier"
CPU = "cpu.carmel"
SLOPE = 0.35


def reference_tensor() -> CutTensor:
    """The ~200 KB ReLU activation of ResNet-18 the figures are about."""
    for point in split_points(generate_trace(refs.RELU_MODEL)):
        for tensor in point.tensors:
            if tensor.layer == refs.RELU_LAYER:
                return tensor
    raise LookupError(f"{refs.RELU_LAYER} not found in {refs.RELU_MODEL}")


def tensor_stats(tensor: CutTensor, sparsity_first: float | None = None) -> TensorStats:
    """The size model's view of ``tensor`` with the profile defaults (or a trial level)."""
    _, stats = model_defaults(refs.RELU_MODEL)
    first = stats.sparsity_first if sparsity_first is None else sparsity_first
    last = first + (stats.sparsity_last - stats.sparsity_first
                    if sparsity_first is None else SLOPE)
    return TensorStats(tensor.elements, first + (last - first) * tensor.depth, True,
                       stats.spread)


def reduction_pct(tensor: CutTensor, bits: int, stats: TensorStats | None = None) -> float:
    """Size removed by packing ``tensor`` at ``bits`` (%)."""
    stats = stats or tensor_stats(tensor)
    return 100.0 * (1.0 - packed_bytes(stats, bits) / tensor.nbytes)


def packing_ms(tensor: CutTensor, bits: int, soc=None) -> float:
    """Time (ms) of ``tensor``'s packing kernels on one Carmel core at its top OPP."""
    soc = soc or load_soc(SOC)
    model = CostModel(soc)
    freq = soc.processors()[CPU].opps[-1].frequency
    rows = pack_rows(tensor.layer, tensor.elements, bits,
                     packed_bytes(tensor_stats(tensor), bits))
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


def fit() -> dict[str, float]:
    """The three fitted values."""
    tensor = reference_tensor()
    first = brentq(lambda z: reduction_pct(tensor, LOSSLESS, tensor_stats(tensor, z))
                   - refs.LOSSLESS_REDUCTION_PCT, 0.05, 0.6, xtol=1e-4)
    soc = load_soc(SOC)
    pack = brentq(lambda e: packing_ms(tensor, LOSSLESS, _with_efficiency(soc, pack=e))
                  - refs.LOSSLESS_TIME_MS, 1e-3, 1.0, xtol=1e-6)
    quantize = brentq(lambda e: packing_ms(tensor, 4, _with_efficiency(soc, e, pack))
                      - refs.ISQUANT4_TIME_MS, 1e-3, 1.0, xtol=1e-6)
    return {"sparsity_first": first, "sparsity_last": first + SLOPE,
            "carmel_int8_bitshuffle_compress_efficiency": pack,
            "carmel_quantize_efficiency": quantize,
            "predicted_isquant4_reduction_pct":
                reduction_pct(tensor, 4, tensor_stats(tensor, first))}


if __name__ == "__main__":
    for name, value in fit().items():
        print(f"{name:44s} {value:10.4g}")
