"""The ``socsim calibrate`` command's registration (the ``socsim.commands`` entry point).

Kept apart from :mod:`validation.calibrate.command`, which needs pandas, scipy and
the fitting engine, so that building ``socsim``'s parser (``socsim --help``)
imports none of them: the command's module is imported only when it runs.
"""

from __future__ import annotations

import argparse

from simulator.registry import COMMANDS, Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's arguments (``socsim calibrate --help``)."""
    parser.add_argument("base", help="base SoC: a shipped name or a YAML file")
    parser.add_argument("measurements", nargs="+",
                        help="measurement files (CSV/Parquet; docs/calibrate.md)")
    parser.add_argument("-o", "--output", required=True, help="the new SoC YAML file")
    parser.add_argument("--params", action="append", metavar="NAME[,NAME...]",
                        help="parameters to fit (default: what the data identify), e.g. "
                             "cpu.prime+gold.efficiency.fp32.conv, gpu.offload.switch")
    parser.add_argument("--cv", type=int, default=5, metavar="K",
                        help="K-fold cross-validation over the models (0: none; default 5)")
    parser.add_argument("--seed", type=int, default=0, help="fold permutation seed")
    parser.add_argument("--name", help="name of the new SoC (default: the output's stem)")
    parser.add_argument("--date", help="date written in the provenance (default: today, UTC)")


def run(args) -> int:
    """Run the command (:func:`validation.calibrate.command.run`)."""
    from validation.calibrate.command import run as calibrate

    return calibrate(args)


COMMANDS.register("calibrate")(
    Command(help="fit a SoC description to your own measurements",
            description="Fit a SoC description to a researcher's own measurements.",
            add_arguments=add_arguments, run=run))
