"""Network links between devices: presets, bandwidth traces and RRC radio energy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import kernel, make_trace

from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.network.presets import LINK_PRESETS, MBIT_S
from simulator.network.radio import RADIO_PROFILES, Radio
from simulator.network.traces import markov_trace, read_trace
from simulator.spec.experiment import ExperimentSpec

LTE = RADIO_PROFILES["lte"]


def test_a_transfer_from_idle_waits_for_the_promotion_and_leaves_a_tail():
    radio = Radio(LTE)
    start = radio.wake(1.0)
    assert start == pytest.approx(1.0 + LTE.promotion)
    radio.transfer(start, start + 0.5, 0.5 * MBIT_S * 4, uplink=True)  # 4 Mbit/s for 0.5 s
    assert radio.wake(start + 0.6) == start + 0.6  # in the tail: no promotion
    # promotion + transfer + the whole tail, by hand
    transfer_power = LTE.beta + LTE.alpha_up * 4
    expected = (LTE.promotion * LTE.promotion_power + 0.5 * transfer_power
                + sum(state.duration * state.power for state in LTE.tail))
    end = start + 0.5 + LTE.tail_time
    measured = Radio(LTE)
    measured.wake(1.0)
    measured.transfer(start, start + 0.5, 0.5 * MBIT_S * 4, uplink=True)
    assert measured.energy(1.0, end) == pytest.approx(expected)
    assert measured.power_at(end + 1.0) == pytest.approx(LTE.idle_power)


def test_radio_energy_adds_up_over_any_windows():
    whole, parts = Radio(RADIO_PROFILES["3g"]), Radio(RADIO_PROFILES["3g"])
    for radio in (whole, parts):
        t = radio.wake(0.5)
        radio.transfer(t, t + 0.2, 2e4, uplink=True)
        t2 = radio.wake(t + 6.0)  # in the FACH tail: a FACH -> DCH promotion
        radio.transfer(t2, t2 + 0.1, 1e4, uplink=False)
    assert t2 == pytest.approx(t + 6.0 + RADIO_PROFILES["3g"].tail[1].promotion)
    edges = np.linspace(0.0, 30.0, 301)
    pieces = sum(parts.energy(a, b) for a, b in zip(edges, edges[1:]))
    assert pieces == pytest.approx(whole.energy(0.0, 30.0))


@pytest.mark.parametrize("profile", sorted(RADIO_PROFILES))
def test_a_window_inside_a_stretch_of_constant_power_costs_what_a_full_scan_does(profile):
    # A device integrates every 10 ms step while transfers come and go: the stretch
    # kept between activities must give the very floats of a scan of every activity.
    rng = np.random.default_rng(1)
    kept, scanned = Radio(RADIO_PROFILES[profile]), Radio(RADIO_PROFILES[profile])
    now, hits, sums = 0.0, 0, [0.0, 0.0]
    for step in range(3000):
        if rng.random() < 0.02:  # a frame's transfer starts now
            length, uplink = rng.random() * 0.3, rng.random() < 0.5
            for radio in (kept, scanned):
                start = radio.wake(now)
                radio.transfer(start, start + length, 1e5, uplink)
        # a window ends on an activity's edge (a transfer's start or end, a tail state's
        # change) every other time one falls in it
        end = now + 0.01
        edges = [t for start, stop, *_ in kept._activities
                 for t in (start, stop, *(stop + off for off in kept._tail_offsets))
                 if now < t < end]
        if edges and step % 2:
            end = min(edges)
        scanned._stretch = None  # every window scanned
        hits += kept._stretch is not None and kept._stretch[0] <= now and end <= kept._stretch[1]
        sums[0] += kept.energy(now, end)
        sums[1] += scanned.energy(now, end)
        assert sums[0] == sums[1], step
        now = end
    assert hits > 1500  # most windows are inside a stretch


def _linked(tiny_soc_file, link: dict, rows=None) -> dict:
    return {"name": "net", "soc": "tiny", "dvfs": {"governor": "performance"},
            "devices": {"server": {"soc": str(tiny_soc_file)}},
            "links": [{"between": ["device", "server"], **link}],
            "workload": {"trace": "x"},
            "policy": {"name": "manual", "default": "cpu.big",
                       "kernels": {1: "server:cpu.big"}}}


def _run(tiny_soc, tiny_soc_file, link: dict):
    trace = make_trace([kernel(0, nbytes=1e6), kernel(1, "0", nbytes=1e6)])
    spec = ExperimentSpec.model_validate(_linked(tiny_soc_file, link))
    return simulate(spec, traces={0: trace}, soc=tiny_soc)


def test_a_preset_gives_bandwidth_latency_and_a_radio(tiny_soc, tiny_soc_file):
    result = _run(tiny_soc, tiny_soc_file, {"preset": "4g"})
    up = result.transfers[result.transfers["channel"] == "link.device-server"].iloc[0]
    preset = LINK_PRESETS["4g"]
    assert up["end_s"] - up["start_s"] == pytest.approx(1e6 / preset.uplink)
    k = result.kernels.set_index("row")
    # the radio was idle: the upload waited for the LTE promotion
    assert up["start_s"] == pytest.approx(k.loc[0, "end_s"] + LTE.promotion)
    assert k.loc[1, "start_s"] == pytest.approx(up["end_s"] + preset.rtt / 2)
    assert result.metrics["device.energy_radio_j"] > 0
    assert "server.energy_radio_j" not in result.metrics
    wired = _run(tiny_soc, tiny_soc_file, {"preset": "gbe"})
    assert "device.energy_radio_j" not in wired.metrics
    # explicit values override the preset
    slow = _run(tiny_soc, tiny_soc_file, {"preset": "4g", "bandwidth": "1 Mbit/s",
                                          "radio": "none"})
    up = slow.transfers.iloc[0]
    assert up["end_s"] - up["start_s"] == pytest.approx(8.0)
    assert "device.energy_radio_j" not in slow.metrics


def test_a_trace_file_sets_bandwidth_and_latency_over_time(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("time_s,bandwidth_mbps,latency_ms\n0,8,10\n1,80,1\n")
    conditions = read_trace(path, latency=0.5)
    assert conditions.uplink.at(0.5) == pytest.approx(1e6)
    assert conditions.downlink.at(2.0) == pytest.approx(1e7)
    assert conditions.latency.at(0.5) == pytest.approx(0.010)
    path.write_text("time_s,speed\n0,8\n")
    with pytest.raises(ConfigError, match="columns must be") as info:
        read_trace(path, latency=0.0)
    assert info.value.file == str(path)


def test_the_markov_generator_is_seeded_and_moves_between_states():
    def trace(seed):
        return markov_trace(["wifi5", "4g", "3g"], mean_dwell=5.0, duration=60.0,
                            jitter=0.2, step=1.0, rng=np.random.default_rng(seed),
                            latency=0.0)

    first, again, other = trace(3), trace(3), trace(4)
    assert first.uplink.values == again.uplink.values
    assert first.uplink.values != other.uplink.values
    levels = {round(np.log10(v / MBIT_S)) for v in first.uplink.values}
    assert len(levels) >= 2  # visited states of different orders of magnitude
    assert first.uplink.times[-1] < 60.0


@pytest.mark.parametrize("link, path", [
    ({"preset": "5g"}, "links[0]"),
    ({"preset": "4g", "radio": "bluetooth"}, "links[0]"),
    ({"bandwidth": "1 Mbit/s", "trace": "x.csv"}, "links[0]"),
])
def test_bad_links_are_config_errors(tiny_soc_file, link, path):
    from simulator.spec.yamlio import validate

    with pytest.raises(ConfigError) as info:
        validate(ExperimentSpec, _linked(tiny_soc_file, link), file="exp.yaml")
    assert info.value.path.startswith(path) and "\n" not in str(info.value)
