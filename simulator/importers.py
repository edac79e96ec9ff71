"""Running an importer by name (``socsim import``): the app side of the importers registry.

Importers are plugins (:data:`simulator.registry.IMPORTERS`, filled through
the ``socsim.importers`` entry points; the built-ins are in
``workloads/importers/``): each is ``importer(input_path, output_path,
**options) -> list[Path]`` with a one-line ``description``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .registry import IMPORTERS


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

    Raises:
        ConfigError: an unknown format or option, a missing input, bad input (from
            the importer) or a file that cannot be read or written.
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
    try:
        return func(Path(input_path), Path(output_path), **options)
    except OSError as exc:  # a file the system refuses (permissions, a name too long)
        raise ConfigError(exc.strerror or str(exc),
                          file=str(exc.filename or output_path)) from None


def describe() -> list[tuple[str, str]]:
    """Return ``(name, description)`` per registered importer, sorted by name."""
    return [(name, getattr(IMPORTERS.get(name), "description", "")) for name in IMPORTERS]
