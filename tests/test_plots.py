"""Declared plots: every kind draws PNG + PDF; specs are validated; errors have paths."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from simulator.plots import draw_plots, pareto_front
from simulator.plots.data import scaled
from simulator.plots.figure import short_names
from simulator.spec.experiment import PlotSpec


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    """A results table shaped like the runner's: 2 processors x 3 batches x 2 repeats."""
    rng = np.random.default_rng(0)
    rows = []
    for index, (proc, batch) in enumerate([(p, b) for p in ("cpu.gold", "gpu")
                                           for b in (1, 2, 4)]):
        for repeat in range(2):
            latency = batch * (0.03 if proc == "gpu" else 0.05) * (1 + rng.normal(0, 0.05))
            rows.append({"run": index, "repeat": repeat, "seed": 10 * index + repeat,
                         "policy.processor": proc, "workload.batch": batch,
                         "status": "ok", "latency_s": latency,
                         "energy_j": latency * (2.5 if proc == "gpu" else 3.3),
                         "energy_cpu.gold_j": latency, "energy_gpu_j": latency / 2,
                         "peak_temp_c": 25 + batch, "error": ""})
    rows.append({**rows[-1], "run": 6, "repeat": 0, "status": "failed",
                 "latency_s": np.nan, "error": "boom"})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def timeseries() -> pd.DataFrame:
    times = np.arange(0, 0.1, 0.01)
    parts = [pd.DataFrame({"run": run, "repeat": 0, "time_s": times, "name": name,
                           "value": 25 + run + times * 10})
             for run in range(6) for name in ("temp.cpu_big", "temp.gpu")]
    return pd.concat(parts, ignore_index=True)


SPECS = [
    {"kind": "bar", "x": "policy.processor", "y": "latency_s", "hue": "workload.batch"},
    {"kind": "line", "x": "workload.batch", "y": "energy_j", "hue": "policy.processor",
     "logx": True, "title": "Energy"},
    {"kind": "box", "x": "policy.processor", "y": "latency_s"},
    {"kind": "timeseries", "y": "temp.*", "facet": "policy.processor",
     "where": {"workload.batch": 4}},
    {"kind": "heatmap", "x": "workload.batch", "y": "policy.processor", "z": "latency_s"},
    {"kind": "pareto", "x": "latency_s", "y": "energy_j", "hue": "policy.processor"},
    {"kind": "bar", "y": ["energy_cpu.gold_j", "energy_gpu_j"], "name": "breakdown",
     "width": "double"},
    {"kind": "line", "x": "workload.batch", "y": "latency_s", "facet": "policy.processor"},
]


def test_every_kind_draws_png_and_pdf(tmp_path, results, timeseries):
    specs = [PlotSpec.model_validate(s) for s in SPECS]
    files, errors = draw_plots(specs, results, timeseries, tmp_path)
    assert errors == []
    assert len(files) == 2 * len(SPECS)
    for path in files:
        assert path.stat().st_size > 1000
        head = path.read_bytes()[:8]
        assert head.startswith(b"\x89PNG" if path.suffix == ".png" else b"%PDF")
    assert (tmp_path / "breakdown.png").is_file()
    assert not list(tmp_path.glob(".*tmp"))


def test_figures_are_deterministic(tmp_path, results, timeseries):
    specs = [PlotSpec.model_validate(SPECS[0]), PlotSpec.model_validate(SPECS[5])]
    first, _ = draw_plots(specs, results, timeseries, tmp_path / "a")
    second, _ = draw_plots(specs, results, timeseries, tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_a_plot_that_does_not_fit_is_skipped_with_its_path(tmp_path, results, timeseries):
    specs = [PlotSpec.model_validate({"kind": "bar", "x": "policy.name", "y": "latency_s"}),
             PlotSpec.model_validate({"kind": "timeseries", "y": "freq.*"}),
             PlotSpec.model_validate(SPECS[0])]
    files, errors = draw_plots(specs, results, timeseries, tmp_path)
    assert len(files) == 2 and len(errors) == 2
    assert errors[0].startswith("plots[0].x: no column 'policy.name'")
    assert errors[1].startswith("plots[1].y: no time series matches")


def test_a_worker_pool_draws_the_same_files_and_messages_in_order(tmp_path, results,
                                                                  timeseries):
    from simulator.executors import ProcessPoolExecutor

    specs = [PlotSpec.model_validate(s) for s in (
        SPECS[3],  # a time series: drawn in this process (its table is not copied)
        {"kind": "bar", "x": "policy.name", "y": "latency_s"},  # skipped: no such column
        SPECS[0], SPECS[5])]
    here = draw_plots(specs, results, timeseries, tmp_path / "here")
    pool = ProcessPoolExecutor(2)
    drawn = draw_plots(specs, results, timeseries, tmp_path / "pool", executor=pool)
    assert pool._workers == []  # closed after drawing
    assert [p.name for p in drawn[0]] == [p.name for p in here[0]] and len(here[0]) == 6
    assert drawn[1] == here[1] and here[1][0].startswith("plots[1].x: no column")
    for a, b in zip(here[0], drawn[0], strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


@pytest.mark.parametrize("spec,message", [
    ({"kind": "bar", "x": "a", "y": "b", "colour": "red"}, "colour"),
    ({"kind": "pie", "x": "a", "y": "b"}, "kind"),
    ({"kind": "bar", "x": "a"}, "'y'"),
    ({"kind": "heatmap", "x": "a", "y": "b"}, "'z'"),
    ({"kind": "bar", "x": "a", "y": "b", "name": "bad/name"}, "name"),
])
def test_plot_specs_are_validated(spec, message):
    with pytest.raises(ValidationError) as info:
        PlotSpec.model_validate(spec)
    assert message in str(info.value)


def test_pareto_front():
    x = np.array([1.0, 2.0, 3.0, 1.5, 4.0])
    y = np.array([5.0, 2.0, 1.0, 6.0, 1.0])
    assert pareto_front(x, y).tolist() == [0, 1, 2]
    assert pareto_front(x, y, maximize_y=True).tolist() == [0, 3]


def test_axis_labels_pick_a_readable_unit():
    assert scaled("latency_s", [0.02, 0.05]) == ("latency (ms)", 1e3)
    assert scaled("energy_j", [3.0]) == ("energy (J)", 1.0)
    assert scaled("min_freq_gpu_hz", [5e8]) == ("min freq gpu (MHz)", 1e-6)
    assert scaled("throughput_per_s", [10]) == ("throughput (1/s)", 1.0)
    assert scaled("workload.batch", [1]) == ("workload.batch", 1.0)
    assert short_names(["energy_cpu.gold_j", "energy_gpu_j"]) == ["cpu.gold", "gpu"]


def test_a_heatmap_of_runs_that_all_lack_z_draws_an_empty_grid(tmp_path, results,
                                                                timeseries):
    # e.g. a sweep cut short by a time limit before any iteration ended: no warning
    empty = results.assign(latency_s=float("nan"))
    spec = PlotSpec.model_validate(SPECS[4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        files, errors = draw_plots([spec], empty, timeseries, tmp_path)
    assert errors == [] and len(files) == 2
