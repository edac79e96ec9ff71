"""Pre-flight: the names and files every run refers to, checked before anything runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .expand import RunSpec


def check_runs(runs: list[RunSpec], base: Path, file: str | None = None) -> None:
    """Check names and files every run depends on, before anything runs.

    Unknown SoCs, policies, policy parameters, models and missing trace files
    are input errors of the whole experiment, reported here with their path.

    Raises:
        ConfigError: the first problem, naming the run it was found in.
    """
    from ..library import load_soc
    from ..policy import make_policy

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
    from ..registry import MODELS

    MODELS.get(model, path="model")
