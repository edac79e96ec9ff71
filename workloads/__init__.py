"""Workloads: kernel traces and the generators and importers that produce them.

* :mod:`workloads.graph` -- layer graphs (shapes, parameters, MACs);
* :mod:`workloads.zoo` -- the model zoo, registered by name in ``MODELS``;
* :mod:`workloads.generate` -- graph -> inference / training kernel trace;
* :mod:`workloads.mixed_precision` -- mixed-precision training algorithms
  (YAML in ``workloads/algorithms/``) and their translation of traces;
* :mod:`workloads.importers` -- outside formats -> traces.

See ``docs/workloads.md``.
"""
