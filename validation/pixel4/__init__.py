"""Fit the Snapdragon 855 (Pixel 4) to the mobile-ml-benchmark calibration set.

Data: "A Benchmark for ML Inference Latency on Mobile Devices" (Li, Paolieri,
Golubchik, EdgeSys 2024; github.com/qed-usc/mobile-ml-benchmark): TFLite
end-to-end latency of 30 CNNs on a Pixel 4 (the calibration subset; 72 more
are held out), read from ``$SOCSIM_DATA_DIR/mobile-ml-benchmark`` (default
``<repo>/../shared/data``). Nothing from the data is copied into the repository.

Each model's operator list is imported with the project's importer and run with
the ``single`` policy, exactly as the held-out checks will do. The checks cover
eight target configurations (:data:`TARGETS`): FP32 on 1 prime A76 (``1large``),
1 and 3 gold A76 (``1med``, ``3med``), 1 and 4 A55 (``1small``, ``4small``) and
the Adreno 640 through the TFLite GPU delegate (``gpu``); INT8 on ``1large`` and
``4small``. The fit uses every measured configuration (:func:`fit_configs`:
the targets and :data:`EXTRAS`), which separates thread scaling from efficiency.

Fitted end to end (:data:`PARAMS`, 25 numbers, all per processor and precision,
none per model):

* compute efficiency of ``conv``, ``dwconv`` and ``group_conv``, FP32 and INT8,
  for the A76 (prime and gold share the core and its table) and the A55;
* per core, the per-operator fixed cost (``dispatch_overhead``: A76 in core
  cycles, so prime and gold get the same cycles at their own clocks) and
  ``gemm_half_channels`` (narrow convolutions reach less of the peak),
  ``group_half_channels`` (grouped convolutions with few channels per group reach
  less of it) and ``im2col_bytes_per_cycle`` (the single-threaded im2col copy of
  kxk and strided convolutions);
* ``parallel_efficiency`` of the gold and silver clusters, per precision;
* the GPU delegate's per-transfer cost (``offload.switch``).

Fitted first, to the per-op GPU latencies (:data:`GPU_PARAMS`,
:func:`fit_gpu_ops`): the Adreno 640's ``conv``, ``group_conv`` and
``global_pool`` efficiencies and its kernel launch cost.

Everything else (peaks, clocks, caches, memory bandwidths) stays at the
hardware facts. Grouped convolutions are ``group_conv`` kernels, which TFLite
runs single-threaded (``serial_ops``), so the five models that have them are
in every fit.

The fit minimises the sum of squared log errors with ``scipy.optimize.least_squares``
from fixed starting values, so it is deterministic. The study runs on the project's fitting engine (:mod:`validation.fitting`): its
vectorised copy of the cost model (:class:`~validation.fitting.FastCase`) is used
while fitting; it reproduces the engine's latency exactly (``single`` runs one
operator at a time, plus the GPU's host I/O), which :func:`check_fast_model`
verifies; the parameters are the engine's (named by YAML path, :data:`PARAMS`
gives each its study name, start and unit); :func:`cross_validate` is a seeded
5-fold cross-validation over the models (:func:`validation.fitting.folds`).
Reported tables come from the engine.

Run::

    python -m validation.pixel4 [--data DIR]         # table (engine)
    python -m validation.pixel4 --fit [--cv 5]       # fit, 5-fold CV, table
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
from validation.pixel4.fit import (
                   Fitter,
                   check_fast_model,
                   cross_validate,
                   engine_table,
                   error_table,
                   fit_configs,
                   fit_gpu_ops,
                   summarize,
)
from validation.pixel4.params import (
                   DERIVED,
                   GPU_PARAMS,
                   PARAM_NAMES,
                   PARAMS,
                   Base,
                   Param,
                   apply_params,
                   load_base,
                   read_params,
)

__all__ = ["CONFIGS", "DERIVED", "EXTRAS", "GPU_PARAMS", "PARAMS", "PARAM_NAMES", "SOC", "SOURCE",
           "TARGETS", "TARGET_PCT", "Base", "Calibration", "Config", "DataMissing", "Fitter",
           "Param", "apply_params", "check_fast_model", "cross_validate", "data_dir",
           "engine_table", "error_table", "fit_configs", "fit_gpu_ops", "load", "load_base",
           "read_params", "summarize"]
