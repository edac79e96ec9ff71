"""Expanding an experiment into runs: points x repeats, seeds, resume identities."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .load import blame, check_experiment
from .overrides import apply_overrides, result_columns
from .sweep import SweepSpec, count_points, iter_points, parse_sweep

# Most runs one experiment may expand to: each run keeps a record and a folder,
# so beyond this a typo (an axis of a million values) would exhaust memory or
# disk long before the sweep finished. Split a larger study into experiments.
MAX_RUNS = 100_000


@dataclass(frozen=True)
class RunSpec:
    """One run of an expanded experiment.

    Attributes:
        index: position of the sweep point in the expansion.
        repeat: repeat number (0-based).
        seed: the run's seed.
        config: the fully resolved raw mapping (no sweep).
        params: the swept/set values by dotted path (become result columns).
        key: a hash of the resolved config and seed (resume identity).
    """

    index: int
    repeat: int
    seed: int
    config: dict
    params: dict = field(default_factory=dict)
    key: str = ""

    @property
    def run_id(self) -> str:
        """Folder name of the run under ``runs/`` (``0007-0``)."""
        return f"{self.index:04d}-{self.repeat}"


def derive_seed(seed: int, index: int, repeat: int) -> int:
    """A run's seed from the experiment seed, run index and repeat (stable, 31-bit)."""
    digest = hashlib.sha256(f"{seed}/{index}/{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def config_key(config: dict, seed: int) -> str:
    """Identity of a run for resuming: hash of its resolved config and seed."""
    text = json.dumps(config, sort_keys=True, default=str) + f"#{seed}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand(raw: dict, set_params: dict[str, Any] | None = None, file: str | None = None
           ) -> list[RunSpec]:
    """Expand an experiment mapping into runs (pure function).

    Args:
        raw: the experiment mapping (overrides already applied).
        set_params: ``--set`` values, recorded as result columns (see
            :func:`result_columns`).
        file: for error messages.

    Returns:
        runs ordered by point index, then repeat.

    Raises:
        ConfigError: a bad sweep, more than :data:`MAX_RUNS` runs (counted before
            anything is expanded), or a point that is not a valid experiment
            (the path names the sweep axis that produced the bad value).
    """
    sweep = parse_sweep(raw.get("sweep"), file)
    base = {k: v for k, v in raw.items() if k != "sweep"}
    repeats = int(raw.get("repeats", 1))
    seed = int(raw.get("seed", 0))
    count = count_points(sweep)
    check_run_count(sweep, count, repeats, file)
    columns = result_columns(set_params or {})
    single = count == 1 and repeats == 1
    runs = []
    for index, point in enumerate(iter_points(sweep)):
        sources = {k: f"value {v!r}" for k, v in point.items()}
        try:
            config = apply_overrides(base, point)
            check_experiment(config, file)
        except ConfigError as err:
            raise blame(err.within(file=file), sources, sweep, point) from None
        for repeat in range(repeats):
            run_seed = seed if single else derive_seed(seed, index, repeat)
            runs.append(RunSpec(index=index, repeat=repeat, seed=run_seed, config=config,
                                params={**columns, **point},
                                key=config_key(config, run_seed)))
    return runs


def check_run_count(sweep: SweepSpec, points: int, repeats: int, file: str | None) -> None:
    """Refuse an experiment of more than :data:`MAX_RUNS` runs, naming the factors.

    Raises:
        ConfigError: e.g. ``exp.yaml: sweep: 1,000,000 runs (sweep.a 1000 x sweep.b
            1000 x repeats 1); at most 100,000 are allowed``.
    """
    runs = points * repeats
    if runs <= MAX_RUNS:
        return
    factors = [f"sweep.{k} {len(v)}" for k, v in sweep.grid.items()]
    if sweep.zip:
        factors.append(f"sweep.zip {len(next(iter(sweep.zip.values())))}")
    if sweep.random is not None:
        factors.append(f"sweep.random.samples {sweep.random.samples}")
    factors.append(f"repeats {repeats}")
    raise ConfigError(f"{runs:,} runs ({' x '.join(factors)}); at most {MAX_RUNS:,} are "
                      f"allowed: narrow the sweep or split it into experiments",
                      file=file, path="sweep" if points > 1 else "repeats")
