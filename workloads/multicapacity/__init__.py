"""NestDNN multi-capacity models: app profiles as data, descendant switching.

* :mod:`.profile` -- the profile files (``nestdnn.yaml``): per app the
  architecture and its descendants (capacity, accuracy); FLOPs and memory from
  the traces;
* :mod:`.latency` -- descendant latencies from simulating them on a SoC;
* :mod:`.switching` -- page-in/page-out traffic of descendant switches;
* :mod:`.derive` -- how the capacities were fitted to the paper's sizes;
* :mod:`.zoo` -- the ``multicapacity`` zoo model (one descendant as a workload).

See ``docs/nestdnn_flexdnn.md``.
"""
