"""A seeded mutation fuzzer over the inputs users bring: bad input never crashes.

Each case (``tests/fuzz_cases.py``) takes a shipped SoC, experiment or
training-framework file, a generated kernel trace, an ONNX model or a
mobile-ml-benchmark operator list, applies one random mutation (a value
replaced by another type, a huge, negative, infinite or missing number, a key
removed or added, a unit garbled, a dim, attribute, op type or tensor of an
ONNX graph changed, a feature of an op list broken, the text cut short or
given bytes that are not UTF-8) and loads it the way ``socsim`` does (run,
import), then runs the result briefly.

Every case must end one of three ways: a one-line
:class:`~simulator.errors.ConfigError` (bad input), an
:class:`~simulator.errors.OutOfMemory` (a result), or a sane run (finite,
non-negative metrics; temperatures above absolute zero). A Python traceback
of any other kind, or a case still going after :data:`HANG_S`, fails the test,
naming the case and the mutation. ``benchmarks/fuzz_report.py`` counts how the
same cases end.
"""

from __future__ import annotations

import signal

import pytest
from fuzz_cases import insane, make_case

from simulator.errors import ConfigError, OutOfMemory

# cases per kind: ~65 CPU s for the 640 (benchmarks/fuzz_report.py times each kind)
CASES = {"soc": 200, "experiment": 200, "trace": 60, "framework": 60, "onnx": 60,
         "oplist": 60}
# wall seconds after which a case counts as hung: a brief run takes well under a
# second, so only a loop that never ends (or a blow-up that swaps) gets here
HANG_S = 120


class Hang(Exception):
    """A fuzz case ran past :data:`HANG_S`."""


def _alarm(_signum, _frame):
    raise Hang


@pytest.mark.parametrize("kind, seed", [(kind, seed) for kind, n in CASES.items()
                                        for seed in range(n)])
def test_a_mutated_input_is_one_line_bad_input_or_a_sane_run(kind, seed, tmp_path):
    action, what = make_case(kind, seed, tmp_path)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_S)
    try:
        problem = insane(action())
    except ConfigError as err:
        assert "\n" not in str(err), f"{kind} {seed} ({what}): a multi-line error: {err}"
        return
    except OutOfMemory:
        return  # a result: the workload does not fit
    except Hang:
        pytest.fail(f"{kind} {seed} ({what}): still running after {HANG_S} s")
    except Exception as exc:  # a traceback: name the case, keep the cause
        raise AssertionError(f"{kind} {seed} ({what}): {type(exc).__name__}: {exc}") from exc
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert problem is None, f"{kind} {seed} ({what}): accepted, but {problem}"
