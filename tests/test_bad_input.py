"""Bad input gives one line naming the file and the YAML path (or row/column)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import kernel

from simulator import load_soc, load_trace
from simulator.errors import ConfigError
from simulator.units import UnitError, parse_quantity


def _write_soc(tmp_path, data) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _error(fn) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        fn()
    text = str(info.value)
    assert "\n" not in text
    return info.value


def test_unknown_key_names_file_and_path(tmp_path, tiny_soc_dict):
    tiny_soc_dict["cpu"]["big"]["turbo"] = True
    err = _error(lambda: load_soc(_write_soc(tmp_path, tiny_soc_dict)))
    assert err.file.endswith("bad.yaml") and err.path == "cpu.big.turbo"
    assert "unknown key 'turbo'" in str(err)


def test_the_removed_broadcast_input_flag_is_an_unknown_key(tmp_path, tiny_soc_dict):
    tiny_soc_dict["dsp"]["broadcast_input"] = True  # removed: no bundled board used it
    err = _error(lambda: load_soc(_write_soc(tmp_path, tiny_soc_dict)))
    assert err.path == "dsp.broadcast_input" and "unknown key 'broadcast_input'" in str(err)


def test_wrong_unit_names_the_value(tmp_path, tiny_soc_dict):
    tiny_soc_dict["cpu"]["big"]["opps"][0] = "1 GB @ 0.7 V"
    err = _error(lambda: load_soc(_write_soc(tmp_path, tiny_soc_dict)))
    assert err.path == "cpu.big.opps[0].frequency"
    assert "frequency like '2.84 GHz'" in str(err)


def test_negative_frequency_is_rejected(tmp_path, tiny_soc_dict):
    tiny_soc_dict["cpu"]["big"]["opps"][0] = "-1 GHz @ 0.7 V"
    err = _error(lambda: load_soc(_write_soc(tmp_path, tiny_soc_dict)))
    assert err.path == "cpu.big.opps" and "positive" in str(err)


def test_number_without_unit_is_rejected(tmp_path, tiny_soc_dict):
    tiny_soc_dict["memory"]["dram"]["bandwidth"] = 10
    err = _error(lambda: load_soc(_write_soc(tmp_path, tiny_soc_dict)))
    assert err.path == "memory.dram.bandwidth" and "unit is required" in str(err)


def test_thermal_network_must_reach_ambient(tmp_path, tiny_soc_dict):
    tiny_soc_dict["thermal"]["links"] = [{"between": ["cpu", "board"], "conductance": "1 W/K"}]
    err = _error(lambda: load_soc(_write_soc(tmp_path, tiny_soc_dict)))
    assert err.path == "thermal" and "ambient" in str(err)


def test_unknown_default_governor_is_blamed_on_the_soc_file(tmp_path, tiny_soc_dict):
    # found by the fuzzer: accepted at load, then reported as the run's dvfs.governor
    tiny_soc_dict["default_governor"] = "-300 C"
    err = _error(lambda: load_soc(_write_soc(tmp_path, tiny_soc_dict)))
    assert err.file.endswith("bad.yaml") and err.path == "default_governor"
    assert "unknown governor '-300 C'" in str(err) and "schedutil" in str(err)


def test_malformed_yaml_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ncpu: [unclosed\n")
    err = _error(lambda: load_soc(str(path)))
    assert err.file.endswith("broken.yaml") and err.path.startswith("line ")


def test_duplicate_yaml_key_is_an_error(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("name: a\nname: b\n")
    assert "duplicate key 'name'" in str(_error(lambda: load_soc(str(path))))


def test_missing_and_unknown_soc():
    assert "not found" in str(_error(lambda: load_soc("nowhere/soc.yaml")))
    assert "Did you mean 'snapdragon865'" in str(_error(lambda: load_soc("snapdragon856")))


def _trace_file(tmp_path, rows) -> str:
    path = tmp_path / "trace.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_cyclic_trace(tmp_path):
    path = _trace_file(tmp_path, [kernel(0, "1"), kernel(1, "0")])
    err = _error(lambda: load_trace(path))
    assert err.file == path and "cyclic" in str(err) and "column deps" in err.path


@pytest.mark.parametrize("row, where, words", [
    (kernel(0, op="conv9"), "row 1, column op", "unknown op"),
    (kernel(0, flops=-1.0), "row 1, column flops", "non-negative"),
    (kernel(0, "7"), "row 1, column deps", "not the id of any kernel"),
    (kernel(0, precision="fp64"), "row 1, column precision", "unknown precision"),
    # found by the fuzzer: inf raised OverflowError, 0.5 was read as kernel 0
    (kernel(0, "inf"), "row 1, column deps", "space-separated kernel ids"),
    (kernel(0, "1e400"), "row 1, column deps", "space-separated kernel ids"),
    (kernel(0, "0.5"), "row 1, column deps", "space-separated kernel ids"),
])
def test_bad_trace_rows(tmp_path, row, where, words):
    err = _error(lambda: load_trace(_trace_file(tmp_path, [row])))
    assert err.path == where and words in str(err)


def test_a_trace_value_that_is_not_a_single_number_or_text(tmp_path):
    # a Parquet column can hold lists: a row's values key its cost, so each must be one
    # value (a list crashed the plan's compile with a TypeError)
    path = tmp_path / "t.parquet"
    pd.DataFrame([kernel(0, tags=[]), kernel(1, "0", tags=[1, 2])]).to_parquet(path)
    err = _error(lambda: load_trace(str(path)))
    assert err.path == "row 1, column tags" and "single number or text" in str(err)


def test_missing_trace_column(tmp_path):
    rows = [kernel(0)]
    del rows[0]["deps"]
    err = _error(lambda: load_trace(_trace_file(tmp_path, rows)))
    assert err.path == "header" and "deps" in str(err)


@pytest.mark.parametrize("text, dimension, value", [
    ("2.84 GHz", "frequency", 2.84e9), ("512 KiB", "bytes", 524288.0),
    ("33.4 GB/s", "bandwidth", 33.4e9), ("25 ms", "time", 0.025),
    ("0.444 nF", "capacitance", 0.444e-9), ("20 pJ/B", "energy_per_byte", 20e-12),
    ("68 C", "temperature", 68.0), ("300 K", "temperature", 26.85),
    ("15.1 Mbit/s", "bandwidth", 15.1e6 / 8), ("90 %", "dimensionless", 0.9),
    (0, "power", 0.0),
])
def test_units_parse_to_si(text, dimension, value):
    assert parse_quantity(text, dimension) == pytest.approx(value)


@pytest.mark.parametrize("text, dimension", [
    ("2.84 GB", "frequency"), ("fast", "time"), (2840, "frequency"), ("1 W", "voltage")])
def test_units_reject_wrong_dimensions(text, dimension):
    with pytest.raises(UnitError):
        parse_quantity(text, dimension)


# --- the bounded YAML reader and number checks (issue 20) ------------------------------

QUICKSTART = "name: q\nsoc: snapdragon865\nworkload: {model: resnet18}\npolicy: {name: single}\n"
LAUGHS = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))


@pytest.mark.parametrize("content, words", [
    (QUICKSTART.encode("utf-16"), "UTF-16 text; save it as UTF-8"),
    (QUICKSTART.encode() + b"x: \xff\n", "not UTF-8 text (byte 0xff)"),
    (bytes(range(256)), "a binary file"),
    (QUICKSTART.encode() + b"x: " + b"[" * 5000 + b"]" * 5000, "nesting deeper than 64"),
    (QUICKSTART.encode() + b"l0: &l0 [a, b, c, d, e, f, g, h, i]\n" + LAUGHS.encode(),
     "values once aliases are expanded"),
    (QUICKSTART.encode() + b"x: &x [*x]\n", "recursive alias"),
    (QUICKSTART.encode() + b"seed: .inf\n", "not finite"),
    (QUICKSTART.encode() + b"seed: 100000000000000000000000\n", "out of range"),
    (b"", "the experiment is empty"),
])
def test_unreadable_or_unbounded_experiments_are_one_line_errors(tmp_path, content, words):
    from simulator.experiment import load_experiment

    path = tmp_path / "exp.yaml"
    path.write_bytes(content)
    err = _error(lambda: load_experiment(path))
    assert err.file == str(path) and words in err.message


def test_set_values_are_bounded_like_files():
    from simulator.experiment import parse_set

    assert parse_set(["a=x: y: z"]) == {"a": "x: y: z"}  # not YAML: kept as text
    assert "not finite" in str(_error(lambda: parse_set(["seed=.inf"])))
    err = _error(lambda: parse_set(["policy=" + "[" * 100 + "]" * 100]))
    assert err.path == "--set policy" and "nesting" in err.message


@pytest.mark.parametrize("text, words", [
    ("inf GHz", "must be a frequency"), ("1e400 GHz", "finite"), ("1e30 GHz", "at most"),
])
def test_quantities_are_finite_and_bounded(text, words):
    with pytest.raises(UnitError, match=words):
        parse_quantity(text, "frequency")


def test_temperature_below_absolute_zero_is_rejected():
    with pytest.raises(UnitError, match="absolute zero"):
        parse_quantity("-1 K", "temperature")
    with pytest.raises(UnitError, match="absolute zero"):
        parse_quantity("-300 C", "temperature")
    assert parse_quantity("0 K", "temperature") == pytest.approx(-273.15)


@pytest.mark.parametrize("row, where", [
    (kernel(0, flops=float("inf")), "row 1, column flops"),
    (kernel(0, bytes_in=1e30), "row 1, column bytes_in"),
    ({**kernel(0), "batch": float("inf")}, "row 1, column batch"),
    ({**kernel(0), "fixed_s": 1e12}, "row 1, column fixed_s"),
])
def test_trace_values_are_finite_and_bounded(tmp_path, row, where):
    err = _error(lambda: load_trace(_trace_file(tmp_path, [row])))
    assert err.path == where and "finite non-negative number" in err.message


def test_header_only_trace_is_rejected(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text(",".join(kernel(0)) + "\n")
    err = _error(lambda: load_trace(str(path)))
    assert "no kernels" in err.message
