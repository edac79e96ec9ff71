"""Sweep expansion is a pure function: grid, zip, random, repeats, seeds, --set."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.errors import ConfigError
from simulator.experiment import (
    SweepSpec,
    apply_overrides,
    derive_seed,
    expand,
    load_experiment,
    parse_set,
    set_path,
    sweep_points,
)

BASE = {"name": "t", "soc": "snapdragon865", "workload": {"trace": "t.csv"},
        "policy": {"name": "single", "processor": "cpu.gold"}}


def experiment(**extra) -> dict:
    return {**BASE, **extra}


def error_of(fn) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        fn()
    assert "\n" not in str(info.value)
    return info.value


def test_no_sweep_is_one_run_with_the_experiment_seed():
    runs = expand(experiment(seed=42))
    assert len(runs) == 1
    assert runs[0].seed == 42 and runs[0].params == {} and runs[0].run_id == "0000-0"


def test_grid_is_the_product_last_axis_fastest():
    runs = expand(experiment(sweep={"policy.processor": ["cpu.gold", "gpu"],
                                    "workload.batch": [1, 2, 4]}))
    assert [(r.params["policy.processor"], r.params["workload.batch"]) for r in runs] == [
        ("cpu.gold", 1), ("cpu.gold", 2), ("cpu.gold", 4), ("gpu", 1), ("gpu", 2), ("gpu", 4)]
    assert [r.index for r in runs] == list(range(6))
    assert runs[4].config["policy"] == {"name": "single", "processor": "gpu"}
    assert runs[4].config["workload"]["batch"] == 2
    assert "sweep" not in runs[4].config


def test_zip_varies_lists_together_times_the_grid():
    runs = expand(experiment(sweep={
        "workload.batch": [1, 2],
        "zip": {"policy.name": ["single", "heft"], "policy.processor": ["cpu.gold", None]}}))
    assert [(r.params["workload.batch"], r.params["policy.name"]) for r in runs] == [
        (1, "single"), (1, "heft"), (2, "single"), (2, "heft")]
    assert runs[1].params["policy.processor"] is None


def test_zip_lists_of_unequal_length_are_an_error():
    err = error_of(lambda: expand(experiment(sweep={"zip": {"a.b": [1], "c.d": [1, 2]}}),
                                  file="exp.yaml"))
    assert str(err).startswith("exp.yaml: sweep.zip:") and "equal lengths" in str(err)


def test_axis_must_be_a_non_empty_list():
    err = error_of(lambda: expand(experiment(sweep={"workload.batch": 4}), file="e.yaml"))
    assert err.path == "sweep.workload.batch" and err.file == "e.yaml"
    err = error_of(lambda: expand(experiment(sweep={"workload.batch": []})))
    assert err.path == "sweep.workload.batch"


def random_sweep(seed=7, samples=5, **params):
    params = params or {"workload.batch": {"choice": [1, 2, 4, 8]},
                        "time_limit": {"uniform": [1.0, 2.0], "unit": "s"},
                        "workload.iterations": {"randint": [1, 3]}}
    return experiment(sweep={"random": {"samples": samples, "seed": seed, "params": params}})


def test_random_samples_are_seeded_and_in_range():
    first = [r.params for r in expand(random_sweep())]
    assert first == [r.params for r in expand(random_sweep())]
    assert first != [r.params for r in expand(random_sweep(seed=8))]
    assert len(first) == 5
    for params in first:
        assert params["workload.batch"] in (1, 2, 4, 8)
        assert 1 <= params["workload.iterations"] <= 3
        value, unit = params["time_limit"].split()
        assert unit == "s" and 1.0 <= float(value) <= 2.0


def test_random_distribution_errors_carry_their_path():
    err = error_of(lambda: expand(random_sweep(x={"uniformm": [1, 2]}), file="e.yaml"))
    assert err.path == "sweep.random.params.x.uniformm" and "unknown key" in str(err)
    err = error_of(lambda: expand(random_sweep(x={"uniform": [2, 1]})))
    assert err.path.startswith("sweep.random.params.x") and "low <= high" in str(err)
    err = error_of(lambda: expand(experiment(sweep={"random": {"samples": 0, "params": {
        "x": {"choice": [1]}}}})))
    assert err.path == "sweep.random.samples"


def test_bad_value_from_a_sweep_names_the_sweep_axis():
    err = error_of(lambda: expand(experiment(sweep={"workload.batch": [1, "x"]}),
                                  file="e.yaml"))
    assert err.path == "sweep.workload.batch" and "'x'" in str(err)
    err = error_of(lambda: expand(experiment(sweep={"time_limit": ["3 kg"]})))
    assert err.path == "sweep.time_limit" and "time" in str(err)


def test_repeats_have_distinct_stable_seeds():
    raw = experiment(repeats=3, seed=5, sweep={"workload.batch": [1, 2]})
    runs = expand(raw)
    assert [(r.index, r.repeat) for r in runs] == [(0, 0), (0, 1), (0, 2),
                                                   (1, 0), (1, 1), (1, 2)]
    seeds = [r.seed for r in runs]
    assert len(set(seeds)) == 6
    assert seeds == [r.seed for r in expand(raw)]
    assert seeds[4] == derive_seed(5, 1, 1)
    assert seeds != [r.seed for r in expand({**raw, "seed": 6})]
    assert len({r.key for r in runs}) == 6
    assert runs[1].config == runs[0].config and runs[1].key != runs[0].key


def test_expansion_does_not_touch_its_input():
    raw = experiment(sweep={"workload.batch": [1, 2]})
    snapshot = yaml.safe_dump(raw)
    expand(raw)
    assert yaml.safe_dump(raw) == snapshot


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=3), st.integers(1, 3))
def test_run_count_is_product_of_axes_times_repeats(sizes, repeats):
    keys = ["workload.batch", "workload.iterations", "seed"][:len(sizes)]
    sweep = {k: list(range(1, n + 1)) for k, n in zip(keys, sizes, strict=True)}
    runs = expand(experiment(repeats=repeats, sweep=sweep or None))
    total = repeats
    for n in sizes:
        total *= n
    assert len(runs) == total
    assert len({(r.index, r.repeat) for r in runs}) == total


def test_sweep_points_of_a_typed_sweep():
    sweep = SweepSpec.from_mapping({"a": [1, 2], "zip": {"b": [3, 4], "c": [5, 6]}})
    assert sweep_points(sweep) == [{"a": 1, "b": 3, "c": 5}, {"a": 1, "b": 4, "c": 6},
                                   {"a": 2, "b": 3, "c": 5}, {"a": 2, "b": 4, "c": 6}]
    assert sweep.paths() == ["a", "b", "c"]


# --- --set ------------------------------------------------------------------------------

def test_parse_set_uses_yaml_values():
    assert parse_set(["workload.batch=8", "policy.processor=gpu", "a.b=[1, 2]",
                      "c=null", "d=2.5 GHz"]) == {
        "workload.batch": 8, "policy.processor": "gpu", "a.b": [1, 2], "c": None,
        "d": "2.5 GHz"}


@pytest.mark.parametrize("item", ["workload.batch", "=3", "a..b=1"])
def test_parse_set_rejects_malformed_items(item):
    err = error_of(lambda: parse_set([item]))
    assert err.path == "--set"


def test_set_path_creates_mappings_and_indexes_lists():
    data = {"workload": [{"batch": 1}, {"batch": 2}]}
    set_path(data, "workload.1.batch", 8)
    set_path(data, "dvfs.domains.gpu.governor", "powersave")
    assert data == {"workload": [{"batch": 1}, {"batch": 8}],
                    "dvfs": {"domains": {"gpu": {"governor": "powersave"}}}}


def test_set_path_errors():
    err = error_of(lambda: set_path({"soc": "x"}, "soc.name", 1))
    assert "not a mapping" in str(err)
    err = error_of(lambda: set_path({"w": [1]}, "w.5.batch", 1))
    assert "out of range" in str(err)
    err = error_of(lambda: set_path({"w": [{}]}, "w.first.batch", 1))
    assert "not a list index" in str(err)


def test_set_addresses_dotted_sweep_keys():
    raw = apply_overrides(experiment(sweep={"workload.batch": [1]}),
                          {"sweep.workload.batch": [1, 2], "sweep.zip.policy.name":
                           ["single", "heft"], "sweep.random.params.x.y": {"choice": [1]}})
    assert raw["sweep"]["workload.batch"] == [1, 2]
    assert raw["sweep"]["zip"] == {"policy.name": ["single", "heft"]}
    assert raw["sweep"]["random"] == {"params": {"x.y": {"choice": [1]}}}


def test_set_on_a_swept_key_pins_it():
    raw = apply_overrides(experiment(sweep={"workload.batch": [1, 2], "zip": {
        "policy.processor": ["cpu.gold", "gpu"]}}), {"workload.batch": 8,
                                                      "policy.processor": "gpu"})
    assert raw["sweep"] is None
    runs = expand(raw, {"workload.batch": 8, "policy.processor": "gpu"})
    assert len(runs) == 1
    assert runs[0].params == {"workload.batch": 8, "policy.processor": "gpu"}
    assert runs[0].config["workload"]["batch"] == 8


def test_set_keys_become_columns_except_experiment_settings():
    runs = expand(experiment(), {"workload.batch": 2, "repeats": 1, "seed": 3,
                                 "plots": []})
    assert runs[0].params == {"workload.batch": 2}


def write(tmp_path, text: str):
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    return path


def test_load_experiment_blames_the_set_option(tmp_path):
    path = write(tmp_path, yaml.safe_dump(BASE))
    err = error_of(lambda: load_experiment(path, {"workload.batchh": 3}))
    assert err.file == str(path) and err.path == "workload.batchh"
    assert "unknown key" in str(err) and "--set workload.batchh=3" in str(err)
    err = error_of(lambda: load_experiment(path, {"time_limit": "3 kg"}))
    assert err.path == "time_limit" and "--set" in str(err)


def test_load_experiment_errors_name_file_and_path(tmp_path):
    err = error_of(lambda: load_experiment(write(tmp_path, "name: [unclosed\n")))
    assert str(err).startswith(str(tmp_path / "exp.yaml")) and "malformed YAML" in str(err)
    err = error_of(lambda: load_experiment(tmp_path / "missing.yaml"))
    assert "not found" in str(err)
    bad = dict(BASE, plots=[{"kind": "bar", "x": "a", "y": "b", "colour": "red"}])
    err = error_of(lambda: load_experiment(write(tmp_path, yaml.safe_dump(bad))))
    assert err.path == "plots[0].colour"
    bad = dict(BASE, plots=[{"kind": "bar", "x": "a"}])
    err = error_of(lambda: load_experiment(write(tmp_path, yaml.safe_dump(bad))))
    assert err.path == "plots[0]" and "'y'" in str(err)


def test_an_absurd_sweep_is_refused_before_it_is_expanded(monkeypatch):
    from simulator.experiment import MAX_RUNS, count_points, expand, iter_points, parse_sweep

    raw = {"name": "x", "soc": "snapdragon865", "workload": {"model": "resnet18"},
           "policy": {"name": "single"},
           "sweep": {"workload.batch": list(range(1, 10001)), "seed": list(range(10000)),
                     "random": {"samples": 10**6, "params": {"a": {"uniform": [0, 1]}}}}}
    def no_points(_sweep):
        raise AssertionError("the sweep was expanded before its runs were counted")

    import importlib

    # the module, not the function of the same name the package exports
    monkeypatch.setattr(importlib.import_module("simulator.experiment.expand"), "iter_points",
                        no_points)
    with pytest.raises(ConfigError, match=r"100,000,000,000,000 runs \(sweep.workload.batch "
                                          r"10000 x sweep.seed 10000 x sweep.random.samples "
                                          r"1000000 x repeats 1\); at most") as info:
        expand(raw, file="exp.yaml")
    assert info.value.path == "sweep"
    monkeypatch.undo()
    many = {**raw, "sweep": None, "repeats": MAX_RUNS + 1}
    assert _raises(lambda: expand(many)).path == "repeats"
    sweep = parse_sweep({"a": [1, 2, 3], "zip": {"b": [1, 2], "c": [3, 4]}})
    assert count_points(sweep) == 6 == len(list(iter_points(sweep)))
    assert next(iter_points(parse_sweep({"a": list(range(10**6)), "b": list(range(10**6))}))
                ) == {"a": 0, "b": 0}  # streamed: the 10^12 points are never listed


def _raises(fn) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        fn()
    return info.value


def test_the_documented_sweep_example_runs_its_pre_flight(tmp_path):
    """The sweep forms shown in simulator.experiment's docstring are accepted as written."""
    import simulator.experiment as experiment
    from simulator.experiment import check_runs

    doc = experiment.__doc__
    block = doc[doc.index("    sweep:"):doc.index("The points are")]
    sweep = yaml.safe_load("\n".join(line[4:] for line in block.splitlines()))
    raw = {**BASE, "workload": {"model": "resnet18", "batch": 1}, **sweep}
    runs = expand(raw)
    assert len(runs) == 3 * 2 * 2 * 20
    check_runs(runs, tmp_path)
