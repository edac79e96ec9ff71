"""The DynO scheduler's own cost: wall-clock time per decision on this machine.

:func:`decision_times` sets a DynO policy up on the Jetson + server system of
DynO's testbed (no simulation run) and times repeated invocations of the
scheduler: the profiler's estimates for every candidate <s, c> followed by
the constraint/target selection. Used by ``benchmarks/dyno_scheduler.py``
and the ``dyno.scheduler.*`` validation checks. DynO reports at most 14 ms
(11 ms geometric mean) on the Jetson's CPU; this measures the host running
the simulator.
"""

from __future__ import annotations

import time

import numpy as np
import simpy

from simulator.engine.device import Device
from simulator.engine.dvfs import GOVERNORS
from simulator.engine.system import System
from simulator.library import load_soc
from simulator.network.build import build_links
from simulator.policy import Job, PolicyContext, make_policy
from simulator.spec.system import LinkSpec
from workloads.generate import generate_trace

CLIENT_SOC = "jetson-agx-xavier"
SERVER_SOC = "desktop-i7-1080ti"


def _system(preset: str) -> System:
    env = simpy.Environment()
    devices = {}
    for name, soc in (("device", CLIENT_SOC), ("server", SERVER_SOC)):
        spec = load_soc(soc)
        governors = {local: GOVERNORS.get("performance")() for local in spec.processors()}
        devices[name] = Device(env, name, spec, governors, lambda *_: None,
                               prefix=f"{name}:")
    system = System(devices)
    build_links(env, [LinkSpec(between=("device", "server"), preset=preset)], system,
                np.random.default_rng(0))
    return system


def decision_times(model: str, invocations: int = 20, preset: str = "4g",
                   policy: dict | None = None) -> list[float]:
    """Seconds per scheduler invocation (estimates + selection) for ``model``.

    Args:
        model: a zoo model (batch 1 inference).
        invocations: decisions timed (after one untimed warm-up).
        preset: the link.
        policy: the ``dyno`` parameters (default: maximum throughput under 1 pp).
    """
    params = policy or {"targets": [{"metric": "throughput", "goal": "max"},
                                    {"metric": "server_cost", "goal": "min"}]}
    dyno = make_policy({"name": "dyno", **params})
    dyno.bind(PolicyContext(system=_system(preset), rng=np.random.default_rng(0)))
    job = Job(name=model, trace=generate_trace(model), device="device",
              params={"model": model}, max_in_flight=4)
    dyno.plan(job)  # builds the profile and the profiler (offline, not timed)
    state = dyno._jobs[model]
    times = []
    for _ in range(invocations):
        start = time.perf_counter()
        dyno._invoke(job, state)
        times.append(time.perf_counter() - start)
    return times
