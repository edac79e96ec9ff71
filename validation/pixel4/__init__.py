"""Fit the Snapdragon 855 (Pixel 4) to the mobile-ml-benchmark calibration set.

Data: "A Benchmark for ML Inference Latency on Mobile Devices" (Li, Paolieri,
Golubchik, EdgeSys 2024; github.com/qed-usc/mobile-ml-benchmark): TFLite
end-to-end latency of 30 CNNs on a Pixel 4 (the calibration subset; 72 more
are held out), read from ``$SOCSIM_DATA_DIR/mobile-ml-benchmark`` (default
``<repo>/../shared/data``). Nothing from the data is copied into the repository.

Each model's operator list is imported with the project's importer and run with
the ``single`` policy, exactly as the held-out checks will do, on eight target
configurations (:data:`TARGETS`): FP32 on 1 prime A76 (``1large``), 1 and 3 gold
A76 (``1med``, ``3med``), 1 and 4 A55 (``1small``, ``4small``) and the Adreno 640
through the TFLite GPU delegate (``gpu``); INT8 on ``1large`` and ``4small``.

Fitted parameters (:data:`PARAMS`, 14 numbers, all per processor and precision,
none per model):

* compute efficiency of ``conv`` and ``dwconv``, FP32 and INT8, for the A76
  (prime and gold share the core and its table) and the A55, and of ``conv``
  for the GPU;
* the per-operator fixed cost (``dispatch_overhead``) of the CPU cores: A76 in
  core cycles (so prime and gold get the same cycles at their own clocks), A55
  in seconds;
* the GPU delegate's per-transfer cost (``offload.switch``: input upload and
  output download, once each per inference);
* ``parallel_efficiency`` of the gold and silver clusters.

Everything else (peaks, clocks, caches, memory bandwidths) stays at the
hardware facts. The GPU ``dwconv`` efficiency is not identifiable from
end-to-end latency (the cost model makes those layers memory-bound on the GPU);
it is read off the per-operator GPU latencies instead (:func:`fit_gpu_ops`).

Models with grouped convolutions (a ``conv`` row with ``groups > 1``) are left
out of the CPU fits: TFLite runs them with an unoptimised single-threaded
kernel (about 2 GFLOP/s on an A76 whatever the thread count) that the efficiency
tables, keyed by op kind, cannot tell from an ordinary convolution. They stay in
the GPU fit and in every reported table.

The fit minimises the sum of squared log errors with ``scipy.optimize.least_squares``
from fixed starting values, so it is deterministic. A fast vectorised copy of
the cost model (:class:`FastCase`) is used while fitting; it reproduces the
engine's latency exactly (``single`` runs one operator at a time, plus the GPU's
host I/O), which :func:`check_fast_model` verifies. Reported tables come from
the engine.

Run::

    python -m validation.pixel4 [--data DIR]         # table (engine)
    python -m validation.pixel4 --fit [--cv 10]      # fit, CV, table
"""

from __future__ import annotations

from validation.pixel4.data import (
                   CONFIGS,
                   EXTRAS,
                   SOC,
                   SOURCE,
                   TARGET_PCT,
                   TARGETS,
                   Calibration,
                   Config,
                   DataMissing,
                   data_dir,
                   load,
)
from validation.pixel4.fast_model import FastCase
from validation.pixel4.fit import (
                   Fitter,
                   check_fast_model,
                   cross_validate,
                   engine_latency,
                   engine_table,
                   error_table,
                   fit_gpu_ops,
                   summarize,
)
from validation.pixel4.params import DERIVED, PARAM_NAMES, PARAMS, Param, apply_params, read_params

__all__ = ["CONFIGS", "DERIVED", "EXTRAS", "PARAMS", "PARAM_NAMES", "SOC", "SOURCE", "TARGETS",
           "TARGET_PCT", "Calibration", "Config", "DataMissing", "FastCase", "Fitter", "Param",
           "apply_params", "check_fast_model", "cross_validate", "data_dir", "engine_latency",
           "engine_table", "error_table", "fit_gpu_ops", "load", "read_params",
           "summarize"]
