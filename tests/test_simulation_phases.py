"""The run lifecycle, phase by phase: build -> plan -> run -> collect."""

from __future__ import annotations

import pytest

from simulator.engine.simulation import Simulation, simulate
from simulator.errors import ConfigError
from simulator.spec.experiment import ExperimentSpec


def experiment(**extra) -> ExperimentSpec:
    spec = {"name": "t", "soc": "tiny", "workload": {"trace": "<memory>", "iterations": 2},
            "policy": {"name": "single", "processor": "cpu.big"},
            "dvfs": {"governor": "performance"}}
    spec.update(extra)
    return ExperimentSpec.model_validate(spec)


def test_build_gives_a_usable_system_without_running(tiny_soc, chain):
    sim = Simulation(experiment(), traces={0: chain}, soc=tiny_soc).build()
    assert sim.env.now == 0.0 and list(sim.devices) == ["device"]
    assert [job.name for job in sim.jobs] == ["<memory>"]
    plan = sim.policy.plan(sim.jobs[0])  # e.g. timing a policy's decision
    assert {p.processor for p in plan.placements} == {"cpu.big"}
    assert sim.env.now == 0.0


def test_phases_give_what_simulate_gives(tiny_soc, chain):
    whole = simulate(experiment(), traces={0: chain}, soc=tiny_soc)
    phased = Simulation(experiment(), traces={0: chain}, soc=tiny_soc).build().plan().run()
    result = phased.collect()
    assert {k: v for k, v in result.metrics.items()} == whole.metrics
    assert result.kernels.equals(whole.kernels)


def test_phases_run_in_order(tiny_soc, chain):
    sim = Simulation(experiment(), traces={0: chain}, soc=tiny_soc)
    with pytest.raises(RuntimeError, match="after build"):
        sim.plan()


@pytest.mark.parametrize("dvfs, path", [
    ({"governor": "performance", "period": "5 ms"}, "dvfs.period"),
    ({"governor": "schedutil", "domains": {"cpu.big": {"governor": "powersave",
                                                       "headroom": 1.5}}},
     "dvfs.domains.cpu.big.headroom"),
    ({"governor": "userspace", "frequency": "1 GHz", "headroom": 1.2}, "dvfs.headroom"),
])
def test_a_governor_parameter_the_governor_does_not_take_is_an_error(tiny_soc, chain, dvfs,
                                                                      path):
    with pytest.raises(ConfigError) as info:
        simulate(experiment(dvfs=dvfs), traces={0: chain}, soc=tiny_soc)
    assert info.value.path == path and "takes no" in str(info.value)


def test_top_level_parameters_do_not_reach_domains_with_their_own_entry(tiny_soc, chain):
    dvfs = {"governor": "schedutil", "period": "5 ms",
            "domains": {"cpu.little": {"governor": "performance"}, "dsp": {}}}
    assert simulate(experiment(dvfs=dvfs), traces={0: chain}, soc=tiny_soc).metrics["completed"]
