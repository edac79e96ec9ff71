"""The scoreboard's speed machinery: checks in parallel processes and a disk cache of
their values that no input change can leave stale (issue 21 item 3)."""

from __future__ import annotations

import pytest

from simulator.check_cache import CheckCache, cache_dir, fingerprint
from simulator.checks import CHECKS, Check, DataUnavailable
from simulator.scoreboard import evaluate, run_checks

CALLS: list[str] = []


def _value(name: str, value: float, module: str):
    def simulate() -> float:
        CALLS.append(name)
        if value < 0:
            raise RuntimeError("broken check")
        if value == 0:
            raise DataUnavailable("no data")
        return value

    simulate.__module__ = module  # checks group by the module that defines them
    return simulate


@pytest.fixture
def checks(monkeypatch) -> list[Check]:
    CALLS.clear()
    out = []
    for i, (value, module) in enumerate([(10.5, "zz_a"), (20.0, "zz_a"), (0.0, "zz_b"),
                                         (-1.0, "zz_b"), (9.0, "zz_c")]):
        name = f"zz_cache_test.{i}"
        check = Check(name, 10.0, "ms", 10, "test", "zz-cache-test",
                      _value(name, value, module), status="prediction")
        monkeypatch.setitem(CHECKS._entries, name, check)
        out.append(check)
    return out


def _rows(scores):
    return [(s.check.name, s.verdict, s.note, repr(s.simulated)) for s in scores]


def test_checks_in_two_processes_score_as_in_one(checks):
    serial = run_checks(checks)
    parallel = run_checks(checks, workers=2)
    assert _rows(parallel) == _rows(serial) == _rows([evaluate(c) for c in checks])
    assert [s.verdict for s in serial] == ["PASS", "FAIL", "SKIP", "FAIL", "PASS"]


def test_cached_values_are_not_simulated_again_but_errors_are(checks):
    cache = CheckCache(cache_dir(), "key-1")
    first = run_checks(checks, cache=cache)
    assert len(CALLS) == 5
    CALLS.clear()
    again = run_checks(checks, cache=CheckCache(cache_dir(), "key-1"))
    assert CALLS == ["zz_cache_test.3"]  # only the check that raised runs again
    assert _rows(again) == _rows(first)
    CALLS.clear()
    run_checks(checks, cache=CheckCache(cache_dir(), "key-2"))  # other inputs: all run
    assert len(CALLS) == 5
    # other fingerprints stay (other worktrees and branches), up to eight
    assert sorted(p.name for p in (cache_dir() / "checks").glob("*.json")) == [
        "key-1.json", "key-2.json"]
    for i in range(3, 12):
        cache = CheckCache(cache_dir(), f"key-{i}")
        cache.put("x", "value", 1.0)
        cache.save()
    kept = [p.name for p in (cache_dir() / "checks").glob("*.json")]
    assert len(kept) == 8 and "key-11.json" in kept and "key-1.json" not in kept


def test_the_fingerprint_does_not_depend_on_where_the_tree_is(tmp_path, monkeypatch):
    # the same bytes under another absolute path (a second worktree): the same key
    for folder in ("one", "two"):
        (tmp_path / folder / "data").mkdir(parents=True)
        (tmp_path / folder / "data" / "table.csv").write_text("a,b\n1,2\n")
    monkeypatch.setenv("SOCSIM_DATA_DIR", str(tmp_path / "one" / "data"))
    one = fingerprint()
    monkeypatch.setenv("SOCSIM_DATA_DIR", str(tmp_path / "two" / "data"))
    assert fingerprint() == one
    (tmp_path / "two" / "data" / "table.csv").write_text("a,b\n1,3\n")
    assert fingerprint() != one


def test_the_fingerprint_covers_the_calibration_data_and_code(tmp_path, monkeypatch):
    monkeypatch.setenv("SOCSIM_DATA_DIR", str(tmp_path))
    (tmp_path / "table.csv").write_text("a,b\n1,2\n")
    before = fingerprint()
    assert fingerprint() == before  # deterministic
    (tmp_path / "table.csv").write_text("a,b\n1,3\n")
    assert fingerprint() != before
    # a check module outside the known packages is hashed too
    module = tmp_path / "zz_outside_checks.py"
    module.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with_module = fingerprint(["zz_outside_checks"])
    module.write_text("X = 2\n")
    assert fingerprint(["zz_outside_checks"]) != with_module


def test_a_host_measurement_is_never_cached(monkeypatch):
    CALLS.clear()
    check = Check("zz_cache_test.timed", 10.0, "ms", 10, "test", "zz-cache-test",
                  _value("zz_cache_test.timed", 10.0, "zz_a"), status="prediction",
                  deterministic=False)
    monkeypatch.setitem(CHECKS._entries, check.name, check)
    for _ in range(2):
        run_checks([check], cache=CheckCache(cache_dir(), "key"))
    assert CALLS == ["zz_cache_test.timed"] * 2
