"""Flash storage (simulator.engine.storage): reads as time, storage energy and DRAM traffic."""

from __future__ import annotations

import pytest
import simpy
from conftest import kernel, make_trace

from simulator.engine.simulation import simulate
from simulator.engine.storage import Storage
from simulator.policy import POLICIES, Placement, Plan, Policy
from simulator.spec.experiment import ExperimentSpec
from simulator.spec.soc import SocSpec, StorageSpec

SPEC = StorageSpec.model_validate({"read_bandwidth": "100 MB/s", "write_bandwidth": "50 MB/s",
                                   "latency": "1 ms", "read_power": "0.5 W"})


def test_reads_queue_and_take_latency_plus_bytes_over_bandwidth():
    env = simpy.Environment()
    storage = Storage(env, SPEC)
    done = []
    first = storage.read(100e6, lambda: done.append(env.now))
    second = storage.read(50e6, lambda: done.append(env.now))
    env.run()
    assert first == pytest.approx(1.001)
    assert second == pytest.approx(1.001 + 0.501)  # FIFO behind the first read
    assert done == pytest.approx([1.001, 1.502])


def test_energy_is_power_while_busy_over_consecutive_windows():
    env = simpy.Environment()
    storage = Storage(env, SPEC)
    storage.read(100e6)
    storage.write(50e6)  # full duplex: overlaps the read
    env.run()
    windows = [(0.0, 0.5), (0.5, 1.0), (1.0, 3.0)]
    joules, moved = 0.0, 0.0
    for t0, t1 in windows:
        joules += storage.energy(t0, t1)
        moved += storage.dram_bytes()
    assert joules == pytest.approx(0.5 * (1.001 + 1.001))
    assert moved == pytest.approx(150e6)


class Loader(Policy):
    """Reads ``nbytes`` from flash at time 0; the job waits for it (a model load)."""

    name = "loader"

    def __init__(self, nbytes: float = 0.0):
        self.nbytes = nbytes

    def bind(self, context):
        super().bind(context)
        context.start(self._load(context))

    def _load(self, context):
        job = context.job("j0")
        job.suspend()
        context.storage().read(self.nbytes, job.resume)
        yield context.timeout(0)

    def plan(self, job):
        return Plan([Placement("cpu.big", 2)] * len(job.trace))


def test_a_device_with_storage_reports_its_energy(tiny_soc_dict, monkeypatch):
    monkeypatch.setitem(POLICIES._entries, "loader", Loader)
    tiny_soc_dict["storage"] = {"read_bandwidth": "100 MB/s", "latency": "1 ms",
                                "read_power": "0.5 W"}
    soc = SocSpec.model_validate(tiny_soc_dict)
    exp = ExperimentSpec.model_validate({
        "name": "t", "soc": "tiny", "workload": {"name": "j0", "trace": "<memory>"},
        "policy": {"name": "loader", "nbytes": 100e6}, "dvfs": {"governor": "performance"}})
    trace = make_trace([kernel(0, flops=1e6, nbytes=0)])
    result = simulate(exp, traces={0: trace}, soc=soc)
    assert result.kernels["start_s"].iloc[0] == pytest.approx(1.001)  # after the load
    assert result.metrics["energy_storage_j"] == pytest.approx(0.5 * 1.001)
    # the loaded bytes are written to DRAM at its energy per byte (20 pJ/B)
    assert result.metrics["energy_dram_j"] == pytest.approx(100e6 * 20e-12, rel=1e-6)
    components = [k for k in result.metrics if k.startswith("energy_") and k.endswith("_j")
                  and k not in ("energy_j", "energy_per_iteration_j")]
    assert "energy_storage_j" in components
    total = sum(result.metrics[k] for k in components)
    assert total == pytest.approx(result.metrics["energy_j"])


def test_storage_is_optional_and_validated(tiny_soc_dict):
    assert SocSpec.model_validate(tiny_soc_dict).storage is None
    tiny_soc_dict["storage"] = {"read_bandwidth": "100 MB"}
    with pytest.raises(ValueError, match="bandwidth"):
        SocSpec.model_validate(tiny_soc_dict)


def test_a_model_load_is_a_read_then_cpu_work_with_its_own_energy():
    spec = StorageSpec.model_validate({"read_bandwidth": "100 MB/s", "latency": "1 ms",
                                       "read_power": "0.5 W", "load_bandwidth": "50 MB/s",
                                       "load_latency": "2 ms", "load_power": "1.5 W"})
    env = simpy.Environment()
    storage = Storage(env, spec)
    done = []
    storage.load(100e6, lambda: done.append(env.now))
    env.run()
    read, cpu = 1.001, 0.002 + 2.0
    assert done == pytest.approx([read + cpu])  # ready only after the CPU work
    assert storage.energy(0.0, 10.0) == pytest.approx(0.5 * read)
    assert storage.load_energy(0.0, 10.0) == pytest.approx(1.5 * cpu)
    # Without load_bandwidth a load is a read, as before.
    plain = Storage(simpy.Environment(), SPEC)
    plain.load(100e6)
    plain.env.run()
    assert plain.load_energy(0.0, 10.0) == 0.0
    assert plain.energy(0.0, 10.0) == pytest.approx(0.5 * 1.001)
