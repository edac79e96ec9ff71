"""The one fitting engine of the project's calibrations and of ``socsim calibrate``.

* :func:`~validation.fitting.engine.least_squares_log`: bounded least squares
  (log-space values by default), deterministic from fixed starts: what every
  study fitter calls;
* :class:`~validation.fitting.engine.Problem`: measured latencies run one operator
  at a time, with identifiability checks, the fit and k-fold cross-validation;
* :mod:`~validation.fitting.params`: fittable SoC parameters named by YAML path;
* :mod:`~validation.fitting.fast`: the vectorised cost model (matches the engine) and
  the engine runs that check it and predict energy.
"""

from validation.fitting.engine import (
    EnergyRow,
    Problem,
    Row,
    folds,
    least_squares_log,
    summarize,
)
from validation.fitting.fast import FastCase, Setting, engine_energy, engine_latency
from validation.fitting.params import Parameter, apply, parse, plain

__all__ = ["EnergyRow", "FastCase", "Parameter", "Problem", "Row", "Setting", "apply",
           "engine_energy", "engine_latency", "folds", "least_squares_log", "parse", "plain",
           "summarize"]
