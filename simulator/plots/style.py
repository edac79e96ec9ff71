"""Paper style: figure sizes, fonts, the colour-blind-safe palette, saving.

Figures are two-column-paper sized (3.3 in single column, 7 in double), with
8 pt text, the Okabe-Ito palette, and constrained ("tight") layout; an
experiment's ``plot_style`` and a plot's ``style`` change the font, its size,
the palette and any other rcParam (:func:`style_rc`). They are
built as bare :class:`matplotlib.figure.Figure` objects rendered by Agg, so
pyplot's global figure registry is never touched.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..spec.plot import PlotStyle

# Okabe & Ito (2008), "Color Universal Design": distinguishable with all common
# colour-vision deficiencies. Black last: it is also used for Pareto fronts.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
             "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
WIDTH_IN = {"single": 3.3, "double": 7.0}
PANEL_HEIGHT_IN = {"single": 2.3, "double": 2.4}
DPI = 200

RC = {
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "figure.titlesize": 9,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "legend.frameon": False,
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.linewidth": 0.4,
    "grid.alpha": 0.4,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "errorbar.capsize": 2,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "axes.prop_cycle": cycler(color=OKABE_ITO),
    "pdf.fonttype": 42,  # embed TrueType: editable text, accepted by paper systems
    "ps.fonttype": 42,
    "svg.hashsalt": "socsim",
}


def colour(i: int) -> str:
    """The ``i``-th palette colour (cycling)."""
    return OKABE_ITO[i % len(OKABE_ITO)]


def marker(i: int) -> str:
    """The ``i``-th marker (cycling); a second cue besides colour."""
    return MARKERS[i % len(MARKERS)]


# rcParams sized from the base font size (8 pt): labels and titles at the base,
# ticks and legend one step smaller, the figure title one step larger.
_FONT_STEPS = {"font.size": 0, "axes.titlesize": 0, "axes.labelsize": 0, "figure.titlesize": 1,
               "xtick.labelsize": -1, "ytick.labelsize": -1, "legend.fontsize": -1,
               "legend.title_fontsize": -1}


def style_rc(style: PlotStyle | None = None) -> dict:
    """The rcParams of a figure: the paper style with ``style`` applied."""
    rc = dict(RC)
    if style is None:
        return rc
    if style.font_size is not None:
        for key, step in _FONT_STEPS.items():
            rc[key] = style.font_size * (1 + step / 8)
    if style.font is not None:
        rc["font.family"] = style.font
    if style.palette is not None:
        rc["axes.prop_cycle"] = cycler(color=style.palette)
    rc.update(style.rc)
    return rc


def style_palette(style: PlotStyle | None) -> tuple[str, ...]:
    """The hue colours of a figure (the Okabe-Ito palette unless the style gives one)."""
    return tuple(style.palette) if style is not None and style.palette else OKABE_ITO


@contextmanager
def paper_style(style: PlotStyle | None = None) -> Iterator[None]:
    """Apply the paper rcParams (and ``style``) while figures are built and saved
    (restored after)."""
    with matplotlib.rc_context(style_rc(style)):
        yield


def new_figure(panels: int, width: str | None = None, height: float | None = None
               ) -> tuple[Figure, list]:
    """A figure with ``panels`` axes laid out in a grid.

    Args:
        panels: number of axes (facets).
        width: ``single`` or ``double`` column (default: single for one panel,
            double for more).
        height: total height, inches (default: a panel height per grid row).

    Returns:
        the figure and its axes (row-major).
    """
    width = width or ("single" if panels == 1 else "double")
    columns = min(panels, 4 if width == "double" else 2)
    rows = math.ceil(panels / columns)
    size = (WIDTH_IN[width], height or PANEL_HEIGHT_IN[width] * rows)
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)  # render with Agg whatever pyplot's backend is
    axes = fig.subplots(rows, columns, squeeze=False, sharey=True).ravel().tolist()
    for ax in axes[panels:]:
        ax.set_visible(False)
    return fig, axes[:panels]


def save(fig: Figure, folder: Path, stem: str) -> list[Path]:
    """Write ``stem.png`` (200 dpi) and ``stem.pdf`` atomically; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt, metadata in (("png", {"Software": "socsim"}), ("pdf", {"CreationDate": None})):
        path = folder / f"{stem}.{fmt}"
        tmp = folder / f".{stem}.{os.getpid()}.{fmt}.tmp"
        fig.savefig(tmp, format=fmt, dpi=DPI, metadata=metadata)
        os.replace(tmp, path)
        paths.append(path)
    return paths
