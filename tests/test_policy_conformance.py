"""Conformance of every registered policy (like Gymnasium's env checker).

On the Snapdragon 865 each policy must: place every kernel on a processor that
exists and can run it, never double-book a core, respect dependencies and
transfers, and be deterministic under a seed. The run is audited
(:mod:`simulator.engine.audit`): every kernel of every iteration runs exactly
once, none starts before all its dependencies and the transfers they need
end, no lane runs two kernels at once; a broken promise fails the test.
"""

from __future__ import annotations

import pandas as pd
import pytest

import policies  # noqa: F401  (registers built-ins)
from simulator.engine.simulation import simulate
from simulator.policy import POLICIES
from simulator.spec.experiment import ExperimentSpec


def _experiment(name: str) -> ExperimentSpec:
    conformance = POLICIES.get(name).conformance
    return ExperimentSpec.model_validate({
        "name": f"conformance-{name}", "soc": "snapdragon865",
        "workload": {**conformance["workload"], "iterations": 2},
        "policy": {"name": name, **conformance["params"]},
        "dvfs": {"governor": "schedutil"}, "seed": 11})


@pytest.mark.parametrize("name", POLICIES.names())
def test_policy_conforms(name):
    exp = _experiment(name)
    first = simulate(exp, audit=True)
    kernels = first.kernels
    assert first.meta["audit"]["kernels"] == len(kernels)  # every kernel was checked
    assert first.metrics["completed"] == 1.0
    assert not kernels.duplicated(["iteration", "row", "job"]).any()
    # no lane of a processor runs two kernels at once
    for _, group in kernels.explode("lanes").dropna(subset=["lanes"]).groupby(
            ["processor", "lanes"]):
        spans = group.sort_values("start_s")[["start_s", "end_s"]].to_numpy()
        assert (spans[1:, 0] >= spans[:-1, 1] - 1e-12).all()
    # deterministic under a seed
    second = simulate(exp)
    # (NaN metrics, e.g. the latency of a run without iterations, compare equal)
    assert pd.Series(first.metrics).equals(pd.Series(second.metrics))
    assert first.kernels.equals(second.kernels)
