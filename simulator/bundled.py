"""Where the YAML data shipped with socsim lives: SoCs and example experiments.

From a source checkout (or ``pip install -e .``) the data is the checkout's own
``socs/`` and ``experiments/`` folders. A wheel carries copies of them as
package data under ``simulator/_data/`` (``setup.py`` copies them at build
time), found here through :mod:`importlib.resources`, so ``socsim list socs``
and ``socsim run quickstart`` work from any working directory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import ConfigError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_PACKAGE_DIR = "_data"  # below the ``simulator`` package, in a wheel only


def data_root() -> Path:
    """The folder holding ``socs/`` and ``experiments/`` (installed copy or checkout)."""
    shipped = resources.files("simulator") / DATA_PACKAGE_DIR
    # A wheel is installed unpacked, so the package data is a real folder; a
    # checkout has no ``_data`` and falls back to the project root.
    if isinstance(shipped, Path) and shipped.is_dir():
        return shipped
    return PROJECT_ROOT


def socs_dir() -> Path:
    """The folder of the bundled SoC files (``snapdragon865.yaml``, ...)."""
    return data_root() / "socs"


def experiments_dir() -> Path:
    """The folder of the bundled example experiments (``quickstart.yaml``, ...)."""
    return data_root() / "experiments"


def bundled_experiment(name: str) -> Path:
    """A bundled experiment by name: ``quickstart`` or ``dyno/01-breakdown-per-split``.

    Raises:
        ConfigError: no such bundled experiment (the message lists a few).
    """
    root = experiments_dir().resolve()
    path = (root / f"{name}.yaml").resolve()
    if path.is_relative_to(root) and path.is_file():
        return path
    # Top-level examples first: they are the ones to start with.
    known = sorted((str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.yaml")),
                   key=lambda n: (n.count("/"), n))
    raise ConfigError(f"no experiment file or bundled experiment {name!r}; bundled: "
                      f"{', '.join(known[:8])}{', ...' if len(known) > 8 else ''}")
