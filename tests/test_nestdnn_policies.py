"""NestDNN policies on the engine: lifecycle, scheduling, switching, metrics."""

from __future__ import annotations

import pytest

from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.spec.experiment import ExperimentSpec

APPS = ["VC", "RI-50", "VS"]


def experiment(policy: dict, apps=APPS, iterations: int = 100_000) -> ExperimentSpec:
    return ExperimentSpec.model_validate({
        "name": "t", "soc": "snapdragon835",
        "workload": [{"name": a, "model": "multicapacity", "options": {"app": a},
                      "iterations": iterations} for a in apps],
        "policy": policy,
        "outputs": {"timeline": False, "timeseries": False, "sample_period": "100 ms"}})


LIFECYCLE = {"duration": 6.0, "min_apps": 1, "max_apps": 3, "seed": 7}


@pytest.fixture(scope="module")
def runs():
    """The three policies on the same 6-s app schedule."""
    out = {}
    for name in ("nestdnn-baseline", "nestdnn-mintotal", "nestdnn-minmax"):
        out[name] = simulate(experiment({"name": name, "alpha": 0.3, "lifecycle": LIFECYCLE}),
                             seed=1)
    return out


def test_runs_end_with_the_lifecycle_and_report_their_metrics(runs):
    for result in runs.values():
        m = result.metrics
        assert m["makespan_s"] == pytest.approx(6.0)
        assert m["completed"] == 1.0
        assert m["inferences"] > 0 and m["frame_rate_fps"] > 0
        assert sum(m[f"time_share_{n}apps_pct"] for n in (1, 2, 3)) == pytest.approx(100.0)
        assert m["energy_storage_j"] > 0  # models were loaded from flash
        # the neutral frame-rate average: each app's rate over its own goal rate, which
        # no app beats (L_max is its fastest descendant alone on the processor)
        assert 0 < m["relative_frame_rate"] <= 1.0
        apps = [a for a in ("VC", "RI-50", "RI-100", "VS", "VG", "RP")
                if m.get(f"{a}.serving_s", 0) > 0]
        served = sum(m[f"{a}.serving_s"] for a in apps)
        gain = sum(m[f"{a}.serving_s"] * m[f"{a}.accuracy_pct"] for a in apps) / served
        assert gain - m["accuracy_pct"] == pytest.approx(0.0, abs=1e-9)


def test_all_policies_see_the_same_app_mix(runs):
    shares = {name: [r.metrics[f"time_share_{n}apps_pct"] for n in (1, 2, 3)]
              for name, r in runs.items()}
    assert len({tuple(v) for v in shares.values()}) == 1


def test_the_baseline_runs_the_knee_models(runs):
    baseline = runs["nestdnn-baseline"].metrics
    assert baseline["accuracy_gain_pct"] == pytest.approx(0.0)
    assert baseline["switches"] == 0.0
    assert runs["nestdnn-mintotal"].metrics["scheduler_evaluations"] > 0


def test_gains_are_measured_against_the_independently_compressed_baseline(runs):
    # Same accuracy for the baseline's own models, but NestDNN's descendants beat them:
    # with little latency weight the scheduler serves big descendants and gains more
    # than the knee descendant of its own curve would allow (the old reference).
    from workloads.multicapacity.profile import load_profiles

    profiles = load_profiles("nestdnn")
    base = runs["nestdnn-baseline"].metrics
    served = [a for a in APPS if base[f"{a}.serving_s"] > 0]
    assert served
    for app in served:
        # each app serves its baseline model, below the descendant of its size
        profile = profiles[app]
        assert base[f"{app}.accuracy_pct"] == pytest.approx(100 * profile.baseline_accuracy())
        assert profile.baseline_accuracy() < profile.descendants[profile.baseline_knee()].accuracy
    accurate = simulate(experiment({"name": "nestdnn-mintotal", "alpha": 1e-6,
                                    "lifecycle": LIFECYCLE}), seed=1).metrics
    assert accurate["accuracy_gain_pct"] > 1.0


def test_energy_is_attributed_to_apps_by_the_share_they_held(runs):
    m = runs["nestdnn-mintotal"].metrics
    per_app = [m[f"{a}.energy_per_inference_j"] for a in APPS]
    assert all(e > 0 for e in per_app)
    assert min(per_app) <= m["app_energy_per_inference_j"] <= max(per_app)
    # apps with bigger models spend more per frame than the small VS
    assert m["VS.energy_per_inference_j"] < m["RI-50.energy_per_inference_j"]


def test_minmax_has_the_lower_worst_cost_mintotal_the_lower_total(runs):
    mintotal, minmax = runs["nestdnn-mintotal"].metrics, runs["nestdnn-minmax"].metrics
    assert minmax["nestdnn_max_cost"] <= mintotal["nestdnn_max_cost"] + 1e-9
    assert mintotal["nestdnn_total_cost"] <= minmax["nestdnn_total_cost"] + 1e-9


def test_frames_are_paced_by_the_camera(runs):
    for result in runs.values():
        for app in APPS:
            assert result.metrics[f"{app}.frame_rate_fps"] <= 30.0 + 1e-9


def test_deterministic_under_a_seed(runs):
    again = simulate(experiment({"name": "nestdnn-mintotal", "alpha": 0.3,
                                 "lifecycle": LIFECYCLE}), seed=1)
    assert again.metrics == runs["nestdnn-mintotal"].metrics


def test_a_run_stops_after_max_inferences():
    result = simulate(experiment({"name": "nestdnn-mintotal", "max_inferences": 40,
                                  "lifecycle": {**LIFECYCLE, "duration": 100.0}}), seed=2)
    assert result.metrics["inferences"] == 40
    assert result.metrics["makespan_s"] < 100.0


def test_static_mix_runs_each_apps_iterations():
    result = simulate(experiment({"name": "nestdnn-minmax", "lifecycle": "static"},
                                 apps=["VS", "VC"], iterations=3), seed=0)
    assert result.metrics["inferences"] == 6 and result.metrics["completed"] == 1.0


def test_switching_benchmark_multi_capacity_moves_less_than_independent():
    def run(scheme):
        return simulate(experiment({"name": "nestdnn-switching", "switches": 40,
                                    "scheme": scheme}, apps=["VC", "VS", "RP"]), seed=3).metrics

    multi, indep = run("multi-capacity"), run("independent")
    assert multi["switches"] == indep["switches"] == 40
    assert multi["page_in_mb"] < indep["page_in_mb"]
    # loading costs CPU work besides the flash read (Snapdragon 835: 290 MB/s at 1.45 W)
    for m in (multi, indep):
        assert m["energy_model_load_j"] == pytest.approx(
            1.45 * m["page_in_mb"] / 290.0, rel=0.02)
    assert multi["energy_model_load_j"] < indep["energy_model_load_j"]
    assert multi["energy_j"] < indep["energy_j"]
    assert 0 < multi["energy_storage_j"] < multi["energy_j"]


def test_switching_one_app_only():
    one = simulate(experiment({"name": "nestdnn-switching", "switches": 20, "apps": ["VS"]},
                              apps=["VC", "VS"]), seed=3).metrics
    both = simulate(experiment({"name": "nestdnn-switching", "switches": 20},
                               apps=["VC", "VS"]), seed=3).metrics
    assert one["switches"] == 20 and one["page_in_mb"] < both["page_in_mb"]
    with pytest.raises(ConfigError, match="policy.apps"):
        simulate(experiment({"name": "nestdnn-switching", "apps": ["RP"]}, apps=["VS"]))


@pytest.mark.parametrize("policy, message", [
    ({"name": "nestdnn-mintotal", "sharing": "fair"}, "sharing"),
    ({"name": "nestdnn-mintotal", "lifecycle": {"rate": 1}}, "unknown key"),
    ({"name": "nestdnn-mintotal", "memory": "400"}, "memory"),
    ({"name": "nestdnn-baseline", "alpha": -1}, "alpha"),
    ({"name": "nestdnn-switching", "scheme": "nested"}, "scheme"),
])
def test_bad_parameters_are_config_errors(policy, message):
    with pytest.raises(ConfigError, match=message):
        simulate(experiment(policy))


def test_a_job_that_is_not_an_app_is_refused():
    exp = ExperimentSpec.model_validate({
        "name": "t", "soc": "snapdragon835", "workload": {"model": "lenet5"},
        "policy": {"name": "nestdnn-mintotal"}})
    with pytest.raises(ConfigError, match="not an app"):
        simulate(exp)
