"""Sweeps: the grid x zip x random forms, validated once with exact YAML paths,
and the points they expand to."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from pydantic import Field, ValidationError, model_validator

from ..errors import ConfigError
from ..spec.base import Strict
from ..spec.yamlio import validate, validation_error


class Distribution(Strict):
    """One parameter distribution of a random sweep; give exactly one field.

    Attributes:
        choice: pick one of these values uniformly.
        uniform: ``[low, high]``, uniform real.
        loguniform: ``[low, high]`` (both > 0), uniform in log space.
        randint: ``[low, high]``, uniform integer, both ends included.
        unit: unit appended to numeric samples (``GHz`` gives ``"1.53 GHz"``), for
            unit-typed keys.
    """

    choice: list[Any] | None = Field(default=None, min_length=1)
    uniform: tuple[float, float] | None = None
    loguniform: tuple[float, float] | None = None
    randint: tuple[int, int] | None = None
    unit: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Distribution:
        given = [k for k in ("choice", "uniform", "loguniform", "randint")
                 if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of choice, uniform, loguniform, randint")
        bounds = self.uniform or self.loguniform or self.randint
        if bounds is not None and bounds[0] > bounds[1]:
            raise ValueError(f"{given[0]} needs [low, high] with low <= high")
        if self.loguniform is not None and self.loguniform[0] <= 0:
            raise ValueError("loguniform bounds must be > 0")
        return self

    def sample(self, rng) -> Any:
        """Draw one value with ``rng`` (a ``numpy.random.Generator``)."""
        import math

        if self.choice is not None:
            value = self.choice[int(rng.integers(len(self.choice)))]
        elif self.uniform is not None:
            value = float(rng.uniform(*self.uniform))
        elif self.loguniform is not None:
            low, high = self.loguniform
            value = float(math.exp(rng.uniform(math.log(low), math.log(high))))
        else:
            low, high = self.randint
            value = int(rng.integers(low, high + 1))
        if self.unit and isinstance(value, (int, float)):
            return f"{value:.6g} {self.unit}"
        return value


class RandomSweep(Strict):
    """Random samples of a parameter space, with their own seed.

    Attributes:
        samples: number of points drawn.
        seed: seed of the sampler (independent of the runs' seeds).
        params: distribution per dotted path.
    """

    samples: int = Field(ge=1)
    seed: int = Field(default=0, ge=0)
    params: dict[str, Distribution] = Field(min_length=1)


class SweepSpec(Strict):
    """A sweep: a grid (product of axes) x zipped lists x random samples.

    In YAML the grid axes are written directly under ``sweep`` (dotted paths
    mapping to lists); ``zip`` and ``random`` are the two reserved keys. Build
    one with :func:`parse_sweep`, the one place sweeps are validated.

    Attributes:
        grid: axis path -> values; all combinations are run.
        zip: path -> values; lists of equal length varying together.
        random: random samples, combined with every grid x zip point.
    """

    grid: dict[str, list[Any]] = Field(default_factory=dict)
    zip: dict[str, list[Any]] = Field(default_factory=dict)
    random: RandomSweep | None = None

    @classmethod
    def from_mapping(cls, raw: dict[str, Any]) -> SweepSpec:
        """Build from the YAML form (grid axes at top level)."""
        if not isinstance(raw, dict):
            raise ValueError("sweep must be a mapping of dotted paths to lists")
        grid = {k: v for k, v in raw.items() if k not in RESERVED_SWEEP_KEYS}
        return cls(grid=grid, zip=raw.get("zip") or {}, random=raw.get("random"))

    def paths(self) -> list[str]:
        """Every dotted path the sweep varies, in declaration order."""
        randoms = list(self.random.params) if self.random else []
        return [*self.grid, *self.zip, *randoms]


RESERVED_SWEEP_KEYS = ("zip", "random")


def parse_sweep(raw: Any, file: str | None = None) -> SweepSpec:
    """Validate the ``sweep`` mapping; errors carry its exact YAML path.

    Raises:
        ConfigError: e.g. ``exp.yaml: sweep.zip: zip lists must have equal lengths``.
    """
    if raw is None:
        return SweepSpec()
    if not isinstance(raw, dict):
        raise ConfigError("sweep must be a mapping of dotted paths to lists", file=file,
                          path="sweep")
    for key, values in raw.items():
        if key in RESERVED_SWEEP_KEYS:
            continue
        if not isinstance(values, list) or not values:
            raise ConfigError(f"a sweep axis must be a non-empty list; got {values!r}",
                              file=file, path=f"sweep.{key}")
    zipped = raw.get("zip")
    if zipped is not None:
        if not isinstance(zipped, dict) or not zipped:
            raise ConfigError("zip must map dotted paths to lists", file=file,
                              path="sweep.zip")
        lengths = set()
        for key, values in zipped.items():
            if not isinstance(values, list) or not values:
                raise ConfigError(f"a zip list must be a non-empty list; got {values!r}",
                                  file=file, path=f"sweep.zip.{key}")
            lengths.add(len(values))
        if len(lengths) > 1:
            raise ConfigError(f"zip lists must have equal lengths; got lengths "
                              f"{sorted(lengths)}", file=file, path="sweep.zip")
    random = raw.get("random")
    if random is not None:
        validate(RandomSweep, random, file=file, prefix="sweep.random")
    try:
        return SweepSpec.from_mapping(raw)
    except (ValidationError, ValueError) as err:  # pragma: no cover - caught above
        if isinstance(err, ValidationError):
            raise validation_error(err, file, "sweep") from None
        raise ConfigError(str(err), file=file, path="sweep") from None


def count_points(sweep: SweepSpec) -> int:
    """How many points a sweep has, without expanding it (grid x zip x random)."""
    count = math.prod(len(values) for values in sweep.grid.values())
    if sweep.zip:
        count *= len(next(iter(sweep.zip.values())))
    if sweep.random is not None:
        count *= sweep.random.samples
    return count


def iter_points(sweep: SweepSpec) -> Iterator[dict[str, Any]]:
    """The points of a sweep one at a time, in :func:`sweep_points` order (pure)."""
    rows = [{}]
    if sweep.zip:
        columns = zip(*sweep.zip.values(), strict=True)
        rows = [dict(zip(sweep.zip, values, strict=True)) for values in columns]
    samples = [{}]
    if sweep.random is not None:
        rng = np.random.default_rng(sweep.random.seed)
        samples = [{key: dist.sample(rng) for key, dist in sweep.random.params.items()}
                   for _ in range(sweep.random.samples)]
    for values in itertools.product(*sweep.grid.values()):
        point = dict(zip(sweep.grid, values, strict=True))
        for row in rows:
            for sample in samples:
                yield {**point, **row, **sample}


def sweep_points(sweep: SweepSpec) -> list[dict[str, Any]]:
    """All points of a sweep, grid x zip x random (pure; random uses its own seed).

    Returns:
        one ``{dotted path: value}`` per point (``[{}]`` for no sweep).
    """
    return list(iter_points(sweep))


def sweep_location(sweep: SweepSpec, key: str) -> str:
    """The YAML path of sweep axis ``key`` (grid, zip or random)."""
    if key in sweep.grid:
        return f"sweep.{key}"
    if key in sweep.zip:
        return f"sweep.zip.{key}"
    return f"sweep.random.params.{key}"
