"""Reading YAML files into validated schema models, with one-line errors.

Malformed YAML, duplicate keys, unknown keys, wrong units and impossible values
all become :class:`~simulator.errors.ConfigError` naming the file and the
YAML path, raised before any simulation starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, yaml_path

M = TypeVar("M", bound=BaseModel)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (a silent overwrite otherwise)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 _construct_mapping)


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file; errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("file not found", file=str(path))
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.load(handle, Loader=_UniqueKeyLoader)  # noqa: S506 (safe loader subclass)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        problem = getattr(err, "problem", None) or str(err)
        raise ConfigError(f"malformed YAML: {problem}", file=str(path), path=where) from None


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
