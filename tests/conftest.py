"""Shared fixtures: a tiny SoC, small traces and a one-call simulation helper."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from simulator.engine.simulation import simulate
from simulator.spec.experiment import ExperimentSpec
from simulator.spec.soc import SocSpec
from simulator.trace import trace_from_table


@pytest.fixture(autouse=True)
def _private_check_cache(tmp_path_factory, monkeypatch):
    """Every test gets an empty cache of check values (``socsim validate``): test
    checks registered at run time must not meet each other's cached values."""
    monkeypatch.setenv("SOCSIM_CACHE_DIR", str(tmp_path_factory.mktemp("socsim-cache")))


TINY_SOC = {
    "name": "tiny",
    "cpu": {
        "big": {
            "kind": "cpu", "units": 2,
            "opps": ["1 GHz @ 0.7 V", "2 GHz @ 1.0 V"],
            "ops_per_cycle": {"fp32": 8, "int8": 32},
            "efficiency": {"default": 0.5},
            "parallel_efficiency": 1.0,
            "caches": [{"name": "l2", "size": "256 KiB", "bytes_per_cycle": 32}],
            "thermal_node": "cpu",
            "power": {"ceff": "1 nF", "leakage": "50 mW", "idle": "10 mW"},
        },
        "little": {
            "kind": "cpu", "units": 2,
            "opps": ["0.5 GHz @ 0.6 V", "1 GHz @ 0.8 V"],
            "ops_per_cycle": {"fp32": 4, "int8": 16},
            "efficiency": {"default": 0.5},
            "thermal_node": "cpu",
            "power": {"ceff": "0.2 nF", "idle": "2 mW"},
        },
    },
    "dsp": {
        "kind": "dsp", "units": 1,
        "opps": ["500 MHz @ 0.8 V"],
        "ops_per_cycle": {"int8": 512},
        "efficiency": {"default": 0.5},
        "caches": [{"name": "l2", "size": "1 MiB", "per_unit": False, "bytes_per_cycle": 128}],
        "offload": {"switch": "1 ms", "bandwidth": "1 GB/s"},
        "unsupported_ops": ["batchnorm"],
        "thermal_node": "dsp",
        "power": {"ceff": "1 nF"},
    },
    "memory": {"dram": {"size": "4 GiB", "bandwidth": "10 GB/s",
                        "energy_per_byte": "20 pJ/B"}},
    "power": {"base": "0.2 W"},
    "thermal": {
        "ambient": "25 C", "step": "10 ms", "board_node": "board", "skin_node": "board",
        "nodes": {"cpu": {"capacity": "0.5 J/K"}, "dsp": {"capacity": "0.5 J/K"},
                  "board": {"capacity": "20 J/K"}},
        "links": [{"between": ["cpu", "board"], "conductance": "1 W/K"},
                  {"between": ["dsp", "board"], "conductance": "1 W/K"},
                  {"between": ["board", "ambient"], "conductance": "0.5 W/K"}],
    },
}


@pytest.fixture
def tiny_soc_dict() -> dict:
    """The tiny SoC as a mapping (copy it before changing it)."""
    import copy

    return copy.deepcopy(TINY_SOC)


@pytest.fixture
def tiny_soc(tiny_soc_dict) -> SocSpec:
    return SocSpec.model_validate(tiny_soc_dict)


@pytest.fixture
def hot_soc(tiny_soc_dict) -> SocSpec:
    """The tiny SoC with a CPU trip low enough to throttle within seconds."""
    tiny_soc_dict["cpu"]["big"]["opps"] = ["0.5 GHz @ 0.6 V", "1 GHz @ 0.7 V",
                                           "1.5 GHz @ 0.85 V", "2 GHz @ 1.0 V"]
    tiny_soc_dict["cpu"]["big"]["power"]["ceff"] = "2 nF"
    tiny_soc_dict["thermal"]["trips"] = [{"sensor": "cpu", "temperature": "34 C",
                                          "hysteresis": "1 K", "domains": ["cpu.big"]}]
    tiny_soc_dict["thermal"]["poll"] = "50 ms"
    return SocSpec.model_validate(tiny_soc_dict)


@pytest.fixture
def tiny_soc_file(tmp_path, tiny_soc_dict) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny_soc_dict))
    return path


def kernel(kid: int, deps: str = "", op: str = "conv", flops: float = 2e8,
           precision: str = "fp32", nbytes: float = 1e5, **extra) -> dict:
    """One trace row with sensible defaults."""
    return {"id": kid, "name": f"k{kid}", "op": op, "pass": "fwd", "precision": precision,
            "flops": flops, "bytes_in": nbytes, "bytes_out": nbytes, "weight_bytes": 0.0,
            "deps": deps, **extra}


def make_trace(rows: list[dict]):
    return trace_from_table(pd.DataFrame(rows))


@pytest.fixture
def chain():
    """Four kernels in a chain."""
    return make_trace([kernel(i, str(i - 1) if i else "") for i in range(4)])


@pytest.fixture
def diamond():
    """0 -> (1, 2) -> 3."""
    return make_trace([kernel(0), kernel(1, "0"), kernel(2, "0"), kernel(3, "1 2")])


def act_on(context, job: str, steps) -> None:
    """Start a process on a policy's ``context`` that, for each ``(delay s, action)``
    of ``steps``, waits and calls ``action(handle of job)``: a policy acting mid-run."""
    def script():
        for delay, action in steps:
            yield context.timeout(delay)
            action(context.job(job))
    context.start(script())


def run(soc: SocSpec, trace, policy: dict, audit: bool = True, **experiment):
    """Simulate ``trace`` on ``soc`` (performance governor unless given), checking
    the engine's promises on every kernel unless ``audit`` is False."""
    spec = {"name": "t", "soc": "tiny", "workload": {"trace": "<memory>"},
            "policy": policy, "dvfs": {"governor": "performance"}}
    spec.update(experiment)
    return simulate(ExperimentSpec.model_validate(spec), traces={0: trace}, soc=soc,
                    audit=audit)


@pytest.fixture(autouse=True)
def _data_dir_env(monkeypatch):
    """Tests find ../shared/data through SOCSIM_DATA_DIR (skipped when absent)."""
    if "SOCSIM_DATA_DIR" not in os.environ:
        monkeypatch.setenv("SOCSIM_DATA_DIR",
                           str(Path(__file__).resolve().parents[2] / "shared" / "data"))
