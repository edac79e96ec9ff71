"""A long run keeps no more records than a short one when its outputs ask for no
per-kernel record (issue 21 goal 5). Counted in rows and objects, not bytes or time:
``benchmarks/fast_forward.py --memory`` measures the peak RSS."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import kernel, make_trace

from simulator.engine import device as device_module
from simulator.engine.iterations import IterationLog
from simulator.engine.simulation import Simulation
from simulator import metrics
from simulator.metrics import _names
from simulator.policy import POLICIES, Placement, Plan, Policy
from simulator.spec.experiment import ExperimentSpec
from simulator.spec.soc import SocSpec

_CAP = 32  # time-series samples a device keeps (patched down from 2^14: both runs hit it)


@POLICIES.register("test-two-skip-sets")
class TwoSkipSets(Policy):
    """Every kernel on both big cores; row 1 skipped in even batches, row 2 in odd
    ones: skipped rows that vary per batch (like Mandheling's rescaling schedule)."""

    name = "test-two-skip-sets"
    conformance = {"params": {"processor": "cpu.gold"},
                   "workload": {"model": "lenet5", "batch": 1}}

    def __init__(self, processor: str = "cpu.big", cores: int = 2):
        self.processor, self.cores = processor, cores

    def plan(self, job):
        sets = (frozenset({1}), frozenset({2}))
        return Plan([Placement(self.processor, self.cores)] * len(job.trace),
                    skip=lambda i: sets[i % 2] if len(job.trace) > 2 else frozenset())


def _retained(soc: SocSpec, iterations: int,
              policy: dict | None = None) -> dict[str, int]:
    """What a fast-forwarded, throttling run of ``iterations`` batches still holds
    at its end, in rows, pairs, samples, states and schedules."""
    trace = make_trace([kernel(i, str(i - 1) if i else "", flops=4e8) for i in range(6)])
    spec = ExperimentSpec.model_validate({
        "name": "flat", "soc": "tiny",
        "policy": policy or {"name": "single", "processor": "cpu.big", "cores": 2},
        "dvfs": {"governor": "performance"},
        "workload": {"trace": "<memory>", "iterations": iterations, "fast_forward": True,
                     "pause": {"every": iterations // 4, "duration": "5 s"}},
        "outputs": {"timeline": False, "kernels": False, "sample_period": "1 s"}})
    sim = Simulation(spec, traces={0: trace}, soc=soc).build().plan().run()
    metrics = sim.collect().metrics
    runner, (device,) = sim.runners[0], sim.system.devices.values()
    log = runner.iteration_times
    assert len(log) == iterations and metrics["kernels"] > 0  # the run did its work
    return {"kernel rows": len(sim.recorder.tasks),
            "transfer rows": len(sim.recorder.transfers),
            "iteration pairs": log.stored,
            "samples": len(device._sample_starts),
            "fast-forward states": len(runner.fast_forward.records),
            "schedules": len(runner.state.fast_forward.schedules),
            # at most one record per (cap, OPP) of every domain
            "states possible": math.prod(len(d.frequencies) ** 2
                                         for d in device.domains.values()),
            "replayed": int(metrics["replayed_iterations"])}


def test_a_ten_times_longer_run_keeps_no_more_records(hot_soc, monkeypatch):
    monkeypatch.setattr(device_module, "_MAX_SAMPLES", _CAP)
    short, long = _retained(hot_soc, 400), _retained(hot_soc, 4000)
    assert long["replayed"] > 3000  # most batches fast-forwarded: the case at stake
    for what in ("kernel rows", "transfer rows", "iteration pairs"):
        assert short[what] == long[what] == 0, what
    # bounded: the series at its cap (merged in pairs past it), one record per
    # DVFS state visited
    assert short["samples"] > _CAP // 2 and long["samples"] <= _CAP + 1
    assert long["fast-forward states"] <= long["states possible"]


def test_skipped_rows_varying_per_batch_keep_a_record_per_state_and_set(hot_soc, monkeypatch):
    """Two skip sets alternating: a record per (DVFS state, set) and one schedule
    per set, however long the run."""
    monkeypatch.setattr(device_module, "_MAX_SAMPLES", _CAP)
    policy = {"name": "test-two-skip-sets"}
    short, long = _retained(hot_soc, 400, policy), _retained(hot_soc, 4000, policy)
    assert long["replayed"] > 3000
    for what in ("kernel rows", "transfer rows", "iteration pairs"):
        assert short[what] == long[what] == 0, what
    assert long["samples"] <= _CAP + 1
    assert short["fast-forward states"] >= 2  # both sets were recorded
    assert long["fast-forward states"] <= 2 * long["states possible"]
    assert short["schedules"] == long["schedules"] == 2


def test_an_iteration_log_without_pairs_keeps_count_sum_and_last():
    spans = [(0.0, 0.1), (0.1, 0.35), (0.35, 0.36), (1.0, 1.7)]
    kept, totals = IterationLog(keep=True), IterationLog(keep=False)
    for span in spans:
        kept.append(span)
        totals.append(span)
    assert list(kept) == spans and kept[1] == spans[1] and kept[-2:] == spans[-2:]
    assert len(totals) == len(kept) == 4
    assert totals[-1] == kept[-1] == spans[-1]
    # the metrics' latency_s: the durations added left to right (not sum(), which
    # compensates from Python 3.12)
    busy = 0.0
    for start, end in spans:
        busy += end - start
    assert totals.busy == kept.busy == busy
    assert not math.isclose(totals.busy, 0.0)
    with pytest.raises(LookupError, match="metrics_read_records"):
        totals[0]
    with pytest.raises(LookupError):
        list(totals)
    with pytest.raises(IndexError):
        kept[4]


def test_an_iteration_log_kept_from_a_point_on_names_the_rule_for_earlier_pairs():
    log = IterationLog(keep=False)
    log.append((0.0, 1.0))
    log.keep_from_now()  # a listener attached after one iteration
    log.append((1.0, 3.0))
    log.append((3.0, 4.0))
    assert log[1] == (1.0, 3.0) and log[-1] == log[2] == (3.0, 4.0) and not log.kept
    assert log.busy == 4.0 and len(log) == 3
    with pytest.raises(LookupError, match="on_iteration listener"):
        log[0]
    with pytest.raises(LookupError, match="several jobs"):
        list(log)


def test_mandheling_keeps_no_kernel_record_its_metrics_do_not_read():
    """Mandheling overrides ``metrics`` (its plan's shape) but reads no records: with
    no per-kernel outputs its runs keep none, and every metric is the same."""
    def go(kernels: bool):
        spec = ExperimentSpec.model_validate({
            "name": "m", "soc": "snapdragon888", "policy": {"name": "mandheling"},
            "workload": {"model": "lenet5", "mode": "training", "batch": 8,
                         "iterations": 3},
            "outputs": {"timeline": False, "kernels": kernels, "sample_period": "1 s"}})
        sim = Simulation(spec).build().plan().run()
        return sim, sim.collect().metrics

    (kept, with_records), (lean, without) = go(True), go(False)
    assert len(kept.recorder.tasks) == with_records["kernels"] > 0
    assert len(lean.recorder.tasks) == 0 and not lean.runners[0].iteration_times.kept
    assert with_records == without


# Runs whose conformance case (tests/test_policy_conformance.py) does no work for
# this check: the switching benchmark (it runs no kernel, by design) switches only
# on a SoC with storage.
_RECORDS_CASES = {"nestdnn-switching": {
    "soc": "snapdragon835", "policy": {"name": "nestdnn-switching", "switches": 6},
    "workload": [{"name": app, "model": "multicapacity", "options": {"app": app},
                  "iterations": 20} for app in ("VC", "VS")]}}


@pytest.mark.parametrize("name", [name for name in POLICIES.names()
                                  if not POLICIES.get(name).metrics_read_records])
def test_a_policy_whose_metrics_read_no_records_says_so_truly(name):
    """``metrics_read_records = False`` lets a run keep no kernel record when the
    outputs ask for none: the policy's metrics must be the same either way."""
    conformance = POLICIES.get(name).conformance
    case = _RECORDS_CASES.get(name, {
        "soc": "snapdragon865", "policy": {"name": name, **conformance["params"]},
        "workload": {**conformance["workload"], "iterations": 2}})

    def go(kernels: bool) -> dict:
        spec = ExperimentSpec.model_validate({
            "name": f"records-{name}", **case, "dvfs": {"governor": "schedutil"}, "seed": 11,
            "outputs": {"timeline": False, "kernels": kernels, "sample_period": "1 s"}})
        sim = Simulation(spec).build().plan().run()
        metrics = sim.collect().metrics
        assert len(sim.recorder.tasks) == (metrics["kernels"] if kernels else 0)
        return metrics

    with_records, without = go(True), go(False)
    assert with_records["makespan_s"] > 0  # the run did its work (kernels or switches)
    assert pd.Series(with_records).equals(pd.Series(without))


@pytest.mark.parametrize("take_at_most", [0, 1_000])  # exact buffers; take
def test_the_names_column_is_each_codes_label_in_the_inferred_string_dtype(take_at_most,
                                                                         monkeypatch):
    """collect's names (metrics._names: a long series from exact buffers, a short one
    by Arrow's take) are the labels by code as pandas would store the list:
    multi-byte UTF-8, an unused label, an empty one and no codes at all included."""
    monkeypatch.setattr(metrics, "_TAKE_AT_MOST", take_at_most)
    monkeypatch.setattr(metrics, "_BLOCK", 3)  # blocks that split the codes unevenly
    labels = ["temp.cpu", "power.gpu", "", "unused", "température.peau"]
    codes = np.array([0, 1, 4, 2, 0, 4, 4, 1], dtype=np.uint32)
    expected = pd.Series([labels[code] for code in codes])
    got = pd.Series(_names(labels, codes))
    assert got.dtype == expected.dtype and got.equals(expected)
    assert len(_names(labels, codes[:0])) == 0
