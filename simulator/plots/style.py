"""Paper style: figure sizes, fonts, the colour-blind-safe palette, saving.

Figures are two-column-paper sized (3.3 in single column, 7 in double), with
8 pt text, the Okabe-Ito palette, and constrained ("tight") layout. They are
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


@contextmanager
def paper_style() -> Iterator[None]:
    """Apply the paper rcParams while figures are built and saved (restored after)."""
    with matplotlib.rc_context(RC):
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
