"""The runner: contracted output files, failures alone, atomic records, resume."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import kernel, make_trace

import simulator
from simulator.errors import ConfigError
from simulator.executors import InProcessExecutor
from simulator.runner import run_experiment
from simulator.trace import save_trace

KEY_METRICS = ["latency_s", "energy_j", "avg_power_w", "peak_temp_c", "throughput_per_s"]


def tiny_experiment(folder: Path, **extra) -> Path:
    """A small experiment on a 4-kernel chain trace (no model zoo needed)."""
    save_trace(make_trace([kernel(i, str(i - 1) if i else "") for i in range(4)]),
               folder / "chain.csv")
    raw = {"name": "tiny", "soc": "snapdragon865", "workload": {"trace": "chain.csv"},
           "policy": {"name": "single", "processor": "cpu.gold", "cores": 2}}
    raw.update(extra)
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


class InterruptAfter(InProcessExecutor):
    """In-process executor that raises KeyboardInterrupt after ``n`` runs (a Ctrl-C)."""

    def __init__(self, n: int):
        self.n = n
        self.executed = 0

    def map_unordered(self, fn, tasks):
        for position, value in super().map_unordered(fn, tasks):
            if self.executed == self.n:
                raise KeyboardInterrupt
            self.executed += 1
            yield position, value


SWEEP = {"sweep": {"policy.cores": [1, 2], "workload.iterations": [1, 2]}, "repeats": 2}


def test_run_writes_the_contracted_files(tmp_path):
    path = tiny_experiment(tmp_path, **SWEEP)
    out = tmp_path / "out"
    sweep = run_experiment(path, overrides={"thermal.initial": "30 C"}, out=out)
    for name in ("results.csv", "results.parquet", "config.yaml", "manifest.json",
                 "timeseries.parquet", "summary.csv"):
        assert (out / name).is_file(), name
    results = pd.read_csv(out / "results.csv")
    assert len(results) == 8
    # a quantity keeps its text and gets a numeric SI twin right after it
    assert list(results.columns[:7]) == ["run", "repeat", "seed", "thermal.initial",
                                         "thermal.initial_c", "policy.cores",
                                         "workload.iterations"]
    assert (results["thermal.initial"] == "30 C").all()
    assert (results["thermal.initial_c"] == 30.0).all()
    assert {"status", "error", *KEY_METRICS} <= set(results.columns)
    assert (results["status"] == "ok").all()
    assert results["seed"].nunique() == 8
    pd.testing.assert_frame_equal(pd.read_parquet(out / "results.parquet"), sweep.results)

    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["thermal"]["initial"] == "30 C" and "sweep" in config
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["runs"] == 8
    assert manifest["failures"] == [] and manifest["seed"] == 0
    assert {"python", "simpy", "pandas"} <= set(manifest["versions"])
    assert "wall_time_s" in manifest["timings"] and "git_commit" in manifest

    series = pd.read_parquet(out / "timeseries.parquet")
    assert {"run", "time_s", "name", "value"} <= set(series.columns)
    assert set(series["run"]) == {0, 1, 2, 3}
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 4 and {"latency_s_mean", "latency_s_ci95"} <= set(summary.columns)
    assert (summary["repeats"] == 2).all()

    run_dir = out / "runs" / "0003-1"
    for name in ("config.yaml", "run.json", "metrics.json", "timeseries.parquet",
                 "kernels.parquet"):
        assert (run_dir / name).is_file(), name
    record = json.loads((run_dir / "metrics.json").read_text())
    assert record["status"] == "ok" and record["run"] == 3 and record["repeat"] == 1
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["workload"]["iterations"] == 2
    assert "wall_time_s" in json.loads((run_dir / "run.json").read_text())
    assert not list(out.rglob("*.tmp"))


def test_same_inputs_give_the_same_bytes(tmp_path):
    path = tiny_experiment(tmp_path, **SWEEP)
    run_experiment(path, out=tmp_path / "a")
    run_experiment(path, out=tmp_path / "b")
    for name in ("results.csv", "summary.csv", "results.parquet", "timeseries.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def skip_preflight(monkeypatch) -> None:
    """Let bad input reach the runs: the way to make a run fail at run time (as a crash
    would), since the pre-flight rejects every input error it can find."""
    monkeypatch.setattr("simulator.runner.check_runs", lambda *args, **kwargs: None)


def test_a_failing_run_is_recorded_and_the_others_finish(tmp_path, monkeypatch):
    skip_preflight(monkeypatch)
    path = tiny_experiment(tmp_path, sweep={"policy.processor": ["cpu.gold", "npu",
                                                                 "cpu.silver"]})
    out = tmp_path / "out"
    logged = []
    sweep = run_experiment(path, out=out, log=logged.append)
    assert list(sweep.results["status"]) == ["ok", "failed", "ok"]
    error = sweep.results["error"][1]
    assert "unknown processor 'npu'" in error and "\n" not in error
    assert sweep.results["latency_s"].isna().tolist() == [False, True, False]
    assert (out / "runs" / "0001-0" / "error.txt").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["failed"] == 1 and manifest["failures"][0]["run_id"] == "0001-0"
    assert any("0001-0" in line for line in logged)


def test_interrupted_sweep_resumes_to_the_uninterrupted_result(tmp_path):
    path = tiny_experiment(tmp_path, **SWEEP)
    reference = tmp_path / "reference"
    run_experiment(path, out=reference)

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(path, out=out, executor=InterruptAfter(3))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["completed"] == 3
    assert len(pd.read_csv(out / "results.csv")) == 3  # completed runs were flushed

    with pytest.raises(ConfigError, match="--resume"):
        run_experiment(path, out=out)
    counting = InterruptAfter(100)
    sweep = run_experiment(path, out=out, resume=True, executor=counting)
    assert counting.executed == 5
    assert sweep.manifest["resumed"] == 3 and sweep.manifest["status"] == "complete"
    assert not sweep.results.duplicated(["run", "repeat"]).any() and len(sweep.results) == 8
    for name in ("results.csv", "summary.csv", "results.parquet", "timeseries.parquet"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


def test_resume_reruns_records_whose_config_changed(tmp_path):
    path = tiny_experiment(tmp_path, **SWEEP)
    out = tmp_path / "out"
    run_experiment(path, out=out)
    counting = InterruptAfter(100)
    run_experiment(path, out=out, resume=True, executor=counting)
    assert counting.executed == 0
    run_experiment(path, overrides={"thermal.initial": "35 C"}, out=out, resume=True,
                   executor=counting)
    assert counting.executed == 8


def test_a_changed_run_that_fails_on_resume_leaves_no_old_tables(tmp_path, monkeypatch):
    skip_preflight(monkeypatch)
    path = tiny_experiment(tmp_path)
    out = tmp_path / "out"
    first = run_experiment(path, out=out)
    folder = out / "runs" / "0000-0"
    assert (folder / "timeseries.parquet").is_file() and len(first.timeseries) > 0
    # the changed run fails at run time (3 gold cores on the SD865)
    again = run_experiment(path, overrides={"policy.cores": 9}, out=out, resume=True)
    assert again.results["status"].tolist() == ["failed"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.yaml", "error.txt", "metrics.json", "run.json"]
    assert again.timeseries.empty  # the old run's samples are not read back as this run's
    assert pd.read_parquet(out / "timeseries.parquet").empty


def test_resume_after_a_torn_write_ignores_temporary_files(tmp_path):
    path = tiny_experiment(tmp_path, **SWEEP)
    out = tmp_path / "out"
    run_experiment(path, out=out)
    # A kill -9 in the middle of a run leaves its folder without metrics.json.
    (out / "runs" / "0002-1" / "metrics.json").unlink()
    (out / "runs" / "0002-1" / ".metrics.json.123.tmp").write_text("{")
    counting = InterruptAfter(100)
    sweep = run_experiment(path, out=out, resume=True, executor=counting)
    assert counting.executed == 1 and len(sweep.results) == 8


def test_process_pool_gives_the_in_process_results(tmp_path):
    # two plots: the pool's workers draw them (simulator.plots.draw_plots), the
    # in-process sweep draws them itself
    path = tiny_experiment(tmp_path, **SWEEP, plots=[
        {"kind": "bar", "x": "policy.cores", "y": "latency_s", "name": "a"},
        {"kind": "timeseries", "y": "temp.*", "name": "b"},
        {"kind": "line", "x": "workload.iterations", "y": "energy_j", "name": "c"}])
    one = run_experiment(path, out=tmp_path / "one", workers=1)
    two = run_experiment(path, out=tmp_path / "two", workers=2)
    assert two.manifest["executor"] == {"kind": "process-pool", "workers": 2}
    pd.testing.assert_frame_equal(one.results, two.results)
    assert (tmp_path / "one" / "results.csv").read_bytes() == \
        (tmp_path / "two" / "results.csv").read_bytes()
    assert two.manifest["plots"] == one.manifest["plots"] == [
        f"plots/{name}.{kind}" for name in "abc" for kind in ("png", "pdf")]
    for name in one.manifest["plots"]:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_workers_are_forked_from_a_process_running_no_other_thread(tmp_path, monkeypatch):
    import threading

    from simulator import executors

    threads_at_fork = []
    start = executors._Worker.__init__

    def counting(worker, slot):
        threads_at_fork.append(threading.active_count())
        start(worker, slot)

    monkeypatch.setattr(executors._Worker, "__init__", counting)
    path = tiny_experiment(tmp_path, **SWEEP)
    before = threading.active_count()  # other tests' threads may still run
    run_experiment(path, out=tmp_path / "out", workers=2, progress=True)
    # none started by the sweep (a progress bar's monitor thread would be one more)
    assert threads_at_fork == [before, before]


def test_bad_names_are_reported_before_any_run(tmp_path):
    path = tiny_experiment(tmp_path, sweep={"soc": ["snapdragon865", "snapdragon9000"]})
    with pytest.raises(ConfigError) as info:
        run_experiment(path, out=tmp_path / "out")
    assert info.value.path == "soc" and "snapdragon9000" in str(info.value)
    assert str(info.value).startswith(str(path))
    assert not (tmp_path / "out").exists()
    path = tiny_experiment(tmp_path, policy={"name": "single", "procesor": "gpu"})
    with pytest.raises(ConfigError) as info:
        run_experiment(path)
    assert info.value.path == "policy.procesor"
    path = tiny_experiment(tmp_path, workload={"trace": "nowhere.csv"})
    with pytest.raises(ConfigError) as info:
        run_experiment(path)
    assert info.value.path == "workload.trace" and "not found" in str(info.value)


def test_python_api_runs_a_mapping_without_writing(tmp_path, monkeypatch):
    tiny_experiment(tmp_path)
    monkeypatch.chdir(tmp_path)
    raw = yaml.safe_load((tmp_path / "exp.yaml").read_text())
    table = simulator.run(raw, overrides={"workload.iterations": 2})
    assert len(table) == 1 and table["status"][0] == "ok"
    assert table["workload.iterations"][0] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain.csv", "exp.yaml"]


EXPERIMENT_DIR = Path(__file__).resolve().parents[1] / "experiments"
EXPERIMENTS = sorted(EXPERIMENT_DIR.rglob("*.yaml"))
SMOKE_TIME_LIMIT_S = 0.5  # simulated seconds: enough to exercise every code path of a run


@pytest.mark.parametrize("path", EXPERIMENTS,
                         ids=[str(p.relative_to(EXPERIMENT_DIR)) for p in EXPERIMENTS])
def test_shipped_experiments_expand_and_smoke_run(path):
    from simulator.engine.simulation import Simulation
    from simulator.experiment import check_experiment, check_runs, expand, load_experiment

    pytest.importorskip("workloads.zoo")
    raw, base = load_experiment(path)
    runs = expand(raw, file=str(path))
    check_runs(runs, base, str(path))
    assert len({r.key for r in runs}) == len(runs)
    # smoke-run the first run, cut short in simulated time
    config = dict(runs[0].config)
    config["time_limit"] = f"{min(SMOKE_TIME_LIMIT_S, _seconds(config.get('time_limit')))} s"
    # the series the invariants below read (a run writing none keeps none)
    config["outputs"] = {**config.get("outputs", {}), "timeseries": True}
    # audited: every kernel runs once per iteration, after its dependencies and their
    # transfers, and no lane runs two kernels at once (simulator.engine.audit)
    sim = Simulation(check_experiment(config, str(path)), seed=runs[0].seed, base=base,
                     audit=True).build().plan().run()
    result = sim.collect()
    m = result.metrics
    assert m["makespan_s"] > 0
    # (NaN is allowed: no iteration may complete in the smoke run's time)
    assert not any(math.isinf(v) for v in m.values())
    # energy is the integral of the sampled power, device by device
    series = result.timeseries
    for name, device in sim.devices.items():
        power = series[series["name"] == f"{device.prefix}power.total"]
        assert _integral(power) == pytest.approx(device.total_energy, rel=1e-9, abs=1e-12), name
    assert m["energy_j"] == pytest.approx(sum(d.total_energy for d in sim.devices.values()))
    # temperatures stay between the coldest start (ambient or initial) and a bound no
    # phone reaches (a passive RC network fed non-negative power cannot cool below that)
    temps = series[series["name"].str.contains(r"(?:^|:)temp\.", regex=True)]["value"]
    assert len(temps) > 0
    coldest = min(d.thermal.ambient for d in sim.devices.values())
    if sim.exp.thermal.initial is not None:
        coldest = min(coldest, sim.exp.thermal.initial)
    assert temps.min() >= coldest - 1e-6 and temps.max() < MAX_TEMP_C
    assert m["peak_temp_c"] >= temps.max() - 1e-9


MAX_TEMP_C = 150.0  # no SoC runs above ~125 °C junction (thermal trips are lower)


def _integral(samples) -> float:
    """Integral of a step series: each sample is the mean since the previous one."""
    samples = samples.sort_values("time_s", kind="stable")
    times = [0.0, *samples["time_s"]]
    return sum((b - a) * p for a, b, p in zip(times, times[1:], samples["value"]))


def _seconds(value) -> float:
    from simulator.units import parse_quantity

    return parse_quantity(value, "time") if value is not None else float("inf")


def test_quickstart_runs(tmp_path):
    pytest.importorskip("workloads.zoo")
    path = Path(__file__).resolve().parents[1] / "experiments" / "quickstart.yaml"
    sweep = run_experiment(path, out=tmp_path / "out")
    assert sweep.results["status"].tolist() == ["ok"]
    assert sweep.results["latency_s"][0] > 0
    assert sweep.manifest["plot_errors"] == []
    assert (tmp_path / "out" / "plots" / "energy-breakdown.pdf").is_file()


@pytest.mark.parametrize("extra, where, words", [
    ({"policy": {"name": "single", "processor": "cpu.gold", "cores": 9}}, "policy.cores",
     "have 3 cores; 9 requested"),
    ({"policy": {"name": "single", "processor": "cpu.platinum"}}, "policy.processor",
     "unknown processor 'cpu.platinum'"),
    ({"sweep": {"policy.cores": [1, 2, 3, 4]}}, "policy.cores", "4 requested (run 0003-0)"),
    ({"workload": []}, "workload", ""),
    ({"thermal": {"ambient": "-10 K"}}, "thermal.ambient", "absolute zero"),
    # two tenants on one device, one of them fast-forwarded with two frames in flight:
    # a build-time check (one frame at a time is held: simulator.engine.tenant)
    ({"workload": [{"trace": "chain.csv", "fast_forward": True, "max_in_flight": 2},
                   {"trace": "chain.csv"}]},
     "workload[0].fast_forward", "needs max_in_flight 1 on a one-device system"),
])
def test_runs_that_cannot_run_are_rejected_before_anything_is_written(tmp_path, extra,
                                                                      where, words):
    path = tiny_experiment(tmp_path, **extra)
    with pytest.raises(ConfigError) as info:
        run_experiment(path, out=tmp_path / "out")
    assert info.value.file == str(path) and info.value.path == where
    assert words in info.value.message and not (tmp_path / "out").exists()


def test_a_bad_trace_file_is_rejected_by_the_preflight(tmp_path):
    path = tiny_experiment(tmp_path)
    (tmp_path / "chain.csv").write_text(",".join(kernel(0)) + "\n")  # header only
    with pytest.raises(ConfigError, match="no kernels") as info:
        run_experiment(path, out=tmp_path / "out")
    assert info.value.file.endswith("chain.csv") and not (tmp_path / "out").exists()


def test_a_frequency_sweep_gets_numeric_columns_and_a_numeric_x_axis(tmp_path):
    path = tiny_experiment(
        tmp_path, dvfs={"governor": "userspace", "frequency": "1 GHz"},
        sweep={"dvfs.frequency": ["1.8 GHz", "600 MHz", "1.2 GHz"]},
        outputs={"timeline": False, "kernels": False},
        plots=[{"kind": "line", "x": "dvfs.frequency", "y": "latency_s", "name": "f"}])
    out = tmp_path / "out"
    sweep = run_experiment(path, out=out)
    results = pd.read_parquet(out / "results.parquet")
    assert results["dvfs.frequency"].tolist() == ["1.8 GHz", "600 MHz", "1.2 GHz"]
    assert results["dvfs.frequency_hz"].tolist() == [1.8e9, 6e8, 1.2e9]
    summary = pd.read_csv(out / "summary.csv")
    assert summary["dvfs.frequency_hz"].tolist() == [1.8e9, 6e8, 1.2e9]
    assert sweep.manifest["plot_errors"] == [] and (out / "plots" / "f.png").is_file()
    # a higher clock is faster: the numbers are right, not only present
    by_hz = results.sort_values("dvfs.frequency_hz")["latency_s"].tolist()
    assert by_hz == sorted(by_hz, reverse=True)


def test_a_plot_order_naming_no_swept_value_is_rejected_before_anything_is_written(
        tmp_path):
    path = tiny_experiment(
        tmp_path, sweep={"policy.cores": [1, 2]},
        plots=[{"kind": "bar", "x": "policy.cores", "y": "latency_s"},
               {"kind": "bar", "x": "policy.cores", "y": "latency_s", "order": [2, 4]}])
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as info:
        run_experiment(path, out=out)
    assert str(info.value) == (f"{path}: plots[1].order: 4 is not a value of "
                               f"'policy.cores'; its values: 1, 2")
    assert not out.exists()


@pytest.mark.parametrize("name", ["quickstart", "sweep-example", "dyno/02-throughput-vs-slowdown",
                                  "nestdnn/lifecycle", "mandheling/per_batch"])
def test_run_configs_are_written_as_the_python_emitter_writes_them(tmp_path, name):
    # write_yaml uses libyaml's emitter where PyYAML has it: the text must not change
    from simulator.experiment import expand
    from simulator.results import write_yaml
    from simulator.runner import _load

    raw, _base, file = _load(Path(simulator.__file__).parents[1] / "experiments" /
                             f"{name}.yaml", {})
    for run in expand(raw, {}, file)[:40]:
        config = json.loads(json.dumps(run.config, default=str))
        write_yaml(tmp_path / "config.yaml", config)
        assert (tmp_path / "config.yaml").read_text() == yaml.safe_dump(
            config, sort_keys=False, allow_unicode=True)


def test_a_run_writing_no_time_series_keeps_none_and_computes_the_same(tmp_path):
    # the sampler integrates at the same steps either way: only the samples go, unless
    # a timeline is written (its counters are drawn from them)
    path = tiny_experiment(tmp_path, workload={"trace": "chain.csv", "iterations": 50})
    kept = run_experiment(path, out=tmp_path / "kept", workers=1)
    timeline = run_experiment(path, overrides={"outputs.timeseries": False},
                              out=tmp_path / "timeline", workers=1)
    dropped = run_experiment(path, overrides={"outputs.timeseries": False,
                                              "outputs.timeline": False},
                             out=tmp_path / "dropped", workers=1)
    assert len(kept.timeseries) > 0 and dropped.timeseries.empty
    metrics = [c for c in kept.results.columns if not c.startswith("outputs.")]
    pd.testing.assert_frame_equal(kept.results[metrics], dropped.results[metrics])
    assert not (tmp_path / "dropped" / "runs" / "0000-0" / "timeseries.parquet").exists()

    def counters(folder):
        events = json.loads((folder / "runs" / "0000-0" / "timeline.json").read_text())
        events = events["traceEvents"] if isinstance(events, dict) else events
        return [event for event in events if event.get("ph") == "C"]

    assert counters(tmp_path / "timeline") == counters(tmp_path / "kept") != []
