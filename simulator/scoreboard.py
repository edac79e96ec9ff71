"""The validation scoreboard: simulate every registered check, compare, tabulate.

Each check (see :mod:`simulator.checks`) returns the simulated
value of one published measurement. The scoreboard has one row per check with
``check, source, reference, simulated, unit, error_pct, tolerance_pct,
passed, group, status, reason`` (the last three appended, so readers of the
older table keep their columns); ``passed`` is empty for a check whose data is
not on this machine (shown as SKIP). A check that raises counts as failed and
its error is kept. The summary counts calibration and prediction checks
apart; a documented exception shows its verdict but is not counted as a pass
or a failure.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd

from .check_cache import CheckCache
from .checks import CHECKS, STATUSES, Check, DataUnavailable
from .errors import ConfigError

COLUMNS = ["check", "source", "reference", "simulated", "unit", "error_pct", "tolerance_pct",
           "passed", "group", "status", "reason"]


@dataclass(frozen=True)
class Score:
    """The outcome of one check.

    Attributes:
        check: the check evaluated.
        simulated: the simulated value (NaN if skipped or errored), in ``check.unit``.
        error_pct: ``100 * (simulated - reference) / |reference|``.
        passed: True/False, None when skipped.
        note: why it was skipped or how it failed.
    """

    check: Check
    simulated: float
    error_pct: float
    passed: bool | None
    note: str = ""

    @property
    def verdict(self) -> str:
        """PASS, FAIL or SKIP."""
        return "SKIP" if self.passed is None else "PASS" if self.passed else "FAIL"


def error_pct(simulated: float, reference: float) -> float:
    """Signed relative error in percent (inf when the reference is 0 and they differ)."""
    if reference == 0:
        return 0.0 if simulated == 0 else math.copysign(math.inf, simulated)
    return 100.0 * (simulated - reference) / abs(reference)


def evaluate(check: Check) -> Score:
    """Run one check; never raises for a failing or unavailable check."""
    return score(check, *_outcome(check))


def _outcome(check: Check) -> tuple[str, float | str]:
    """What simulating a check gave: ``("value", x)``, ``("unavailable", why)`` or
    ``("error", text)`` (a broken check is a failed check, not a crashed scoreboard)."""
    try:
        return "value", float(check.simulate())
    except DataUnavailable as exc:
        return "unavailable", str(exc)
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return "error", " ".join(f"{type(exc).__name__}: {exc}".split())


def score(check: Check, kind: str, payload: float | str) -> Score:
    """The score of an outcome of :func:`_outcome` (or a cached one)."""
    if kind == "unavailable":
        return Score(check, math.nan, math.nan, None, f"data unavailable: {payload}")
    if kind == "error":
        return Score(check, math.nan, math.nan, False, str(payload))
    simulated = float(payload)
    error = error_pct(simulated, check.reference)
    if math.isnan(simulated):
        return Score(check, simulated, error, False, "simulated value is NaN")
    if check.kind == "max":
        passed = simulated <= check.reference
    else:
        passed = abs(error) <= check.tolerance_pct
    return Score(check, simulated, error, passed)


def select_checks(group: str | None = None, patterns: Iterable[str] = ()) -> list[Check]:
    """Registered checks, in name order, filtered by group and name globs.

    Raises:
        ConfigError: an unknown group, or no check matching the patterns.
    """
    checks = [CHECKS.get(name) for name in CHECKS.names()]
    if group is not None:
        groups = sorted({c.group for c in checks})
        if group not in groups:
            raise ConfigError(f"unknown check group {group!r}; groups: "
                              f"{', '.join(groups) or 'none registered'}", path="--group")
        checks = [c for c in checks if c.group == group]
    patterns = list(patterns)
    if patterns:
        checks = [c for c in checks if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]
        if not checks:
            raise ConfigError(f"no check matches {', '.join(patterns)}", path="--check")
    return checks


def run_checks(checks: list[Check], on_score: Callable[[Score], None] | None = None,
               workers: int = 1, cache: CheckCache | None = None) -> list[Score]:
    """Evaluate checks; ``on_score`` is called after each (progress, in completion
    order). Scores come back in the order of ``checks``, whatever ran where.

    Args:
        checks: the checks.
        on_score: progress callback.
        workers: processes to spread the checks over (the sweep's local executor).
            Checks defined in one module run in one process, in order, so that
            the simulations they share (memoised in that module) run once; the
            modules go largest first (by the time they last took, when the cache
            knows it, else by their number of checks).
        cache: cached outcomes (:class:`~simulator.check_cache.CheckCache`): a
            cached check is not simulated; new values are added to it (not those
            of checks that raised or are not ``deterministic``).
    """
    outcomes: dict[str, tuple[str, float | str]] = {}
    pending = []
    for check in checks:
        cached = (cache.get(check.name) if cache is not None and check.deterministic
                  else None)
        if cached is None:
            pending.append(check)
        else:
            outcomes[check.name] = cached
            if on_score is not None:
                on_score(score(check, *cached))
    by_module: dict[str, list[str]] = {}
    for check in pending:
        by_module.setdefault(_module(check), []).append(check.name)
    timings = _read_timings(cache)
    tasks = sorted(by_module.values(), key=lambda names: (
        -timings.get(_module(CHECKS.get(names[0])), 0.0), -len(names), names[0]))
    executor = _executor(workers, len(tasks))
    try:
        for _position, result in executor.map_unordered(_evaluate_names, tasks):
            if isinstance(result, Exception):  # a worker died: its checks fail
                raise result
            seconds, module_outcomes = result
            timings[_module(CHECKS.get(module_outcomes[0][0]))] = seconds
            for name, kind, payload in module_outcomes:
                outcomes[name] = (kind, payload)
                if cache is not None and kind != "error" and CHECKS.get(name).deterministic:
                    cache.put(name, kind, payload)
                if on_score is not None:
                    on_score(score(CHECKS.get(name), kind, payload))
    finally:
        executor.close()
    if cache is not None:
        _write_timings(cache, timings)
        cache.save()
    return [score(check, *outcomes[check.name]) for check in checks]


def _module(check: Check) -> str:
    return getattr(check.simulate, "__module__", None) or check.name


def _evaluate_names(names: list[str]) -> tuple[float, list[tuple[str, str, float | str]]]:
    """Worker side: simulate the named checks in order; (seconds, outcomes)."""
    import time

    start = time.perf_counter()
    out = [(name, *_outcome(CHECKS.get(name))) for name in names]
    return time.perf_counter() - start, out


def _executor(workers: int, tasks: int):
    from .executors import InProcessExecutor, ProcessPoolExecutor

    if workers <= 1 or tasks <= 1:
        return InProcessExecutor()
    return ProcessPoolExecutor(min(workers, tasks))


def _read_timings(cache: CheckCache | None) -> dict[str, float]:
    """Seconds each module's checks last took (scheduling only; never results)."""
    if cache is None:
        return {}
    try:
        return {str(k): float(v) for k, v in
                json.loads((cache.folder.parent / "check-times.json").read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _write_timings(cache: CheckCache, timings: dict[str, float]) -> None:
    try:
        cache.folder.parent.mkdir(parents=True, exist_ok=True)
        (cache.folder.parent / "check-times.json").write_text(json.dumps(timings, sort_keys=True))
    except OSError:
        return


def scoreboard_table(scores: list[Score]) -> pd.DataFrame:
    """The ``validation.csv`` table (exactly :data:`COLUMNS`)."""
    rows = [{"check": s.check.name, "source": s.check.source,
             "reference": float(s.check.reference), "simulated": s.simulated,
             "unit": s.check.unit, "error_pct": s.error_pct,
             "tolerance_pct": float(s.check.tolerance_pct), "passed": s.passed,
             "group": s.check.group, "status": s.check.status, "reason": s.check.reason}
            for s in scores]
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["passed"] = table["passed"].astype("boolean")
    return table


def _number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4g}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_scoreboard(scores: list[Score], source_width: int = 40) -> str:
    """A fixed-width text table, failures' reasons listed below it."""
    header = ["check", "group", "status", "source", "reference", "simulated", "unit",
              "error %", "tol %", "result"]
    rows = [[s.check.name, s.check.group, s.check.status, _clip(s.check.source, source_width),
             _number(s.check.reference), _number(s.simulated), s.check.unit,
             "-" if math.isnan(s.error_pct) else f"{s.error_pct:+.1f}",
             f"{s.check.tolerance_pct:g}" if s.check.kind != "max" else "max",
             s.verdict] for s in scores]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    numeric = {4, 5, 7, 8}

    def line(cells: list) -> str:
        return "  ".join(str(c).rjust(w) if i in numeric else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    notes = [f"  {s.check.name}: {s.note}" for s in scores if s.note and s.passed is not None]
    if notes:
        out += ["", "errors:", *notes]
    exceptions = [f"  {s.check.name} ({s.verdict}): {s.check.reason}" for s in scores
                  if s.check.status == "exception"]
    if exceptions:
        out += ["", "documented exceptions (not counted):", *exceptions]
    skipped = _skip_reasons(scores)
    if skipped:
        out += ["", "skipped:"]
        out += [f"  {note}: {', '.join(names)}" for note, names in skipped.items()]
    return "\n".join(out)


def _skip_reasons(scores: list[Score]) -> dict[str, list[str]]:
    """Skipped checks by reason (one missing data folder skips many checks alike)."""
    reasons: dict[str, list[str]] = {}
    for s in scores:
        if s.passed is None:
            reasons.setdefault(s.note, []).append(s.check.name)
    return reasons


def counts(scores: list[Score]) -> dict[str, int]:
    """How many checks passed, failed and were skipped (every status alike)."""
    verdicts = [s.verdict for s in scores]
    return {v.lower(): verdicts.count(v) for v in ("PASS", "FAIL", "SKIP")}


def status_counts(scores: list[Score]) -> dict[str, tuple[int, int]]:
    """(passed, evaluated) per status; skipped checks are in neither number."""
    out = {}
    for status in STATUSES:
        ran = [s for s in scores if s.check.status == status and s.passed is not None]
        out[status] = (sum(1 for s in ran if s.passed), len(ran))
    return out


def summary(scores: list[Score]) -> str:
    """One line: calibration and predictions passed of evaluated, exceptions, skips.

    E.g. ``calibration 120/123 passed, predictions 9/20 passed, 9 documented
    exceptions, 8 skipped (data unavailable: ...)``. Exceptions are counted
    whatever their verdict (they are shown, not scored); a skipped exception
    counts as skipped.
    """
    tally = status_counts(scores)
    exceptions = sum(1 for s in scores if s.check.status == "exception" and s.passed is not None)
    parts = [f"calibration {tally['calibration'][0]}/{tally['calibration'][1]} passed",
             f"predictions {tally['prediction'][0]}/{tally['prediction'][1]} passed",
             f"{exceptions} documented exception{'s' if exceptions != 1 else ''}"]
    skipped = _skip_reasons(scores)
    if skipped:
        parts.append(f"{sum(map(len, skipped.values()))} skipped ({'; '.join(skipped)})")
    return ", ".join(parts)
