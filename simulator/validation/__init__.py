"""Validation: reference measurements, how to simulate them, and the scoreboard.

Importing this package registers every check in :data:`registry.CHECKS`.
"""

from . import engine_checks, pixel4_checks, thermal_checks  # noqa: F401
from .registry import CHECKS, Check, DataUnavailable, check

__all__ = ["CHECKS", "Check", "DataUnavailable", "check"]
