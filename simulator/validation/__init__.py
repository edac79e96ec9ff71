"""Validation: reference measurements, how to simulate them, and the scoreboard.

Importing this package imports every ``*_checks`` module in it, which register
their checks in :data:`registry.CHECKS`.
"""

import importlib
import pkgutil

from .registry import CHECKS, Check, DataUnavailable, check

for _module in pkgutil.iter_modules(__path__):
    if _module.name.endswith("_checks"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["CHECKS", "Check", "DataUnavailable", "check"]
