"""FlexDNN early-exit workloads: models with exits, frame difficulty, insertion plans.

* :mod:`.model` -- the ``early_exit`` zoo model (a backbone with candidate exits);
* :mod:`.difficulty` -- per-frame difficulty of a video and the confidence
  rule that decides where a frame exits;
* :mod:`.plan` -- exit costs, exit quality and FlexDNN's insertion-plan greedy.

See ``docs/nestdnn_flexdnn.md``.
"""
