"""The measurement format of ``socsim calibrate``: one row per measurement (CSV or Parquet).

Columns (only ``model``, ``processor`` and a latency are required):

=============  ================================================================
``model``      a zoo name (``mobilenet_v2``), a trace file (``.csv``/``.parquet``),
               an ONNX file, or ``OPS.csv#name``: one model of a
               mobile-ml-benchmark operator list. Files are relative to the
               measurement file.
``options``    zoo builder options, ``key=value`` separated by ``;``
               (``input_size=160; width=0.5``)
``mode``       ``inference`` (default) or ``training`` (zoo models)
``batch``      batch size (default 1)
``precision``  ``fp32`` (default), ``fp16``, ``int8``
``processor``  ``cpu.<cluster>``, ``gpu``, ``dsp``, ``npu`` (as in the SoC file)
``cores``      threads on that processor (default 1)
``frequency``  the fixed clock (``1.7 GHz`` or Hz, an OPP of the processor);
               empty or ``max``: the top OPP (the performance governor)
``latency_s``  measured seconds (or ``latency_ms`` / ``latency_us``); the mean of
               repeated runs
``op``         empty: end to end (one inference or training step); a kernel's row
               number in the trace (that kernel alone) or an op kind (``conv``:
               that kind's kernels summed), e.g. from TFLite's op profiling
``energy_j``   optional: joules of the whole device over one run (end-to-end rows
               only), as the engine's ``energy_per_iteration_j``; fitted with
               ``power.ceff`` (through the full engine)
=============  ================================================================

A governor other than the performance one cannot be replayed by the fast
model (it would need the governor's trajectory), so ``frequency`` takes only
fixed clocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from simulator.errors import ConfigError
from simulator.hardware.cost import Unsupported
from simulator.ops import PRECISIONS
from simulator.spec.soc import SocSpec
from simulator.trace import Trace
from simulator.units import UnitError, parse_quantity
from validation.fitting.engine import EnergyRow, Row
from validation.fitting.fast import FastCase, Setting

COLUMNS = ("model", "options", "mode", "batch", "precision", "processor", "cores",
           "frequency", "latency_s", "latency_ms", "latency_us", "op", "energy_j")
LATENCY = {"latency_s": 1.0, "latency_ms": 1e-3, "latency_us": 1e-6}


@dataclass(frozen=True)
class Measurements:
    """Rows read from one file: the table (normalised: ``latency_s`` in seconds) and
    where it came from."""

    file: str
    table: pd.DataFrame


def read(path: str | Path) -> Measurements:
    """Read and check a measurement file (CSV or Parquet).

    Raises:
        ConfigError: a missing file, an unknown column, a missing required one, or a
            bad value (naming the file and ``row N.column``).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError("measurement file not found", file=str(path))
    try:
        table = (pd.read_parquet(path) if path.suffix == ".parquet"
                 else pd.read_csv(path, skipinitialspace=True))
    except Exception as exc:  # pandas' parser errors
        raise ConfigError(f"cannot read measurements: {' '.join(str(exc).split())}",
                          file=str(path)) from None
    unknown = [c for c in table.columns if c not in COLUMNS]
    if unknown:
        raise ConfigError(f"unknown column(s) {', '.join(map(repr, unknown))}; known: "
                          + ", ".join(COLUMNS), file=str(path))
    latency = [c for c in LATENCY if c in table.columns]
    for needed in ("model", "processor"):
        if needed not in table.columns:
            raise ConfigError(f"missing column {needed!r}", file=str(path))
    if len(latency) != 1:
        raise ConfigError("give exactly one of latency_s, latency_ms, latency_us",
                          file=str(path))
    if table.empty:
        raise ConfigError("no measurement rows", file=str(path))
    out = pd.DataFrame({
        "model": table["model"].astype(str).str.strip(),
        "options": _column(table, "options", ""),
        "mode": _column(table, "mode", "inference"),
        "batch": _column(table, "batch", 1),
        "precision": _column(table, "precision", "fp32"),
        "processor": table["processor"].astype(str).str.strip(),
        "cores": _column(table, "cores", 1),
        "frequency": _column(table, "frequency", ""),
        "latency_s": pd.to_numeric(table[latency[0]], errors="coerce") * LATENCY[latency[0]],
        "op": _column(table, "op", ""),
        "energy_j": pd.to_numeric(_column(table, "energy_j", float("nan")), errors="coerce"),
    })
    for i, row in enumerate(out.itertuples()):
        where = f"row {i + 1}"
        if not (row.latency_s > 0):
            raise ConfigError(f"{latency[0]} must be a positive number", file=str(path),
                              path=f"{where}.{latency[0]}")
        if row.mode not in ("inference", "training"):
            raise ConfigError(f"mode must be inference or training; got {row.mode!r}",
                              file=str(path), path=f"{where}.mode")
        if row.precision not in PRECISIONS:
            raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}; got "
                              f"{row.precision!r}", file=str(path), path=f"{where}.precision")
        for name in ("batch", "cores"):
            value = getattr(row, name)
            # a partly blank column reads as floats (3.0); blanks are filled with 1 above
            number = pd.to_numeric(value, errors="coerce")
            if not (pd.notna(number) and float(number).is_integer() and number >= 1):
                raise ConfigError(f"{name} must be a positive integer; got {value!r}",
                                  file=str(path), path=f"{where}.{name}")
    out["batch"] = out["batch"].astype(int)
    out["cores"] = out["cores"].astype(int)
    return Measurements(str(path), out)


def _column(table: pd.DataFrame, name: str, default) -> pd.Series:
    if name not in table.columns:
        return pd.Series([default] * len(table), index=table.index)
    column = table[name].where(table[name].notna(), default)
    return column.map(lambda v: v.strip() if isinstance(v, str) else v)


def rows(measurements: Measurements, soc: SocSpec) -> list[Row]:
    """The latency rows of ``measurements`` on ``soc`` (see :func:`all_rows`)."""
    return all_rows(measurements, soc)[0]


def all_rows(measurements: Measurements, soc: SocSpec) -> tuple[list[Row], list[EnergyRow]]:
    """Fast-model rows of ``measurements`` on ``soc`` (traces built or imported once):
    (latency rows, energy rows).

    Raises:
        ConfigError: an unknown processor, a frequency that is not an OPP, more cores
            than the processor has, a model that cannot be built or imported, an ``op``
            not in the trace (``<file>: row N.<column>``).
    """
    file = measurements.file
    base = Path(file).parent
    specs = soc.processors()
    cases: dict[tuple, FastCase] = {}
    out, energy = [], []
    for i, row in enumerate(measurements.table.itertuples()):
        where = f"row {i + 1}"
        if row.processor not in specs:
            raise ConfigError(f"SoC {soc.name!r} has no processor {row.processor!r} (has "
                              f"{', '.join(specs)})", file=file, path=f"{where}.processor")
        proc = specs[row.processor]
        if row.cores > proc.units:
            raise ConfigError(f"{row.processor} has {proc.units} core(s); got {row.cores}",
                              file=file, path=f"{where}.cores")
        frequency = _frequency(row.frequency, proc, file, f"{where}.frequency")
        setting = Setting(row.processor, row.cores, row.precision, frequency)
        key = (row.model, row.options, row.mode, row.batch, setting)
        if key not in cases:
            try:
                trace = _trace(row.model, row.options, row.mode, row.batch, row.precision,
                               str(base))
            except ConfigError as err:
                raise ConfigError(str(err), file=file, path=f"{where}.model") from None
            try:
                cases[key] = FastCase(soc, trace, setting)
            except Unsupported as err:
                raise ConfigError(str(err), file=file, path=f"{where}.processor") from None
        case = cases[key]
        op = _op(row.op, case, file, f"{where}.op")
        label = (f"{row.precision} {row.processor} x{row.cores}"
                 + (f" @{frequency / 1e9:.3g} GHz" if frequency else "")
                 + (" per-op" if op is not None else ""))
        out.append(Row(case, op, float(row.latency_s), row.model, label))
        if not pd.isna(row.energy_j):
            if op is not None or not row.energy_j > 0:
                raise ConfigError("energy_j must be a positive number of joules per run, on "
                                  "an end-to-end row (op empty)", file=file,
                                  path=f"{where}.energy_j")
            energy.append(EnergyRow(case, float(row.energy_j), row.model, label + " energy"))
    return out, energy


def _frequency(text, proc, file: str, where: str) -> float | None:
    if text in ("", "max") or (isinstance(text, float) and pd.isna(text)):
        return None
    try:
        hertz = float(text) if _is_number(text) else parse_quantity(str(text), "frequency")
    except UnitError as err:
        raise ConfigError(str(err), file=file, path=where) from None
    opps = [o.frequency for o in proc.opps]
    if not any(abs(hertz - f) <= 1e-6 * f for f in opps):
        raise ConfigError(f"{hertz / 1e6:g} MHz is not an OPP of the processor (OPPs: "
                          + ", ".join(f"{f / 1e6:g}" for f in opps) + " MHz)",
                          file=file, path=where)
    return hertz


def _is_number(text) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _op(text, case: FastCase, file: str, where: str):
    if text in ("",) or (isinstance(text, float) and pd.isna(text)):
        return None
    if _is_number(text):
        index = int(float(text))
        if not 0 <= index < len(case.ops):
            raise ConfigError(f"kernel {index} is not in the trace (0..{len(case.ops) - 1})",
                              file=file, path=where)
        return index
    # one op kind, or several joined by "+" (summed: TFLite's CONV_2D is conv+group_conv)
    kinds = str(text).split("+")
    if not set(kinds) & set(case.ops):
        raise ConfigError(f"the trace has no {text!r} kernels (has "
                          f"{', '.join(sorted(set(case.ops)))})", file=file, path=where)
    return str(text)


def _trace(model: str, options: str, mode: str, batch: int, precision: str, base: str
           ) -> Trace:
    name, _, entry = model.partition("#")
    path = Path(base) / name
    if entry:
        traces = _op_list(str(path), precision)
        if entry not in traces:
            raise ConfigError(f"{name} has no model {entry!r}")
        return traces[entry]
    if path.suffix == ".onnx":
        from workloads.importers.onnx_model import import_onnx

        return import_onnx(path, batch=batch, precision=precision).trace
    from simulator.engine.build import build_trace
    from simulator.spec.experiment import WorkloadSpec
    from simulator.spec.yamlio import validate

    spec = {"precision": precision}
    if path.suffix in (".csv", ".parquet"):
        spec["trace"] = str(path)
    else:
        spec.update(model=model, mode=mode, batch=batch, options=_options(options))
    return build_trace(validate(WorkloadSpec, spec, file="<measurements>"))


@lru_cache(maxsize=16)
def _op_list(path: str, precision: str) -> dict[str, Trace]:
    from workloads.importers.mobile_ml_benchmark import import_mobile_ml_benchmark

    return import_mobile_ml_benchmark(path, None, precision=precision)


def _options(text: str) -> dict:
    from simulator.experiment import parse_value

    options = {}
    for item in filter(None, (part.strip() for part in str(text).split(";"))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"options: expected key=value; got {item!r}")
        options[key.strip()] = parse_value(value.strip())
    return options
