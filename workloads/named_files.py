"""Data files chosen by name or by path (algorithms, frameworks)."""

from __future__ import annotations

from pathlib import Path

from simulator.errors import ConfigError
from simulator.registry import Registry


def named_file(name_or_path: str | Path, registry: Registry[Path], kind: str) -> Path:
    """The file a user means: a shipped one by registry name (``niti``, with a
    "did you mean" on a typo) or a YAML path.

    Raises:
        ConfigError: unknown name, or no such file.
    """
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith((".yaml", ".yml")) or "/" in text:
        path = Path(name_or_path)
    else:
        path = registry.get(text)
    if not path.is_file():
        raise ConfigError(f"{kind} file not found", file=str(path))
    return path
