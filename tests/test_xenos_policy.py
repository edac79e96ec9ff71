"""Xenos on a multi-core DSP board and d-Xenos over several boards, as API demos.

Layouts and linking on small traces; the operator split's parts; Vanilla vs HO
vs HO+VO on the TMS320C6678; parameter server vs ring exchanges.
"""

from __future__ import annotations

import pytest
from conftest import kernel, make_trace

from policies.xenos.dos import SplitConfig, plan_parts
from policies.xenos.layouts import INTERLEAVED, PLANAR, annotate
from policies.xenos.linking import fuse, link
from policies.xenos.partition import by_band, by_channels, fit_parameters
from simulator.engine.simulation import simulate
from simulator.spec.experiment import ExperimentSpec
from validation.xenos.checks import distributed_experiment


def conv(kid, deps="", k=1, c_in=32, c_out=32, hw=16, **extra):
    """An FP32 convolution row on ``hw`` x ``hw`` maps."""
    e = 4
    return kernel(kid, deps, op="conv", flops=2.0 * c_in * c_out * k * k * hw * hw,
                  nbytes=c_in * hw * hw * e, weight_bytes=c_in * c_out * k * k * e,
                  kernel=k, stride=1, in_channels=c_in, out_channels=c_out, in_h=hw, in_w=hw,
                  out_h=hw, out_w=hw, groups=1, **extra)


def elementwise(kid, deps, op, c=32, hw=16):
    return kernel(kid, deps, op=op, flops=c * hw * hw, nbytes=c * hw * hw * 4, kernel=0,
                  stride=0, in_channels=c, out_channels=c, in_h=hw, in_w=hw, out_h=hw,
                  out_w=hw)


@pytest.fixture
def chain():
    """3x3 conv -> BN -> ReLU -> 1x1 conv: the pointwise conv reads the planar
    output channel-interleaved."""
    return make_trace([conv(0, k=3), elementwise(1, "0", "batchnorm"),
                       elementwise(2, "1", "relu"), conv(3, "2", k=1)])


def test_a_pointwise_conv_reads_a_planar_map_across_channels(chain):
    strides, orders = annotate(chain)
    assert orders == [PLANAR, PLANAR, PLANAR, PLANAR]
    assert strides == [0.0, 0.0, 0.0, 16 * 16 * 4]  # one map (H*W*4 bytes) per read
    _, linked = annotate(chain, written={2: INTERLEAVED})
    assert linked[2] == INTERLEAVED


def test_vertical_optimisation_fuses_cbr_and_links_the_pair(chain):
    fused = fuse(chain)
    assert list(fused.table["op"]) == ["conv", "conv"]
    assert fused.table["flops"].sum() == pytest.approx(chain.table["flops"].sum())
    linked = link(fused, tiles=8)
    assert list(linked.table["read_stride"]) == [0.0, 0.0]  # 3x3 -> 1x1 is on the list
    # the producer of a 3x3 conv would repeat halo rows; a 1x1 consumer needs none
    assert linked.table["bytes_out"][0] == fused.table["bytes_out"][0]


def test_parts_split_the_work_and_read_what_they_need():
    row = dict(conv(0, k=3, c_out=20), read_stride=0.0)
    parts = by_channels(row, 8)  # 2 channels each + 4 leftovers shared by rows
    assert len(parts) == 8
    assert sum(p["flops"] for p in parts) == pytest.approx(row["flops"])
    assert all(p["bytes_in"] == row["bytes_in"] for p in parts)  # whole input each
    bands = by_band(row, 8, "inH")
    assert sum(p["bytes_out"] for p in bands) == pytest.approx(row["bytes_out"])
    assert all(p["weight_bytes"] == row["weight_bytes"] for p in bands)  # all kernels each
    assert sum(p["bytes_in"] for p in bands) > row["bytes_in"]  # boundary rows twice
    pieces, partial = fit_parameters(dict(row, weight_bytes=1000.0), 300.0, channels=20)
    assert len(pieces) == 4 and not partial
    pieces, partial = fit_parameters(dict(row, weight_bytes=1000.0), 300.0, channels=1)
    assert partial  # one channel too big: input-channel pieces with partial sums


def test_dos_splits_every_operator_over_the_units():
    cfg = SplitConfig(units=8, horizontal=True, budget=64 * 1024, shared=4 * 2**20)
    chains = plan_parts(dict(conv(0, k=3, c_out=64), read_stride=0.0), cfg)
    assert len(chains) == 1 and len(chains[0]) == 8
    big = dict(conv(0, k=3, c_in=256, c_out=256, hw=64), read_stride=0.0)
    assert len(plan_parts(big, cfg)) > 1  # 8 MB of maps: sliced to fit the 4 MB SRAM


def xenos(model: str, horizontal: bool, vertical: bool, soc: str = "tms320c6678",
          processor: str = "dsp", **workload) -> float:
    spec = ExperimentSpec.model_validate({
        "name": "t", "soc": soc, "workload": {"model": model, **workload},
        "policy": {"name": "xenos", "horizontal": horizontal, "vertical": vertical,
                   "processor": processor},
        "outputs": {"timeline": False}})
    return simulate(spec)


def test_ho_beats_vanilla_and_vo_adds_to_it_on_the_board():
    times = [xenos("mobilenet_v1", h, v, input_size=128).metrics["latency_s"]
             for h, v in ((False, False), (True, False), (True, True))]
    assert times[0] > times[1] > times[2]


def test_on_the_fpga_ho_beats_vanilla_on_the_int8_cores():
    # the ZCU102's DPU cores run INT8 only (socs/zcu102.yaml)
    times = [xenos("mobilenet_v1", h, False, "zcu102", "npu", input_size=128,
                   precision="int8").metrics["latency_s"] for h in (False, True)]
    assert times[1] < 0.6 * times[0]


def test_the_zcu102_fit_moves_the_vanilla_library_only():
    # the fitted MAC rate is the operator-centric library's own table: HO's kernels run
    # on the xenos library and keep the processor's, so only Vanilla's time moves
    from validation.xenos import fit
    slow, fast = (fit.with_parameters(mac, 0.6, "zcu102") for mac in (0.05, 0.5))
    vanilla = [fit.latency_s("lstm", "vanilla", spec, "zcu102") for spec in (slow, fast)]
    ho = [fit.latency_s("lstm", "HO", spec, "zcu102") for spec in (slow, fast)]
    assert vanilla[0] > 2 * vanilla[1]
    assert ho[0] == ho[1]


def test_every_part_runs_on_one_unit():
    result = xenos("mobilenet_v1", True, True, input_size=64)
    assert set(result.kernels["units"]) == {1}
    assert result.kernels["lanes"].map(len).eq(1).all()


def test_traffic_series_are_added_per_level():
    spec = ExperimentSpec.model_validate({
        "name": "t", "soc": "tms320c6678", "workload": {"model": "lenet5"},
        "policy": {"name": "xenos", "traffic_period": "20 us"}})
    series = simulate(spec).timeseries
    names = set(series["name"])
    assert {"traffic.l1", "traffic.l2", "traffic.msmc", "traffic.dram"} <= names
    assert (series[series["name"] == "traffic.dram"]["value"] >= 0).all()


@pytest.mark.parametrize("sync", ["ps", "ring"])
def test_four_boards_beat_one(sync):
    def latency(boards):
        raw = distributed_experiment("mobilenet_v1", boards, "mixed", sync)
        raw["workload"]["input_size"] = 128
        return simulate(ExperimentSpec.model_validate(raw)).metrics["latency_s"]

    assert latency(4) < latency(1) / 1.5


def test_ring_relays_every_part_through_the_other_boards():
    raw = distributed_experiment("lenet5", 3, "outC", "ring")
    raw["outputs"]["kernels"] = True
    labels = simulate(ExperimentSpec.model_validate(raw)).kernels["label"]
    relays = labels[labels.str.contains(".ring")]
    # every gathered operator: 3 chunks x 2 hops
    assert len(relays) % 6 == 0 and len(relays) > 0
    raw["policy"]["sync"] = "ps"
    labels = simulate(ExperimentSpec.model_validate(raw)).kernels["label"]
    assert labels.str.contains(".gather@device").any()


def test_only_boundary_rows_and_one_input_cross_the_link():
    raw = distributed_experiment("lenet5", 2, "inH", "ring")
    transfers = simulate(ExperimentSpec.model_validate(raw)).transfers
    halos = transfers[transfers["label"].str.contains("halo-to")]
    # conv2's 5x5 window needs 4 boundary rows of the neighbour's share of conv1's
    # pooled 6 x 14 x 14 FP32 map: one halo each way, not the neighbour's whole part
    assert len(halos) == 2
    assert (halos["bytes"] == 6 * 4 * 14 * 4).all()
    inputs = transfers[transfers["label"] == "input"]
    assert len(inputs) == 1  # the second board's units share one upload of its band


def test_a_device_port_is_shared_by_all_its_links():
    import simpy

    from simulator.engine.links import BandwidthSchedule, Channel, Port

    def arrivals(ports: bool) -> list[float]:
        env = simpy.Environment()
        out = Port("ps.out", 1e9)
        links = [Channel(env, f"link.ps-b{i}", BandwidthSchedule.constant(1e9),
                         ports=(out,) if ports else ()) for i in range(3)]
        return [link.send(1e6, lambda: None) for link in links]

    # three boards fed at once over three links: together through one port ...
    assert arrivals(ports=True) == pytest.approx([1e-3, 2e-3, 3e-3])
    # ... or side by side when each link were on its own
    assert arrivals(ports=False) == pytest.approx([1e-3, 1e-3, 1e-3])


def _estimate_and_latency(raw: dict) -> tuple[float, float]:
    from simulator.engine.simulation import Simulation

    sim = Simulation(ExperimentSpec.model_validate(raw)).build().plan()
    estimate = sim.policy.estimates[sim.jobs[0].name]
    return estimate, sim.run().collect().metrics["latency_s"]


@pytest.mark.parametrize("sync", ["ps", "ring"])
def test_the_exchange_estimate_matches_the_emitted_plan(sync):
    # outC everywhere: every windowed operator gathers its input (the ring's relay
    # copies and the server's serialised port are in the estimate as in the plan)
    raw = distributed_experiment("mobilenet_v1", 4, "outC", sync)
    raw["workload"]["input_size"] = 96
    estimate, latency = _estimate_and_latency(raw)
    assert estimate == pytest.approx(latency, rel=0.10)


def test_the_parameter_server_port_is_the_bottleneck_of_gathers():
    def latency(sync, port):
        raw = distributed_experiment("mobilenet_v1", 4, "outC", sync, port=port)
        raw["workload"]["input_size"] = 96
        return simulate(ExperimentSpec.model_validate(raw)).metrics["latency_s"]

    # the server's one port sends the whole tensor to three boards in turn
    assert latency("ps", "2 GB/s") > 1.2 * latency("ps", None)
    # the ring's steps use every port once in each direction: no such queue
    assert latency("ring", "2 GB/s") == pytest.approx(latency("ring", None), rel=0.05)
    assert latency("ps", "2 GB/s") > latency("ring", "2 GB/s")


def test_linking_keeps_linked_tensors_on_chip(chain):
    from policies.xenos.linking import spill_all

    fused = fuse(chain)
    assert spill_all(fused) == [1.0, 1.0]  # operator-centric: every map through DDR
    linked = link(fused, tiles=8)
    # the 3x3 conv streams its output to the 1x1 conv on chip: the first keeps only its
    # input (the model's) off chip, the second only its output
    spill = list(linked.table["spill"])
    first, second = linked.table.to_dict("records")
    assert spill[0] == pytest.approx(first["bytes_in"] / (first["bytes_in"] + first["bytes_out"]))
    assert spill[1] == pytest.approx(second["bytes_out"]
                                     / (second["bytes_in"] + second["bytes_out"]))


def test_vertical_optimisation_cuts_off_chip_traffic_and_time():
    def dram(vertical):
        result = xenos("mobilenet_v1", True, vertical, input_size=128)
        return result.metrics["latency_s"], result.metrics

    ho, ho_metrics = dram(False)
    vo, vo_metrics = dram(True)
    # the feature maps between linked operators no longer go through DDR3
    assert vo < 0.85 * ho
    assert vo_metrics["energy_dram_j"] < 0.7 * ho_metrics["energy_dram_j"]
