"""Policy parameters declared once, in the constructor's annotated signature."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field

from simulator.errors import ConfigError
from simulator.params import Bytes, PositiveInt, PositiveSeconds, Quantity
from simulator.policy import POLICIES, Placement, Plan, Policy, make_policy


class Declared(Policy):
    """A policy whose signature is its schema."""

    name = "declared"

    def __init__(self, cores: PositiveInt | None = None,
                 mode: Literal["fast", "slow"] = "fast",
                 threshold: Annotated[float, Field(gt=0)] = 1.5,
                 period: PositiveSeconds | None = None, memory: Bytes = "400 MB",
                 processors: str | list[str] = "cpu.big", loose=None):
        self.cores, self.mode, self.threshold = cores, mode, threshold
        self.period, self.memory, self.processors, self.loose = period, memory, processors, loose

    def plan(self, job):
        return Plan([Placement("cpu.big")] * len(job.trace))


@pytest.fixture
def declared(monkeypatch):
    monkeypatch.setitem(POLICIES._entries, "declared", Declared)


@pytest.mark.parametrize("params, path, message", [
    ({"cores": 0}, "policy.cores", "must be >= 1; got 0"),
    ({"cores": "3"}, "policy.cores", "must be an integer; got '3'"),
    ({"mode": "medium"}, "policy.mode", "must be 'fast' or 'slow'; got 'medium'"),
    ({"threshold": -1}, "policy.threshold", "must be > 0; got -1"),
    ({"period": 10}, "policy.period", "must be a time like '25 ms' (the unit is required)"),
    ({"period": "0 s"}, "policy.period", "must be > 0; got '0 s'"),
    ({"processors": ["cpu.big", 3]}, "policy.processors[1]", "must be a string; got 3"),
    ({"processors": 3}, "policy.processors", "must be a string or a list; got 3"),
    ({"colour": "red"}, "policy.colour", "takes no parameter 'colour'"),
])
def test_bad_parameters_name_their_yaml_path(declared, params, path, message):
    with pytest.raises(ConfigError) as info:
        make_policy({"name": "declared", **params})
    assert info.value.path == path and message in str(info.value)


def test_quantities_arrive_parsed_and_are_recorded_as_written(declared):
    policy = make_policy({"name": "declared", "period": "10 ms"})
    assert isinstance(policy.period, Quantity) and policy.period == pytest.approx(0.01)
    assert policy.memory == 400e6  # a quantity default is parsed too
    assert policy.params() == {"cores": None, "mode": "fast", "threshold": 1.5,
                               "period": "10 ms", "memory": "400 MB",
                               "processors": "cpu.big", "loose": None}


def test_direct_construction_is_checked_too():
    with pytest.raises(ConfigError) as info:
        Declared(threshold=0)
    assert info.value.path == "threshold"
    assert Declared(7).cores == 7  # positional arguments are checked by name


def test_every_registered_policy_builds_with_its_defaults():
    import policies  # noqa: F401  (registers the built-in policies)

    for name in POLICIES.names():
        params = make_policy({"name": name}).params()
        assert all(not isinstance(v, Quantity) for v in params.values()), name
