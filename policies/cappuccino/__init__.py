"""Cappuccino (Motamedi, Fong, Ghiasi; IEEE Embedded Systems Letters 2018) and its baselines.

* ``cappuccino``: RenderScript inference with output-level parallelism across
  the CPU clusters and the GPU, vector code in map-major order, and a per-layer
  choice of exact / relaxed / imprecise arithmetic under an accuracy-loss
  limit (:mod:`.policy`, :mod:`.modes`, :mod:`.vectors`, :mod:`.olp`);
* ``single-thread``: the Java baseline, one scalar thread (:mod:`.baselines`);
* ``cnndroid``: CNNdroid as its public code runs: RenderScript convolutions and
  FC layers (full precision, float4 along channels) wrapped in Java copies, the
  other layers in multithreaded Java (:mod:`.cnndroid`).

How each implementation performs on a processor is data in the SoC file: the
kernel libraries ``renderscript-exact``, ``renderscript-relaxed``,
``renderscript-imprecise`` and ``java`` (see ``socs/snapdragon800.yaml``).
"""
