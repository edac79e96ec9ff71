"""Print the Xenos predictions issue 19 asks for.

* per model, Vanilla / HO / HO+VO time (ms), HO's cut against Vanilla and VO's
  cut against HO (%), on the TMS320C6678 and on the ZCU102 (the HO ranges are
  the two boards' calibration figures; VO is held out);
* Vanilla MobileNet's time on the C6678 (the first row of its table);
* d-Xenos: the speedup of four C6678 boards over one for MobileNet, ResNet-101
  and BERT-L, parameter server against ring all-gather, with every partition
  scheme (inH, inW, outC, mixed), the runs of ``experiments/xenos/dxenos.yaml``.

Run: ``python -m validation.xenos.report`` (``--skip-distributed`` leaves out the
d-Xenos table, the slowest part: 24 four-board runs).
"""

from __future__ import annotations

import argparse

from validation.xenos import checks, fit, refs

PARTITIONS = ("inH", "inW", "outC", "mixed")
SYNCS = ("ps", "ring")


def board_table(soc: str) -> list[tuple[str, float, float, float]]:
    """(model, Vanilla s, HO s, HO+VO s) for the seven models on board ``soc``."""
    return [(model, *(fit.latency_s(model, config, soc=soc) for config in fit.CONFIGS))
            for model in refs.MODELS]


def print_board(soc: str) -> None:
    rows = board_table(soc)
    print(f"{soc}: Vanilla / HO / HO+VO (ms); HO cut vs Vanilla, VO cut vs HO (%)")
    for model, vanilla, ho, vo in rows:
        print(f"  {model:14s} {vanilla * 1e3:9.2f} {ho * 1e3:9.2f} {vo * 1e3:9.2f}"
              f"   HO {100 * (1 - ho / vanilla):5.1f} %   VO {100 * (1 - vo / ho):5.1f} %")
    ho_cuts = [100 * (1 - r[2] / r[1]) for r in rows]
    vo_cuts = [100 * (1 - r[3] / r[2]) for r in rows]
    target = fit.TARGETS[soc]
    print(f"  HO range {min(ho_cuts):.1f}-{max(ho_cuts):.1f} % (notes {target[0]}-{target[1]} %,"
          f" calibration); VO range {min(vo_cuts):.1f}-{max(vo_cuts):.1f} % (prediction)")


def print_distributed() -> None:
    print(f"d-Xenos, {checks.BOARDS} boards over one (speedup, x)")
    header = "".join(f"{sync + ' ' + part:>11s}" for sync in SYNCS for part in PARTITIONS)
    print(f"  {'model':14s}{header}")
    for model in checks.DISTRIBUTED_MODELS:
        cells = "".join(f"{checks.speedup(model, part, sync):11.2f}"
                        for sync in SYNCS for part in PARTITIONS)
        print(f"  {model:14s}{cells}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-distributed", action="store_true",
                        help="leave out the d-Xenos table")
    args = parser.parse_args(argv)
    for soc in (refs.SOC, refs.FPGA):
        print_board(soc)
        print()
    vanilla = fit.latency_s("mobilenet_v1", "vanilla")
    print(f"Vanilla MobileNet on the C6678 (1.25 GHz): {vanilla * 1e3:.1f} ms")
    if not args.skip_distributed:
        print()
        print_distributed()


if __name__ == "__main__":
    main()
