"""The one fitting engine of the project's calibrations and of ``socsim calibrate``.

* :func:`~validation.fitting.engine.least_squares_log`: bounded least squares
  (log-space values by default), deterministic from fixed starts: what every
  study fitter calls;
* :class:`~validation.fitting.engine.Problem`: measured latencies run one operator
  at a time, with identifiability checks, the fit and k-fold cross-validation;
* :mod:`~validation.fitting.params`: fittable SoC parameters named by YAML path;
* :mod:`~validation.fitting.fast`: the vectorised cost model (matches the engine).
"""

from validation.fitting.engine import Problem, Row, folds, least_squares_log, summarize
from validation.fitting.fast import FastCase, Setting
from validation.fitting.params import Parameter, apply, parse, plain

__all__ = ["FastCase", "Parameter", "Problem", "Row", "Setting", "apply", "folds",
           "least_squares_log", "parse", "plain", "summarize"]
