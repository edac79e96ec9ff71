"""Reading YAML files into validated schema models, with one-line errors.

Malformed or unbounded YAML (see :mod:`.yamlsafe`), duplicate keys, unknown
keys, wrong units and impossible values all become :class:`~simulator.errors.ConfigError` naming the file and the
YAML path, raised before any simulation starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, yaml_path
from .yamlsafe import decode, load_text

M = TypeVar("M", bound=BaseModel)


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file within the reader's bounds (:mod:`.yamlsafe`); errors name
    the file and the line, or the YAML path of a bad number."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("file not found", file=str(path))
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read the file: {err.strerror}", file=str(path)) from None
    return load_text(decode(data, str(path)), str(path))


def validate(model: type[M], data: Any, file: str | None = None, prefix: str | None = None) -> M:
    """Validate ``data`` against ``model``; the first problem becomes a ConfigError."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise validation_error(err, file, prefix) from None


def validation_error(err: ValidationError, file: str | None, prefix: str | None = None
                     ) -> ConfigError:
    """Turn pydantic's first error into a one-line ConfigError."""
    first = err.errors(include_url=False)[0]
    loc = list(first.get("loc", ()))
    message = first.get("msg", "invalid value")
    message = message.removeprefix("Value error, ")
    kind = first.get("type", "")
    if kind == "extra_forbidden":
        message = f"unknown key {loc[-1]!r}" if loc else "unknown key"
    elif kind == "missing":
        message = "required key is missing"
    elif "input" in first and kind not in ("value_error",):
        message = f"{message}; got {first['input']!r}"
    path = yaml_path(loc)
    if prefix:
        path = f"{prefix}.{path}" if path else prefix
    return ConfigError(message, file=file, path=path or None)
