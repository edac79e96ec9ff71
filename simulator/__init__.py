"""socsim: a discrete-event simulator of heterogeneous mobile SoCs for DNN workloads.

Python API (mirrors the CLI)::

    import simulator
    df = simulator.run("experiments/quickstart.yaml")      # one row per run
    soc = simulator.load_soc("snapdragon865")
    trace = simulator.load_trace("my_trace.csv")
"""

import os

# The engine's matrices are tiny (thermal networks of a few nodes): multithreaded
# BLAS only adds overhead, and oversubscribes the cores when sweeps run workers
# in parallel. Set before numpy is first imported; users may override.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .errors import ConfigError  # noqa: E402

# ``load_soc`` and ``load_trace`` are imported on first use (PEP 562): their
# modules pull in pydantic and pandas (~1 s), which ``socsim --help`` and a
# sweep's parent process do not need.
_LAZY = {"load_soc": ".library", "load_trace": ".trace"}

__version__ = "0.1.0"


def run(experiment, overrides=None, out=None, workers=1, **options):
    """Run an experiment (a path, or a mapping) and return its results table.

    Args:
        experiment: path to an experiment YAML, or the experiment as a mapping.
        overrides: ``{dotted.path: value}`` applied before expansion (like ``--set``).
        out: output folder; nothing is written when None.
        workers: parallel worker processes.
        **options: passed to :func:`simulator.runner.run_experiment`.

    Returns:
        pandas.DataFrame with one row per run and repeat.
    """
    from .runner import run_experiment

    return run_experiment(experiment, overrides=overrides, out=out, workers=workers,
                          **options).results


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # later lookups skip this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ConfigError", "load_soc", "load_trace", "run", "__version__"]
