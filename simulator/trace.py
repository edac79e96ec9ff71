"""Kernel traces: the table format, its loader and its validation.

A trace is a table with one row per kernel (see ``docs/workloads.md``, "Trace format"):

=============  ==================================================================
column         meaning
=============  ==================================================================
id             unique non-negative integer
name           free text (layer name)
op             an op kind from :mod:`simulator.ops`
pass           fwd | bwd_data | bwd_weight | update | other
precision      fp32 | fp16 | int8
flops          floating/integer operations (2 per multiply-accumulate)
bytes_in       activation bytes read (all inputs)
bytes_out      bytes written
weight_bytes   parameter bytes read
deps           space-separated ids this kernel waits for ("" when none)
=============  ==================================================================

Optional columns: ``batch, in_channels, out_channels, in_h, in_w, out_h,
out_w, kernel, stride, groups, layer, model`` and ``fixed_s`` (seconds of
processor-independent work added to the kernel, e.g. a runtime preparing a
compute graph; 0 when absent), ``read_stride`` (bytes between consecutive input
reads in the producer's layout: an access-order mismatch; 0 = sequential) and
``simd_waste`` (fraction of vector lanes without useful work; 0 = none) and
``spill`` (fraction of the kernel's activation bytes, input read plus output
written, that live in off-chip memory between operators; 0 = they stay in the
on-chip levels that hold them); see
:mod:`simulator.hardware.cost`. A trace is a DAG; rows may come
in any order but ids in ``deps`` must exist and must not form a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ._gc import gc_paused
from .errors import ConfigError
from .ops import OP_KINDS, PASSES, PRECISIONS

REQUIRED_COLUMNS = ("id", "name", "op", "pass", "precision", "flops", "bytes_in",
                    "bytes_out", "weight_bytes", "deps")
SHAPE_COLUMNS = ("batch", "in_channels", "out_channels", "in_h", "in_w", "out_h", "out_w",
                 "kernel", "stride", "groups")
TEXT_COLUMNS = ("layer", "model")
OPTIONAL_NUMERIC_COLUMNS = ("fixed_s", "read_stride", "simd_waste", "spill")
NUMERIC_COLUMNS = ("flops", "bytes_in", "bytes_out", "weight_bytes")
# Upper bounds of one kernel's values, far beyond any real kernel: larger values
# are typos or junk that would make the run last years of simulated time (and
# its series exhaust memory), or overflow integer conversions.
MAX_FLOPS = 1e15  # a ResNet-50 training step is ~1e10 per layer
MAX_BYTES = 1e12  # 1 TB, more than any device's memory
MAX_VALUE = {"id": 2**53, "flops": MAX_FLOPS, "bytes_in": MAX_BYTES, "bytes_out": MAX_BYTES,
             "weight_bytes": MAX_BYTES, "fixed_s": 3600.0, "read_stride": MAX_BYTES,
             "simd_waste": 1.0, "spill": 1.0}
MAX_SHAPE = 2**31 - 1  # batch, channels, sizes: int32 like the frameworks'
BYTES_PER_ELEMENT = {"fp32": 4, "fp16": 2, "int8": 1}


@dataclass
class Trace:
    """A validated kernel DAG.

    Attributes:
        table: one row per kernel, in topological order, index 0..n-1; the
            ``deps`` column holds tuples of ids.
        source: where it came from (file path or generator description).
        index_of: kernel id -> row position.
        preds: per row, the row positions it waits for.
        succs: per row, the row positions that wait for it.
    """

    table: pd.DataFrame
    source: str = "<memory>"
    index_of: dict[int, int] = field(default_factory=dict)
    preds: list[tuple[int, ...]] = field(default_factory=list)
    succs: list[tuple[int, ...]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.table)

    @property
    def total_flops(self) -> float:
        return float(self.table["flops"].sum())

    def copy(self) -> Trace:
        """A copy sharing nothing that can change: the table's columns are copied and
        the index and adjacency lists are new (their tuples are immutable)."""
        return Trace(table=self.table.copy(), source=self.source, index_of=dict(self.index_of),
                     preds=list(self.preds), succs=list(self.succs))

    @gc_paused  # many long-lived rows, no garbage: see simulator._gc
    def in_order(self, source: str | None = None) -> Trace:
        """A copy in which every row also waits for the row before it (row order
        kept): each row's own dependencies plus the previous row's id (sorted,
        without repeats), indexed as ``trace_from_table`` would index them, with
        the adjacency derived from the rows' own instead of looked up id by id. A
        row with one dependency (most rows of layer chains) takes the fast lines
        below; the others are sorted."""
        ids = self.table["id"].tolist()
        deps, preds, succs = [], [], []
        for row, (own, row_preds) in enumerate(zip(self.table["deps"].tolist(),
                                                   self.preds)):
            before = row - 1
            if len(row_preds) == 1:  # one dependency (row 0 has none)
                if row_preds[0] == before:  # already on the row before
                    deps.append(tuple(own))
                    preds.append(row_preds)
                    continue
                first, previous = own[0], ids[before]
                deps.append((first, previous) if first < previous else (previous, first))
                preds.append((row_preds[0], before))  # (its rows are all earlier)
            elif row:
                deps.append(tuple(sorted({*own, ids[before]})))
                preds.append(tuple(sorted({*row_preds, before})))
            else:
                deps.append(tuple(sorted(set(own))))
                preds.append(tuple(sorted(set(row_preds))))
        last = len(preds) - 1
        for row, row_succs in enumerate(self.succs):
            after = row + 1
            if len(row_succs) == 1:
                succ = row_succs[0]
                succs.append(row_succs if succ == after else (after, succ))
            elif row < last:
                succs.append(tuple(sorted({*row_succs, after})))
            else:
                succs.append(tuple(sorted(set(row_succs))))
        table = self.table.copy()
        table["deps"] = deps
        return Trace(table=table, source=self.source if source is None else source,
                     index_of=dict(self.index_of), preds=preds, succs=succs)

    def with_precision(self, precision: str) -> Trace:
        """Return a copy with every kernel in ``precision``, bytes rescaled to it."""
        if precision not in PRECISIONS:
            raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}; "
                              f"got {precision!r}")
        table = self.table.copy()
        old = table["precision"].map(BYTES_PER_ELEMENT).astype(float)
        scale = BYTES_PER_ELEMENT[precision] / old
        for column in ("bytes_in", "bytes_out", "weight_bytes"):
            table[column] = (table[column] * scale).round()
        table["precision"] = precision
        return _build(table, self.source)


def load_trace(path: str | Path) -> Trace:
    """Read and validate a trace from CSV or Parquet.

    Raises:
        ConfigError: one line naming the file and the row/column at fault.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError("trace file not found", file=str(path))
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            table = pd.read_parquet(path)
        else:
            table = pd.read_csv(path, keep_default_na=False, dtype={"deps": str})
    except Exception as exc:  # pandas raises many types for unreadable files
        raise ConfigError(f"cannot read trace: {exc}", file=str(path)) from None
    try:
        return trace_from_table(table, source=str(path))
    except ConfigError as err:
        raise err.within(file=str(path)) from None


@gc_paused  # many long-lived rows, no garbage: see simulator._gc
def trace_from_table(table: pd.DataFrame, source: str = "<memory>") -> Trace:
    """Validate a trace table (see module docstring) and build its DAG."""
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise ConfigError(f"missing column(s) {', '.join(missing)}; a trace needs "
                          f"{', '.join(REQUIRED_COLUMNS)}", path="header")
    table = table.reset_index(drop=True).copy()
    if table.empty:
        raise ConfigError("the trace has no kernels (a header only)", path="row 1")
    for column in ("id", *NUMERIC_COLUMNS):
        values = _checked_numbers(table, column, MAX_VALUE[column])
        table[column] = values.astype("int64" if column == "id" else "float64")
    for column, allowed in (("op", OP_KINDS), ("pass", PASSES), ("precision", PRECISIONS)):
        values = table[column].astype(str)
        bad = ~values.isin(list(allowed))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ConfigError(f"unknown {column} {values[row]!r}; expected one of "
                              f"{', '.join(sorted(allowed))}", path=_where(row, column))
        table[column] = values
    duplicated = table["id"].duplicated()
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise ConfigError(f"duplicate id {table['id'][row]}", path=_where(row, "id"))
    table["deps"] = [_parse_deps(value, row) for row, value in enumerate(table["deps"])]
    table["name"] = table["name"].astype(str)
    for column in SHAPE_COLUMNS:
        if column in table.columns:
            values = _checked_numbers(table, column, MAX_SHAPE, missing=0)
            table[column] = values.astype(int)
    for column in OPTIONAL_NUMERIC_COLUMNS:
        if column in table.columns:
            values = _checked_numbers(table, column, MAX_VALUE[column], missing=0.0)
            table[column] = values.astype("float64")
    for column in table.columns:
        # A kernel's values key its cost (rows alike share one): each must be a single
        # number or text. Only an object column can hold anything else (a list from a
        # Parquet file, say); numeric and text columns are checked by their dtype.
        if column != "deps" and table[column].dtype == object:
            for row, value in enumerate(table[column]):
                try:
                    hash(value)
                except TypeError:
                    raise ConfigError(f"must be a single number or text; got {value!r}",
                                      path=_where(row, column)) from None
    return _build(table, source)


def _checked_numbers(table: pd.DataFrame, column: str, upper: float,
                     missing: float | None = None) -> pd.Series:
    """``table[column]`` as numbers in ``[0, upper]``; blanks become ``missing`` if given.

    Raises:
        ConfigError: at the first non-number, negative, infinite or too large value.
    """
    values = pd.to_numeric(table[column], errors="coerce")
    if missing is not None:
        values = values.fillna(missing)
    # in numpy: a pandas operation per test cost half of building a generated trace
    array = values.to_numpy()
    if array.dtype.kind not in "iuf":  # integers stay exact (ids up to 2**53 and above)
        array = values.to_numpy(dtype="float64", na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bad = ~((array >= 0) & (array <= upper))  # NaN and inf fail too
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ConfigError(f"must be a finite non-negative number of at most {upper:.6g}; "
                          f"got {table[column][row]!r}", path=_where(row, column))
    return values


def _parse_deps(value: object, row: int) -> tuple[int, ...]:
    if isinstance(value, (tuple, list, np.ndarray)):
        items = list(value)
    elif value is None or (isinstance(value, float) and np.isnan(value)):
        items = []
    else:
        items = str(value).replace(",", " ").split()
    try:
        return tuple(_kernel_id(item) for item in items)
    except ValueError:
        raise ConfigError(f"deps must be space-separated kernel ids; got {value!r}",
                          path=_where(row, "deps")) from None


def _kernel_id(item: object) -> int:
    """A kernel id in ``deps``: ``3`` or ``3.0`` (a float column); not ``2.5``, ``inf``."""
    number = float(item)  # type: ignore[arg-type]
    if not number.is_integer():  # also NaN and inf (int() would raise OverflowError)
        raise ValueError(item)
    return int(number)


def _where(row: int, column: str) -> str:
    return f"row {row + 1}, column {column}"


def _build(table: pd.DataFrame, source: str) -> Trace:
    """Order rows topologically and index predecessors/successors."""
    ids = table["id"].to_numpy()
    position = {int(kid): row for row, kid in enumerate(ids)}
    preds_by_row: list[list[int]] = []
    for row, deps in enumerate(table["deps"]):
        rows = []
        for dep in deps:
            if dep not in position:
                raise ConfigError(f"dependency {dep} is not the id of any kernel",
                                  path=_where(row, "deps"))
            rows.append(position[dep])
        preds_by_row.append(rows)
    order = _topological_order(preds_by_row, table)
    table = table.iloc[order].reset_index(drop=True)
    index_of = {int(kid): row for row, kid in enumerate(table["id"].to_numpy())}
    preds = [tuple(sorted(index_of[d] for d in deps)) for deps in table["deps"]]
    succ_lists: list[list[int]] = [[] for _ in preds]
    for row, row_preds in enumerate(preds):
        for pred in row_preds:
            succ_lists[pred].append(row)
    return Trace(table=table, source=source, index_of=index_of, preds=preds,
                 succs=[tuple(s) for s in succ_lists])


def _topological_order(preds: list[list[int]], table: pd.DataFrame) -> list[int]:
    """Kahn's algorithm keeping the file order among ready kernels (stable)."""
    import heapq

    waiting = [len(set(p)) for p in preds]
    succs: list[list[int]] = [[] for _ in preds]
    for row, row_preds in enumerate(preds):
        for pred in set(row_preds):
            succs[pred].append(row)
    ready = [row for row, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        row = heapq.heappop(ready)
        order.append(row)
        for succ in succs[row]:
            waiting[succ] -= 1
            if waiting[succ] == 0:
                heapq.heappush(ready, succ)
    if len(order) != len(preds):
        stuck = min(row for row, count in enumerate(waiting) if count > 0)
        raise ConfigError(f"cyclic dependencies: kernel {table['id'][stuck]} is part of or "
                          "waits on a cycle", path=_where(stuck, "deps"))
    return order


def trace_to_table(trace: Trace) -> pd.DataFrame:
    """Return the trace as a file-ready table (deps as space-separated text)."""
    table = trace.table.copy()
    table["deps"] = [" ".join(map(str, deps)) for deps in table["deps"]]
    return table


def save_trace(trace: Trace, path: str | Path) -> None:
    """Write a trace as CSV or Parquet (by extension)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = trace_to_table(trace)
    if path.suffix.lower() in (".parquet", ".pq"):
        table.to_parquet(path, index=False)
    else:
        table.to_csv(path, index=False)
