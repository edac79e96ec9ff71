"""Reading an experiment file: YAML, overrides, validation (the sweep included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..spec.experiment import ExperimentSpec
from ..spec.yamlio import read_yaml, validate
from .overrides import apply_overrides
from .sweep import SweepSpec, parse_sweep, sweep_location


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
    if raw is None:
        raise ConfigError("the experiment is empty; give at least name, soc, workload and "
                          "policy", file=str(path))
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
        raise blame(err, {k: f"--set {k}={v!r}" for k, v in overrides.items()}) from None
    return raw, path.parent


def check_experiment(raw: dict, file: str | None = None) -> ExperimentSpec:
    """Validate a raw mapping (base or resolved) as an experiment, sweep included."""
    if isinstance(raw, dict) and raw.get("sweep") is not None:
        parse_sweep(raw["sweep"], file)
    return validate(ExperimentSpec, raw, file=file)


def blame(err: ConfigError, sources: dict[str, str], sweep: SweepSpec | None = None,
           point: dict | None = None) -> ConfigError:
    """Re-anchor an error on the ``--set``/sweep entry that produced the bad value."""
    where = err.path or ""
    for key in sorted(sources, key=len, reverse=True):
        if where == key or where.startswith((f"{key}.", f"{key}[")):
            if sweep is not None:
                note = "" if sources[key][6:] in err.message else f" ({sources[key]})"
                return ConfigError(f"{err.message}{note}", file=err.file,
                                   path=sweep_location(sweep, key))
            return ConfigError(f"{err.message} (from {sources[key]})", file=err.file,
                               path=err.path)
    if point:
        return ConfigError(f"{err.message} (at sweep point {point})", file=err.file,
                           path=err.path)
    return err
