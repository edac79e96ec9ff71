"""DynO checks: CNN-ISPM packing sizes and times, candidate filter, scheduler cost.

Fitted figures (``python -m validation.dyno.fit_packing``): the lossless and
4-bit sizes and both packing times of ResNet-18's 200 KB ReLU activation, and
VGG19's best packing ratio (sizes: the real codec on tensors drawn from the
activation statistics; the three size figures fitted jointly). Predicted: the
quantisation-only ratios, the ReLU filter's reduction of the split points, the
scheduler's decision time (measured on the host running the simulator, not on a
Jetson).

Client and server latencies (:mod:`validation.dyno.client_refs`, independent public
benchmarks, fitted by ``python -m validation.dyno.fit_clients``): each fitted
per-model latency within 25 %; ncnn's Jetson CPU latencies as lower bounds of the
simulated (PyTorch-like) ones (measured / simulated at most 1).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from simulator.checks import check
from simulator.library import load_soc
from simulator.trace import trace_from_table
from validation.dyno import refs
from validation.dyno.client_refs import REFS as CLIENT_REFS
from validation.dyno.client_refs import ClientRef
from validation.dyno.fit_clients import library, simulated_ms
from validation.dyno.fit_packing import (
    CPU,
    SOC,
    packed,
    reduction_pct,
    reference_tensor,
    vgg19_best_ratio,
)
from validation.micro import run_trace
from workloads.generate import generate_trace
from workloads.packing.activations import draw, tensor_shape
from workloads.packing.bitshuffle import bitshuffle
from workloads.packing.codec import LOSSLESS
from workloads.packing.isquant import isquant
from workloads.packing.kernels import pack_rows
from workloads.splits.cuts import candidate_splits, split_points

GROUP = "dyno"
RELU = f"{refs.SOURCE}, 200 KB ReLU activation of ResNet-18"


def _engine_packing_ms(bits: int) -> float:
    """Packing time (ms) of the reference tensor through the engine on one Carmel core."""
    tensor = reference_tensor()
    rows = pack_rows(tensor.layer, tensor.elements, bits, packed(tensor, bits))
    for i, row in enumerate(rows):
        row.update(id=i, deps=str(i - 1) if i else "")
    result = run_trace(SOC, trace_from_table(pd.DataFrame(rows)),
                       {"name": "single", "processor": CPU, "cores": 1})
    return float(result.kernels["duration_s"].sum() * 1e3)


@check("dyno.pack.relu200k.lossless_reduction", reference=refs.LOSSLESS_REDUCTION_PCT,
       unit="%", tolerance_pct=refs.LOSSLESS_REDUCTION_TOL_PCT,
       source=RELU + ", lossless packing (fitted)", group=GROUP,
       status="calibration")  # the ReLU sparsity level
def _lossless_size() -> float:
    return reduction_pct(reference_tensor(), LOSSLESS)


@check("dyno.pack.relu200k.isquant4_reduction", reference=refs.ISQUANT4_REDUCTION_PCT,
       unit="%", tolerance_pct=refs.ISQUANT4_REDUCTION_TOL_PCT, group=GROUP,
       status="calibration", source=RELU + ", 4-bit ISQuant ('up to 95 %'; fitted jointly)")
def _isquant4_size() -> float:
    return reduction_pct(reference_tensor(), 4)


@check("dyno.pack.relu200k.lossless_time", reference=refs.LOSSLESS_TIME_MS, unit="ms",
       tolerance_pct=0.0, kind="max", group=GROUP, status="calibration",
       source=RELU + ", lossless packing 'in under 0.1 ms' (fitted, Jetson CPU)")
def _lossless_time() -> float:
    return _engine_packing_ms(LOSSLESS)


@check("dyno.pack.relu200k.isquant4_time", reference=refs.ISQUANT4_TIME_MS, unit="ms",
       tolerance_pct=0.0, kind="max", group=GROUP, status="calibration",
       source=RELU + ", 4-bit packing 'in under 0.32 ms' (fitted, Jetson CPU)")
def _isquant4_time() -> float:
    return _engine_packing_ms(4)


def _quantisation_only(bits: int) -> float:
    """FP32 size over ISQuant + bit shuffle size (before LZ4), real codec."""
    from validation.dyno.fit_packing import _profile

    tensor = reference_tensor()
    channels, side = tensor_shape(tensor.elements, tensor.channels)
    x, _, _ = draw(_profile(refs.RELU_MODEL).tensor_stats(tensor), channels, side,
                   np.random.default_rng(0))
    values, _, _ = isquant(x, bits)
    return x.size * 4 / len(bitshuffle(values, bits))


for _bits, _ratio in refs.QUANT_ONLY_RATIO.items():
    check(f"dyno.pack.quantisation_only.{_bits}bit", reference=_ratio, unit="x",
          tolerance_pct=2.0, group=GROUP, status="prediction",
          source=f"{refs.SOURCE}, quantisation alone 4-10.6x smaller than FP32"
          )(lambda b=_bits: _quantisation_only(b))


@check("dyno.pack.vgg19_best_ratio", reference=refs.VGG19_MAX_RATIO, unit="x",
       tolerance_pct=refs.VGG19_MAX_RATIO_TOL_PCT, group=GROUP, status="calibration",
       source=f"{refs.SOURCE}, whole-pipeline ratios reach 60x (VGG19 ReLU layers; "
              "fitted jointly)")
def _vgg19_ratio() -> float:
    return vgg19_best_ratio()


@check("dyno.candidates.relu_filter_reduction", reference=refs.RELU_FILTER_REDUCTION_PCT,
       unit="%", tolerance_pct=25.0, group=GROUP, status="prediction",
       source=f"{refs.SOURCE}, the ReLU-only filter removes ~81 % of the split points "
              "(mean over its four CNNs; ours cut between kernels, DynO between modules)")
def _relu_filter() -> float:
    removed = []
    for model in refs.DYNO_MODELS:
        trace = generate_trace(model)
        removed.append(1 - len(candidate_splits(trace)) / len(split_points(trace)))
    return float(np.mean(removed) * 100)


@lru_cache(maxsize=1)
def _decision_ms() -> np.ndarray:
    """Per CNN, the median of 10 identical decisions (ms): the scheduler's cost without
    the host's hiccups (one slow timing of forty made the maximum flaky)."""
    from validation.dyno.overhead import decision_times

    return np.array([np.median(decision_times(model, 10)) * 1e3
                     for model in refs.DYNO_MODELS])


@check("dyno.scheduler.max_ms", reference=refs.SCHEDULER_MAX_MS, unit="ms",
       tolerance_pct=0.0, kind="max", group=GROUP, status="prediction",
       deterministic=False,  # wall time on this host: never cached
       source=f"{refs.SOURCE}, scheduler cost at most 14 ms on the Jetson CPU (simulated: "
              "wall time on this host, median decision of each of four CNNs)")
def _scheduler_max() -> float:
    return float(_decision_ms().max())


@check("dyno.scheduler.geomean_ms", reference=refs.SCHEDULER_GEOMEAN_MS, unit="ms",
       tolerance_pct=0.0, kind="max", group=GROUP, status="prediction",
       deterministic=False,  # wall time on this host: never cached
       source=f"{refs.SOURCE}, scheduler cost 11 ms geometric mean on the Jetson CPU "
              "(simulated: wall time on this host, median decision per CNN)")
def _scheduler_geomean() -> float:
    return float(np.exp(np.log(_decision_ms()).mean()))


def _engine_latency_ms(ref: ClientRef) -> float:
    """``ref``'s forward pass through the engine on its processor (ms); a latency
    measured on another host (``ref.host``) is the kernel-cost sum on that host's
    hardware (:func:`validation.dyno.fit_clients.simulated_ms`): no SoC file
    describes that machine."""
    if ref.host:
        return simulated_ms(ref)
    trace = generate_trace(ref.model, batch=ref.batch, input_size=ref.input_size,
                           width=ref.width)
    if ref.precision != "fp32":
        trace = trace.with_precision(ref.precision)
    policy = {"name": "single", "processor": ref.processor}
    lib = library(load_soc(ref.soc), ref.processor)  # as fitted (fit_clients.library)
    if lib:
        policy["library"] = lib
    if ref.units:
        policy["cores"] = ref.units
    result = run_trace(ref.soc, trace, policy)
    return float(result.metrics["latency_s"] * 1e3)


for _ref in CLIENT_REFS:
    if _ref.lower_bound:
        check(f"dyno.client.{_ref.key}.bound", reference=1.0, unit="x", tolerance_pct=0.0,
              kind="max", group=GROUP, status="prediction",
              source=f"{_ref.source}: {_ref.latency_ms} ms, a lower bound ({_ref.note}); "
                     "value = measured / simulated"
              )(lambda r=_ref: r.latency_ms / _engine_latency_ms(r))
    else:  # fitted ones are calibration; the others, kept out of the fit, predictions
        check(f"dyno.client.{_ref.key}", reference=_ref.latency_ms, unit="ms",
              tolerance_pct=25.0, group=GROUP,
              status="calibration" if _ref.fit else "prediction",
              source=f"{_ref.source} ("
              + ("fitted, python -m validation.dyno.fit_clients" if _ref.fit else "not fitted")
              + ")" + (f"; {_ref.note}" if _ref.note else "")
              )(lambda r=_ref: _engine_latency_ms(r))
