"""LeNet training with MNN on the Snapdragon 855: step time on three set-ups, energy at 1.7088 GHz.

Calibration checks: ``validation.training.fit`` fits the SD855 MNN per-operator
cost and kernel speed to the nine times and the A76 power to the three energies.
The tolerance is 20 %: the measurements themselves spread that much -- the same
simulated configuration (four A76 threads at the default governor) was measured
on two phones 4-13 % apart (``mi9`` and ``meizu-f0``) -- and the project's other
per-cell calibration checks allow 25 %. Without the data folder the checks are
skipped.
"""

from __future__ import annotations

from simulator.checks import DataUnavailable, check
from validation import training

TOLERANCE_PCT = 20.0
BATCHES = (1, 8, 16)


def _row(setup: str, batch: int):
    try:
        table = training.comparison()
    except training.DataMissing as err:
        raise DataUnavailable(str(err)) from None
    return table[(table["setup"] == setup) & (table["batch"] == batch)].iloc[0]


def _reference(setup: str, batch: int, column: str) -> float:
    try:
        data = training.load()
    except training.DataMissing:
        return float("nan")
    row = data[(data["setup"] == setup) & (data["batch"] == batch)]
    return float(row[column].iloc[0]) if len(row) else float("nan")


def _register() -> None:
    for setup in training.SETUPS:
        for batch in BATCHES:
            check(f"sd855.mnn.lenet.{setup}.b{batch}.time", unit="ms",
                  reference=_reference(setup, batch, "train_ms"),
                  tolerance_pct=TOLERANCE_PCT, group="training", status="calibration",
                  source=f"{training.SOURCE}, {setup}, batch {batch}")(
                lambda s=setup, b=batch: float(_row(s, b)["sim_ms"]))
    for batch in BATCHES:
        check(f"sd855.mnn.lenet.meizu-1708.b{batch}.energy", unit="mJ",
              reference=_reference("meizu-1708", batch, "energy_j") * 1e3,
              tolerance_pct=TOLERANCE_PCT, group="training", status="calibration",
              source=f"{training.SOURCE}, energy per step above idle, batch {batch}")(
            lambda b=batch: float(_row("meizu-1708", b)["sim_j"]) * 1e3)


_register()
