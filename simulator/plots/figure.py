"""Laying out a figure: facet panels, axis titles and ticks, the legend, saving.

:func:`draw_plot` takes the rows and context of
:func:`simulator.plots.frame.prepare`, draws every panel with the kind's
drawer (:mod:`simulator.plots.kinds`) under the plot's style, and writes
PNG + PDF.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..spec.experiment import PlotSpec, PlotStyle
from .data import fmt, scaled
from .frame import METRIC, Context, prepare, short_names
from .kinds import DRAWERS
from .style import new_figure, paper_style, save, style_palette

__all__ = ["Context", "draw_plot", "prepare", "short_names"]


def draw_plot(spec: PlotSpec, index: int, results: pd.DataFrame,
              timeseries: pd.DataFrame | None, folder: Path,
              style: PlotStyle | None = None) -> list[Path]:
    """Draw one declared plot into ``folder`` as PNG and PDF.

    Args:
        spec: the plot.
        index: its position in ``plots`` (for error paths and the default name).
        results: the results table.
        timeseries: the long time-series table (None: none recorded).
        folder: where the files go.
        style: the experiment's ``plot_style`` (the plot's ``style`` goes on top).

    Returns:
        the files written.

    Raises:
        ConfigError: the spec does not fit the results (path ``plots[i]...``).
    """
    frame, ctx = prepare(spec, index, results, timeseries)
    look = (style or PlotStyle()).merged(spec.style)
    ctx.palette = style_palette(look)
    facet = ctx.facet
    panels = ctx.facet_labels
    with paper_style(look):
        fig, axes = new_figure(len(panels), spec.width, spec.height)
        for i, (ax, panel) in enumerate(zip(axes, panels, strict=True)):
            part = frame if panel is None else frame[frame["__facet"] == panel]
            DRAWERS[spec.kind](ax, part, spec, ctx)
            if facet == METRIC:
                ax.set_title(panel)
            elif facet:
                ax.set_title(f"{ctx.facet_title} = {panel}")
            ax.set_xlabel(ctx.xlabel)
            if i % _columns(axes) == 0 or spec.kind == "heatmap":
                ax.set_ylabel(ctx.ylabel)
            if spec.logx:
                ax.set_xscale("log")
            if spec.kind == "line" and ctx.x_numeric and len(ctx.x_labels) <= 12:
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

    values = sorted(set(frame["__xnum"].dropna().astype(float)))
    positions = [value * ctx.xfactor for value in values]
    ax.set_xticks(positions, labels=[fmt(p) for p in positions])
    ax.xaxis.set_minor_locator(NullLocator())


def _columns(axes: list) -> int:
    grid = axes[0].get_subplotspec().get_gridspec()
    return grid.ncols


def _legend(fig, axes: list, spec: PlotSpec, ctx: Context) -> None:
    if spec.kind == "heatmap":
        if ctx.images:
            label, _ = scaled(spec.z, [ctx.zrange[1] / ctx.yfactor if ctx.yfactor else 0],
                              name=spec.labels.get(spec.z))
            fig.colorbar(ctx.images[0], ax=axes, label=label, shrink=0.9)
        return
    if spec.legend == "none":
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
    title = ctx.hue_title
    if spec.legend == "inside":
        axes[0].legend(*items, title=title, loc="best")
    elif len(axes) > 1:
        wide = fig.get_figwidth() > 4
        fig.legend(*items, title=title, loc="outside upper center",
                   ncols=min(len(handles), 4 if wide else 2))
    elif len(handles) > 5 or spec.legend == "outside":
        axes[0].legend(*items, title=title, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    else:
        axes[0].legend(*items, title=title, loc="best")
