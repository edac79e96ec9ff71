"""DynO and its baselines: device-server split inference of CNNs.

* ``dyno`` -- DynO's scheduler: picks the split point and the bitwidth of the
  packed transfer at run time, from ordered hard constraints and soft targets;
* ``neurosurgeon`` -- one split minimising latency, unquantised transfers;
* ``device-only`` / ``server-only`` (the latter with a packed or JPEG input);
* ``static-split`` -- a fixed split (runtime breakdown per split point).

Modules: :mod:`.plan` (a configuration as a trace), :mod:`.profiler` (time and
network estimates), :mod:`.scheduler` (constraints and targets),
:mod:`.base` (what the policies share), :mod:`.policies` (the registered
policies), :mod:`.report` (per-run metrics), :mod:`.overhead` (the scheduler's own
decision time). See ``docs/dyno.md``.
"""
