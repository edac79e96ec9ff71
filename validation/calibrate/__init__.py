"""``socsim calibrate``: a researcher's own measurements -> a calibrated SoC description.

Modules: :mod:`.measurements` (the format), :mod:`.importers` (mobile-ml-benchmark
CSVs, TFLite ``benchmark_model`` output), :mod:`.candidates` (the default
parameters), :mod:`.command` (the command, registered under the ``socsim.commands``
entry point), :mod:`.yamlout` (the fitted YAML with provenance). The fitting
itself is :mod:`validation.fitting`. Tutorial: ``docs/calibrate.md``.
"""
