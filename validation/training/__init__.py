"""On-device CNN training with MNN on Snapdragon 855 phones: the LeNet calibration subset.

``../shared/data/on-device-training/lenet_mnn_sd855.csv`` (README there) gives the
mean wall time of one ``sgd->step(loss)`` call of MNN's demo LeNet (MNIST, 4
threads, batches 1, 8, 16) on three set-ups, and the energy per step above the
idle phone on one. LeNet's arithmetic is a few MFLOP per sample, so its step time
is mostly the framework's per-operator work: these rows calibrate the SD855
``mnn`` library's per-operator cost and the A76 clusters' dynamic power
(:mod:`validation.training.fit`); the checks compare every row
(:mod:`validation.training.checks`).

How each set-up is simulated (policy ``mnn-fp32`` with its thread pool ``big4``:
the prime and the three gold A76 cores):

* ``meizu-1708``: userspace governor at 1.7088 GHz on every cluster. The
  benchmark allowed all eight CPUs; four busy threads go to the big cores (the
  scheduler places heavy threads there, EAS), as in the other set-ups.
* ``mi9``: default governor (schedutil), no affinity.
* ``meizu-f0``: default governor, affinity cpu4-7 (the same four cores).

Each run repeats the step :data:`WARMUP` + :data:`MEASURED` times and reports
the mean of the measured ones, as the benchmark did.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from simulator.engine.simulation import simulate
from simulator.spec.experiment import ExperimentSpec
from simulator.spec.soc import SocSpec
from validation.data import DataMissing, data_folder  # noqa: F401  (re-exported)

DATA_FILE = "lenet_mnn_sd855.csv"
SOC = "snapdragon855"
MODEL = "lenet_mnn"
POLICY = "mnn-fp32"
WARMUP, MEASURED = 5, 20  # the benchmark's iterations (README)
SETUPS = {
    "meizu-1708": {"governor": "userspace", "frequency": "1.7088 GHz"},
    "mi9": {"governor": "schedutil"},
    "meizu-f0": {"governor": "schedutil"},
}
SOURCE = ("On-device training benchmark (UbiquitousLearning), MNN Express training of "
          "MNN's demo LeNet on Snapdragon 855 phones; ../shared/data/on-device-training")


def data_file(path: str | Path | None = None) -> Path:
    """The LeNet CSV: ``path``, else ``$SOCSIM_DATA_DIR``, else ``<repo>/../shared/data``
    (each may be the data root or the on-device-training folder)."""
    return data_folder("on-device-training", (DATA_FILE,), path) / DATA_FILE


def load(path: str | Path | None = None) -> pd.DataFrame:
    """The measured rows: setup, batch, train_ms, energy_j (NaN where not measured)."""
    table = pd.read_csv(data_file(path))
    return table[["setup", "batch", "train_ms", "energy_j"]]


@dataclass(frozen=True)
class Step:
    """One simulated training step (the mean over the measured iterations).

    Attributes:
        seconds: wall time of one step.
        joules_above_idle: energy of one step minus the idle phone's power over it
            (what the benchmark measured).
    """

    seconds: float
    joules_above_idle: float


def experiment(setup: str, batch: int) -> ExperimentSpec:
    """The experiment of one (set-up, batch) row."""
    return ExperimentSpec.model_validate({
        "name": f"lenet-{setup}-b{batch}", "soc": SOC,
        "workload": {"model": MODEL, "mode": "training", "batch": batch,
                     "iterations": WARMUP + MEASURED},
        "policy": {"name": POLICY, "cpu": "big4"}, "dvfs": SETUPS[setup],
        "outputs": {"timeline": False, "kernels": True, "timeseries": True,
                    "sample_period": "1 ms"},
        "seed": 0})


def idle_power(soc: SocSpec) -> float:
    """Watts of the simulated phone doing nothing: base, memory and idle cores
    (idle processors are power-gated: no leakage)."""
    return (soc.power.base + sum(m.idle for m in soc.memory.values())
            + sum(p.units * p.power.idle for p in soc.processors().values()))


def simulate_step(setup: str, batch: int, soc: SocSpec | None = None) -> Step:
    """Simulate one row: the mean step of the measured iterations."""
    from simulator.library import load_soc

    soc = soc or load_soc(SOC)
    result = simulate(experiment(setup, batch), soc=soc)
    spans = result.kernels.groupby("iteration").agg(start=("start_s", "min"),
                                                    end=("end_s", "max"))
    measured = spans.iloc[WARMUP:]
    seconds = float((measured["end"] - measured["start"]).mean())
    power = result.timeseries[result.timeseries["name"] == "power.total"]
    first, last = float(measured["start"].iloc[0]), float(measured["end"].iloc[-1])
    window = power[(power["time_s"] > first) & (power["time_s"] <= last)]
    # samples are average power over their own period (1 ms): energy = sum * period
    joules = float(window["value"].mean()) * (last - first) / len(measured)
    return Step(seconds, joules - idle_power(soc) * seconds)


@lru_cache(maxsize=8)
def _table(soc_key: str) -> pd.DataFrame:
    from simulator.library import load_soc

    soc = load_soc(SOC)
    rows = []
    for row in load().itertuples():
        step = simulate_step(row.setup, int(row.batch), soc)
        rows.append({"setup": row.setup, "batch": int(row.batch),
                     "sim_ms": step.seconds * 1e3, "train_ms": row.train_ms,
                     "sim_j": step.joules_above_idle, "energy_j": row.energy_j})
    table = pd.DataFrame(rows)
    table["time_err_pct"] = 100 * (table["sim_ms"] / table["train_ms"] - 1)
    table["energy_err_pct"] = np.where(table["energy_j"].notna(),
                                       100 * (table["sim_j"] / table["energy_j"] - 1), np.nan)
    return table


def comparison() -> pd.DataFrame:
    """Simulated vs measured for every row of the data (cached per SoC file version)."""
    from simulator.library import soc_path

    path = soc_path(SOC)
    return _table(f"{path}:{path.stat().st_mtime_ns}")
