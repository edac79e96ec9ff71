"""Accuracy lost by quantising the tensors of a cut: a table per <split, bitwidth>.

The drop is a property of the model and its data, not of the device. Two sources:

* :class:`RuleAccuracy` -- the documented defaults of ``profiles.yaml`` (a rule
  per model: the lowest bitwidth with a drop below 1 pp as a function of the
  cut's depth, the drop growing ``growth``-fold per bit fewer);
* :class:`TableAccuracy` -- a CSV a user measured (``split_layer, bits,
  drop_pp``; ``split_layer`` is the last client layer of the cut, ``input``
  for split 0; further columns are ignored). A <split, bitwidth> missing from
  the table counts as unusable (infinite drop).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import pandas as pd
from pydantic import Field

from simulator.errors import ConfigError
from simulator.spec.base import Strict
from simulator.spec.yamlio import read_yaml, validate

from .cuts import SplitPoint

PROFILES_FILE = Path(__file__).with_name("profiles.yaml")
LOSSLESS_BITS = 16  # from here on (and lossless packing) nothing is lost
MAX_DROP_PP = 100.0  # a drop cannot exceed the accuracy there was


class AccuracyRule(Strict):
    """Parameters of the default drop rule (see ``profiles.yaml``)."""

    input_bits: int = Field(default=6, ge=1, le=16)
    shallow_bits: int = Field(default=6, ge=1, le=16)
    deep_bits: int = Field(default=5, ge=1, le=16)
    drop_at_bits: float = Field(default=0.5, gt=0, lt=1)
    growth: float = Field(default=4.0, gt=1)


class ActivationStats(Strict):
    """Default statistics of ReLU outputs (see ``profiles.yaml`` and
    :mod:`workloads.packing.activations`)."""

    sparsity_first: float = Field(default=0.5, ge=0, lt=1)
    sparsity_last: float = Field(default=0.8, ge=0, lt=1)
    spread: float = Field(default=1.0, ge=0)
    scale_spread: float = Field(default=0.5, ge=0)
    dead_share: float = Field(default=0.0, ge=0, le=1)
    correlation: float = Field(default=1.0, ge=0)

    def sparsity(self, depth: float) -> float:
        """Fraction of zeros of a ReLU output at ``depth`` in [0, 1]."""
        return self.sparsity_first + (self.sparsity_last - self.sparsity_first) * depth


class ModelProfile(Strict):
    """A model's entry of ``profiles.yaml`` (each part optional)."""

    accuracy: dict = Field(default_factory=dict)
    activations: dict = Field(default_factory=dict)


class ProfilesFile(Strict):
    """The whole ``profiles.yaml``."""

    defaults: ModelProfile
    models: dict[str, ModelProfile] = Field(default_factory=dict)


@lru_cache(maxsize=8)
def _profiles(path: str) -> ProfilesFile:
    return validate(ProfilesFile, read_yaml(path), file=path)


def model_defaults(model: str | None, path: Path = PROFILES_FILE
                   ) -> tuple[AccuracyRule, ActivationStats]:
    """The accuracy rule and activation statistics of ``model`` (defaults if unlisted)."""
    profiles = _profiles(str(path))
    entry = profiles.models.get(model or "", ModelProfile())
    try:
        rule = AccuracyRule.model_validate({**profiles.defaults.accuracy, **entry.accuracy})
        stats = ActivationStats.model_validate({**profiles.defaults.activations,
                                                **entry.activations})
    except ValueError as err:
        raise ConfigError(f"bad profile of {model!r}: {err}", file=str(path)) from None
    return rule, stats


class RuleAccuracy:
    """Drop from the per-model rule.

    Args:
        rule: its parameters.
    """

    def __init__(self, rule: AccuracyRule):
        self.rule = rule

    def bits_1pp(self, split: SplitPoint) -> int:
        """Lowest bitwidth with a drop below 1 pp at this cut."""
        r = self.rule
        if split.index == 0:
            return r.input_bits
        return round(r.shallow_bits + (r.deep_bits - r.shallow_bits) * split.fraction)

    def drop(self, split: SplitPoint, bits: int) -> float:
        """Top-1 accuracy lost (pp) sending ``split``'s tensors at ``bits``."""
        if bits >= LOSSLESS_BITS or not split.tensors:
            return 0.0
        drop = self.rule.drop_at_bits * self.rule.growth ** (self.bits_1pp(split) - bits)
        return min(drop, MAX_DROP_PP)


class TableAccuracy:
    """Drop from a measured table (CSV ``split_layer, bits, drop_pp``).

    Args:
        path: the CSV file.
    """

    COLUMNS = ("split_layer", "bits", "drop_pp")

    def __init__(self, path: Path):
        try:
            table = pd.read_csv(path)
        except (FileNotFoundError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise ConfigError(f"cannot read the accuracy table: {err}", file=str(path)) from None
        if not set(self.COLUMNS) <= set(table.columns):
            raise ConfigError(f"columns must include {', '.join(self.COLUMNS)}; got "
                              f"{', '.join(map(str, table.columns))}", file=str(path))
        self.drops = {(str(layer), int(bits)): float(drop) for layer, bits, drop in
                      table[list(self.COLUMNS)].itertuples(index=False)}

    def drop(self, split: SplitPoint, bits: int) -> float:
        if not split.tensors:
            return 0.0
        return self.drops.get((split.layer, int(bits)),
                              0.0 if bits >= LOSSLESS_BITS else math.inf)
