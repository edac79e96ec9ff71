"""Fuzz figures: how the seeded fuzz cases of the test suite end, counted per file kind.

Runs the cases of ``tests/test_fuzz.py`` (``tests/fuzz_cases.py``: a shipped
SoC, experiment or framework file, a kernel trace, an ONNX model or an op list,
each with one random mutation, loaded the way ``socsim`` does and run briefly)
and sorts each ending into:

- ``ran``: loaded and ran, metrics sane (for SoC and framework files: loaded);
- ``bad input``: a one-line ConfigError (the contract for bad input);
- ``oom``: an OutOfMemory result (the workload does not fit);
- ``multi-line``: a ConfigError spread over several lines;
- ``traceback``: any other exception;
- ``hang``: still going after ``--hang-s`` wall seconds;
- ``nonsense``: accepted with physically impossible metrics (non-finite or
  negative, temperatures at or below absolute zero).

The last four are failures (the test suite fails on them). ``suspicious`` counts
the ``ran`` cases whose mutation put in a value no quantity, count or name can
take (negative, infinite, 1e308, "0 K", ...): some keys legitimately take
them (a seed of 0, an unused option), so ``--list`` prints them to be read::

    python benchmarks/fuzz_report.py                  # the test suite's cases
    python benchmarks/fuzz_report.py --cases 100      # 100 per kind, other seeds too
    python benchmarks/fuzz_report.py --kinds onnx oplist --list

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout, and the cases

from fuzz_cases import KINDS, insane, make_case, suspicious  # noqa: E402
from test_fuzz import CASES  # noqa: E402

from simulator.errors import ConfigError, OutOfMemory  # noqa: E402

ENDINGS = ("ran", "bad input", "oom", "multi-line", "traceback", "hang", "nonsense")
FAILURES = ("multi-line", "traceback", "hang", "nonsense")


class _Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Hang


def run_case(kind: str, seed: int, hang_s: int) -> tuple[str, str, str]:
    """Run one case; returns (ending, mutation, detail)."""
    with tempfile.TemporaryDirectory() as folder:
        action, what = make_case(kind, seed, Path(folder))
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(hang_s)
        try:
            problem = insane(action())
        except ConfigError as err:
            return ("multi-line" if "\n" in str(err) else "bad input"), what, str(err)
        except OutOfMemory as err:
            return "oom", what, str(err)
        except _Hang:
            return "hang", what, f"still running after {hang_s} s"
        except Exception as exc:  # noqa: BLE001 - counting them is the point
            last = traceback.extract_tb(exc.__traceback__)[-1]
            return ("traceback", what,
                    f"{type(exc).__name__}: {exc} ({Path(last.filename).name}:{last.lineno})")
        finally:
            signal.alarm(0)
        return ("nonsense" if problem else "ran"), what, problem or ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--cases", type=int, help="cases per kind (default: the test suite's)")
    parser.add_argument("--hang-s", type=int, default=120, help="wall seconds counted as a hang")
    parser.add_argument("--list", action="store_true",
                        help="print every failure and every suspicious accepted case")
    args = parser.parse_args(argv)

    rows, listed = [], []
    totals: Counter = Counter()
    for kind in args.kinds:
        n = args.cases or CASES[kind]
        counts: Counter = Counter()
        start = time.perf_counter()
        for seed in range(n):
            ending, what, detail = run_case(kind, seed, args.hang_s)
            counts[ending] += 1
            if ending == "ran" and suspicious(what):
                counts["suspicious"] += 1
                listed.append(f"  suspicious  {kind} {seed}: {what}")
            elif ending in FAILURES:
                listed.append(f"  {ending:<11} {kind} {seed}: {what}: {detail}")
        rows.append((kind, n, counts, time.perf_counter() - start))
        totals.update(counts)
        totals["cases"] += n

    header = f"{'kind':<11}{'cases':>6}" + "".join(f"{e:>11}" for e in ENDINGS) + \
        f"{'suspicious':>11}{'wall s':>8}"
    print(header)
    for kind, n, counts, wall in rows:
        print(f"{kind:<11}{n:>6}" + "".join(f"{counts[e]:>11}" for e in ENDINGS)
              + f"{counts['suspicious']:>11}{wall:>8.1f}")
    print(f"{'total':<11}{totals['cases']:>6}" + "".join(f"{totals[e]:>11}" for e in ENDINGS)
          + f"{totals['suspicious']:>11}{sum(r[3] for r in rows):>8.1f}")
    if args.list and listed:
        print("\n".join(listed))
    return 1 if any(totals[e] for e in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
