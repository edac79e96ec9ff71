"""Writing and reading a sweep's output folder.

Layout of ``DIR`` (``socsim run --out DIR``)::

    config.yaml          resolved base experiment (overrides applied, sweep kept)
    manifest.json        seed, package versions, git commit, timings, failures
    results.csv/.parquet one row per run and repeat
    summary.csv          mean and 95 % CI over repeats per sweep point
    timeseries.parquet   run, repeat, time_s, name, value
    plots/               one PNG + PDF per declared plot
    runs/<run-id>/       config.yaml, run.json, metrics.json, error.txt,
                         timeseries.parquet, kernels.parquet, timeline.json

Every file is written to a temporary name and moved into place with
``os.replace``, so a reader (or a resumed sweep) never sees half a file. A
run's ``metrics.json`` is written last: it is the run's completion record,
and the tables are rebuilt from these records.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from .units import SI_SUFFIX, infer_quantities

RECORD = "metrics.json"
# The tables a run may write into its folder (which ones depends on ``outputs:``).
RUN_OUTPUTS = ("timeseries.parquet", "kernels.parquet", "transfers.parquet", "timeline.json")
LEAD_COLUMNS = ("run", "repeat", "seed")
TIMESERIES_COLUMNS = ["run", "repeat", "time_s", "name", "value"]
_PACKAGES = ("socsim", "simpy", "numpy", "scipy", "pandas", "pyarrow", "pydantic", "pyyaml",
             "matplotlib", "dask", "distributed")


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_bytes(path: Path, data: bytes, durable: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (temp file + ``os.replace``).

    Args:
        path: destination.
        data: the content.
        durable: also ``fsync`` before the rename, so the file survives a power
            loss, not only a killed process (used for completion records).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    with open(tmp, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_text(path: Path, text: str, durable: bool = False) -> None:
    """Write UTF-8 text atomically."""
    write_bytes(path, text.encode("utf-8"), durable)


def write_json(path: Path, obj: Any, sort_keys: bool = True, durable: bool = False) -> None:
    """Write JSON atomically.

    Args:
        path: destination.
        obj: JSON-able object (``str`` is used for anything else).
        sort_keys: sort mapping keys; False keeps their order (run records, whose
            key order is the column order of the results table).
        durable: ``fsync`` before the rename.
    """
    text = json.dumps(obj, indent=2, sort_keys=sort_keys, default=str)
    write_text(path, text + "\n", durable)


# libyaml's emitter where PyYAML was built with it, at a fifth of the Python one's
# time: ~2 ms of a run's ~9 in a sweep of small runs (every run writes its
# config.yaml). The same text for all 1,328 run configurations of the shipped
# experiments; it differs on rarities (characters beyond the BMP escaped, an empty
# key written plainly), which load back to the same values.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_yaml(path: Path, obj: Any) -> None:
    """Write YAML atomically, keys in their original order."""
    write_text(path, yaml.dump(obj, Dumper=_DUMPER, sort_keys=False, allow_unicode=True))


def write_frame(path: Path, frame: pd.DataFrame) -> None:
    """Write a table as CSV or Parquet (by extension) atomically, without the index."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    if path.suffix == ".parquet":
        frame.to_parquet(tmp, index=False)
    else:
        frame.to_csv(tmp, index=False)
    os.replace(tmp, path)


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars turned into Python numbers, recursively."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value


def metric_values(metrics: dict[str, Any]) -> dict[str, float]:
    """Scalar metrics as plain floats (``seed`` dropped: it is its own column)."""
    out = {}
    for name, value in metrics.items():
        if name == "seed":
            continue
        try:
            out[name] = float(value)
        except (TypeError, ValueError):
            continue
    return out


def read_record(run_dir: Path) -> dict | None:
    """A run's completion record, or None if the run did not finish."""
    try:
        return json.loads((run_dir / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_frame(path: Path) -> pd.DataFrame | None:
    """Read a Parquet table, or None if it is missing."""
    return pd.read_parquet(path) if path.is_file() else None


def _column(values: list[Any]) -> pd.Series:
    """One parameter column with a type both CSV and Parquet keep."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       for v in present):
        return pd.Series([math.nan if v is None else float(v) for v in values],
                         dtype="float64")
    text = [v if v is None or isinstance(v, str) else json.dumps(v, sort_keys=True)
            for v in values]
    return pd.Series(text)


def results_table(records: Iterable[dict]) -> pd.DataFrame:
    """One row per run record, ordered by run index and repeat.

    Columns: ``run, repeat, seed``, one per swept/set dotted path, ``status``,
    the metrics (units in their names), ``error``. A path whose values are
    physical quantities (``"1.2 GHz"``) keeps its text (for labels) and is
    followed by its numeric twin in SI units, the unit in its name
    (``dvfs.frequency_hz``: 1.2e9; see :func:`simulator.units.infer_quantities`).
    """
    records = sorted(records, key=lambda r: (r["run"], r["repeat"]))
    params: list[str] = []
    metrics: list[str] = []
    for record in records:
        params += [k for k in record["params"] if k not in params]
        metrics += [k for k in record["metrics"] if k not in metrics]
    columns: dict[str, Any] = {name: pd.Series([r[name] for r in records], dtype="int64")
                               for name in LEAD_COLUMNS}
    taken = set(params) | set(metrics) | set(LEAD_COLUMNS)
    for name in params:
        values = [r["params"].get(name) for r in records]
        columns[name] = _column(values)
        quantity = infer_quantities(values)
        if quantity is not None and f"{name}_{quantity[0]}" not in taken:
            columns[f"{name}_{quantity[0]}"] = pd.Series(quantity[1], dtype="float64")
    columns["status"] = pd.Series([r["status"] for r in records])
    for name in metrics:
        columns[name] = pd.Series([r["metrics"].get(name, math.nan) for r in records],
                                  dtype="float64")
    columns["error"] = pd.Series([r.get("error") or "" for r in records])
    return pd.DataFrame(columns)


# Two-sided 95 % Student t quantiles t(0.975, df) for df = 1..30 (scipy.stats.t.ppf);
# beyond, the Cornish-Fisher expansion is accurate to 1e-6. Avoids importing scipy.stats.
_T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
         2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.13145, 2.119905,
         2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
         2.059539, 2.055529, 2.051831, 2.048407, 2.04523, 2.042272)
_Z975 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (>= 1)."""
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


def mean_ci95(values) -> tuple[float, float]:
    """Mean and 95 % confidence half-width of the non-NaN values.

    Returns:
        ``(mean, half_width)``; NaN mean for no values, NaN half-width for one.
    """
    import numpy as np

    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return math.nan, math.nan
    if len(values) == 1:
        return float(values[0]), math.nan
    sem = float(values.std(ddof=1)) / math.sqrt(len(values))
    return float(values.mean()), t_quantile_975(len(values) - 1) * sem


def param_columns(results: pd.DataFrame) -> list[str]:
    """The swept/set columns of a results table (between ``seed`` and ``status``)."""
    names = list(results.columns)
    if "status" not in names:
        return []
    return names[len(LEAD_COLUMNS):names.index("status")]


def quantity_columns(results: pd.DataFrame) -> dict[str, str]:
    """``{text column: its numeric SI twin}`` among the parameter columns.

    ``{"dvfs.frequency": "dvfs.frequency_hz"}`` when the sweep gave ``"1.2 GHz"``.
    """
    params = param_columns(results)
    twins = {}
    for name, following in zip(params, params[1:], strict=False):
        if following.startswith(f"{name}_") and following[len(name) + 1:] in SI_SUFFIX.values():
            twins[name] = following
    return twins


def metric_columns(results: pd.DataFrame) -> list[str]:
    """The metric columns of a results table (between ``status`` and ``error``)."""
    names = list(results.columns)
    if "status" not in names:
        return []
    end = names.index("error") if "error" in names else len(names)
    return names[names.index("status") + 1:end]


def summary_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95 % confidence half-width over repeats per sweep point.

    Returns:
        columns ``run``, the parameters, ``repeats`` (completed runs),
        ``<metric>_mean`` and ``<metric>_ci95`` (Student t; NaN with one repeat).
    """
    params = param_columns(results)
    metrics = metric_columns(results)
    columns: dict[str, Any] = {"run": pd.Series(dtype="int64")}
    columns.update({p: results[p].iloc[0:0] for p in params})
    if results.empty:
        return pd.DataFrame({**columns, "repeats": pd.Series(dtype="int64"),
                             **{f"{m}_{s}": pd.Series(dtype="float64")
                                for m in metrics for s in ("mean", "ci95")}})
    # Whole columns at once, then one slice per sweep point: a pandas group per point
    # cost ~2 ms, most of a 100-run sweep's tables. Rows keep their order within a
    # point (a stable sort), as groupby's did, so every mean adds in the same order.
    runs = results["run"].to_numpy()
    order = np.argsort(runs, kind="stable")
    points, starts = np.unique(runs[order], return_index=True)
    ends = [*starts[1:], len(order)]
    ok = (results["status"] == "ok").to_numpy(dtype=bool, na_value=False)
    values = results[metrics].to_numpy(dtype=float)
    columns["run"] = pd.Series(points, dtype="int64")
    for p in params:
        columns[p] = results[p].iloc[order[starts]].reset_index(drop=True)
    repeats, stats = [], []
    for start, end in zip(starts, ends, strict=True):
        rows = order[start:end][ok[order[start:end]]]
        repeats.append(len(rows))
        stats.append([mean_ci95(values[rows, j]) for j in range(len(metrics))])
    columns["repeats"] = pd.Series(repeats, dtype="int64")
    for j, name in enumerate(metrics):
        columns[f"{name}_mean"] = pd.Series([point[j][0] for point in stats], dtype="float64")
        columns[f"{name}_ci95"] = pd.Series([point[j][1] for point in stats], dtype="float64")
    return pd.DataFrame(columns)


def timeseries_table(frames: dict[tuple[int, int], pd.DataFrame]) -> pd.DataFrame:
    """Concatenate per-run time series (``time_s, name, value``) with run/repeat columns."""
    parts = [(key, frame) for key, frame in sorted(frames.items())
             if frame is not None and not frame.empty]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype="float64" if c in ("time_s", "value") else
                                          "int64" if c in ("run", "repeat") else "object")
                             for c in TIMESERIES_COLUMNS})
    # Column by column: a frame per run copied and concatenated by pandas cost 5x as
    # much for a 100-run sweep. The names stay pandas strings (Arrow-backed) and are
    # joined as such: through a numpy object array they cost ~60 bytes a value.
    lengths = [len(frame) for _, frame in parts]
    names = pd.concat([frame["name"] for _, frame in parts], ignore_index=True)
    table = pd.DataFrame({
        "run": np.repeat(np.array([run for (run, _), _ in parts], dtype=np.int64), lengths),
        "repeat": np.repeat(np.array([rep for (_, rep), _ in parts], dtype=np.int64),
                            lengths),
        "time_s": np.concatenate([frame["time_s"].to_numpy(dtype=float) for _, frame in parts]),
        "name": names.astype(str),
        "value": np.concatenate([frame["value"].to_numpy(dtype=float) for _, frame in parts]),
    })
    return table


def versions() -> dict[str, str]:
    """Versions of Python and the packages that shape results."""
    import platform

    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_commit(folder: Path) -> str | None:
    """The git commit of ``folder`` (``<sha>-dirty`` with local changes), or None."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=folder, capture_output=True, text=True, timeout=5,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{sha}-dirty" if dirty else sha or None


def write_run_folder(folder: Path, run, outcome, versions: dict[str, str]) -> None:
    """Write one run's folder ``runs/<run-id>/``; ``metrics.json`` goes last.

    Args:
        folder: the run's folder.
        run: the :class:`~simulator.experiment.RunSpec`.
        outcome: the :class:`~simulator.worker.RunOutcome` (record, tables, traceback).
        versions: package versions for ``run.json``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RECORD).unlink(missing_ok=True)
    # A run's folder holds only this run's outputs: a resumed sweep whose run
    # changed (and failed, or writes fewer files) must not leave the old run's
    # tables behind, where the sweep would read them back as this run's.
    for name in RUN_OUTPUTS:
        (folder / name).unlink(missing_ok=True)
    write_yaml(folder / "config.yaml", json.loads(json.dumps(run.config, default=str)))
    write_json(folder / "run.json", {
        "run": run.index, "repeat": run.repeat, "run_id": run.run_id, "seed": run.seed,
        "key": run.key, "params": outcome.record["params"],
        "status": outcome.record["status"], "wall_time_s": outcome.wall_time_s,
        "host": outcome.host, "finished_utc": utc_now(), "versions": versions})
    error = folder / "error.txt"
    if outcome.traceback:
        write_text(error, outcome.traceback)
    else:
        error.unlink(missing_ok=True)
    result, outputs = outcome.result, outcome.outputs
    if result is not None:
        if outputs.get("timeseries", True):
            write_frame(folder / "timeseries.parquet", result.timeseries)
        if outputs.get("kernels", True):
            write_frame(folder / "kernels.parquet", result.kernels)
            if not result.transfers.empty:
                write_frame(folder / "transfers.parquet", result.transfers)
        if outputs.get("timeline", True):
            _write_timeline(result, folder / "timeline.json")
    write_json(folder / RECORD, outcome.record, sort_keys=False, durable=True)


def _write_timeline(result, path: Path) -> None:
    try:
        from .timeline import write_timeline  # writes atomically itself
    except ImportError:  # the timeline writer is optional
        return
    write_timeline(result, path)


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second (``2025-01-31T12:00:00Z``)."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
