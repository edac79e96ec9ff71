"""Importers: turn outside model descriptions into kernel traces.

An importer is a function ``(input_path, output_path, **options) -> list[Path]``
that reads one outside file, writes one or more trace files and returns their
paths. Its options are explicit keyword arguments (so they can be listed and
checked) and it carries a one-line ``description`` for ``socsim list
importers``. Built-ins register themselves exactly as a plugin would::

    from workloads.importers import importer

    @importer("my-format", "traces from my format")
    def my_format(input_path, output_path, *, precision="fp32"):
        ...

``socsim import FORMAT INPUT -o OUT`` calls :func:`run_importer`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.errors import ConfigError
from simulator.registry import Registry

Importer = Callable[..., list[Path]]

IMPORTERS: Registry[Importer] = Registry("importer")


class ImporterWarning(UserWarning):
    """An approximation an importer made (e.g. an unknown op imported as ``copy``).

    Importers report these through :mod:`warnings`; a CLI can record them with
    ``warnings.catch_warnings(record=True)`` and print one line each.
    """


def importer(name: str, description: str) -> Callable[[Importer], Importer]:
    """Decorator registering an importer under ``name`` with a one-line description."""

    def decorator(func: Importer) -> Importer:
        func.description = description  # type: ignore[attr-defined]
        return IMPORTERS.register(name)(func)

    return decorator


def run_importer(name: str, input_path: str | Path, output_path: str | Path,
                 **options: Any) -> list[Path]:
    """Run the importer ``name``; unknown formats and options are ConfigErrors.

    Args:
        name: a registered format (``mobile-ml-benchmark``, ``onnx``, ...).
        input_path: the outside file to read.
        output_path: where to write (a file or a directory, per importer).
        **options: the importer's keyword options; ``None`` values are dropped
            so a CLI can pass every flag it has.

    Returns:
        The trace files written.
    """
    func = IMPORTERS.get(name)
    options = {key: value for key, value in options.items() if value is not None}
    known = [p.name for p in list(inspect.signature(func).parameters.values())[2:]]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ConfigError(f"importer {name!r} has no option(s) {', '.join(unknown)}; "
                          f"known: {', '.join(known) or 'none'}")
    if not Path(input_path).is_file():
        raise ConfigError("input file not found", file=str(input_path))
    return func(Path(input_path), Path(output_path), **options)


def describe() -> list[tuple[str, str]]:
    """Return ``(name, description)`` per registered importer, sorted by name."""
    return [(name, getattr(IMPORTERS.get(name), "description", "")) for name in IMPORTERS]


# Imported last: the built-in modules register into IMPORTERS defined above.
from . import mobile_ml_benchmark, onnx_model  # noqa: E402,F401,I001
