"""Every scoreboard check: importing this module registers them all in
:data:`simulator.checks.CHECKS` (the ``socsim.checks`` entry point names it)."""

from validation.cappuccino import checks as _cappuccino  # noqa: F401
from validation.dyno import checks as _dyno  # noqa: F401
from validation.engine import checks as _engine  # noqa: F401
from validation.engine import thermal_checks as _thermal  # noqa: F401
from validation.mandheling import checks as _mandheling  # noqa: F401
from validation.nestdnn import checks as _nestdnn  # noqa: F401
from validation.pixel4 import checks as _pixel4  # noqa: F401
from validation.training import checks as _training  # noqa: F401
from validation.xenos import checks as _xenos  # noqa: F401
