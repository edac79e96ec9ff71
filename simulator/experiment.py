"""Experiments: load a YAML, apply ``--set`` overrides, expand into runs.

An experiment is a base mapping plus an optional ``sweep``; expansion is a
pure function of the raw mapping (no I/O, no randomness outside the given
seeds), so it can be tested on its own and repeated on resume.

Sweep forms (dotted paths address any key)::

    sweep:
      workload.batch: [1, 8, 32]          # grid: product of all lists
      soc: [snapdragon865, snapdragon888]
      zip:                                # lists varying together
        policy.name: [single, heft]
        policy.processor: [cpu.gold, null]
      random:                             # random samples with their own seed
        samples: 20
        seed: 7
        params:
          workload.batch: {choice: [1, 2, 4, 8]}
          dvfs.frequency: {uniform: [1.0e9, 2.4e9]}

The points are grid x zip x random, in that nesting order (the last grid
axis varies fastest). Each point is repeated ``repeats`` times with seeds
derived from the experiment seed, the point index and the repeat index.
A ``--set`` on a swept path pins it: the axis leaves the sweep.

:func:`check_runs` then checks the names and files the runs refer to (SoCs,
policies, models, traces), so bad input is reported before anything runs.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import ValidationError

from .errors import ConfigError
from .spec.experiment import RESERVED_SWEEP_KEYS, ExperimentSpec, RandomSweep, SweepSpec
from .spec.yamlio import read_yaml, validate, validation_error

# Mappings whose keys are themselves dotted paths (``sweep: {workload.batch: [...]}``).
_DOTTED_KEY_PARENTS = ("sweep", "sweep.zip", "sweep.random.params")
# ``--set`` keys that configure the experiment rather than a run; not result columns.
_NOT_COLUMNS = ("sweep", "plots", "repeats", "seed")


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


def parse_value(text: str) -> Any:
    """Parse a ``--set`` value with YAML rules (``3`` -> int, ``[1,2]`` -> list)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def parse_set(items: list[str] | None) -> dict[str, Any]:
    """Parse ``--set key.path=value`` arguments into ``{dotted path: value}``.

    Raises:
        ConfigError: an item without ``=`` or with an empty path.
    """
    out: dict[str, Any] = {}
    for item in items or []:
        dotted, sep, value = item.partition("=")
        dotted = dotted.strip()
        if not sep or not dotted or any(not p for p in dotted.split(".")):
            raise ConfigError(f"expected key.path=value; got {item!r}", path="--set")
        out[dotted] = parse_value(value)
    return out


def set_path(mapping: dict, dotted: str, value: Any) -> None:
    """Set ``mapping[a][b][c] = value`` for ``dotted == 'a.b.c'`` (creating mappings).

    A list element is addressed by its index (``workload.0.batch``). Below
    ``sweep``, ``sweep.zip`` and ``sweep.random.params`` the rest of the path
    is one key (``sweep.workload.batch`` sets the sweep axis ``workload.batch``).
    """
    parts = dotted.split(".")
    node: Any = mapping
    i = 0
    while i < len(parts) - 1:
        here = ".".join(parts[:i])
        if here in _DOTTED_KEY_PARENTS and isinstance(node, dict):
            rest = parts[i:]
            if not (here == "sweep" and rest[0] in RESERVED_SWEEP_KEYS) and not (
                    here == "sweep.random" and rest[0] == "params"):
                node[".".join(rest)] = value
                return
        part = parts[i]
        if isinstance(node, list):
            node = node[_list_index(part, dotted, len(node))]
            i += 1
            continue
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        elif not isinstance(nxt, (dict, list)):
            raise ConfigError(f"cannot set {dotted!r}: {'.'.join(parts[:i + 1])!r} is "
                              f"not a mapping", path=dotted)
        node = nxt
        i += 1
    last = parts[-1]
    if isinstance(node, list):
        node[_list_index(last, dotted, len(node))] = value
    else:
        node[last] = value


def _list_index(part: str, dotted: str, length: int) -> int:
    try:
        index = int(part)
    except ValueError:
        raise ConfigError(f"cannot set {dotted!r}: {part!r} is not a list index",
                          path=dotted) from None
    if not -length <= index < length:
        raise ConfigError(f"cannot set {dotted!r}: index {index} is out of range "
                          f"(the list has {length} items)", path=dotted)
    return index


def apply_overrides(raw: dict, overrides: dict[str, Any]) -> dict:
    """Return a copy of ``raw`` with dotted-path overrides applied.

    An override of a swept path pins it: that axis is removed from the sweep.
    """
    out = copy.deepcopy(raw)
    for dotted, value in overrides.items():
        _unsweep(out, dotted)
        # A copy: a later override below this path (``policy`` then ``policy.client``)
        # must not change the sweep's value itself, which other points share.
        set_path(out, dotted, copy.deepcopy(value))
    return out


def _unsweep(raw: dict, dotted: str) -> None:
    sweep = raw.get("sweep")
    if not isinstance(sweep, dict) or dotted.split(".")[0] == "sweep":
        return
    sweep.pop(dotted, None)
    for section, holder in (("zip", sweep), ("params", (sweep.get("random") or {}))):
        inner = holder.get(section) if isinstance(holder, dict) else None
        if isinstance(inner, dict) and dotted in inner:
            del inner[dotted]
            if not inner:
                del holder[section]
    if isinstance(sweep.get("random"), dict) and "params" not in sweep["random"]:
        del sweep["random"]
    if not sweep:
        raw["sweep"] = None


def result_columns(overrides: dict[str, Any]) -> dict[str, Any]:
    """The ``--set`` values that become result columns (not sweep/plots/repeats/seed)."""
    return {k: v for k, v in overrides.items() if k.split(".")[0] not in _NOT_COLUMNS}


def load_experiment(path: str | Path, overrides: dict[str, Any] | None = None
                    ) -> tuple[dict, Path]:
    """Read an experiment file and apply overrides; validate the base.

    Returns:
        the raw mapping (with overrides) and the folder relative paths resolve against.

    Raises:
        ConfigError: unreadable file, malformed YAML, bad override or invalid experiment.
    """
    path = Path(path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise ConfigError("an experiment must be a mapping", file=str(path))
    overrides = overrides or {}
    try:
        raw = apply_overrides(raw, overrides)
    except ConfigError as err:
        raise err.within(file=str(path)) from None
    try:
        check_experiment(raw, str(path))
    except ConfigError as err:
        raise _blame(err, {k: f"--set {k}={v!r}" for k, v in overrides.items()}) from None
    return raw, path.parent


def check_experiment(raw: dict, file: str | None = None) -> ExperimentSpec:
    """Validate a raw mapping (base or resolved) as an experiment, sweep included."""
    if isinstance(raw, dict) and raw.get("sweep") is not None:
        parse_sweep(raw["sweep"], file)
    return validate(ExperimentSpec, raw, file=file)


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


def sweep_points(sweep: SweepSpec) -> list[dict[str, Any]]:
    """All points of a sweep, grid x zip x random (pure; random uses its own seed).

    Returns:
        one ``{dotted path: value}`` per point (``[{}]`` for no sweep).
    """
    combos = itertools.product(*sweep.grid.values())
    points = [dict(zip(sweep.grid, values, strict=True)) for values in combos]
    if sweep.zip:
        columns = zip(*sweep.zip.values(), strict=True)
        rows = [dict(zip(sweep.zip, values, strict=True)) for values in columns]
        points = [{**p, **r} for p in points for r in rows]
    if sweep.random is not None:
        rng = np.random.default_rng(sweep.random.seed)
        samples = [{key: dist.sample(rng) for key, dist in sweep.random.params.items()}
                   for _ in range(sweep.random.samples)]
        points = [{**p, **s} for p in points for s in samples]
    return points


def _sweep_location(sweep: SweepSpec, key: str) -> str:
    if key in sweep.grid:
        return f"sweep.{key}"
    if key in sweep.zip:
        return f"sweep.zip.{key}"
    return f"sweep.random.params.{key}"


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
        ConfigError: a bad sweep, or a point that is not a valid experiment
            (the path names the sweep axis that produced the bad value).
    """
    sweep = parse_sweep(raw.get("sweep"), file)
    base = {k: v for k, v in raw.items() if k != "sweep"}
    points = sweep_points(sweep)
    repeats = int(raw.get("repeats", 1))
    seed = int(raw.get("seed", 0))
    columns = result_columns(set_params or {})
    single = len(points) == 1 and repeats == 1
    runs = []
    for index, point in enumerate(points):
        blame = {k: f"value {v!r}" for k, v in point.items()}
        try:
            config = apply_overrides(base, point)
            check_experiment(config, file)
        except ConfigError as err:
            raise _blame(err.within(file=file), blame, sweep, point) from None
        for repeat in range(repeats):
            run_seed = seed if single else derive_seed(seed, index, repeat)
            runs.append(RunSpec(index=index, repeat=repeat, seed=run_seed, config=config,
                                params={**columns, **point},
                                key=config_key(config, run_seed)))
    return runs


def _blame(err: ConfigError, sources: dict[str, str], sweep: SweepSpec | None = None,
           point: dict | None = None) -> ConfigError:
    """Re-anchor an error on the ``--set``/sweep entry that produced the bad value."""
    where = err.path or ""
    for key in sorted(sources, key=len, reverse=True):
        if where == key or where.startswith((f"{key}.", f"{key}[")):
            if sweep is not None:
                note = "" if sources[key][6:] in err.message else f" ({sources[key]})"
                return ConfigError(f"{err.message}{note}", file=err.file,
                                   path=_sweep_location(sweep, key))
            return ConfigError(f"{err.message} (from {sources[key]})", file=err.file,
                               path=err.path)
    if point:
        return ConfigError(f"{err.message} (at sweep point {point})", file=err.file,
                           path=err.path)
    return err


def check_runs(runs: list[RunSpec], base: Path, file: str | None = None) -> None:
    """Check names and files every run depends on, before anything runs.

    Unknown SoCs, policies, policy parameters, models and missing trace files
    are input errors of the whole experiment, reported here with their path.

    Raises:
        ConfigError: the first problem, naming the run it was found in.
    """
    from .library import load_soc
    from .policy import make_policy

    seen: set[str] = set()
    for run in runs:
        config = run.config
        checks: list[tuple[str, Callable[[], Any]]] = [
            ("soc", lambda c=config: load_soc(c["soc"], base)),
            ("policy", lambda c=config: make_policy(dict(c["policy"]))),
        ]
        workloads = config["workload"]
        for i, workload in enumerate(workloads if isinstance(workloads, list) else [workloads]):
            where = "workload" if isinstance(workloads, dict) else f"workload[{i}]"
            if workload.get("trace") is not None:
                checks.append((where, lambda w=workload: _trace_exists(w["trace"], base)))
            elif workload.get("model") is not None:
                checks.append((where, lambda w=workload: _model_exists(w["model"])))
        for where, check in checks:
            identity = where + json.dumps(_pick(config, where), sort_keys=True, default=str)
            if identity in seen:
                continue
            seen.add(identity)
            try:
                check()
            except ConfigError as err:
                if err.file and err.file != file:
                    raise  # a problem inside the SoC or trace file itself
                path = err.path or ""
                if not path.startswith(where.split("[")[0]):
                    path = f"{where}.{path}" if path else where
                note = f" (run {run.run_id})" if len(runs) > 1 else ""
                raise ConfigError(f"{err.message}{note}", file=file or err.file,
                                  path=path) from None


def _pick(config: dict, where: str) -> Any:
    if where.startswith("workload["):
        return config["workload"][int(where[9:-1])]
    return config.get(where)


def _trace_exists(trace: str, base: Path) -> None:
    path = Path(trace)
    if not (path.is_file() or (not path.is_absolute() and (base / path).is_file())):
        raise ConfigError(f"trace file not found: {trace}", path="trace")


def _model_exists(model: str) -> None:
    from .registry import MODELS

    MODELS.get(model, path="model")
