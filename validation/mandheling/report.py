"""Mandheling's headline figures from a per-batch run: speedup and energy reduction.

For every phone and baseline, Mandheling's per-batch speedup (baseline time /
Mandheling time) and energy reduction (baseline energy / Mandheling energy)
over the models both ran (runs that ended out of memory are left out), as the
paper summarises Fig. 5 and 6: minimum, mean and maximum.

``python -m validation.mandheling.report RESULTS_FOLDER`` prints them for an
``experiments/mandheling/per_batch.yaml`` output folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

METHOD = "mandheling"
BASELINES = ("tflite-fp32", "mnn-fp32", "mnn-int8", "mnn-gpu")
# (result column, summary name): larger baseline / Mandheling ratios are better
RATIOS = (("latency_s", "speedup"), ("energy_per_iteration_j", "energy_reduction"))


def gains(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (soc, baseline): ``models`` compared and min / mean / max of each ratio.

    Args:
        results: a per-batch sweep's results (columns ``soc``, ``policy.name``,
            ``workload.model``, ``status`` and the :data:`RATIOS` columns).
    """
    ok = results[results["status"] == "ok"] if "status" in results else results
    rows = []
    for soc, runs in ok.groupby("soc", sort=True):
        ours = runs[runs["policy.name"] == METHOD].set_index("workload.model")
        for baseline in BASELINES:
            theirs = runs[runs["policy.name"] == baseline].set_index("workload.model")
            models = ours.index.intersection(theirs.index)
            if models.empty:
                continue
            row = {"soc": soc, "baseline": baseline, "models": len(models)}
            for column, name in RATIOS:
                ratio = theirs.loc[models, column] / ours.loc[models, column]
                row.update({f"{name}_min": ratio.min(), f"{name}_mean": ratio.mean(),
                            f"{name}_max": ratio.max()})
            rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="output folder of experiments/mandheling/per_batch.yaml")
    args = parser.parse_args(argv)
    table = gains(pd.read_csv(Path(args.folder) / "results.csv"))
    print(f"{'phone':15s} {'baseline':12s} {'models':>6s}   speedup min/mean/max"
          "   energy reduction min/mean/max")
    for row in table.itertuples(index=False):
        print(f"{row.soc:15s} {row.baseline:12s} {row.models:6d}   "
              f"{row.speedup_min:5.2f} {row.speedup_mean:5.2f} {row.speedup_max:5.2f}"
              f"          {row.energy_reduction_min:5.2f} {row.energy_reduction_mean:5.2f} "
              f"{row.energy_reduction_max:5.2f}")


if __name__ == "__main__":
    main()
