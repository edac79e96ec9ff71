"""Same inputs, same bytes: compare the outputs of two versions of the code.

A refactoring (or an optimisation) must not change any result. ``write`` runs
every shipped experiment (every run of its sweep, cut to ``--time-limit``
simulated seconds as the smoke test does) and the validation scoreboard, and
keeps ``results.csv``, ``summary.csv``, ``results.parquet`` and
``validation.csv``; ``compare`` says, file by file, whether two such folders
are byte-identical::

    python benchmarks/identical_outputs.py write /tmp/before      # on the old commit
    python benchmarks/identical_outputs.py write /tmp/after       # on the new one
    python benchmarks/identical_outputs.py compare /tmp/before /tmp/after

The scoreboard's scheduler-cost checks time the DynO scheduler on this host
(wall-clock time, never the same twice): their rows are compared without the
``simulated`` and ``error_pct`` columns and named in the report. ``socsim list``
output is kept too (``list-<what>.txt``). Not part of the test suite (a few
minutes on two cores).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("results.csv", "summary.csv", "results.parquet")
LISTS = ("socs", "policies", "models", "importers", "governors", "checks")
# checks whose simulated value is a wall-clock measurement on this host
HOST_TIMED = ("dyno.scheduler.max_ms", "dyno.scheduler.geomean_ms")


def write(out: Path, time_limit: str, workers: int, skip_validation: bool) -> None:
    """Run every shipped experiment (cut short) and the scoreboard into ``out``."""
    from simulator.runner import run_experiment

    experiments = sorted((ROOT / "experiments").rglob("*.yaml"))
    for path in experiments:
        name = str(path.relative_to(ROOT / "experiments").with_suffix(""))
        folder = out / "experiments" / name
        run_experiment(path, overrides={"time_limit": time_limit}, out=folder,
                       workers=workers)
        print(f"{name}: written", flush=True)
    for what in LISTS:
        listing = subprocess.run([sys.executable, "-m", "simulator", "list", what],
                                 capture_output=True, text=True, check=True)
        (out / f"list-{what}.txt").write_text(listing.stdout)
    if not skip_validation:
        subprocess.run([sys.executable, "-m", "simulator", "validate", "--quiet", "--out",
                        str(out / "validation")], check=True, stdout=subprocess.DEVNULL)


def compare(before: Path, after: Path) -> int:
    """Print one line per compared file; return the number that differ."""
    import pandas as pd

    differ = 0
    files = sorted(p.relative_to(before) for p in before.rglob("*")
                   if p.name in TABLES or p.name.startswith("list-"))
    for relative in files:
        a, b = before / relative, after / relative
        same = b.is_file() and a.read_bytes() == b.read_bytes()
        differ += not same
        print(f"{'same  ' if same else 'DIFFER'} {relative}")
    old, new = before / "validation" / "validation.csv", after / "validation" / "validation.csv"
    if old.is_file():
        left, right = pd.read_csv(old), pd.read_csv(new) if new.is_file() else None
        if right is None:
            print("DIFFER validation/validation.csv (missing)")
            return differ + 1
        timed = left["check"].isin(HOST_TIMED)
        columns = [c for c in left.columns if c not in ("simulated", "error_pct")]
        same = (left[~timed].equals(right[~right["check"].isin(HOST_TIMED)])
                and left[columns].equals(right[columns]))
        differ += not same
        print(f"{'same  ' if same else 'DIFFER'} validation/validation.csv "
              f"({len(left)} checks; host-timed values not compared: {', '.join(HOST_TIMED)})")
    print(f"{len(files) + old.is_file() - differ} identical, {differ} different")
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("write", help="write the outputs of this checkout")
    run.add_argument("out", type=Path)
    run.add_argument("--time-limit", default="0.5 s", help="simulated time per run")
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--skip-validation", action="store_true")
    cmp = commands.add_parser("compare", help="compare two written folders")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        write(args.out, args.time_limit, args.workers, args.skip_validation)
        return 0
    return 1 if compare(args.before, args.after) else 0


if __name__ == "__main__":
    sys.exit(main())
