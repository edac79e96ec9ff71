"""Wall and CPU time of ``socsim validate``, cold and warm, next to the goal.

Issue 21 item 3: the scoreboard is re-run after every change, so it should take
under a minute on the project's 2-core machine. The script runs it twice in a
fresh, private check cache (``$SOCSIM_CACHE_DIR`` in a temporary folder): *cold*
(every check simulated, in parallel with the default workers) and *warm* (the
same tree again: every deterministic check read from the cache), and prints
each one's wall seconds, the CPU seconds of the process and its workers, and
the load average (a shared machine's wall time also counts waiting for a core)
next to the goal. It also prints the scoreboard's summary line, which must be
the same both times.

Usage: ``python benchmarks/validate.py [--workers N]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WALL_GOAL_S = 60.0  # one cold ``socsim validate`` on 2 cores


def _validate(cache: Path, out: Path, workers: int | None) -> tuple[float, float, str]:
    """(wall s, CPU s of the children, the summary line) of one scoreboard run."""
    command = [sys.executable, "-m", "simulator", "validate", "--quiet", "--out", str(out)]
    if workers is not None:
        command += ["--workers", str(workers)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True,
                          env={**os.environ, "SOCSIM_CACHE_DIR": str(cache)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = next((line for line in done.stdout.splitlines()
                    if line.startswith("calibration ")), f"(no summary; exit {done.returncode})")
    return wall, cpu, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, help="validate's --workers (default: its own)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "cache"
        for label in ("cold", "warm"):
            load = os.getloadavg()[0]
            wall, cpu, summary = _validate(cache, Path(folder) / label, args.workers)
            verdict = "ok" if wall < WALL_GOAL_S else "above goal"
            print(f"validate, {label}: wall {wall:6.1f} s (goal < {WALL_GOAL_S:g} s: {verdict}),"
                  f" CPU {cpu:6.1f} s, load average {load:.1f} at the start; {summary}")


if __name__ == "__main__":
    main()
