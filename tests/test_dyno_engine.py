"""General engine mechanisms DynO needed: slowdown, SoC variants, pipelined iterations,
plans that adapt at run time, policy metrics and time series, stacked bar plots."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import kernel, make_trace, run

import simulator
from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.policy import Placement, Plan, Policy
from simulator.spec.experiment import ExperimentSpec


def test_slowdown_stretches_every_kernel_of_that_device(tiny_soc, chain):
    policy = {"name": "single", "processor": "cpu.big"}
    base = run(tiny_soc, chain, policy)
    slow = run(tiny_soc, chain, policy, devices={"device": {"slowdown": 3}})
    assert slow.metrics["latency_s"] == pytest.approx(3 * base.metrics["latency_s"])
    with pytest.raises(ConfigError, match="own device"):
        run(tiny_soc, chain, policy, devices={"device": {"soc": "tiny", "slowdown": 2}})


def test_a_soc_variant_deep_merges_its_overrides(tmp_path, tiny_soc_dict):
    tiny_soc_dict["variants"] = {
        "eco": {"cpu": {"big": {"units": 1, "opps": ["1 GHz @ 0.7 V"]}},
                "power": {"base": "0.1 W"}}}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny_soc_dict))
    base, eco = simulator.load_soc(str(path)), simulator.load_soc(f"{path}@eco")
    assert eco.name == "tiny@eco" and eco.cpu["big"].units == 1
    assert eco.cpu["big"].opps[-1].frequency == 1e9
    assert eco.cpu["big"].caches == base.cpu["big"].caches  # untouched keys stay
    assert eco.cpu["little"] == base.cpu["little"] and eco.power.base == 0.1
    with pytest.raises(ConfigError, match="no variant 'turbo'; variants: eco"):
        simulator.load_soc(f"{path}@turbo")
    jetson = simulator.load_soc("jetson-agx-xavier@10w")
    assert jetson.cpu["carmel"].units == 2 and jetson.gpu.opps[-1].frequency == 520e6


def _two_stage(tiny_soc, tiny_soc_file, in_flight: int):
    """Compute on the device, send 1 MB, compute on the server: a 3-stage pipeline."""
    trace = make_trace([kernel(0, flops=2e8, nbytes=1e6), kernel(1, "0", flops=2e8)])
    spec = ExperimentSpec.model_validate({
        "name": "pipe", "soc": "tiny", "dvfs": {"governor": "performance"},
        "devices": {"server": {"soc": str(tiny_soc_file)}},
        "links": [{"between": ["device", "server"], "bandwidth": "100 MB/s"}],
        "workload": {"trace": "x", "iterations": 8, "max_in_flight": in_flight},
        "policy": {"name": "manual", "default": "cpu.big", "kernels": {1: "server:cpu.big"}}})
    return simulate(spec, traces={0: trace}, soc=tiny_soc)


def test_pipelined_iterations_overlap_stages(tiny_soc, tiny_soc_file):
    serial = _two_stage(tiny_soc, tiny_soc_file, 1)
    piped = _two_stage(tiny_soc, tiny_soc_file, 3)
    assert piped.metrics["completed"] == 1.0
    assert piped.metrics["throughput_per_s"] > 1.8 * serial.metrics["throughput_per_s"]
    kernels = piped.kernels
    # stages of different iterations overlap, but each processor serves earlier ones first
    device = kernels[kernels["processor"] == "device:cpu.big"].sort_values("start_s")
    assert list(device["iteration"]) == sorted(device["iteration"])
    assert (device["start_s"].to_numpy()[1:] >= device["end_s"].to_numpy()[:-1] - 1e-12).all()
    server = kernels[kernels["processor"] == "server:cpu.big"]
    first_server_end = server["end_s"].min()
    assert (device["start_s"] < first_server_end).sum() >= 2


class Switcher(Policy):
    """Test policy (not registered): starts on the big cluster, moves to the little one
    after iteration 0, and reports metrics and a time series."""

    def __init__(self):
        self.reports = []

    def plan(self, job):
        return self._plan(job, "cpu.big")

    def _plan(self, job, processor):
        def adapt(report):
            self.reports.append(report)
            self.context.record("switcher.iteration", report.iteration)
            return self._plan(job, "cpu.little") if processor == "cpu.big" else None

        return Plan([Placement(processor)] * len(job.trace), adapt=adapt)

    def metrics(self, result, iterations):
        return {"reports": len(self.reports), "first_end_s": iterations[next(iter(iterations))][0][1]}


@pytest.fixture
def use_policy(monkeypatch):
    """Make the next simulations use ``policy`` whatever the experiment names."""
    def install(policy):
        monkeypatch.setattr("simulator.engine.simulation.make_policy", lambda _: policy)
        return policy

    return install


def test_a_plan_can_adapt_after_each_iteration(tiny_soc, chain, use_policy):
    use_policy(Switcher())
    result = run(tiny_soc, chain, {"name": "single"},
                 workload={"trace": "x", "iterations": 3})
    by_iteration = result.kernels.groupby("iteration")["processor"].agg(set)
    assert by_iteration[0] == {"cpu.big"}
    assert by_iteration[1] == by_iteration[2] == {"cpu.little"}
    assert result.metrics["reports"] == 3
    assert result.metrics["first_end_s"] == pytest.approx(
        result.kernels[result.kernels["iteration"] == 0]["end_s"].max())
    series = result.timeseries[result.timeseries["name"] == "switcher.iteration"]
    assert list(series["value"]) == [0.0, 1.0, 2.0]


class Splitter(Policy):
    """Test policy (not registered): kernel 0 on the device, kernel 1 on the server."""

    def __init__(self):
        self.reports = []

    def plan(self, job):
        return Plan([Placement("cpu.big"), Placement("server:cpu.big")],
                    adapt=self.reports.append)


def test_an_iteration_report_lists_kernels_and_transfers(tiny_soc, tiny_soc_file,
                                                          use_policy):
    policy = use_policy(Splitter())
    trace = make_trace([kernel(0, nbytes=1e6), kernel(1, "0")])
    spec = ExperimentSpec.model_validate({
        "name": "r", "soc": "tiny", "dvfs": {"governor": "performance"},
        "devices": {"server": {"soc": str(tiny_soc_file)}},
        "links": [{"between": ["device", "server"], "bandwidth": "10 MB/s", "latency": "5 ms"}],
        "workload": {"trace": "x"}, "policy": {"name": "single"}})
    simulate(spec, traces={0: trace}, soc=tiny_soc)
    (report,) = policy.reports
    assert [k[:2] for k in report.kernels] == [(0, "device:cpu.big"), (1, "server:cpu.big")]
    channel, nbytes, ready, start, end, arrival = report.transfers[0]
    assert channel == "link.device-server" and nbytes == 1e6 and ready == start
    assert end - start == pytest.approx(0.1) and arrival - end == pytest.approx(0.005)
    assert report.end >= report.kernels[-1][3]


def test_a_stacked_bar_plot_is_drawn(tmp_path):
    from simulator.plots.figure import draw_plot
    from simulator.spec.experiment import PlotSpec

    results = pd.DataFrame({"x": ["a", "b", "a", "b"], "first_s": [1.0, 2.0, 1.0, 2.0],
                            "second_s": [0.5, 0.5, 0.5, 0.5], "status": "ok",
                            "run": [0, 1, 2, 3], "repeat": 0})
    spec = PlotSpec(kind="bar", x="x", y=["first_s", "second_s"], stacked=True)
    files = draw_plot(spec, 0, results, None, tmp_path)
    assert any(f.suffix == ".png" for f in files)
    with pytest.raises(ValueError, match="stacked"):
        PlotSpec(kind="line", x="x", y=["first_s", "second_s"], stacked=True)


def test_a_swept_mapping_is_not_changed_by_a_later_override():
    from simulator.experiment import expand

    dyno = {"name": "dyno"}
    raw = {"name": "x", "soc": "tiny", "workload": {"model": "lenet5"},
           "policy": {"name": "single"},
           "sweep": {"zip": {"policy": [dyno, dyno], "policy.client": ["gpu", "cpu.big"]}}}
    runs = expand(raw)
    assert [r.config["policy"] for r in runs] == [{"name": "dyno", "client": "gpu"},
                                                  {"name": "dyno", "client": "cpu.big"}]
    assert dyno == {"name": "dyno"}


def test_kernels_of_one_stream_run_one_at_a_time(tiny_soc, use_policy):
    class Streams(Policy):
        def __init__(self, streams):
            self.streams = streams

        def plan(self, job):
            return Plan([Placement("cpu.big", 1, stream=s) for s in self.streams])

    trace = make_trace([kernel(0), kernel(1), kernel(2)])  # independent kernels
    spans = {}
    for streams in ((None, None, None), ("t", "t", None)):
        use_policy(Streams(streams))
        kernels = run(tiny_soc, trace, {"name": "single"}).kernels.set_index("row")
        spans[streams] = kernels
    free = spans[(None, None, None)]
    assert free.loc[0, "start_s"] == free.loc[1, "start_s"]  # two cores, side by side
    threaded = spans[("t", "t", None)]
    assert threaded.loc[1, "start_s"] == pytest.approx(threaded.loc[0, "end_s"])
    assert threaded.loc[2, "start_s"] == threaded.loc[0, "start_s"]  # overtook row 1


def test_pipelined_iterations_keep_one_open_entry_each(tiny_soc, tiny_soc_file, monkeypatch):
    """A job's open iterations stay one entry per iteration in flight while their
    kernels interleave (a list re-filtered per switch grew a duplicate each time)."""
    from simulator.engine.control import RunControl

    sizes = []
    original = RunControl.track

    def track(self, task, processor, finished):
        original(self, task, processor, finished)
        sizes.append(len(self.open))

    monkeypatch.setattr(RunControl, "track", track)
    trace = make_trace([kernel(0, flops=2e8), kernel(1, flops=2e8), kernel(2, "0,1", flops=2e8),
                        kernel(3, "2", flops=2e8)])
    spec = ExperimentSpec.model_validate({
        "name": "pipe", "soc": "tiny", "dvfs": {"governor": "performance"},
        "workload": {"trace": "x", "iterations": 40, "max_in_flight": 3},
        "policy": {"name": "manual", "default": "cpu.big", "kernels": {1: "cpu.little"}}})
    result = simulate(spec, traces={0: trace}, soc=tiny_soc)
    assert result.metrics["completed"] == 1.0 and len(sizes) == 160
    assert max(sizes) == 3  # three iterations in flight, each once
