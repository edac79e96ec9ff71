"""Physical quantities written with their unit ("2.84 GHz", "512 KiB", "25 ms").

This is the only module that parses units. Every YAML quantity goes through
:func:`parse_quantity`, which returns a plain SI float (seconds, hertz, bytes,
bytes per second, watts, joules, volts, farads, kelvin differences, degrees
Celsius for absolute temperatures). Inside the simulator, quantities are SI
floats and carry no unit objects.

A bare number is accepted only where the dimension is dimensionless, so a
frequency written as ``2840`` is an error rather than a silent 2840 Hz.
"""

from __future__ import annotations

import math
import re

_SI_PREFIX = {
    "p": 1e-12, "n": 1e-9, "u": 1e-6, "µ": 1e-6, "m": 1e-3, "": 1.0,
    "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
}
_BINARY_PREFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}

# dimension -> {unit symbol: factor to SI}; prefixes are expanded below.
_BASE_UNITS: dict[str, dict[str, float]] = {
    "time": {"s": 1.0, "min": 60.0, "h": 3600.0},
    "frequency": {"Hz": 1.0},
    "bytes": {"B": 1.0, "bit": 1 / 8, "b": 1 / 8},
    "bandwidth": {"B/s": 1.0, "bit/s": 1 / 8, "bps": 1 / 8, "b/s": 1 / 8},
    "power": {"W": 1.0},
    "energy": {"J": 1.0, "Wh": 3600.0},
    "voltage": {"V": 1.0},
    "capacitance": {"F": 1.0},
    "energy_per_byte": {"J/B": 1.0},
    "conductance": {"W/K": 1.0},
    "heat_capacity": {"J/K": 1.0},
    "temperature_delta": {"K": 1.0},
}
_BINARY_OK = {"bytes", "bandwidth"}

DIMENSIONS = tuple(_BASE_UNITS) + ("temperature", "dimensionless")
ABSOLUTE_ZERO_K = 273.15  # 0 °C in kelvin; temperatures are kept in °C
# Largest magnitude of a unit-carrying value in SI units (1 EB, 1 EHz, 1e18 s):
# beyond it a value is a typo, and products of such values overflow floats.
MAX_MAGNITUDE = 1e18

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_QUANTITY = re.compile(rf"^\s*({_NUMBER})\s*([^\s\d].*?)?\s*$")


class UnitError(ValueError):
    """A value could not be read as a quantity of the expected dimension."""


def _unit_table(dimension: str) -> dict[str, float]:
    table: dict[str, float] = {}
    for symbol, factor in _BASE_UNITS[dimension].items():
        prefixable = symbol not in ("min", "h", "Wh") or dimension == "energy"
        prefixes = dict(_SI_PREFIX) if prefixable else {"": 1.0}
        if dimension in _BINARY_OK:
            prefixes.update(_BINARY_PREFIX)
        for prefix, scale in prefixes.items():
            table.setdefault(prefix + symbol, factor * scale)
    return table


_TABLES = {dim: _unit_table(dim) for dim in _BASE_UNITS}
_EXAMPLES = {
    "time": "'25 ms'", "frequency": "'2.84 GHz'", "bytes": "'512 KiB'",
    "bandwidth": "'33.4 GB/s'", "power": "'1.2 W'", "energy": "'3 J'",
    "voltage": "'0.95 V'", "capacitance": "'0.4 nF'", "energy_per_byte": "'20 pJ/B'",
    "conductance": "'0.5 W/K'", "heat_capacity": "'12 J/K'", "temperature_delta": "'2 K'",
    "temperature": "'25 C'", "dimensionless": "'0.8'",
}


def parse_quantity(value: object, dimension: str) -> float:
    """Return ``value`` in SI units (absolute temperatures in °C).

    Args:
        value: a string such as ``"2.84 GHz"``, or a number for dimensionless
            quantities (and zero, which needs no unit).
        dimension: one of :data:`DIMENSIONS`.

    Raises:
        UnitError: with a message that shows an example of a valid value.
    """
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}")
    expected = f"a {dimension.replace('_', ' ')} like {_EXAMPLES[dimension]}"
    if isinstance(value, bool):
        raise UnitError(f"must be {expected}; got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise UnitError(f"must be {expected} (a finite number); got {value!r}")
        if dimension == "dimensionless" or value == 0:
            return float(value)
        raise UnitError(f"must be {expected} (the unit is required); got {value!r}")
    if not isinstance(value, str):
        raise UnitError(f"must be {expected}; got {value!r}")
    match = _QUANTITY.match(value)
    if not match:
        raise UnitError(f"must be {expected}; got {value!r}")
    number, unit = float(match.group(1)), (match.group(2) or "")
    if not math.isfinite(number):
        raise UnitError(f"must be {expected} (a finite number); got {value!r}")
    if dimension == "dimensionless":
        if unit == "%":
            return number / 100.0
        if unit:
            raise UnitError(f"must be {expected} (no unit); got {value!r}")
        return number
    if dimension == "temperature":
        if unit not in ("C", "°C", "degC", "K"):
            raise UnitError(f"must be {expected}; got {value!r}")
        celsius = number - ABSOLUTE_ZERO_K if unit == "K" else number
        if celsius < -ABSOLUTE_ZERO_K:
            raise UnitError(f"must be at or above absolute zero (0 K, -273.15 C); "
                            f"got {value!r}")
        return celsius
    factor = _TABLES[dimension].get(unit)
    if factor is None:
        raise UnitError(f"must be {expected}; got {value!r}")
    if abs(number * factor) > MAX_MAGNITUDE:
        raise UnitError(f"must be {expected} of at most {MAX_MAGNITUDE:.0e} in SI units "
                        f"(no device comes near); got {value!r}")
    return number * factor


def format_quantity(value: float, unit: str, digits: int = 3) -> str:
    """Render an SI value with an engineering prefix, e.g. ``2.84e9, 'Hz'`` -> ``'2.84 GHz'``."""
    if value == 0:
        return f"0 {unit}"
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0),
                          ("m", 1e-3), ("µ", 1e-6), ("n", 1e-9), ("p", 1e-12)):
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


# Column-name suffix of each dimension's SI unit, for numeric result columns
# (``dvfs.frequency`` swept as "1.2 GHz" gets ``dvfs.frequency_hz`` = 1.2e9).
SI_SUFFIX = {
    "time": "s", "frequency": "hz", "bytes": "bytes", "bandwidth": "bytes_per_s",
    "power": "w", "energy": "j", "voltage": "v", "capacitance": "f",
    "energy_per_byte": "j_per_byte", "conductance": "w_per_k", "heat_capacity": "j_per_k",
    "temperature_delta": "k", "temperature": "c", "dimensionless": "fraction",
}


def _dimensions_of(text: str) -> dict[str, float]:
    """Every dimension ``text`` reads as (a number with a unit), with its SI value."""
    match = _QUANTITY.match(text)
    if not match or not match.group(2):
        return {}
    out = {}
    for dimension in DIMENSIONS:
        if dimension == "dimensionless" and match.group(2) != "%":
            continue
        try:
            out[dimension] = parse_quantity(text, dimension)
        except UnitError:
            continue
    return out


def infer_quantities(values: list[object]) -> tuple[str, list[float]] | None:
    """The one dimension all ``values`` share, and their SI values; else None.

    A column qualifies when every value is a quantity string of the same
    dimension (``"1.2 GHz"``, ``"800 MHz"``), zero, or None (NaN). ``K`` alone is
    read as a kelvin value (a temperature difference): right for absolute
    temperatures too. ``%`` gives a fraction (``"150 %"`` -> 1.5).

    Returns:
        the SI column suffix (:data:`SI_SUFFIX`, e.g. ``"hz"``) and the values in SI
        units (absolute temperatures in °C), or None.
    """
    candidates: set[str] | None = None
    readings: list[dict[str, float] | float] = []
    texts = 0
    for value in values:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            readings.append(math.nan)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
            readings.append(0.0)
        elif isinstance(value, str):
            dims = _dimensions_of(value)
            if not dims:
                return None
            texts += 1
            candidates = set(dims) if candidates is None else candidates & set(dims)
            if not candidates:
                return None
            readings.append(dims)
        else:
            return None
    if not texts or not candidates:
        return None
    dimension = ("temperature_delta" if candidates == {"temperature", "temperature_delta"}
                 else min(candidates, key=DIMENSIONS.index))
    si = [r if isinstance(r, float) else r[dimension] for r in readings]
    return SI_SUFFIX[dimension], si
