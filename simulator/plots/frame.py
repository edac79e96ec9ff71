"""From a plot spec and the result tables to the rows and context of a figure.

:func:`prepare` checks the columns a spec names (errors carry the YAML path
``plots[i].<field>``), filters rows and computes what every facet panel must
share: category orders (``order``, ``hue_order``, ``facet_order``), colours per
hue value, axis titles and scales. :func:`simulator.plots.figure.draw_plot`
then lays out the panels, calls the kind's drawer on each and saves PNG + PDF.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..results import param_columns, quantity_columns
from ..spec.experiment import PlotSpec
from .data import (
    apply_where,
    categories,
    fmt,
    is_numeric,
    match_order,
    ordered,
    param_title,
    require,
    scaled,
    series_label,
    si_values,
)
from .style import OKABE_ITO

METRIC = "__metric"


@dataclass
class Context:
    """What all panels of one figure share."""

    x: str
    x_labels: list[str]
    hue_labels: list[str]
    x_numeric: bool = False
    xlabel: str = ""
    ylabel: str = ""
    xfactor: float = 1.0
    yfactor: float = 1.0
    hue_title: str | None = None
    facet: str | None = None
    facet_labels: list[Any] = field(default_factory=lambda: [None])
    facet_title: str = ""
    y_labels: list[str] = field(default_factory=list)
    zrange: tuple[float, float] = (np.nan, np.nan)
    images: list = field(default_factory=list)
    palette: tuple[str, ...] = OKABE_ITO
    value_format: str | None = None

    def colour(self, i: int) -> str:
        """The ``i``-th colour of the palette (cycling)."""
        return self.palette[i % len(self.palette)]


def _labels(series: pd.Series) -> list[str]:
    return list(dict.fromkeys(fmt(v) for v in categories(series.tolist())))


def _metric_frame(spec: PlotSpec, path: str, results: pd.DataFrame) -> pd.DataFrame:
    frame = results
    if "status" in frame.columns:
        frame = frame[frame["status"] == "ok"]
    frame = apply_where(frame, spec.where, path)
    for name in ("x", "hue", "facet", "z"):
        require(frame, getattr(spec, name), f"{path}.{name}")
    ys = spec.ys()
    for y in ys:
        require(frame, y, f"{path}.y")
    if spec.kind == "heatmap":
        return frame.assign(__y=frame[spec.z].astype(float))
    if len(ys) == 1:
        return frame.assign(__y=frame[ys[0]].astype(float))
    if spec.hue and spec.facet:
        raise ConfigError("several y columns use the hue (or facet) for the column name; "
                          "drop hue or facet", path=f"{path}.y")
    keep = [c for c in frame.columns if c not in ys]
    long = frame.melt(id_vars=keep, value_vars=ys, var_name=METRIC, value_name="__y")
    short = dict(zip(ys, short_names(ys), strict=True))
    long[METRIC] = pd.Categorical(long[METRIC].map(short), categories=list(short.values()),
                                   ordered=True)
    return long


def short_names(names: list[str]) -> list[str]:
    """Names without their shared ``_``-separated prefix and suffix.

    ``[energy_cpu.gold_j, energy_gpu_j]`` -> ``[cpu.gold, gpu]``.
    """
    parts = [n.split("_") for n in names]
    if len(parts) < 2:
        return list(names)
    head = 0
    while all(len(p) > head + 1 for p in parts) and len({p[head] for p in parts}) == 1:
        head += 1
    tail = 0
    while (all(len(p) > head + tail + 1 for p in parts)
           and len({p[-1 - tail] for p in parts}) == 1):
        tail += 1
    out = ["_".join(p[head:len(p) - tail]) for p in parts]
    return out if len(set(out)) == len(out) else list(names)


def _series_frame(spec: PlotSpec, path: str, results: pd.DataFrame,
                  timeseries: pd.DataFrame | None) -> pd.DataFrame:
    if timeseries is None or timeseries.empty:
        raise ConfigError("no time series were recorded (outputs.timeseries is off or no "
                          "run completed)", path=path)
    names = [n for n in ordered(timeseries["name"].unique())
             if any(fnmatch.fnmatchcase(str(n), pattern) for pattern in spec.ys())]
    if not names:
        known = ", ".join(map(str, ordered(timeseries["name"].unique())))
        raise ConfigError(f"no time series matches {spec.ys()}; series: {known}",
                          path=f"{path}.y")
    frame = timeseries[timeseries["name"].isin(names)]
    params = results.drop(columns=[c for c in ("status", "error") if c in results.columns])
    extra = [c for c in params.columns if c not in frame.columns or c in ("run", "repeat")]
    frame = frame.merge(params[extra], on=["run", "repeat"], how="left")
    frame = apply_where(frame, spec.where, path)
    for name in ("x", "hue", "facet"):
        require(frame, getattr(spec, name), f"{path}.{name}", "time series")
    return frame.assign(__y=frame["value"].astype(float))


def prepare(spec: PlotSpec, index: int, results: pd.DataFrame,
            timeseries: pd.DataFrame | None) -> tuple[pd.DataFrame, Context]:
    """Rows to plot with helper columns, and the context all panels share.

    Raises:
        ConfigError: a named column is missing, an ``order`` names a value the
            column does not have, or nothing is left to plot.
    """
    path = f"plots[{index}]"
    ys = spec.ys()
    hue, facet = spec.hue, spec.facet
    if spec.kind == "timeseries":
        frame = _series_frame(spec, path, results, timeseries)
        x = spec.x or "time_s"
        require(frame, x, f"{path}.x", "time series")
        if hue is None:
            many_names = frame["name"].nunique() > 1
            hue = "name" if many_names else ("run" if frame["run"].nunique() > 1 else None)
    else:
        frame = _metric_frame(spec, path, results)
        x = spec.x
        if len(ys) > 1 and x is None:
            x = METRIC
        elif len(ys) > 1:
            hue, facet = (hue, METRIC) if hue else (METRIC, facet)
    frame = frame.copy()
    titles = _Titles(spec, results)
    frame["__x"] = _label_column(frame, x, titles)
    frame["__hue"] = _label_column(frame, hue, titles) if hue else ""
    quantity = si_values(frame[x]) if x != METRIC else None
    numeric = is_numeric(frame[x]) or quantity is not None
    x_numeric = numeric and spec.kind in ("line", "pareto", "timeseries")
    frame["__xnum"] = (quantity[1] if quantity else frame[x].astype(float) if numeric
                       else np.nan)
    if spec.kind == "pareto" and not numeric:
        raise ConfigError(f"a pareto plot needs a numeric x; {x!r} is not", path=f"{path}.x")
    if spec.order is not None and x_numeric:
        raise ConfigError(f"x {x!r} is numeric (a line against its values); 'order' applies "
                          f"to categorical x", path=f"{path}.order")

    def labels(column: str, key: str | None = None) -> list[str]:
        if column == METRIC:
            found = [str(c) for c in frame[METRIC].cat.categories]
        elif column == "name" and spec.kind == "timeseries":
            found = [fmt(v) for v in ordered(frame["name"].unique())]  # series: by name
        else:
            found = _labels(frame[titles.source(frame, column)])
        if key and getattr(spec, key) is not None:
            found = match_order(getattr(spec, key), found, column, f"{path}.{key}")
        return found

    ctx = Context(x=x, x_labels=labels(x, "order"),
                  hue_labels=labels(hue, "hue_order") if hue else [""],
                  x_numeric=x_numeric, facet=facet,
                  hue_title=None if hue in (None, METRIC) or not spec.hue else titles(hue),
                  value_format=spec.value_format())
    if spec.legend_title is not None:
        ctx.hue_title = spec.legend_title or None
    if facet:
        frame["__facet"] = _label_column(frame, facet, titles)
        ctx.facet_labels = labels(facet, "facet_order")
        ctx.facet_title = "" if facet == METRIC else titles(facet)
        frame = frame[frame["__facet"].isin(ctx.facet_labels)]
    frame = frame[frame["__x"].isin(ctx.x_labels) & frame["__hue"].isin(ctx.hue_labels)]
    if frame.empty:
        raise ConfigError("no rows left to plot after 'order'", path=path)
    if x_numeric:
        name = x if not quantity else f"{x}_{quantity[0]}"
        ctx.xlabel, ctx.xfactor = scaled(name, frame["__xnum"], spec.xlabel,
                                         titles.name(x))
    else:
        ctx.xlabel = spec.xlabel or ("" if x == METRIC else titles(x))
    values = frame["__y"].to_numpy(dtype=float)
    if spec.kind == "timeseries":
        ctx.ylabel, ctx.yfactor = series_label(frame["name"].unique(), spec.ylabel)
    elif spec.kind == "heatmap":
        frame["__ycat"] = _label_column(frame, spec.y, titles)
        ctx.y_labels = _labels(frame[titles.source(frame, spec.y)])
        ctx.ylabel = spec.ylabel or titles(spec.y)
        _, ctx.yfactor = scaled(spec.z, frame["__y"])
        values = frame["__y"].to_numpy(dtype=float) * ctx.yfactor
        known = values[~np.isnan(values)]  # (a sweep whose runs all lack z: an empty grid)
        ctx.zrange = (float(known.min()), float(known.max())) if known.size else (0.0, 1.0)
    else:
        name = ys[0] if len(ys) == 1 else _common_unit_name(ys)
        ctx.ylabel, ctx.yfactor = scaled(name, values, spec.ylabel, titles.name(name))
    return frame, ctx


class _Titles:
    """Titles of columns: the plot's ``labels``, else a parameter's last path part
    (``workload.batch`` -> ``batch``), else the column name."""

    def __init__(self, spec: PlotSpec, results: pd.DataFrame):
        self.labels = spec.labels
        self.params = set(param_columns(results))
        # numeric twins are titled like their text column: dvfs.frequency_hz -> frequency
        self.twins = {twin: text for text, twin in quantity_columns(results).items()}

    def name(self, column: str) -> str | None:
        """The name before a unit (None: let :func:`scaled` derive it)."""
        if column in self.labels:
            return self.labels[column]
        if column in self.twins:
            return param_title(self.twins[column])
        if column in self.params:
            return param_title(column)
        return None

    def __call__(self, column: str) -> str:
        return self.name(column) or column

    def source(self, frame: pd.DataFrame, column: str) -> str:
        """The column whose values label ``column``'s categories: a numeric twin's
        text column (``1.2 GHz``, not ``1200000000``), else the column itself."""
        text = self.twins.get(column)
        return text if text is not None and text in frame.columns else column


def _label_column(frame: pd.DataFrame, column: str, titles: _Titles) -> pd.Series:
    """Category labels of a column (a numeric twin is labelled by its text column)."""
    return frame[titles.source(frame, column)].map(fmt)


def _common_unit_name(ys: list[str]) -> str:
    """A name for several columns that keeps their shared unit (``energy_j``)."""
    suffixes = {y.rsplit("_", 1)[-1] for y in ys if "_" in y}
    if len(suffixes) != 1:
        return "value"
    heads = {y.split("_", 1)[0] for y in ys}
    head = heads.pop() if len(heads) == 1 else "value"
    return f"{head}_{suffixes.pop()}"
