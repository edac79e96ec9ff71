"""Finding the bundled YAML files: SoCs by name, experiments, the project root.

A SoC is named by a file stem under ``socs/`` (``snapdragon865``; the bundled
folder, see :mod:`.bundled`) or given as a
path. ``SOCSIM_SOC_PATH`` (os.pathsep-separated folders) adds search folders
for user SoC libraries. ``name@variant`` (``jetson-agx-xavier@10w``) selects
one of the file's ``variants``: its overrides deep-merged over the file.
"""

from __future__ import annotations

import difflib
import os
from functools import lru_cache
from pathlib import Path

from .bundled import PROJECT_ROOT, socs_dir
from .errors import ConfigError
from .spec.soc import SocSpec
from .spec.yamlio import read_yaml, validate

__all__ = ["PROJECT_ROOT", "load_soc", "merge_overrides", "soc_dirs", "soc_names", "soc_path"]


def soc_dirs() -> list[Path]:
    """Folders searched for SoC files, in order."""
    extra = [Path(p) for p in os.environ.get("SOCSIM_SOC_PATH", "").split(os.pathsep) if p]
    return [*extra, socs_dir()]


def soc_names() -> list[str]:
    """Names of all SoC files found."""
    names = set()
    for folder in soc_dirs():
        if folder.is_dir():
            names.update(p.stem for p in folder.glob("*.yaml"))
    return sorted(names)


def soc_path(name: str, base: Path | None = None) -> Path:
    """Resolve a SoC name or path to a file."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml"):
        for path in ([base / candidate] if base else []) + [candidate]:
            if path.is_file():
                return path
        raise ConfigError("SoC file not found", file=str(candidate))
    for folder in soc_dirs():
        path = folder / f"{name}.yaml"
        if path.is_file():
            return path
    close = difflib.get_close_matches(name, soc_names(), n=3)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    raise ConfigError(f"unknown SoC {name!r}.{hint} Known: {', '.join(soc_names())}.")


def load_soc(name: str, base: Path | None = None) -> SocSpec:
    """Load and validate a SoC by name (``snapdragon865``), ``name@variant`` or path."""
    name, _, variant = name.partition("@")
    path = soc_path(name, base)
    return _load_soc_file(str(path.resolve()), path.stat().st_mtime_ns, variant or None)


@lru_cache(maxsize=64)
def _load_soc_file(path: str, _mtime: int, variant: str | None = None) -> SocSpec:
    # Specs are immutable pydantic models, so sharing one between runs is safe.
    raw = read_yaml(path)
    spec = validate(SocSpec, raw, file=path)
    _check_governor(spec, path)
    if variant is None:
        return spec
    if variant not in spec.variants:
        known = ", ".join(spec.variants) or "none"
        raise ConfigError(f"SoC {spec.name!r} has no variant {variant!r}; variants: {known}",
                          file=path)
    merged = merge_overrides({k: v for k, v in raw.items() if k != "variants"},
                             spec.variants[variant])
    merged["name"] = f"{spec.name}@{variant}"
    spec = validate(SocSpec, merged, file=path, prefix=f"variants.{variant}")
    _check_governor(spec, path, f"variants.{variant}.")
    return spec


def _check_governor(spec: SocSpec, path: str, prefix: str = "") -> None:
    """The SoC's ``default_governor`` is a registered governor: checked where it is
    written, or a run would blame its own ``dvfs.governor``."""
    from .engine.dvfs import GOVERNORS

    try:
        GOVERNORS.get(spec.default_governor)
    except ConfigError as err:
        raise ConfigError(err.message, file=path, path=f"{prefix}default_governor") from None


def merge_overrides(base: dict, overrides: dict) -> dict:
    """``base`` with ``overrides`` deep-merged: mappings key by key, anything else replaced."""
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_overrides(out[key], value)
        else:
            out[key] = value
    return out
