"""From a plot spec and the result tables to a saved figure.

:func:`prepare` checks the columns a spec names (errors carry the YAML path
``plots[i].<field>``), filters rows and computes what every facet panel must
share: category orders, colours per hue value, axis scales. :func:`draw_plot`
then lays out the panels, calls the kind's drawer on each and saves PNG + PDF.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..spec.experiment import PlotSpec
from .data import apply_where, fmt, is_numeric, ordered, require, scaled, series_label
from .kinds import DRAWERS
from .style import new_figure, paper_style, save

_METRIC = "__metric"


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
    y_labels: list[str] = field(default_factory=list)
    zrange: tuple[float, float] = (np.nan, np.nan)
    images: list = field(default_factory=list)


def _labels(series: pd.Series) -> list[str]:
    return list(dict.fromkeys(fmt(v) for v in ordered(series.tolist())))


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
    long = frame.melt(id_vars=keep, value_vars=ys, var_name=_METRIC, value_name="__y")
    short = dict(zip(ys, short_names(ys), strict=True))
    long[_METRIC] = pd.Categorical(long[_METRIC].map(short), categories=list(short.values()),
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
            timeseries: pd.DataFrame | None) -> tuple[pd.DataFrame, Context, str | None]:
    """Rows to plot with helper columns, the shared context, and the facet column.

    Raises:
        ConfigError: a named column is missing or nothing is left to plot.
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
            x = _METRIC
        elif len(ys) > 1:
            hue, facet = (hue, _METRIC) if hue else (_METRIC, facet)
    frame = frame.copy()
    frame["__x"] = frame[x].map(fmt)
    frame["__hue"] = frame[hue].map(fmt) if hue else ""
    x_numeric = is_numeric(frame[x]) and spec.kind in ("line", "pareto", "timeseries")
    frame["__xnum"] = frame[x].astype(float) if is_numeric(frame[x]) else np.nan
    if spec.kind == "pareto" and not is_numeric(frame[x]):
        raise ConfigError(f"a pareto plot needs a numeric x; {x!r} is not", path=f"{path}.x")
    def labels(column: str) -> list[str]:
        if column == _METRIC:
            return [str(c) for c in frame[_METRIC].cat.categories]
        return _labels(frame[column])

    ctx = Context(x=x, x_labels=labels(x), hue_labels=labels(hue) if hue else [""],
                  x_numeric=x_numeric,
                  hue_title=None if hue in (None, _METRIC) else hue)
    if x_numeric:
        ctx.xlabel, ctx.xfactor = scaled(x, frame[x], spec.xlabel)
    else:
        ctx.xlabel = spec.xlabel or ("" if x == _METRIC else x)
    values = frame["__y"].to_numpy(dtype=float)
    if spec.kind == "timeseries":
        ctx.ylabel, ctx.yfactor = series_label(frame["name"].unique(), spec.ylabel)
    elif spec.kind == "heatmap":
        frame["__ycat"] = frame[spec.y].map(fmt)
        ctx.y_labels = _labels(frame[spec.y])
        ctx.ylabel = spec.ylabel or spec.y
        _, ctx.yfactor = scaled(spec.z, frame["__y"])
        values = frame["__y"].to_numpy(dtype=float) * ctx.yfactor
        ctx.zrange = (float(np.nanmin(values)), float(np.nanmax(values)))
    else:
        name = ys[0] if len(ys) == 1 else _common_unit_name(ys)
        ctx.ylabel, ctx.yfactor = scaled(name, values, spec.ylabel)
    return frame, ctx, facet


def _common_unit_name(ys: list[str]) -> str:
    """A name for several columns that keeps their shared unit (``energy_j``)."""
    suffixes = {y.rsplit("_", 1)[-1] for y in ys if "_" in y}
    if len(suffixes) != 1:
        return "value"
    heads = {y.split("_", 1)[0] for y in ys}
    head = heads.pop() if len(heads) == 1 else "value"
    return f"{head}_{suffixes.pop()}"


def draw_plot(spec: PlotSpec, index: int, results: pd.DataFrame,
              timeseries: pd.DataFrame | None, folder: Path) -> list[Path]:
    """Draw one declared plot into ``folder`` as PNG and PDF.

    Returns:
        the files written.

    Raises:
        ConfigError: the spec does not fit the results (path ``plots[i]...``).
    """
    frame, ctx, facet = prepare(spec, index, results, timeseries)
    panels = ([str(c) for c in frame[_METRIC].cat.categories] if facet == _METRIC
              else _labels(frame[facet])) if facet else [None]
    if facet:
        frame["__facet"] = frame[facet].map(fmt)
    with paper_style():
        fig, axes = new_figure(len(panels), spec.width, spec.height)
        for i, (ax, panel) in enumerate(zip(axes, panels, strict=True)):
            part = frame if panel is None else frame[frame["__facet"] == panel]
            DRAWERS[spec.kind](ax, part, spec, ctx)
            if facet == _METRIC:
                ax.set_title(panel)
            elif facet:
                ax.set_title(f"{facet.rsplit('.', 1)[-1]} = {panel}")
            ax.set_xlabel(ctx.xlabel)
            if i % _columns(axes) == 0 or spec.kind == "heatmap":
                ax.set_ylabel(ctx.ylabel)
            if spec.logx:
                ax.set_xscale("log")
            if (spec.kind == "line" and ctx.x_numeric and ctx.xfactor == 1.0
                    and len(ctx.x_labels) <= 12):
                _ticks_at_values(ax, frame, ctx)
            if spec.logy and spec.kind != "heatmap":
                ax.set_yscale("log")
        _legend(fig, axes, spec, ctx)
        if spec.title:
            fig.suptitle(spec.title)
        return save(fig, folder, spec.file_stem(index))


def _ticks_at_values(ax, frame: pd.DataFrame, ctx: Context) -> None:
    """Label a numeric x axis at the swept values (readable on log axes too)."""
    from matplotlib.ticker import NullLocator

    values = frame.groupby("__x", observed=True)["__xnum"].first()
    positions = [float(values[label]) * ctx.xfactor for label in ctx.x_labels
                 if label in values.index]
    ax.set_xticks(positions, labels=[label for label in ctx.x_labels if label in values.index])
    ax.xaxis.set_minor_locator(NullLocator())


def _columns(axes: list) -> int:
    grid = axes[0].get_subplotspec().get_gridspec()
    return grid.ncols


def _legend(fig, axes: list, spec: PlotSpec, ctx: Context) -> None:
    if spec.kind == "heatmap":
        if ctx.images:
            label, _ = scaled(spec.z, [ctx.zrange[1] / ctx.yfactor if ctx.yfactor else 0])
            fig.colorbar(ctx.images[0], ax=axes, label=label, shrink=0.9)
        return
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label and not label.startswith("_"):
                handles.setdefault(label, handle)
    if len(handles) < 2 and not (spec.kind == "pareto" and len(handles) == 1
                                 and "Pareto front" not in handles):
        return
    rank = {label: i for i, label in enumerate(ctx.hue_labels)}
    labels = sorted(handles, key=lambda label: rank.get(label, len(rank)))
    items = ([handles[label] for label in labels], labels)
    if len(axes) > 1:
        wide = fig.get_figwidth() > 4
        fig.legend(*items, title=ctx.hue_title, loc="outside upper center",
                   ncols=min(len(handles), 4 if wide else 2))
    elif len(handles) > 5:
        axes[0].legend(*items, title=ctx.hue_title, loc="upper left",
                       bbox_to_anchor=(1.02, 1.0))
    else:
        axes[0].legend(*items, title=ctx.hue_title, loc="best")
