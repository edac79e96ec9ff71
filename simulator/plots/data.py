"""Selecting and summarising result columns for a plot; axis labels with units."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..results import mean_ci95
from ..units import infer_quantities

# Metric-name suffix -> (unit, [(threshold, display unit, factor)] tried in order:
# the first whose threshold exceeds the largest |value| is used).
_BYTES = [(1e3, "B", 1.0), (1e6, "kB", 1e-3), (1e9, "MB", 1e-6), (math.inf, "GB", 1e-9)]
_UNITS: list[tuple[str, str, list[tuple[float, str, float]]]] = [
    ("_bytes_per_s", "B/s", [(t, f"{u}/s", f) for t, u, f in _BYTES]),
    ("_bytes", "B", _BYTES),
    ("_per_s", "1/s", []),
    ("_s", "s", [(1e-3, "µs", 1e6), (1.0, "ms", 1e3)]),
    ("_j", "J", [(1e-3, "µJ", 1e6), (1.0, "mJ", 1e3)]),
    ("_w", "W", [(1.0, "mW", 1e3)]),
    ("_c", "°C", []),
    ("_k", "K", []),
    ("_v", "V", []),
    ("_f", "F", [(1e-9, "pF", 1e12), (1e-6, "nF", 1e9), (1e-3, "µF", 1e6)]),
    ("_fraction", "", []),
    ("_hz", "Hz", [(1e3, "Hz", 1.0), (1e6, "kHz", 1e-3), (1e9, "MHz", 1e-6),
                   (math.inf, "GHz", 1e-9)]),
]
# Time-series name prefix -> (quantity, unit, SI factor to the unit shown).
_SERIES = {"temp": ("temperature", "°C", 1.0), "freq": ("frequency", "GHz", 1e-9),
           "power": ("power", "W", 1.0), "util": ("utilisation", "", 1.0)}


def require(frame: pd.DataFrame, column: str | None, where: str, what: str = "results"
            ) -> None:
    """Raise a ConfigError at YAML path ``where`` if ``column`` is not in ``frame``."""
    if column is not None and column not in frame.columns:
        known = ", ".join(map(str, frame.columns))
        raise ConfigError(f"no column {column!r} in the {what}; columns: {known}", path=where)


def apply_where(frame: pd.DataFrame, where: dict[str, Any], path: str) -> pd.DataFrame:
    """Keep rows whose column equals the value (or is one of a list of values).

    A quantity matches by value: ``1200 MHz`` keeps the ``1.2 GHz`` rows of a text
    column, and ``1.2 GHz`` or ``1.2e9`` those of its numeric twin.
    """
    for column, wanted in where.items():
        require(frame, column, f"{path}.where.{column}")
        values = wanted if isinstance(wanted, list) else [wanted]
        as_text = frame[column].astype(str)
        keep = frame[column].isin(values) | as_text.isin([str(v) for v in values])
        keep |= _same_quantity(frame[column], values)
        frame = frame[keep]
    if frame.empty:
        raise ConfigError("no rows left to plot (all runs failed or 'where' matched none)",
                          path=path)
    return frame


def _same_quantity(column: pd.Series, values: list[Any]) -> pd.Series:
    """Rows whose quantity equals one of ``values`` (within 1e-9 relative)."""
    found = si_values(column)
    if found is not None:
        suffix, numbers = found
    elif is_numeric(column):
        suffix, numbers = None, column.astype(float)
    else:
        return pd.Series(False, index=column.index)
    targets = []
    for value in values:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            targets.append(float(value))
        elif isinstance(value, str):
            reading = infer_quantities([value])
            # a text column of that dimension, or a numeric one named for its unit
            if reading is not None and (reading[0] == suffix or (
                    suffix is None and str(column.name).endswith(f"_{reading[0]}"))):
                targets.append(reading[1][0])
    keep = pd.Series(False, index=column.index)
    for target in targets:
        keep |= np.isclose(numbers.to_numpy(dtype=float), target, rtol=1e-9, atol=0.0)
    return keep


def ordered(values: Iterable[Any]) -> list[Any]:
    """Distinct values, numbers in numeric order before text, missing values last."""
    distinct = list(dict.fromkeys(v for v in values))

    def key(v: Any) -> tuple:
        if _missing(v):
            return (2, 0.0, "")
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
            return (0, float(v), "")
        return (1, 0.0, str(v))

    return sorted(distinct, key=key)


def _missing(value: Any) -> bool:
    return (value is None or value is pd.NA
            or (isinstance(value, (float, np.floating)) and math.isnan(value)))


def categories(values: Iterable[Any]) -> list[Any]:
    """Distinct values in display order.

    Numbers, and quantity strings (``"800 MHz"`` before ``"1.2 GHz"``), in order
    of value; other text in order of first appearance (results are in run
    order, so in the order the sweep lists the values); missing values last.
    """
    distinct = list(dict.fromkeys(values))
    present = [v for v in distinct if not _missing(v)]
    missing = [v for v in distinct if _missing(v)]
    if present and all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                       for v in present):
        return sorted(present, key=float) + missing[:1]
    quantity = infer_quantities(present)
    if quantity is not None:
        rank = dict(zip(present, quantity[1], strict=True))
        return sorted(present, key=rank.__getitem__) + missing[:1]
    return present + missing[:1]


def si_values(series: pd.Series) -> tuple[str, pd.Series] | None:
    """A quantity text column (``"1.2 GHz"``) as SI floats, with its unit suffix."""
    if is_numeric(series) or series.dtype == bool:
        return None
    distinct = list(dict.fromkeys(series.tolist()))
    quantity = infer_quantities(distinct)
    if quantity is None:
        return None
    table = {fmt(v): si for v, si in zip(distinct, quantity[1], strict=True)}
    return quantity[0], series.map(lambda v: table[fmt(v)]).astype(float)


def match_order(entries: list[Any], labels: list[str], column: str, path: str
                ) -> list[str]:
    """The labels ``entries`` name (an ``order`` list), in the entries' order.

    An entry matches a label by its text (``1`` matches ``"1"``), or a quantity by
    its value (``1200 MHz`` matches ``"1.2 GHz"``).

    Raises:
        ConfigError: at ``path``, for an entry that is not a value of ``column``.
    """
    quantities = infer_quantities(labels)
    by_value = dict(zip(quantities[1], labels, strict=True)) if quantities else {}
    out = []
    for entry in entries:
        label = fmt(entry)
        if label not in labels and by_value:
            reading = infer_quantities([label])
            if reading is not None and reading[0] == quantities[0]:
                label = next((text for value, text in by_value.items()
                              if math.isclose(value, reading[1][0], rel_tol=1e-9)), label)
        if label not in labels:
            shown = ", ".join(labels[:12]) + (", ..." if len(labels) > 12 else "")
            raise ConfigError(f"{entry!r} is not a value of {column!r}; its values: {shown}",
                              path=path)
        out.append(label)
    return out


def fmt(value: Any) -> str:
    """A category value as a tick or legend label."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "none"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{value:.3g}"
    return str(value)


def mean_ci(values: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % confidence half-width (Student t; 0 for a single value)."""
    mean, half = mean_ci95(values)
    return mean, 0.0 if math.isnan(half) else half


def is_numeric(series: pd.Series) -> bool:
    """True for numeric, non-boolean columns."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def scaled(column: str, values: Iterable[float], label: str | None = None,
           name: str | None = None) -> tuple[str, float]:
    """Axis label and display factor of a metric column (``latency_s`` -> ms).

    Args:
        column: the column name; its suffix gives the unit.
        values: the values shown (the scale follows their magnitude).
        label: a label given in the plot spec (then no rescaling).
        name: the quantity's name shown before the unit (default: the column
            without its unit suffix, ``_`` as spaces).

    Returns:
        the label (``latency (ms)``) and the factor to multiply values by.
    """
    if label:
        return label, 1.0
    array = np.abs(np.asarray(list(values), dtype=float))
    largest = float(np.nanmax(array)) if array.size and not np.isnan(array).all() else 0.0
    for suffix, unit, steps in _UNITS:
        if column.endswith(suffix) and len(column) > len(suffix):
            name = name or column[: -len(suffix)].replace("_", " ")
            for threshold, shown, factor in steps:
                if largest < threshold:
                    return f"{name} ({shown})", factor
            return (f"{name} ({unit})" if unit else name), 1.0
    return name or column, 1.0


def param_title(column: str) -> str:
    """A parameter column's title: its last path part (``workload.batch`` -> ``batch``;
    ``policy.name`` -> ``policy``; ``links.0.bandwidth`` -> ``bandwidth``)."""
    parts = [p for p in column.split(".") if not p.isdigit()] or [column]
    last = parts[-1]
    if last == "name" and len(parts) > 1:
        last = parts[-2]
    return last.replace("_", " ")


def series_label(names: Iterable[str], label: str | None = None) -> tuple[str, float]:
    """Axis label and factor for time series (``temp.*`` -> temperature in °C)."""
    if label:
        return label, 1.0
    prefixes = {str(n).split(".")[0] for n in names}
    if len(prefixes) == 1:
        prefix = prefixes.pop()
        if prefix in _SERIES:
            quantity, unit, factor = _SERIES[prefix]
            return (f"{quantity} ({unit})" if unit else quantity), factor
    return "value", 1.0
