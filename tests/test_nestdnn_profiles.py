"""Multi-capacity model profiles, latencies from simulation, and switching traffic."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

import simulator
from simulator.errors import ConfigError
from validation.nestdnn.checks import PAPER_SIZES, TRAFFIC_UNIT_MB, paper_mb
from validation.nestdnn.derive import fit_app, pair_sum_ratio, traffic_consistent
from workloads.generate import generate_trace
from workloads.multicapacity.latency import profile_latencies
from workloads.multicapacity.profile import load_profiles
from workloads.multicapacity.switching import (
    INDEPENDENT,
    MULTI_CAPACITY,
    average_traffic,
    switch_traffic,
)

MB = 1e6


@pytest.fixture(scope="module")
def profiles():
    return load_profiles("nestdnn")


def test_six_apps_with_five_nested_descendants(profiles):
    assert list(profiles) == ["VC", "RI-50", "RI-100", "VS", "VG", "RP"]
    for app in profiles.values():
        caps = [d.capacity for d in app.descendants]
        assert len(caps) == 5 and caps[-1] == 1.0
        for field in ("memory", "flops", "accuracy"):
            values = [getattr(d, field) for d in app.descendants]
            assert values == sorted(values), f"{app.name} {field}"
        # concave accuracy: each step of capacity buys less accuracy than the last
        acc, caps = np.array([d.accuracy for d in app.descendants]), np.array(caps)
        slopes = np.diff(acc) / np.diff(caps)
        assert np.all(np.diff(slopes) < 1e-12)
        assert 0 <= app.knee() < 5


def test_sizes_match_the_paper_where_they_were_fitted(profiles):
    multi = sum(app.largest.memory for app in profiles.values()) / MB
    independent = sum(d.memory for app in profiles.values() for d in app.descendants) / MB
    assert multi == pytest.approx(524.6, rel=0.01)
    assert independent == pytest.approx(1112.0, rel=0.01)


def _row(figures):
    keys = ("multi_capacity", "independent", "upgrade_in", "independent_upgrade_in",
            "independent_upgrade_out")
    return dict(zip(keys, figures))


def test_the_table_read_as_upgrade_pair_means_fits_all_six_apps():
    # printed, VS's traffic row breaks the pair-sum identity by the 4 bytes of an FP32
    # parameter; read in millions of parameters it holds like the other five apps'
    printed = {app: pair_sum_ratio(_row(row)) for app, row in PAPER_SIZES.items()}
    assert printed["VS"] == pytest.approx(0.25, rel=0.03)
    assert not traffic_consistent(_row(PAPER_SIZES["VS"]))
    for app in PAPER_SIZES:
        read = _row(paper_mb(app))
        assert pair_sum_ratio(read) == pytest.approx(1.0, abs=0.02), app
        assert traffic_consistent(read), app
    assert set(TRAFFIC_UNIT_MB) == {"VS"}


def test_the_profiles_paper_figures_are_the_tables_as_read():
    from workloads.multicapacity.profile import read_profile_file

    for app, entry in read_profile_file("nestdnn").apps.items():
        paper = entry.paper.model_dump()
        assert [paper[k] / MB for k in _row(range(5))] == pytest.approx(paper_mb(app)), app


def test_nested_switches_move_only_the_difference():
    sizes = [10.0, 20.0, 40.0]
    assert switch_traffic(sizes, 0, 2) == switch_traffic(sizes, 0, 2, MULTI_CAPACITY)
    assert switch_traffic(sizes, 0, 2).page_in == 30.0
    assert switch_traffic(sizes, 0, 2).page_out == 0.0
    assert switch_traffic(sizes, 2, 0).page_in == 0.0  # a downgrade reads nothing
    assert switch_traffic(sizes, 2, 0, INDEPENDENT).page_in == 10.0
    assert switch_traffic(sizes, -1, 1).page_in == 20.0  # cold start
    indep, multi = average_traffic(sizes, INDEPENDENT), average_traffic(sizes, MULTI_CAPACITY)
    assert multi.page_in == pytest.approx(indep.page_in - indep.page_out)


def test_the_fit_reproduces_a_consistent_paper_row():
    paper = {"multi_capacity": 196.0e6, "independent": 437.5e6, "upgrade_in": 81.4e6,
             "independent_upgrade_in": 128.2e6, "independent_upgrade_out": 46.8e6}
    fit = fit_app("vgg16", {"input_size": 32, "num_classes": 10, "stem": "imagenet"}, paper)
    assert fit.used_traffic and fit.width == pytest.approx(0.604, abs=0.002)
    assert not traffic_consistent({**paper, "independent_upgrade_in": 1.0e6})


def test_latencies_come_from_simulating_the_descendants(profiles):
    soc = simulator.load_soc("snapdragon835")
    vs = profile_latencies({"VS": profiles["VS"]}, soc, "cpu.big")["VS"]
    latencies = [d.latency for d in vs.descendants]
    assert all(lat > 0 for lat in latencies) and latencies == sorted(latencies)
    one_core = profile_latencies({"VS": profiles["VS"]}, soc, "cpu.big", cores=1)["VS"]
    assert one_core.largest.latency > vs.largest.latency


def test_measured_values_replace_derived_ones(tmp_path):
    entry = {"model": "vgg16", "options": {"input_size": 32, "num_classes": 10},
             "width": 0.25, "descendants": [
                 {"capacity": 0.5, "accuracy": 0.8, "latency": "5 ms", "memory": "2 MB"},
                 {"capacity": 1.0, "accuracy": 0.9, "latency": "9 ms"}]}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"name": "mine", "apps": {"X": entry}}))
    app = load_profiles(path)["X"]
    assert app.descendants[0].latency == pytest.approx(5e-3)
    assert app.descendants[0].memory == 2e6
    assert app.descendants[1].memory > 2e6  # derived from the trace
    soc = simulator.load_soc("snapdragon835")
    kept = profile_latencies({"X": app}, soc, "cpu.big")["X"]
    assert [d.latency for d in kept.descendants] == pytest.approx([5e-3, 9e-3])


def test_bad_profiles_are_config_errors(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "bad", "apps": {"X": {
        "model": "vgg16", "descendants": [{"capacity": 0.5}, {"capacity": 1.0}]}}}))
    with pytest.raises(ConfigError, match="top_accuracy"):
        load_profiles(path)
    with pytest.raises(ConfigError, match="profile"):
        load_profiles("nonexistent")


def test_the_multicapacity_zoo_model_builds_any_descendant():
    seed = generate_trace("multicapacity", app="VS", descendant=0)
    largest = generate_trace("multicapacity", app="VS")
    assert seed.total_flops < largest.total_flops
    with pytest.raises(ConfigError, match="'app'"):
        generate_trace("multicapacity", app="XX")


def test_the_baseline_is_its_own_curve_of_independently_compressed_models(profiles):
    # Before: the baseline was the knee descendant of the same curve, so the largest
    # descendant could gain only what the curve gives above its own knee.
    for app in profiles.values():
        assert len(app.baseline_models) == len(app.descendants)
        knee = app.baseline_knee()
        same_size = app.descendants[knee]
        # baseline models are no more accurate than descendants of equal size (ratio 1.5)
        for base, desc in zip(app.baseline_models, app.descendants):
            assert base.memory == desc.memory
            assert base.accuracy <= desc.accuracy + 1e-12
        assert app.baseline_accuracy() == app.baseline_models[knee].accuracy
        if same_size.capacity < 1.0:
            assert app.baseline_accuracy() < same_size.accuracy


def test_measured_baseline_models_replace_the_assumed_curve(tmp_path):
    entry = {"model": "vgg16", "options": {"input_size": 32, "num_classes": 10},
             "width": 0.25, "top_accuracy": 0.9, "max_drop": 0.1,
             "descendants": [{"capacity": 0.5}, {"capacity": 1.0}],
             "baseline": {"models": [{"capacity": 0.3, "accuracy": 0.7},
                                     {"capacity": 0.6, "accuracy": 0.85},
                                     {"capacity": 1.0, "accuracy": 0.88}]}}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"name": "mine", "apps": {"X": entry}}))
    app = load_profiles(path)["X"]
    assert [m.accuracy for m in app.baseline_models] == [0.7, 0.85, 0.88]
    assert app.baseline_knee() == 1  # the knee of its own curve
    assert app.baseline_accuracy() == 0.85
    assert app.as_baseline().descendants == app.baseline_models


def test_a_baseline_curve_scale_of_one_or_more_is_a_config_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "bad", "baseline_drop_ratio": 20.0, "apps": {"X": {
        "model": "vgg16", "top_accuracy": 0.9, "max_drop": 0.1,
        "descendants": [{"capacity": 0.5}, {"capacity": 1.0}]}}}))
    with pytest.raises(ConfigError, match=r"bad.yaml: apps.X.baseline: .*max_drop"):
        load_profiles(path)


def test_the_fastest_latency_goal_is_each_apps_fastest_descendant(profiles):
    soc = simulator.load_soc("snapdragon835")
    timed = profile_latencies({"VS": profiles["VS"], "RP": profiles["RP"]}, soc, "cpu.big")
    for app in timed.values():
        assert app.max_latency == min(d.latency for d in app.descendants)
    assert timed["VS"].max_latency < timed["RP"].max_latency  # a goal per app
