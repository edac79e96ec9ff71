"""The Pixel 4 study's fast model: the fitting engine's vectorised cost model
(:class:`validation.fitting.fast.FastCase`, matches the engine to ~1e-13) run on a
calibration :class:`~validation.pixel4.data.Config`."""

from __future__ import annotations

from simulator.spec.soc import SocSpec
from simulator.trace import Trace
from validation.fitting.fast import FastCase as _FastCase
from validation.fitting.fast import Setting
from validation.pixel4.data import Config


class FastCase(_FastCase):
    """One model on one calibration configuration (processor, threads, precision) at
    the processor's top OPP; see :class:`validation.fitting.fast.FastCase`."""

    def __init__(self, soc: SocSpec, trace: Trace, config: Config):
        super().__init__(soc, trace, Setting(config.processor, config.cores, config.precision))
        self.config = config
