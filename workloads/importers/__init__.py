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

``socsim import FORMAT INPUT -o OUT`` calls :func:`simulator.importers.run_importer`.
The built-in importers (:mod:`.mobile_ml_benchmark`, :mod:`.onnx_model`) are
found through the ``socsim.importers`` entry points, like an outside one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from simulator.registry import IMPORTERS

Importer = Callable[..., list[Path]]


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
