"""Split profiles of CNNs for device-server split inference (DynO, Neurosurgeon).

* :mod:`.cuts` -- the tensors crossing each cut of a model's kernel DAG and the
  ReLU-only candidate filter;
* :mod:`.accuracy` -- accuracy drop per <split, bitwidth>, as data
  (``profiles.yaml`` rules per model, or a user CSV table);
* :mod:`.profile` -- a model's split profile: candidates, per-tensor
  statistics and packed sizes per bitwidth (size model or real activation dumps).

See ``docs/dyno.md``.
"""
