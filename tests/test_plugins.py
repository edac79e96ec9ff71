"""An outside plugin package, registered by entry point, runs from ``socsim run``.

The package is installed the way pip leaves one: a module and a ``.dist-info``
folder with an ``entry_points.txt`` on ``sys.path`` (here through PYTHONPATH
in a fresh process, so this process's registries are not touched).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

PLUGIN = '''
from simulator.policy import POLICIES, Placement, Plan, Policy


@POLICIES.register("one-core")
class OneCore(Policy):
    """Every kernel on one core of the device's first CPU cluster (an outside plugin)."""

    def plan(self, job):
        cpu = next(p for p in self.context.processors(job.device) if p.startswith("cpu."))
        return Plan([Placement(cpu)] * len(job.trace))
'''


def _install(site: Path, entry_points: str, source: str = PLUGIN) -> dict:
    (site / "socsim_one_core").mkdir(parents=True)
    (site / "socsim_one_core" / "__init__.py").write_text(source)
    info = site / "socsim_one_core-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: socsim-one-core\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def _socsim(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simulator", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def test_an_outside_policy_runs_from_socsim_run_and_is_listed(tmp_path):
    env = _install(tmp_path / "site", "[socsim.policies]\none-core = socsim_one_core\n")
    listing = _socsim("list", "policies", env=env, cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert "one-core" in listing.stdout and "mandheling" in listing.stdout
    experiment = tmp_path / "exp.yaml"
    experiment.write_text(yaml.safe_dump({
        "name": "outside", "soc": "snapdragon865", "policy": {"name": "one-core"},
        "workload": {"model": "lenet5", "batch": 1, "iterations": 2}}))
    run = _socsim("run", str(experiment), "--out", str(tmp_path / "out"), "--workers", "1",
                  "--quiet", env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert results["status"].tolist() == ["ok"] and results["latency_s"][0] > 0
    kernels = pd.read_parquet(tmp_path / "out" / "runs" / "0000-0" / "kernels.parquet")
    assert set(kernels["processor"]) == {"cpu.prime"}  # the SD865's first CPU cluster


def test_a_broken_plugin_is_one_line_naming_its_entry_point(tmp_path):
    env = _install(tmp_path / "site", "[socsim.policies]\none-core = socsim_one_core\n",
                   source="import not_a_module_anywhere\n")
    listing = _socsim("list", "policies", env=env, cwd=tmp_path)
    assert listing.returncode == 2
    assert listing.stderr.count("\n") == 1
    assert "'one-core' (socsim_one_core, entry point group socsim.policies)" in listing.stderr
    assert "ModuleNotFoundError" in listing.stderr
