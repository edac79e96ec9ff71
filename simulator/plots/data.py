"""Selecting and summarising result columns for a plot; axis labels with units."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..results import mean_ci95

# Metric-name suffix -> (unit, [(threshold, display unit, factor)] tried in order:
# the first whose threshold exceeds the largest |value| is used).
_UNITS: list[tuple[str, str, list[tuple[float, str, float]]]] = [
    ("_per_s", "1/s", []),
    ("_s", "s", [(1e-3, "µs", 1e6), (1.0, "ms", 1e3)]),
    ("_j", "J", [(1e-3, "µJ", 1e6), (1.0, "mJ", 1e3)]),
    ("_w", "W", [(1.0, "mW", 1e3)]),
    ("_c", "°C", []),
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
    """Keep rows whose column equals the value (or is one of a list of values)."""
    for column, wanted in where.items():
        require(frame, column, f"{path}.where.{column}")
        values = wanted if isinstance(wanted, list) else [wanted]
        as_text = frame[column].astype(str)
        frame = frame[frame[column].isin(values) | as_text.isin([str(v) for v in values])]
    if frame.empty:
        raise ConfigError("no rows left to plot (all runs failed or 'where' matched none)",
                          path=path)
    return frame


def ordered(values: Iterable[Any]) -> list[Any]:
    """Distinct values, numbers in numeric order before text, missing values last."""
    distinct = list(dict.fromkeys(v for v in values))

    def key(v: Any) -> tuple:
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            return (2, 0.0, "")
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
            return (0, float(v), "")
        return (1, 0.0, str(v))

    return sorted(distinct, key=key)


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


def scaled(column: str, values: Iterable[float], label: str | None = None
           ) -> tuple[str, float]:
    """Axis label and display factor of a metric column (``latency_s`` -> ms).

    Args:
        column: the column name; its suffix gives the unit.
        values: the values shown (the scale follows their magnitude).
        label: a label given in the plot spec (then no rescaling).

    Returns:
        the label (``latency (ms)``) and the factor to multiply values by.
    """
    if label:
        return label, 1.0
    array = np.abs(np.asarray(list(values), dtype=float))
    largest = float(np.nanmax(array)) if array.size and not np.isnan(array).all() else 0.0
    for suffix, unit, steps in _UNITS:
        if column.endswith(suffix) and len(column) > len(suffix):
            name = column[: -len(suffix)].replace("_", " ")
            for threshold, shown, factor in steps:
                if largest < threshold:
                    return f"{name} ({shown})", factor
            return f"{name} ({unit})", 1.0
    return column, 1.0


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
