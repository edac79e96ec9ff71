"""Paper-style figures declared in an experiment's ``plots:`` list.

Each entry (:class:`~simulator.spec.experiment.PlotSpec`) becomes
``plots/<name>.png`` (200 dpi) and ``plots/<name>.pdf`` in the output folder::

    plots:
      - {kind: bar, x: policy.name, y: latency_s, hue: workload.batch}
      - {kind: pareto, x: latency_s, y: energy_j, hue: policy.name}
      - {kind: timeseries, y: "temp.*", facet: policy.name, width: double}

:func:`draw_plots` draws from in-memory tables (at the end of ``socsim run``);
:func:`replot` redraws from a saved output folder (``socsim plot DIR``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import ConfigError
from ..spec.experiment import PlotSpec, PlotStyle
from .figure import draw_plot
from .kinds import pareto_front


def draw_plots(plots: list[PlotSpec], results: pd.DataFrame,
               timeseries: pd.DataFrame | None, folder: Path,
               style: PlotStyle | None = None, executor=None
               ) -> tuple[list[Path], list[str]]:
    """Draw every plot; a plot that does not fit the data is skipped with a message.

    Args:
        plots: the experiment's plot specs.
        results: the results table (one row per run and repeat).
        timeseries: the long time-series table (``run, repeat, time_s, name, value``).
        folder: where the PNG and PDF files go.
        style: the experiment's ``plot_style`` (each plot's ``style`` goes on top).
        executor: the sweep's local worker pool (an executor whose workers share
            this machine's files); with two plots or more of the results table they
            are drawn by its workers at once, one plot each. A figure costs
            ~0.5-1 s to lay out and save twice (PNG, PDF) and matplotlib ~0.5 s to
            import: most of a study's time after its last run. Time-series plots are
            drawn here (their table, millions of rows in a long study, would be
            copied to a worker). The pool is closed after drawing. None, or any
            other executor: all drawn here, one after the other. The files are the
            same either way.

    Returns:
        the files written (in ``plots`` order) and one-line messages for the plots
        skipped.
    """
    tasks = [(spec, index, results, timeseries if spec.kind == "timeseries" else None,
              folder, style) for index, spec in enumerate(plots)]
    pooled = [task for task in tasks if task[3] is None]
    outcomes = {}
    if len(pooled) > 1 and getattr(executor, "shares_files", False):
        try:
            outcomes = {pooled[position][1]: outcome
                        for position, outcome in executor.map_unordered(_draw, pooled)}
        finally:
            executor.close()
    for task in tasks:
        if task[1] not in outcomes:
            outcomes[task[1]] = _draw(task)
    files: list[Path] = []
    errors: list[str] = []
    for index in range(len(tasks)):
        outcome = outcomes[index]
        if isinstance(outcome, BaseException):  # the worker drawing it died
            errors.append(f"plots[{index}]: {type(outcome).__name__}: {outcome}")
        elif isinstance(outcome, str):
            errors.append(outcome)
        else:
            files += outcome
    return files, errors


def _draw(task: tuple) -> list[Path] | str:
    """One plot of :func:`draw_plots`: its files, or the message why it was skipped
    (a worker's task: picklable in and out)."""
    spec, index, results, timeseries, folder, style = task
    try:
        return draw_plot(spec, index, results, timeseries, folder, style)
    except ConfigError as err:
        return str(err)
    except Exception as exc:  # a drawing bug must not lose the results
        return f"plots[{index}]: {type(exc).__name__}: {exc}"


def replot(results_dir: str | Path, executor=None) -> tuple[list[Path], list[str]]:
    """Redraw the plots of a saved output folder from its ``config.yaml`` and tables
    (drawn by ``executor``'s workers if it is a local pool: :func:`draw_plots`).

    Edit the ``plots:`` list in ``DIR/config.yaml`` to change the figures
    without re-running.

    Raises:
        ConfigError: not an output folder, or an invalid ``plots`` list.
    """
    from ..experiment import check_experiment
    from ..spec.yamlio import read_yaml

    folder = Path(results_dir)
    config = folder / "config.yaml"
    if not config.is_file():
        raise ConfigError("not a socsim output folder (no config.yaml)", file=str(folder))
    spec = check_experiment(read_yaml(config), str(config))
    if (folder / "results.parquet").is_file():
        results = pd.read_parquet(folder / "results.parquet")
    elif (folder / "results.csv").is_file():
        results = pd.read_csv(folder / "results.csv", keep_default_na=False,
                              na_values=[""])
    else:
        raise ConfigError("no results.parquet or results.csv to plot", file=str(folder))
    series = folder / "timeseries.parquet"
    timeseries = pd.read_parquet(series) if series.is_file() else None
    if not spec.plots:
        return [], []
    return draw_plots(spec.plots, results, timeseries, folder / "plots", spec.plot_style,
                      executor)


__all__ = ["PlotSpec", "PlotStyle", "draw_plots", "pareto_front", "replot"]
