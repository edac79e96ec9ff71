"""Mandheling's techniques as small pure functions: the DP, batch splitting, rescaling, reuse."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from conftest import kernel, make_trace

from policies.mandheling.batch_splitting import best_split, micro_batch, splittable
from policies.mandheling.co_scheduling import chain_latency, co_schedule, dsp_first
from policies.mandheling.policy import Mandheling
from policies.mandheling.rescaling import (
    ScaleProcess,
    add_static_alternatives,
    find_groups,
    rescale_schedule,
    retry_form,
)
from policies.mandheling.rows import Rewrite
from policies.mandheling.subgraph_reuse import (
    add_calls,
    add_preparation,
    find_subgraphs,
    prepared_in,
    residency,
)
from policies.mandheling.weights import weight_copies
from simulator.hardware.cost import CostModel
from simulator.library import load_soc
from validation.micro import conv_row

INF = math.inf


# -- co-scheduling ---------------------------------------------------------------------

def test_the_dp_stays_on_one_processor_when_switching_costs_more_than_it_saves():
    cpu, dsp = [1.0, 1.0, 1.0], [0.5, 0.9, 0.5]
    assert co_schedule(cpu, dsp, switch=[5.0, 5.0]) == ["dsp"] * 3
    assert co_schedule(cpu, [2.0, 0.1, 2.0], switch=[0.3, 0.3]) == ["cpu", "dsp", "cpu"]
    assert co_schedule(cpu, [2.0, 0.1, 2.0], switch=[1.0, 1.0]) == ["cpu"] * 3


def test_operators_the_dsp_cannot_run_go_to_the_cpu():
    placement = co_schedule([1.0, 1.0, 1.0], [0.1, INF, 0.1], switch=[0.01, 0.01])
    assert placement == ["dsp", "cpu", "dsp"]
    assert dsp_first([0.1, INF, 3.0]) == ["dsp", "cpu", "dsp"]


def test_the_dp_finds_the_optimal_chain_placement():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = 7
        cpu = list(rng.uniform(0.1, 2.0, n))
        dsp = [INF if rng.random() < 0.2 else x for x in rng.uniform(0.05, 2.0, n)]
        switch = list(rng.uniform(0.0, 1.0, n - 1))
        best = min(chain_latency(list(p), cpu, dsp, switch)
                   for p in itertools.product(("cpu", "dsp"), repeat=n))
        assert chain_latency(co_schedule(cpu, dsp, switch), cpu, dsp, switch) == \
            pytest.approx(best)


# -- batch splitting ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def dsp_latency():
    model = CostModel(load_soc("snapdragon865"))

    def latency(row):
        return model.kernel_cost("dsp", 4, row).duration(500e6)

    return latency


def test_a_conv_that_overflows_the_dsp_cache_is_split_into_small_micro_batches(dsp_latency):
    row = conv_row(64, 64, 32, 64)
    parts, seconds = best_split(row, dsp_latency)
    assert parts >= 16  # micro-batches of 4 or fewer samples: no padding, fits the L2
    assert seconds < dsp_latency(row) / 2
    part = micro_batch(row, parts)
    assert part["batch"] * parts == 64
    assert part["flops"] * parts == pytest.approx(row["flops"])


def test_a_conv_that_fits_is_not_split(dsp_latency):
    assert best_split(conv_row(64, 64, 8, 4), dsp_latency)[0] == 1


def test_weight_gradients_are_accumulated_whole_by_every_micro_batch():
    row = {**conv_row(64, 64, 16, 32), "pass": "bwd_weight"}
    assert micro_batch(row, 8)["bytes_out"] == row["bytes_out"]
    assert not splittable({**row, "op": "sgd_update", "pass": "update"})


# -- self-adaptive rescaling ---------------------------------------------------------------

def test_scale_factors_change_often_early_then_every_10_to_60_batches():
    changed = ScaleProcess(early=100).changes(np.random.default_rng(0), 5000)
    later = np.flatnonzero(changed[100:])
    gaps = np.diff(later)
    assert changed[:100].mean() > 0.1
    assert gaps.min() >= 10 and gaps.max() <= 60


def test_rescaling_follows_the_f_over_2_rule():
    changed = np.zeros(1000, dtype=bool)
    changed[10::20] = True  # a change every 20 batches: f = 1/20, rescale every 40
    schedule = rescale_schedule(changed, window=100, period=1000)
    assert schedule[:100].all()  # the measurement window rescales every batch
    assert list(np.flatnonzero(schedule[100:300]) + 100) == [100, 140, 180, 220, 260]


# -- subgraph reuse --------------------------------------------------------------------------

def test_reuse_keeps_every_subgraph_that_fits():
    prepared = residency([10.0, 20.0, 30.0], budget=100.0)
    assert prepared[0] == {0, 1, 2} and all(p == set() for p in prepared[1:])
    assert prepared_in(prepared, 1000) == set()


def test_without_reuse_every_batch_prepares_everything():
    prepared = residency([10.0, 20.0], budget=0.0)
    assert all(p == {0, 1} for p in prepared) and prepared_in(prepared, 99) == {0, 1}


def test_over_budget_the_most_recently_used_regions_are_released():
    # 40 + 40 fit; the third (30) releases the most recently used region (the second),
    # and so on: in a loop the MRU region is the one needed again last. Batches then
    # alternate between re-preparing {1} and {0, 2}: 1.5 per batch, where releasing
    # the best-fitting region instead costs 2 (it frees one needed sooner).
    prepared = residency([40.0, 40.0, 30.0], budget=90.0)
    assert prepared[:3] == [{0, 1, 2}, {1}, {0, 2}]
    assert [prepared_in(prepared, b) for b in (100, 101)] == [{0, 2}, {1}]


# -- split kernels and their rescaling sites --------------------------------------------

def _rescale_site(pass_: str = "fwd") -> Rewrite:
    """conv -> reduce_max -> shift -> consumer (ids 0-3), batch 8, INT8."""
    rows = [kernel(0, "", op="conv", batch=8, nbytes=8e4),
            kernel(1, "0", op="reduce_max", batch=8, nbytes=8e4),
            kernel(2, "1", op="shift", batch=8, nbytes=8e4),
            kernel(3, "2", op="relu", batch=8, nbytes=2e4)]
    for row in rows:
        row["pass"], row["precision"] = pass_, "int8"
    rows[2]["bytes_out"] = 2e4  # INT32 in, INT8 out
    return Rewrite(make_trace(rows))


@pytest.mark.parametrize("pass_, whole", [("fwd", False), ("bwd_weight", True)])
def test_consumers_of_a_split_kernel_receive_every_micro_batch_share(pass_, whole):
    rewrite = _rescale_site(pass_)
    target = {r["id"]: "dsp" for r in rewrite.records}
    Mandheling._split(rewrite, {2: 4}, [], target)  # the shift, 4 micro-batches
    parts = [r["id"] for r in rewrite.records if r["name"].startswith("k2.mb")]
    consumer = rewrite.by_id()[3]
    # a weight gradient is written whole by every part: the last one carries it
    assert set(consumer["deps"]) == ({2} if whole else set(parts))


def test_a_split_rescaling_site_is_skipped_whole_and_its_static_version_writes_all_of_it():
    rewrite = _rescale_site()
    target = {r["id"]: "dsp" for r in rewrite.records}
    groups = find_groups(rewrite)
    Mandheling._split(rewrite, {0: 2, 1: 2, 2: 2}, groups, target)
    (group,) = groups
    assert len(group.compute) == len(group.reduce_max) == len(group.shift) == 2
    add_static_alternatives(rewrite, groups, target)
    by_id = rewrite.by_id()
    static_bytes = sum(by_id[i]["bytes_out"] for i in group.static)
    assert static_bytes == pytest.approx(sum(by_id[i]["bytes_out"] for i in group.shift))
    assert set(group.static) <= set(by_id[3]["deps"])


# -- review fixes: preparation per operator, the Shift's INT32 input, weight copies -------

def test_a_split_operator_is_prepared_once_and_holds_its_weights_once():
    rows = [kernel(0, "", op="conv", batch=8, nbytes=8e4, weight_bytes=1e4),
            kernel(1, "0", op="relu", batch=8, nbytes=8e4)]
    for row in rows:
        row["precision"] = "int8"
    rewrite = Rewrite(make_trace(rows))
    target = {r["id"]: "dsp" for r in rewrite.records}
    part_ids = Mandheling._split(rewrite, {0: 4}, [], target)
    origin = {p: kid for kid, ids in part_ids.items() for p in ids}
    (sub,) = find_subgraphs(rewrite, target, set(), origin=origin)
    assert len(sub.kernels) == 5 and sub.operators == 2  # conv (4 parts) + relu
    assert sub.memory == pytest.approx(8e4 + 1e4 + 8e4 + 8e4)  # input, weights, outputs


def _niti_site(channels: int, size: int, batch: int) -> tuple[dict, dict, dict]:
    """A NITI forward rescaling site: the conv writing INT32, its ReduceMax, its Shift."""
    conv = conv_row(channels, channels, size, batch)
    conv.update(id=0, bytes_out=4 * conv["bytes_out"])
    elements = conv["bytes_out"] / 4
    rmax = dict(conv, id=1, op="reduce_max", flops=elements, bytes_in=conv["bytes_out"],
                bytes_out=4.0, weight_bytes=0.0, deps="0")
    shift = dict(conv, id=2, op="shift", flops=2 * elements, bytes_in=conv["bytes_out"],
                 bytes_out=elements, weight_bytes=0.0, deps="1")
    return conv, rmax, shift


@pytest.mark.parametrize("channels, size", [(64, 32), (512, 4), (512, 2)])
def test_dynamic_rescaling_on_the_dsp_costs_at_least_twice_the_static_operator(channels, size):
    # Hexagon NN re-runs an operator whose output range it does not know: the Shift of a
    # DSP rescaling site is the operator again, so even a compute-bound deep layer (where
    # writing and re-reading INT32 costs little) pays >= 2x; the re-run is the static version
    model = CostModel(load_soc("snapdragon865"))
    conv, rmax, shift = _niti_site(channels, size, 4)
    rerun = retry_form(conv, shift)
    assert rerun["flops"] == conv["flops"] + shift["flops"]
    assert rerun["bytes_out"] == shift["bytes_out"] and rerun["op"] == "conv"

    def ms(row):
        return model.kernel_cost("dsp", 4, row, library="mnn").duration(500e6) * 1e3

    dynamic = ms(conv) + ms(rmax) + ms(rerun)
    assert dynamic >= 2 * ms(rerun)
    # the Shift alone would have been far cheaper than the operator on a deep layer
    if size <= 4:
        assert ms(conv) + ms(rmax) + ms(shift) < 1.5 * ms(rerun)


def test_a_shift_that_reads_the_int32_tensor_still_forms_a_rescale_group():
    rewrite = _rescale_site()
    rewrite.by_id()[2]["deps"] = (1, 0)  # reduce_max's scalar and the conv's INT32 output
    (group,) = find_groups(rewrite)
    assert (group.compute, group.reduce_max, group.shift) == ([0], [1], [2])


def test_a_rescaling_site_that_is_not_consecutive_is_an_error():
    # another kernel between the ReduceMax and its Shift: not one co-scheduling unit
    rows = [kernel(0, "", op="conv", batch=8, nbytes=8e4),
            kernel(1, "0", op="reduce_max", batch=8, nbytes=8e4),
            kernel(2, "0", op="relu", batch=8, nbytes=8e4),
            kernel(3, "1", op="shift", batch=8, nbytes=8e4)]
    for row in rows:
        row["precision"] = "int8"
    rewrite = Rewrite(make_trace(rows))
    assert [r["id"] for r in rewrite.records] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="not consecutive"):
        find_groups(rewrite)


def test_a_weight_gradient_rescale_is_not_split_by_batch():
    for op in ("reduce_max", "shift"):
        row = kernel(0, "", op=op, batch=64)
        row["pass"] = "bwd_weight"
        assert not splittable(row)
    conv = kernel(0, "", op="conv", batch=64)
    conv["pass"] = "bwd_weight"
    assert splittable(conv)


def _layer_step(update_on: str) -> tuple[Rewrite, dict]:
    rows = [kernel(0, "", op="conv", weight_bytes=1e4, layer="c"),
            kernel(1, "0", op="sgd_update", nbytes=1e4, weight_bytes=1e4, layer="c")]
    rows[1]["pass"] = "update"
    rewrite = Rewrite(make_trace(rows))
    return rewrite, {0: "dsp", 1: update_on}


def test_weights_updated_on_the_cpu_are_copied_back_to_the_dsp_that_reads_them():
    rewrite, target = _layer_step("cpu")
    (copy,) = weight_copies(rewrite, target)
    record = rewrite.by_id()[copy]
    # the copy waits for the update: the engine moves the updated weights over the link
    assert target[copy] == "dsp" and record["deps"] == (1,)
    rewrite, target = _layer_step("dsp")
    assert weight_copies(rewrite, target) == []  # updated where they are read


def test_mandheling_charges_the_weight_copies_on_the_offload_channel(mandheling_copies):
    kernels, transfers = mandheling_copies
    copies = kernels[kernels["label"].str.contains("weights_to_dsp")]
    assert len(copies) > 0
    moved = transfers[transfers["label"].str.contains(r"\.update")]
    assert moved["bytes"].sum() > 0


@pytest.fixture(scope="module")
def mandheling_copies():
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec
    exp = ExperimentSpec.model_validate({
        "name": "copies", "soc": "snapdragon865",
        "workload": {"model": "vgg11", "mode": "training", "batch": 16, "input_size": 32,
                     "num_classes": 10, "options": {"batch_norm": False}, "iterations": 1},
        "policy": {"name": "mandheling"}, "dvfs": {"governor": "performance"},
        "outputs": {"timeline": False, "kernels": True, "timeseries": False}})
    result = simulate(exp)
    return result.kernels, result.transfers


# -- graph preparation per operator and per subgraph; one FastRPC call per subgraph ----

def _two_subgraphs() -> tuple[Rewrite, dict, list]:
    """dsp, dsp | cpu | dsp: two subgraphs of 2 and 1 operators."""
    rows = [kernel(i, str(i - 1) if i else "", op="relu", precision="int8") for i in range(4)]
    rewrite = Rewrite(make_trace(rows))
    target = {0: "dsp", 1: "dsp", 2: "cpu", 3: "dsp"}
    return rewrite, target, find_subgraphs(rewrite, target, set())


def test_preparation_costs_per_operator_and_per_subgraph():
    rewrite, target, subgraphs = _two_subgraphs()
    add_preparation(rewrite, subgraphs, target, setup=1e-3, per_subgraph=2e-3)
    prepares = [r for r in rewrite.records if r["name"].endswith(".prepare")]
    assert [r["fixed_s"] for r in prepares] == pytest.approx([4e-3, 3e-3])


def test_each_subgraph_run_is_one_fastrpc_call_before_its_first_node():
    rewrite, target, subgraphs = _two_subgraphs()
    add_calls(rewrite, subgraphs, target, call=0.4e-3)
    calls = [r for r in rewrite.records if r["name"].endswith(".call")]
    assert len(calls) == 2 and all(target[c["id"]] == "dsp" for c in calls)
    by_id = rewrite.by_id()
    assert calls[0]["id"] in by_id[0]["deps"] and calls[1]["id"] in by_id[3]["deps"]
    assert calls[1]["deps"] == (2,)  # waits for what the subgraph waited for
    assert not any(c["id"] in by_id[1]["deps"] for c in calls)  # inner nodes: no call


def test_the_dsp_library_separates_graph_operator_and_node_costs():
    soc = load_soc("snapdragon865")
    lib = soc.dsp.libraries["mnn"]
    assert lib.subgraph_setup and lib.subgraph_setup > lib.graph_setup
    assert lib.dispatch_overhead < soc.dsp.dispatch_overhead  # node step < FastRPC call


@pytest.mark.parametrize("soc_name", ["snapdragon865", "snapdragon888", "snapdragon750g"])
def test_the_500_mhz_dsp_runs_at_its_dies_low_voltage_corner(soc_name):
    soc = load_soc(soc_name)
    (opp,) = soc.dsp.opps

    def volts(opps, hz):  # linear interpolation in a processor's own OPP table
        return float(np.interp(hz, [o.frequency for o in opps], [o.voltage for o in opps]))

    little = next(p for name, p in soc.processors().items()
                  if name in ("cpu.silver", "cpu.little"))
    bounds = sorted((volts(little.opps, opp.frequency), volts(soc.gpu.opps, opp.frequency)))
    # a DSP "designed for low-power scenarios" at a quarter of the CPU's clock is
    # no higher on the same die's voltage-frequency curve than its other blocks
    assert bounds[0] - 0.01 <= opp.voltage <= bounds[1] + 0.01


def test_weight_copies_are_transfers_not_graph_operators(mandheling_copies):
    kernels, _ = mandheling_copies
    labels = kernels["label"]
    assert labels.str.contains("weights_to_dsp").any()
    # every subgraph call precedes a graph node, never a weight copy
    on_dsp = kernels[kernels["processor"] == "dsp"]
    order = on_dsp.sort_values(["iteration", "start_s"])["label"].tolist()
    for i, label in enumerate(order[:-1]):
        if label.endswith(".call"):
            assert "weights_to" not in order[i + 1]
