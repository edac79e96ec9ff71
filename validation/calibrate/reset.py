"""A base for calibrating from scratch: a SoC with the numbers ``socsim calibrate`` would
fit set back to neutral starting values (efficiency 0.3, parallel efficiency 0.8,
20 us per operator, gemm_half_channels and group_half_channels 10, im2col 8 B/cycle,
100 us per host transfer: the ``start``
column of :data:`validation.fitting.params.KINDS`), each commented "reset".

The tutorial (``docs/calibrate.md``) makes its base this way from ``snapdragon855``
to show that the calibration recovers the hand-made description.

Run: ``python -m validation.calibrate.reset BASE_SOC MEASUREMENTS... -o BASE.yaml``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from validation.calibrate.candidates import candidates
from validation.calibrate.command import problem
from validation.calibrate.yamlout import write
from validation.fitting.params import KINDS, apply


def reset(base: str, files: list[str], output: str) -> list[str]:
    """Write ``output``: ``base`` with its identifiable parameters reset; returns their names."""
    prob, _, path = problem(base, files)
    params, _ = prob.identifiable(candidates(prob.soc, prob.rows, prob.energy_rows))
    raw, _ = apply(prob.raw, prob.soc, params, [KINDS[p.kind][3] for p in params],
                   file=output, digits=4)
    raw["name"] = raw["name"] + "-reset"
    header = (f"{raw['name']}: {path.name} with the {len(params)} numbers `socsim calibrate` "
              f"fits to {', '.join(Path(f).name for f in files)} reset to neutral starting values.")
    write(output, raw, header, {y: "reset (to be fitted)" for p in params
                                for y in p.yaml_paths()}, base=path.read_text())
    return [p.name for p in params]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.calibrate.reset",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("measurements", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    names = reset(args.base, args.measurements, args.output)
    print(f"{args.output}: {len(names)} parameters reset: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
