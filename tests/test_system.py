"""Several devices joined by network links whose bandwidth may vary over time."""

from __future__ import annotations

import pytest
from conftest import kernel, make_trace

from simulator.engine.links import BandwidthSchedule
from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.spec.experiment import ExperimentSpec


def test_schedule_integrates_bandwidth_over_segments():
    schedule = BandwidthSchedule([0.0, 1.0], [100.0, 10.0])
    # 100 B by t=1 s, then 10 B/s: 150 B sent at t = 6 s
    assert schedule.finish_time(0.0, 150.0) == pytest.approx(6.0)
    periodic = BandwidthSchedule([0.0, 1.0], [100.0, 10.0], period=2.0)
    # 100 B in [0,1), 10 B in [1,2), then 100 B/s again: 160 B at t = 2.5 s
    assert periodic.finish_time(0.0, 160.0) == pytest.approx(2.5)
    assert periodic.at(3.5) == 10.0


def _two_devices(tiny_soc, tiny_soc_file, link: dict) -> dict:
    return {"name": "edge", "soc": "tiny", "dvfs": {"governor": "performance"},
            "devices": {"server": {"soc": str(tiny_soc_file)}}, "links": [link],
            "workload": {"trace": "x"},
            "policy": {"name": "manual", "default": "cpu.big", "kernels": {1: "server:cpu.big"}}}


def test_data_crosses_the_network_link(tiny_soc, tiny_soc_file):
    trace = make_trace([kernel(0, nbytes=1e5), kernel(1, "0", nbytes=1e5)])
    spec = _two_devices(tiny_soc, tiny_soc_file, {"between": ["device", "server"],
                                                  "bandwidth": "1 MB/s", "latency": "10 ms"})
    result = simulate(ExperimentSpec.model_validate(spec), traces={0: trace}, soc=tiny_soc)
    transfer = result.transfers.iloc[0]
    assert transfer["channel"] == "link.device-server"
    assert transfer["end_s"] - transfer["start_s"] == pytest.approx(0.1)
    k = result.kernels.set_index("row")
    assert k.loc[1, "processor"] == "server:cpu.big"
    assert k.loc[1, "start_s"] == pytest.approx(transfer["end_s"] + 0.01)
    # both devices draw power and are reported apart; energy_j adds them up
    m = result.metrics
    assert m["server.energy_base_j"] > 0 and m["device.energy_base_j"] > 0
    for device in ("device", "server"):
        parts = [v for k, v in m.items()
                 if k.startswith(f"{device}.energy_") and k != f"{device}.energy_j"]
        assert m[f"{device}.energy_j"] == pytest.approx(sum(parts), rel=1e-12)
        assert m[f"{device}.avg_power_w"] == pytest.approx(m[f"{device}.energy_j"]
                                                           / m["makespan_s"])
    assert m["energy_j"] == pytest.approx(m["device.energy_j"] + m["server.energy_j"])
    assert m["avg_power_w"] == pytest.approx(m["device.avg_power_w"] + m["server.avg_power_w"])


def test_link_to_an_unknown_device_is_an_error(tiny_soc, tiny_soc_file):
    spec = _two_devices(tiny_soc, tiny_soc_file, {"between": ["device", "cloud"],
                                                  "bandwidth": "1 MB/s"})
    with pytest.raises(ConfigError, match="unknown device 'cloud'") as info:
        simulate(ExperimentSpec.model_validate(spec), traces={0: make_trace([kernel(0)])},
                 soc=tiny_soc)
    assert info.value.path == "links[0].between"
