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

from simulator.engine.simulation import Simulation
from simulator.spec.experiment import ExperimentSpec

CLIENT_SOC = "jetson-agx-xavier"
SERVER_SOC = "desktop-i7-1080ti"


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
    # DynO's testbed, built as a run would build it but not run
    sim = Simulation(ExperimentSpec.model_validate({
        "name": "dyno-overhead", "soc": CLIENT_SOC, "devices": {"server": {"soc": SERVER_SOC}},
        "links": [{"between": ["device", "server"], "preset": preset}],
        "workload": {"model": model, "batch": 1, "max_in_flight": 4},
        "policy": {"name": "dyno", **params}, "dvfs": {"governor": "performance"},
        "seed": 0})).build()
    dyno, job = sim.policy, sim.jobs[0]
    dyno.plan(job)  # builds the profile and the profiler (offline, not timed)
    times = []
    for _ in range(invocations):
        start = time.perf_counter()
        dyno.invoke(job)
        times.append(time.perf_counter() - start)
    return times
