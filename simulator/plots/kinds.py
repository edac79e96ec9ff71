"""One drawing function per plot kind, each filling one axes (one facet panel).

A drawer gets the panel's rows with helper columns prepared by
:func:`simulator.plots.frame.prepare`: ``__x`` / ``__hue`` (category labels),
``__xnum`` (numeric x, when x is numeric) and ``__y`` (the plotted value),
plus the shared :class:`~simulator.plots.frame.Context` (category orders and
axis scale factors, equal across panels).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..spec.experiment import PlotSpec
from .data import mean_ci
from .style import marker


def _offsets(count: int, span: float = 0.8) -> tuple[np.ndarray, float]:
    width = span / max(count, 1)
    return (np.arange(count) - (count - 1) / 2) * width, width


def _categorical_x(ax, ctx) -> None:
    ax.set_xticks(range(len(ctx.x_labels)))
    rotate = sum(len(label) for label in ctx.x_labels) > 40
    ax.set_xticklabels(ctx.x_labels, rotation=30 if rotate else 0,
                       ha="right" if rotate else "center")
    ax.grid(False, axis="x")


def bar(ax, frame: pd.DataFrame, spec: PlotSpec, ctx) -> None:
    """Mean of y per x category, one bar per hue (or the hues stacked in one bar
    with ``stacked``), 95 % CI error bars."""
    offsets, width = _offsets(1 if spec.stacked else len(ctx.hue_labels))
    bottom = np.zeros(len(ctx.x_labels))
    for j, hue in enumerate(ctx.hue_labels):
        part = frame[frame["__hue"] == hue]
        stats = [mean_ci(part.loc[part["__x"] == x, "__y"]) for x in ctx.x_labels]
        means = np.array([m for m, _ in stats]) * ctx.yfactor
        errors = np.array([c for _, c in stats]) * ctx.yfactor
        show = spec.error_bars and np.nansum(errors) > 0
        bars = ax.bar(np.arange(len(ctx.x_labels)) + offsets[0 if spec.stacked else j],
                      means, width * 0.92, bottom=bottom if spec.stacked else None,
                      yerr=errors if show else None, color=ctx.colour(j), label=hue,
                      error_kw={"elinewidth": 0.7, "ecolor": "#333333"})
        if spec.stacked:
            bottom = bottom + np.nan_to_num(means)
        elif ctx.value_format:
            ax.bar_label(bars, labels=[value_text(m, ctx.value_format) for m in means],
                         padding=1.5, fontsize="x-small")
    if spec.stacked and ctx.value_format:  # the totals, over the stacks
        ax.bar_label(bars, labels=[value_text(t, ctx.value_format) for t in bottom],
                     padding=1.5, fontsize="x-small")
    _categorical_x(ax, ctx)


def value_text(value: float, spec: str) -> str:
    """A value label (empty for a missing value)."""
    return "" if np.isnan(value) else format(value, spec)


def line(ax, frame: pd.DataFrame, spec: PlotSpec, ctx) -> None:
    """Mean of y against x (numeric or categorical), one line per hue."""
    for j, hue in enumerate(ctx.hue_labels):
        part = frame[frame["__hue"] == hue]
        xs, means, errors = [], [], []
        for i, x in enumerate(ctx.x_labels):
            rows = part[part["__x"] == x]
            if rows.empty:
                continue
            mean, ci = mean_ci(rows["__y"])
            xs.append(float(rows["__xnum"].iloc[0]) * ctx.xfactor if ctx.x_numeric else i)
            means.append(mean * ctx.yfactor)
            errors.append(ci * ctx.yfactor)
        show = spec.error_bars and np.nansum(errors) > 0
        ax.errorbar(xs, means, yerr=errors if show else None, color=ctx.colour(j),
                    marker=marker(j), label=hue, elinewidth=0.7)
        if ctx.value_format:
            for x, mean in zip(xs, means, strict=True):
                ax.annotate(value_text(mean, ctx.value_format), (x, mean),
                            textcoords="offset points", xytext=(0, 3), ha="center",
                            fontsize="x-small", color=ctx.colour(j))
    if not ctx.x_numeric:
        _categorical_x(ax, ctx)


def box(ax, frame: pd.DataFrame, spec: PlotSpec, ctx) -> None:
    """Distribution of y per x category, one box per hue."""
    offsets, width = _offsets(len(ctx.hue_labels))
    for j, hue in enumerate(ctx.hue_labels):
        part = frame[frame["__hue"] == hue]
        data, positions = [], []
        for i, x in enumerate(ctx.x_labels):
            values = part.loc[part["__x"] == x, "__y"].dropna().to_numpy() * ctx.yfactor
            if len(values):
                data.append(values)
                positions.append(i + offsets[j])
        if not data:
            continue
        parts = ax.boxplot(data, positions=positions, widths=width * 0.85, patch_artist=True,
                           manage_ticks=False, medianprops={"color": "black", "linewidth": 0.8},
                           flierprops={"markersize": 2, "markeredgewidth": 0.5},
                           boxprops={"linewidth": 0.6}, whiskerprops={"linewidth": 0.6},
                           capprops={"linewidth": 0.6})
        for patch in parts["boxes"]:
            patch.set_facecolor(ctx.colour(j))
            patch.set_alpha(0.75)
        parts["boxes"][0].set_label(hue)
    _categorical_x(ax, ctx)


def timeseries(ax, frame: pd.DataFrame, spec: PlotSpec, ctx) -> None:
    """Each run's series against time, coloured by hue."""
    for (_, _, _), rows in frame.groupby(["run", "repeat", "name"], sort=True):
        hue = rows["__hue"].iloc[0]
        j = ctx.hue_labels.index(hue)
        rows = rows.sort_values(ctx.x)
        ax.plot(rows[ctx.x].to_numpy() * ctx.xfactor, rows["__y"].to_numpy() * ctx.yfactor,
                color=ctx.colour(j), label=hue, linewidth=0.9)


def heatmap(ax, frame: pd.DataFrame, spec: PlotSpec, ctx) -> None:
    """Mean z over the x (columns) by y (rows) grid."""
    grid = np.full((len(ctx.y_labels), len(ctx.x_labels)), np.nan)
    for r, y in enumerate(ctx.y_labels):
        for c, x in enumerate(ctx.x_labels):
            cell = frame.loc[(frame["__x"] == x) & (frame["__ycat"] == y), "__y"]
            if len(cell):
                grid[r, c] = mean_ci(cell)[0] * ctx.yfactor
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis",
                      vmin=ctx.zrange[0], vmax=ctx.zrange[1])
    if spec.value_labels or (spec.value_labels is None and grid.size <= 64):
        middle = np.nanmean(ctx.zrange)
        for (r, c), value in np.ndenumerate(grid):
            if not np.isnan(value):
                ax.text(c, r, value_text(value, ctx.value_format or ".3g"), ha="center",
                        va="center", fontsize=6, color="white" if value < middle else "black")
    ax.set_xticks(range(len(ctx.x_labels)))
    ax.set_xticklabels(ctx.x_labels)
    ax.set_yticks(range(len(ctx.y_labels)))
    ax.set_yticklabels(ctx.y_labels)
    ax.grid(False)
    ctx.images.append(image)


def pareto_front(x: np.ndarray, y: np.ndarray, maximize_x: bool = False,
                 maximize_y: bool = False) -> np.ndarray:
    """Indices of the non-dominated points, ordered along x.

    Args:
        x: first objective per point.
        y: second objective per point.
        maximize_x: larger x is better (else smaller).
        maximize_y: larger y is better (else smaller).
    """
    sx = -x if maximize_x else x
    sy = -y if maximize_y else y
    order = np.lexsort((sy, sx))
    front, best = [], np.inf
    for i in order:
        if sy[i] < best:
            front.append(i)
            best = sy[i]
    return np.array(front, dtype=int)


def pareto(ax, frame: pd.DataFrame, spec: PlotSpec, ctx) -> None:
    """y against x per sweep point (mean over repeats), with the Pareto front."""
    points = frame.groupby("run", sort=True).agg(x=("__xnum", "mean"), y=("__y", "mean"),
                                                 hue=("__hue", "first"))
    points = points.dropna(subset=["x", "y"])
    xs = points["x"].to_numpy() * ctx.xfactor
    ys = points["y"].to_numpy() * ctx.yfactor
    for j, hue in enumerate(ctx.hue_labels):
        mask = (points["hue"] == hue).to_numpy()
        if mask.any():
            ax.scatter(xs[mask], ys[mask], s=12, color=ctx.colour(j), marker=marker(j),
                       label=hue, zorder=3, linewidths=0)
    if len(xs):
        front = pareto_front(xs, ys, "x" in spec.maximize, "y" in spec.maximize)
        ax.plot(xs[front], ys[front], color="black", linewidth=0.8, linestyle="--",
                drawstyle="steps-post" if len(front) > 1 else "default",
                label="Pareto front", zorder=2)
        ax.scatter(xs[front], ys[front], s=22, facecolors="none", edgecolors="black",
                   linewidths=0.7, zorder=4)


DRAWERS: dict[str, Callable] = {"bar": bar, "line": line, "box": box,
                                "timeseries": timeseries, "heatmap": heatmap,
                                "pareto": pareto}
