"""Experiments: load a YAML, apply ``--set`` overrides, expand into runs, check them.

An experiment is a base mapping plus an optional ``sweep``; expansion is a
pure function of the raw mapping (no I/O, no randomness outside the given
seeds), so it can be tested on its own and repeated on resume.

Sweep forms (dotted paths address any key)::

    sweep:
      workload.batch: [1, 8, 32]          # grid: product of all lists
      soc: [snapdragon865, snapdragon888]
      zip:                                # lists varying together
        policy.processor: [cpu.gold, cpu.prime]
        policy.cores: [3, 1]
      random:                             # random samples with their own seed
        samples: 20
        seed: 7
        params:
          thermal.initial: {uniform: [25, 35], unit: C}

The points are grid x zip x random, in that nesting order (the last grid
axis varies fastest). Each point is repeated ``repeats`` times with seeds
derived from the experiment seed, the point index and the repeat index.
A ``--set`` on a swept path pins it: the axis leaves the sweep.

:func:`check_runs` then checks the names and files the runs refer to (SoCs,
policies, models, traces), so bad input is reported before anything runs.

Modules: :mod:`.overrides` (dotted paths, ``--set``), :mod:`.sweep` (the sweep
forms, validated once, and their points, counted before they are streamed),
:mod:`.load` (reading and validating an experiment file), :mod:`.expand` (runs,
seeds, resume keys, the run-count limit) and :mod:`.preflight` (the names and files the runs refer to). The schema of one
resolved run is :class:`simulator.spec.experiment.ExperimentSpec` (the core's).
"""

from .expand import MAX_RUNS, RunSpec, check_run_count, config_key, derive_seed, expand
from .load import check_experiment, load_experiment
from .overrides import apply_overrides, parse_set, parse_value, result_columns, set_path
from .preflight import check_plots, check_runs
from .sweep import (
           RESERVED_SWEEP_KEYS,
           Distribution,
           RandomSweep,
           SweepSpec,
           count_points,
           iter_points,
           parse_sweep,
           sweep_points,
)

__all__ = ["MAX_RUNS", "RESERVED_SWEEP_KEYS", "Distribution", "RandomSweep", "RunSpec", "SweepSpec",
           "apply_overrides", "check_experiment", "check_plots", "check_run_count", "check_runs", "config_key",
           "count_points", "derive_seed", "expand", "iter_points", "load_experiment", "parse_set", "parse_sweep", "parse_value",
           "result_columns", "set_path", "sweep_points"]
