"""Swept quantities as numbers, and the plot controls: orders, titles, value labels, style.

The results table keeps a swept quantity's text (``"1.2 GHz"``, for labels) and adds
its numeric SI twin (``dvfs.frequency_hz``); plots order and place such a column
by value. Orders, titles, legends, value labels and styles are plot keys, checked
when the experiment is loaded (or, for the values a sweep gives, before any run).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from simulator.errors import ConfigError
from simulator.plots import draw_plots
from simulator.plots.frame import prepare
from simulator.plots.kinds import DRAWERS
from simulator.plots.style import new_figure, paper_style, style_rc
from simulator.results import quantity_columns, results_table
from simulator.spec.experiment import PlotSpec, PlotStyle
from simulator.spec.yamlio import read_yaml
from simulator.units import infer_quantities

# Written in sweep order, which is neither numeric nor alphabetical order.
FREQUENCIES = ["800 MHz", "1.2 GHz", "2 GHz", "500 MHz"]
METHODS = ["Vanilla", "HO", "HO+VO"]


def record(run: int, frequency: str, method: str, latency: float) -> dict:
    return {"run": run, "repeat": 0, "seed": run, "status": "ok", "error": "",
            "params": {"dvfs.frequency": frequency, "description": method},
            "metrics": {"latency_s": latency, "energy_j": latency * 2}}


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    """A frequency x method sweep built by the runner's own table function."""
    records, run = [], 0
    for frequency in FREQUENCIES:
        hz = infer_quantities([frequency])[1][0]
        for k, method in enumerate(METHODS):
            records.append(record(run, frequency, method, (k + 1) * 1e9 / hz * 0.01))
            run += 1
    return results_table(records)


def draw(spec: dict, results: pd.DataFrame):
    """Prepare and draw one panel; return the axes and the context."""
    plot = PlotSpec.model_validate(spec)
    frame, ctx = prepare(plot, 0, results, None)
    with paper_style():
        fig, axes = new_figure(1)
        DRAWERS[plot.kind](axes[0], frame, plot, ctx)
    return axes[0], ctx


# --- numeric SI columns ---------------------------------------------------------------

def test_quantities_are_read_as_one_dimension_in_si():
    assert infer_quantities(["1.2 GHz", "800 MHz", None, 0]) == (
        "hz", [1.2e9, 8e8, pytest.approx(np.nan, nan_ok=True), 0.0])
    assert infer_quantities(["50 ms", "2 s"]) == ("s", [0.05, 2.0])
    assert infer_quantities(["0.1 Mbit/s", "1 GB/s"]) == ("bytes_per_s", [12500.0, 1e9])
    assert infer_quantities(["25 C", "35 C"]) == ("c", [25.0, 35.0])
    assert infer_quantities(["300 K", "2 K"]) == ("k", [300.0, 2.0])  # kelvin either way
    assert infer_quantities(["150 %"]) == ("fraction", [1.5])
    # labels, presets, mixed dimensions and bare numbers are not quantities
    for values in (["1 CNNdroid", "2 HO"], ["4g", "wifi5"], ["1 GHz", "2 s"], [1, 2],
                   ["8"], ["1 GHz", 3]):
        assert infer_quantities(values) is None, values


def test_a_swept_quantity_gets_a_numeric_si_column_next_to_its_text(results, tmp_path):
    columns = list(results.columns)
    assert columns[3:6] == ["dvfs.frequency", "dvfs.frequency_hz", "description"]
    assert results["dvfs.frequency_hz"].dtype == np.float64
    assert results["dvfs.frequency"].iloc[0] == "800 MHz"
    assert results.drop_duplicates("dvfs.frequency")["dvfs.frequency_hz"].tolist() == [
        8e8, 1.2e9, 2e9, 5e8]
    assert quantity_columns(results) == {"dvfs.frequency": "dvfs.frequency_hz"}
    results.to_csv(tmp_path / "r.csv", index=False)
    again = pd.read_csv(tmp_path / "r.csv")
    assert again["dvfs.frequency_hz"].dtype == np.float64
    assert quantity_columns(again) == {"dvfs.frequency": "dvfs.frequency_hz"}


def test_a_frequency_sweep_plots_a_numeric_ordered_x_axis(results):
    ax, ctx = draw({"kind": "line", "x": "dvfs.frequency", "y": "latency_s",
                    "hue": "description"}, results)
    assert ctx.x_numeric and ctx.xlabel == "frequency (GHz)"
    xs = ax.lines[0].get_xdata()
    assert list(xs) == pytest.approx([0.5, 0.8, 1.2, 2.0])  # by value, in GHz: not categories
    # its numeric twin plots the same, with the same title
    twin_ax, twin = draw({"kind": "line", "x": "dvfs.frequency_hz", "y": "latency_s"},
                         results)
    assert twin.xlabel == "frequency (GHz)"
    assert list(twin_ax.lines[0].get_xdata()) == pytest.approx([0.5, 0.8, 1.2, 2.0])


def test_categorical_quantities_are_in_value_order_with_their_text(results):
    _, ctx = draw({"kind": "bar", "x": "dvfs.frequency", "y": "latency_s"}, results)
    assert ctx.x_labels == ["500 MHz", "800 MHz", "1.2 GHz", "2 GHz"]
    _, twin = draw({"kind": "bar", "x": "dvfs.frequency_hz", "y": "latency_s"}, results)
    assert twin.x_labels == ["500 MHz", "800 MHz", "1.2 GHz", "2 GHz"]


def test_where_matches_a_quantity_by_value(results):
    for where in ({"dvfs.frequency": "1200 MHz"}, {"dvfs.frequency": "1.2 GHz"},
                  {"dvfs.frequency_hz": 1.2e9}, {"dvfs.frequency_hz": "1.2 GHz"}):
        _, ctx = draw({"kind": "bar", "x": "dvfs.frequency", "y": "latency_s",
                       "where": where}, results)
        assert ctx.x_labels == ["1.2 GHz"], where
    with pytest.raises(ConfigError, match="matched none"):  # seconds are not hertz
        draw({"kind": "bar", "x": "dvfs.frequency", "y": "latency_s",
              "where": {"dvfs.frequency_hz": "1.2 s"}}, results)


# --- orders ---------------------------------------------------------------------------

def test_text_categories_keep_the_sweep_order_not_the_alphabet(results):
    _, ctx = draw({"kind": "bar", "x": "description", "y": "latency_s",
                   "hue": "dvfs.frequency"}, results)
    assert ctx.x_labels == METHODS  # not ["HO", "HO+VO", "Vanilla"]
    assert ctx.hue_labels == ["500 MHz", "800 MHz", "1.2 GHz", "2 GHz"]


def test_order_and_hue_order_choose_and_order_the_categories(results):
    ax, ctx = draw({"kind": "bar", "x": "description", "y": "latency_s",
                    "hue": "dvfs.frequency", "order": ["HO+VO", "Vanilla"],
                    "hue_order": ["2 GHz", "800 MHz"]}, results)
    assert ctx.x_labels == ["HO+VO", "Vanilla"] and ctx.hue_labels == ["2 GHz", "800 MHz"]
    assert [c.get_label() for c in ax.containers] == ["2 GHz", "800 MHz"]
    assert len(ax.patches) == 4  # 2 x 2 bars: the other values are left out
    # a quantity matches by value too
    _, same = draw({"kind": "bar", "x": "dvfs.frequency", "y": "latency_s",
                    "order": ["1200 MHz", "0.5 GHz"]}, results)
    assert same.x_labels == ["1.2 GHz", "500 MHz"]


def test_facet_order_orders_the_panels(results, tmp_path):
    plot = PlotSpec.model_validate({"kind": "bar", "x": "description", "y": "latency_s",
                                    "facet": "dvfs.frequency",
                                    "facet_order": ["2 GHz", "500 MHz"]})
    _, ctx = prepare(plot, 0, results, None)
    assert ctx.facet_labels == ["2 GHz", "500 MHz"] and ctx.facet_title == "frequency"


def test_an_order_naming_a_missing_value_is_an_error_with_its_path(results, tmp_path):
    specs = [PlotSpec.model_validate({"kind": "bar", "x": "description", "y": "latency_s",
                                      "order": ["Vanilla", "HOVO"]})]
    files, errors = draw_plots(specs, results, None, tmp_path)
    assert files == []
    assert errors == ["plots[0].order: 'HOVO' is not a value of 'description'; its values: "
                      "Vanilla, HO, HO+VO"]


# --- titles, legend, value labels, style -------------------------------------------------

def test_titles_are_readable_not_dotted_paths(results):
    _, ctx = draw({"kind": "bar", "x": "description", "y": "latency_s",
                   "hue": "dvfs.frequency"}, results)
    assert (ctx.xlabel, ctx.ylabel, ctx.hue_title) == ("description", "latency (ms)",
                                                         "frequency")
    _, ctx = draw({"kind": "bar", "x": "description", "y": "latency_s",
                   "hue": "dvfs.frequency",
                   "labels": {"description": "method", "dvfs.frequency": "CPU clock",
                              "latency_s": "time per inference"}}, results)
    assert (ctx.xlabel, ctx.ylabel, ctx.hue_title) == ("method", "time per inference (ms)",
                                                         "CPU clock")
    _, ctx = draw({"kind": "bar", "x": "description", "y": "latency_s",
                   "hue": "dvfs.frequency", "legend_title": ""}, results)
    assert ctx.hue_title is None


def test_legend_placement_and_none(results, tmp_path):
    base = {"kind": "bar", "x": "description", "y": "latency_s", "hue": "dvfs.frequency"}
    for legend in ("auto", "inside", "outside", "none"):
        plot = PlotSpec.model_validate({**base, "legend": legend, "name": legend})
        files, errors = draw_plots([plot], results, None, tmp_path)
        assert errors == [] and len(files) == 2


def test_value_labels_write_the_plotted_values(results):
    ax, _ = draw({"kind": "bar", "x": "description", "y": "latency_s",
                  "where": {"dvfs.frequency": "2 GHz"}, "value_labels": ".1f"}, results)
    assert [t.get_text() for t in ax.texts] == ["5.0", "10.0", "15.0"]  # ms
    ax, _ = draw({"kind": "line", "x": "dvfs.frequency", "y": "latency_s",
                  "where": {"description": "Vanilla"}, "value_labels": True}, results)
    assert [t.get_text() for t in ax.texts] == ["20", "12.5", "8.33", "5"]
    ax, _ = draw({"kind": "heatmap", "x": "description", "y": "dvfs.frequency",
                  "z": "latency_s", "value_labels": False}, results)
    assert len(ax.texts) == 0


def test_a_style_sets_fonts_palette_and_rc_params(results, tmp_path):
    style = PlotStyle.model_validate({"font_size": 10, "font": "serif",
                                      "palette": ["black", "#ff0000"],
                                      "rc": {"axes.grid": False}})
    rc = style_rc(style)
    assert rc["font.size"] == 10 and rc["xtick.labelsize"] == pytest.approx(8.75)
    assert rc["font.family"] == "serif" and rc["axes.grid"] is False
    plot = PlotSpec.model_validate({"kind": "bar", "x": "description", "y": "latency_s",
                                    "hue": "dvfs.frequency", "style": {"font_size": 9}})
    frame, ctx = prepare(plot, 0, results, None)
    # the experiment's plot_style, with the plot's own style on top
    merged = style.merged(plot.style)
    assert merged.font_size == 9 and merged.palette == ["black", "#ff0000"]
    first, _ = draw_plots([plot], results, None, tmp_path / "a", style)
    second, _ = draw_plots([plot], results, None, tmp_path / "b", style)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


@pytest.mark.parametrize("spec,message", [
    ({"kind": "pareto", "x": "a", "y": "b", "order": [1]}, "'order' orders the x"),
    ({"kind": "bar", "x": "a", "y": "b", "hue_order": [1]}, "'hue_order' needs a 'hue'"),
    ({"kind": "bar", "x": "a", "y": "b", "facet_order": [1]}, "'facet_order' needs"),
    ({"kind": "bar", "x": "a", "y": "b", "order": [1, 1]}, "lists '1' twice"),
    ({"kind": "bar", "x": "a", "y": "b", "order": []}, "at least 1 item"),
    ({"kind": "bar", "x": "a", "y": "b", "labels": {"c": "C"}}, "not a column of this plot"),
    ({"kind": "box", "x": "a", "y": "b", "value_labels": True}, "'value_labels' applies"),
    ({"kind": "bar", "x": "a", "y": "b", "value_labels": "%d"}, "format spec"),
    ({"kind": "bar", "x": "a", "y": "b", "value_labels": ".100000000f"}, "format spec"),
    ({"kind": "bar", "x": "a", "y": "b", "height": 1e9}, "height"),
    ({"kind": "bar", "x": "a", "y": "b", "legend": "left"}, "legend"),
    ({"kind": "bar", "x": "a", "y": "b", "style": {"rc": {"axes.gridd": 1}}},
     "unknown matplotlib rcParam 'axes.gridd'"),
    ({"kind": "bar", "x": "a", "y": "b", "style": {"rc": {"savefig.dpi": 50}}},
     "set by socsim"),
    ({"kind": "bar", "x": "a", "y": "b", "style": {"rc": {"font.size": "huge"}}},
     "rc font.size"),
    ({"kind": "bar", "x": "a", "y": "b", "style": {"rc": {"font.size": 1e9}}},
     "beyond any figure"),
    ({"kind": "bar", "x": "a", "y": "b", "style": {"palette": ["blu"]}}, "not a colour"),
    ({"kind": "bar", "x": "a", "y": "b", "style": {"font_size": 0}}, "font_size"),
    ({"kind": "bar", "x": "a", "y": "b", "style": {"fontsize": 9}}, "fontsize"),
])
def test_plot_controls_are_validated(spec, message):
    with pytest.raises(ValidationError) as info:
        PlotSpec.model_validate(spec)
    assert message in str(info.value)


# --- the shipped experiments -----------------------------------------------------------

PREFIXED = re.compile(r"^\d+ [^\d\s]")


def _sweep_lists(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _sweep_lists(value)
    elif isinstance(node, list):
        yield node


def test_shipped_experiments_need_no_ordering_prefixes():
    """Labels like "1 Vanilla", "2 HO" were a workaround for alphabetical order."""
    root = Path(__file__).resolve().parents[1] / "experiments"
    for path in sorted(root.rglob("*.yaml")):
        raw = read_yaml(path)
        for values in _sweep_lists(raw.get("sweep") or {}):
            for value in values:
                if isinstance(value, str) and PREFIXED.match(value):
                    assert infer_quantities([value]) is not None, (path.name, value)
