"""The studies: reference measurements, the checks and fits against them, report tools.

One sub-package per system, each holding its references (``refs``), its
scoreboard checks (``checks``), the fits of SoC parameters to its calibration
data (``fit*``, each runnable with ``python -m``) and its report tools:

* :mod:`validation.engine` -- the SD865 DSP op table, graph preparation, the
  offload switch, the SD865 thermal case (fits ``fit_dsp``, ``fit_thermal``);
* :mod:`validation.pixel4` -- TFLite inference on the Pixel 4 (mobile-ml-benchmark);
* :mod:`validation.mandheling` -- Table 7, the MNN fits, the per-batch report;
* :mod:`validation.dyno` -- packing, split points, the scheduler's own cost;
* :mod:`validation.nestdnn` -- lifecycle, switching, the capacity derivation;
* :mod:`validation.cappuccino`, :mod:`validation.xenos` -- their calibrated cells.

:mod:`validation.micro` runs single kernels through the engine as the
references were measured. :mod:`validation.checks` is the plugin of the
``checks`` registry (:data:`simulator.checks.CHECKS`): importing it registers
every check, and ``socsim validate`` finds it through the ``socsim.checks``
entry point. (This package imports nothing itself, so that ``python -m`` runs a
fit without importing every check first.) Studies use everything below them;
nothing imports a study.
"""
