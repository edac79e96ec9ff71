"""The plot schema: one figure drawn from a sweep's results, and the figure style.

``plots:`` in an experiment is a list of :class:`PlotSpec`; ``plot_style:``
(and a plot's own ``style:``) is a :class:`PlotStyle`. Everything here is
checked when the experiment is loaded; the values a column takes (``order``)
are checked against the sweep before any run (``simulator.experiment.preflight``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from .base import Strict

# A file or folder name: letters, digits, ``_ . -``, and not only dots (``..``
# would climb out of the results root).
FOLDER_NAME = r"^[A-Za-z0-9_.\-]*[A-Za-z0-9_\-][A-Za-z0-9_.\-]*$"
PLOT_KINDS = ("bar", "line", "box", "timeseries", "heatmap", "pareto")
# rcParams a style may not set: they decide how (and whether) files are written,
# so they would break the byte-identical plots.
_RC_MAX = 1000.0  # sizes, widths, pads: larger ones only exhaust memory when drawn
_RC_FORBIDDEN = ("backend", "interactive", "savefig.", "pdf.", "ps.", "svg.", "webagg.")


class PlotStyle(Strict):
    """Fonts, colours and matplotlib settings of figures.

    ``plot_style:`` applies to every plot of an experiment; a plot's ``style:``
    overrides it key by key (``rc`` entries one by one).

    Attributes:
        font_size: base text size, points (axis labels and titles; ticks and
            legend one step smaller). Default 8.
        font: font family (``serif``, ``DejaVu Sans``, ``Times New Roman``...).
        palette: colours of the hue values, in order (names or ``#rrggbb``).
            Default: the Okabe-Ito colour-blind-safe palette.
        rc: further matplotlib rcParams (``axes.grid: false``), checked against
            matplotlib's own validators.
    """

    font_size: float | None = Field(default=None, gt=0, le=72)
    font: str | None = Field(default=None, min_length=1)
    palette: list[str] | None = Field(default=None, min_length=1)
    rc: dict[str, Any] = Field(default_factory=dict)

    @field_validator("palette")
    @classmethod
    def _colours(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        from matplotlib.colors import is_color_like

        bad = [c for c in value if not isinstance(c, str) or not is_color_like(c)]
        if bad:
            raise ValueError(f"not a colour: {bad[0]!r} (a name like 'tab:blue' or '#0072B2')")
        return value

    @field_validator("rc")
    @classmethod
    def _rc_params(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            return value
        import matplotlib

        validators = matplotlib.rcParams.validate
        for key, setting in value.items():
            if key not in validators:
                raise ValueError(f"unknown matplotlib rcParam {key!r}")
            if key.startswith(_RC_FORBIDDEN):
                raise ValueError(f"rcParam {key!r} is set by socsim (it decides how files "
                                 f"are written)")
            try:
                checked = validators[key](setting)
            except (ValueError, TypeError) as err:
                raise ValueError(f"rc {key}: {err}") from None
            if isinstance(checked, (int, float)) and not isinstance(checked, bool) and not (
                    abs(checked) <= _RC_MAX):
                raise ValueError(f"rc {key}: {setting!r} is beyond any figure (at most "
                                 f"{_RC_MAX:g})")
        return value

    def merged(self, other: PlotStyle | None) -> PlotStyle:
        """This style with ``other``'s given keys on top (``rc`` merged key by key)."""
        if other is None:
            return self
        given = {k: getattr(other, k) for k in other.model_fields_set if k != "rc"}
        return self.model_copy(update={**given, "rc": {**self.rc, **other.rc}})


class PlotSpec(Strict):
    """One figure drawn from a sweep's results (``plots:`` in the experiment).

    Column names are result columns: ``run``, ``repeat``, ``seed``, swept or
    set dotted paths (``workload.batch``), their numeric SI twins
    (``dvfs.frequency_hz``) and metrics (``latency_s``). For ``timeseries``
    plots ``y`` names time series (``temp.*`` globs allowed).

    Attributes:
        kind: bar (mean per x, CI error bars), line (y against x), box
            (distribution per x), timeseries (value against time_s), heatmap
            (z coloured over x by y), pareto (y against x with the Pareto front).
        x: column on the horizontal axis (``time_s`` for timeseries); a bar or box
            plot with several ``y`` columns and no ``x`` puts the columns on x.
        y: column(s) on the vertical axis, or series names for timeseries.
        z: colour value of a heatmap (a metric).
        hue: column whose values get their own colour.
        facet: column whose values get their own panel.
        order: the x categories shown, in this order (bar, box, heatmap, line with
            a categorical x); values not listed are left out. Default: numbers
            and quantities by value, text in the order the sweep lists it.
        hue_order: the hue values shown, in this order (legend and colours).
        facet_order: the facet values shown, in this order (panels).
        logx: logarithmic x axis.
        logy: logarithmic y axis.
        error_bars: 95 % confidence intervals over repeats (bar, line).
        title: figure title.
        name: file stem in ``plots/`` (default ``<index>-<kind>-<y>``).
        width: ``single`` (3.3 in) or ``double`` (7 in) column figure (default:
            single for one panel, double with facets).
        height: figure height, inches (default from the width).
        where: keep only rows whose column equals the value (or is in the list).
        maximize: pareto axes where larger is better (``[y]`` for throughput).
        xlabel: x-axis title (default: from the column, e.g. ``batch``,
            ``frequency (GHz)``, ``latency (ms)``).
        ylabel: y-axis title (default: from the column).
        labels: titles of columns wherever they appear (axes, legend, facet
            panels): ``{workload.batch: batch size, description: method}``.
        legend: ``auto`` (inside a single panel, above facets), ``inside``,
            ``outside`` (right of a single panel, above facets) or ``none``.
        legend_title: the legend's title (default: from the hue column; ``""``: none).
        value_labels: write the values on the bars, line points or heatmap cells:
            ``true`` (3 significant digits) or a Python format spec (``".1f"``).
            Default: heatmaps of up to 64 cells only.
        stacked: bar plots of several ``y`` columns with an ``x``: stack the
            columns in one bar per x (a breakdown) instead of side by side.
        style: this plot's fonts, colours and rcParams (over ``plot_style``).
    """

    kind: Literal["bar", "line", "box", "timeseries", "heatmap", "pareto"]
    x: str | None = None
    y: str | list[str] | None = None
    z: str | None = None
    hue: str | None = None
    facet: str | None = None
    order: list[Any] | None = Field(default=None, min_length=1)
    hue_order: list[Any] | None = Field(default=None, min_length=1)
    facet_order: list[Any] | None = Field(default=None, min_length=1)
    logx: bool = False
    logy: bool = False
    error_bars: bool = True
    title: str | None = None
    name: str | None = Field(default=None, pattern=FOLDER_NAME)
    width: Literal["single", "double"] | None = None
    height: float | None = Field(default=None, gt=0, le=100)
    where: dict[str, Any] = Field(default_factory=dict)
    maximize: list[Literal["x", "y"]] = Field(default_factory=list)
    xlabel: str | None = None
    ylabel: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    legend: Literal["auto", "inside", "outside", "none"] = "auto"
    legend_title: str | None = None
    value_labels: bool | str | None = None
    stacked: bool = False
    style: PlotStyle | None = None

    @model_validator(mode="after")
    def _needs(self) -> PlotSpec:
        needed = {"bar": ("x", "y"), "line": ("x", "y"), "box": ("x", "y"),
                  "timeseries": ("y",), "heatmap": ("x", "y", "z"),
                  "pareto": ("x", "y")}[self.kind]
        if self.kind in ("bar", "box") and len(self.ys()) > 1:
            needed = ("y",)  # the y columns become the x categories
        missing = [k for k in needed if getattr(self, k) in (None, [])]
        if missing:
            raise ValueError(f"a {self.kind} plot needs {' and '.join(map(repr, needed))}; "
                             f"{', '.join(map(repr, missing))} missing")
        if self.kind in ("heatmap", "pareto") and isinstance(self.y, list):
            raise ValueError(f"a {self.kind} plot takes one y column")
        if self.stacked and (self.kind != "bar" or len(self.ys()) < 2 or self.x is None
                             or self.hue is not None):
            raise ValueError("'stacked' needs a bar plot with an x, several y columns and "
                             "no hue (the colours are the y columns; use facet to split)")
        self._check_controls()
        return self

    def _check_controls(self) -> None:
        """order / hue_order / facet_order, labels and value_labels fit this plot."""
        if self.order is not None and (self.kind in ("timeseries", "pareto")
                                       or self.x is None):
            raise ValueError("'order' orders the x categories of a bar, box, line or heatmap "
                             "plot with an x")
        for key, column in (("hue_order", "hue"), ("facet_order", "facet")):
            if getattr(self, key) is not None and getattr(self, column) is None:
                raise ValueError(f"{key!r} needs a {column!r} column")
        for key in ("order", "hue_order", "facet_order"):
            values = [str(v) for v in getattr(self, key) or []]
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                raise ValueError(f"{key!r} lists {', '.join(map(repr, repeated))} twice")
        named = {c for c in (self.x, self.z, self.hue, self.facet, *self.ys()) if c}
        unknown = sorted(set(self.labels) - named)
        if unknown:
            raise ValueError(f"'labels' names {', '.join(map(repr, unknown))}, not a column "
                             f"of this plot ({', '.join(sorted(named))})")
        if self.value_labels not in (None, False) and self.kind not in ("bar", "line",
                                                                         "heatmap"):
            raise ValueError("'value_labels' applies to bar, line and heatmap plots")
        if isinstance(self.value_labels, str):
            try:
                # a label, not a page: '.100000000f' would build 100 MB strings
                ok = len(self.value_labels) <= 20 and len(format(1.5, self.value_labels)) <= 40
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"'value_labels' must be true or a short format spec like "
                                 f"'.2f'; got {self.value_labels!r}")

    def ys(self) -> list[str]:
        """``y`` as a list."""
        return list(self.y) if isinstance(self.y, list) else [self.y] if self.y else []

    def value_format(self) -> str | None:
        """The format spec of value labels (None: none; heatmaps decide by size)."""
        if self.value_labels is True:
            return ".3g"
        return self.value_labels or None

    def file_stem(self, index: int) -> str:
        """File name (without extension) of the figure."""
        if self.name:
            return self.name
        label = "-".join(self.ys()) or "plot"
        safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in label)
        return f"{index:02d}-{self.kind}-{safe}"
