"""``socsim calibrate`` writes the base file's text with the fitted values edited in place:
comments, provenance notes, anchors and layout stay (validation.calibrate.yamlout)."""

from __future__ import annotations

import copy

import yaml

from validation.calibrate.yamlout import dump

BASE = """\
# Example SoC. Facts: datasheet (V); fits: see docs.
name: demo
description: a demo SoC
cpu:
  big:
    # fitted to last year's data
    efficiency: &big_eff   # one table for both clusters (same core)
      conv: 0.8          # fitted: old.csv
      int8:
        conv: 0.7
    parallel_efficiency: {fp32: 0.9, int8: 0.8}
    source: >-
      a folded note
      on two lines
  mid:
    efficiency: *big_eff
    dispatch_overhead: 30 us   # estimated (E)
variants:
  low:
    cpu: {big: {units: 1}}
"""
NOTE = "fitted to new.csv, 9 rows, 2026-01-02"


def _fitted() -> dict:
    raw = yaml.safe_load(BASE)
    raw = copy.deepcopy({k: v for k, v in raw.items() if k != "variants"})
    raw["cpu"]["mid"]["efficiency"] = copy.deepcopy(raw["cpu"]["big"]["efficiency"])
    raw["name"] = "demo-fitted"
    for cluster in ("big", "mid"):
        raw["cpu"][cluster]["efficiency"]["conv"] = 0.65
        raw["cpu"][cluster]["efficiency"]["int8"]["pool"] = 0.01  # a key the base lacks
    raw["cpu"]["big"]["parallel_efficiency"]["fp32"] = 0.75
    raw["cpu"]["mid"]["dispatch_overhead"] = "25 us"
    return raw


def _notes() -> dict:
    paths = [("cpu", c, "efficiency", *k) for c in ("big", "mid")
             for k in (("conv",), ("int8", "pool"))]
    paths += [("cpu", "big", "parallel_efficiency", "fp32"), ("cpu", "mid", "dispatch_overhead")]
    return {p: NOTE for p in paths}


def test_fitted_values_are_edited_into_the_base_text():
    raw = _fitted()
    text = dump(raw, "demo-fitted: calibrated", _notes(), base=BASE)
    assert yaml.safe_load(text) == raw
    lines = text.splitlines()
    assert lines[0] == "# demo-fitted: calibrated"
    # every comment of the base is kept (the variants block is dropped with its comments)
    for comment in ("# Example SoC. Facts: datasheet (V); fits: see docs.",
                    "# fitted to last year's data",
                    "# one table for both clusters (same core)"):
        assert comment in text
    # the shared table is edited once (the alias still shares it), with its provenance
    assert "efficiency: *big_eff" in text
    assert f"      conv: 0.65  # {NOTE}; base 0.8 (fitted: old.csv)" in lines
    assert f"        pool: 0.01  # {NOTE}" in lines
    assert f"    parallel_efficiency: {{fp32: 0.75, int8: 0.8}}  # {NOTE}" in lines
    assert f"    dispatch_overhead: 25 us  # {NOTE}; base 30 us (estimated (E))" in lines
    assert "variants" not in text and "a folded note" in text


def test_an_alias_whose_value_differs_gets_its_own_copy():
    raw = yaml.safe_load(BASE)
    raw.pop("variants")
    raw["cpu"]["mid"]["efficiency"] = {"conv": 0.5, "int8": {"conv": 0.7}}
    text = dump(raw, "h", {("cpu", "mid", "efficiency", "conv"): NOTE}, base=BASE)
    assert yaml.safe_load(text) == raw
    assert "efficiency: &big_eff" in text and "*big_eff" not in text
    assert "# one table for both clusters (same core)" in text


def test_without_a_base_the_mapping_is_written_plainly():
    raw = _fitted()
    text = dump(raw, "h", _notes())
    assert yaml.safe_load(text) == raw
    assert f"conv: 0.65  # {NOTE}" in text


def test_a_fitted_value_equal_to_the_base_is_noted_too():
    raw = yaml.safe_load(BASE)
    raw.pop("variants")
    text = dump(raw, "h", {("cpu", "mid", "dispatch_overhead"): NOTE}, base=BASE)
    assert f"    dispatch_overhead: 30 us  # {NOTE} (estimated (E))" in text.splitlines()


def _edited(base: str, raw: dict, notes: dict) -> str:
    """The edited text below its header, checked to load as ``raw`` without the plain
    fallback."""
    text = dump(raw, "h", notes, base=base)
    assert "could not be kept" not in text and yaml.safe_load(text) == raw
    return text.removeprefix("# h\n")


def test_a_new_key_goes_after_the_last_key_so_comments_stay_with_their_values():
    base = "# fitted to old.csv (conv only)\nconv: 0.8\n"
    text = _edited(base, {"conv": 0.8, "pool": 0.01}, {("pool",): "fitted NEW"})
    assert text == "# fitted to old.csv (conv only)\nconv: 0.8\npool: 0.01  # fitted NEW\n"
    # nested, after a last value with its own comment and nested mapping
    base = "a:\n  # c's note\n  c: 1  # c\n  d:\n    e: 2\nb: 3\n"
    raw = {"a": {"c": 1, "d": {"e": 2}, "new": 4}, "b": 3}
    assert _edited(base, raw, {}) == "a:\n  # c's note\n  c: 1  # c\n  d:\n    e: 2\n  new: 4\nb: 3\n"
    # a last line without a line break
    assert _edited("a: 1", {"a": 1, "b": 2}, {}) == "a: 1\nb: 2\n"


def test_a_deleted_key_blames_its_own_path():
    # with the bare key as its path, the deletion of a.y would take the note of y
    base = "a:\n  x: 1\n  y: 2\ny: 4\n"
    text = _edited(base, {"a": {"x": 1}, "y": 5}, {("y",): NOTE})
    assert text == f"a:\n  x: 1\ny: 5  # {NOTE}; base 4\n"


def test_deleting_a_nested_mapping_s_last_key_keeps_the_next_key_s_indentation():
    base = "top:\n  a:\n    x: 1\n    y: 2\n  c: 3\n"
    assert _edited(base, {"top": {"a": {"x": 1}, "c": 3}}, {}) == "top:\n  a:\n    x: 1\n  c: 3\n"


def test_an_integer_fitted_as_a_float_is_written_as_one():
    # {b: 1} == {b: 1.0} in Python: the mapping must not be skipped as unchanged
    assert _edited("a:\n  b: 1  # note\n", {"a": {"b": 1.0}}, {}) == "a:\n  b: 1.0  # note\n"
