"""A seeded mutation fuzzer over the shipped inputs: bad input never crashes.

Each case takes a shipped SoC, experiment or training-framework file, or a
generated kernel trace (CSV), applies one random mutation
(a value replaced by another type, a huge, negative, infinite or missing
number, a key removed or added, a unit garbled, the text cut short or given
bytes that are not UTF-8) and loads it the way ``socsim run`` does: the SoC
through :func:`simulator.load_soc`; the experiment through loading, sweep
expansion and the pre-flight, then a short simulation of its first run; the
trace through :func:`simulator.trace.load_trace` and a short run; the framework
file through loading and rewriting a training trace with it.

Every case must end one of three ways: a one-line
:class:`~simulator.errors.ConfigError` (bad input), an
:class:`~simulator.errors.OutOfMemory` (a result), or a sane run (finite,
non-negative metrics; temperatures above absolute zero). A Python traceback
of any other kind fails the test, naming the case and the mutation.
"""

from __future__ import annotations

import copy
import math
import random
from pathlib import Path

import pytest
import yaml

from simulator import load_soc
from simulator.engine.simulation import simulate
from simulator.errors import ConfigError, OutOfMemory
from simulator.experiment import check_experiment, check_runs, expand, load_experiment

ROOT = Path(__file__).resolve().parents[1]
SOCS = sorted((ROOT / "socs").glob("*.yaml"))
# experiments cheap enough to plan and run briefly many times (none refers to a file
# beside it, so a mutated copy can live in a temporary folder)
EXPERIMENTS = [ROOT / "experiments" / name for name in (
    "quickstart.yaml", "sweep-example.yaml", "cappuccino/squeezenet-energy.yaml",
    "xenos/mobilenet-memory.yaml", "flexdnn/early-exit.yaml")]
CASES = 200  # per kind: ~35 s for the 400 cases on 2 cores
REPLACEMENTS = [None, -1, 0, 1e308, float("inf"), float("nan"), "", "x", "-5 GHz",
                "1 GHz GHz", "1e400 W", [], [1, 2], {}, {"a": 1}, True, 2**70, "0 K",
                "-300 C"]


def _paths(node, prefix=()):
    """Every (path, value) in a YAML tree."""
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _set(tree, path, value):
    node = tree
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _delete(tree, path):
    node = tree
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]


def mutate(text: str, rng: random.Random) -> tuple[bytes, str]:
    """One random mutation of a YAML document; returns the bytes and what was done."""
    kind = rng.choice(["replace", "replace", "replace", "delete", "add", "cut", "bytes"])
    if kind == "cut":
        at = rng.randrange(len(text))
        return text[:at].encode(), f"cut at {at}"
    if kind == "bytes":
        at = rng.randrange(len(text))
        return text[:at].encode() + b"\xff\xfe\x00" + text[at:].encode(), f"bytes at {at}"
    tree = yaml.safe_load(text)
    paths = [p for p, _ in _paths(tree) if p]
    path = rng.choice(paths)
    if kind == "delete":
        _delete(tree, path)
        what = f"delete {'.'.join(map(str, path))}"
    elif kind == "add":
        parent = path[:-1]
        node = tree
        for part in parent:
            node = node[part]
        if isinstance(node, dict):
            node["surprise_key"] = 1
        else:
            node.append(copy.deepcopy(node[0]) if node else 1)
        what = f"add under {'.'.join(map(str, parent)) or '<root>'}"
    else:
        value = rng.choice(REPLACEMENTS)
        _set(tree, path, value)
        what = f"{'.'.join(map(str, path))} = {value!r}"
    return yaml.safe_dump(tree, sort_keys=False).encode(), what


def _sane(metrics: dict) -> None:
    for name, value in metrics.items():
        assert isinstance(value, (int, float)) and not math.isinf(value), (name, value)
    assert metrics["makespan_s"] >= 0 and metrics["energy_j"] >= 0
    assert metrics["peak_temp_c"] > -273.15


def _expect_clean(action, case: str) -> str:
    """Run ``action``; return how it ended (any other exception fails the test)."""
    try:
        action()
    except ConfigError as err:
        assert "\n" not in str(err), f"{case}: a multi-line error: {err}"
        return "bad input"
    except OutOfMemory:
        return "oom"  # a result: the workload does not fit
    return "ran"


@pytest.mark.parametrize("seed", range(CASES))
def test_a_mutated_soc_file_loads_or_is_one_line_bad_input(seed, tmp_path):
    rng = random.Random(seed)
    source = rng.choice(SOCS)
    data, what = mutate(source.read_text(encoding="utf-8"), rng)
    path = tmp_path / source.name
    path.write_bytes(data)
    _expect_clean(lambda: load_soc(str(path)), f"{source.name}: {what}")


@pytest.mark.parametrize("seed", range(CASES))
def test_a_mutated_experiment_is_one_line_bad_input_or_a_sane_run(seed, tmp_path):
    rng = random.Random(1000 + seed)
    source = rng.choice(EXPERIMENTS)
    data, what = mutate(source.read_text(encoding="utf-8"), rng)
    path = tmp_path / source.name
    path.write_bytes(data)

    def run() -> None:
        raw, base = load_experiment(path)
        runs = expand(raw, file=str(path))
        check_runs(runs, base, str(path))
        config = dict(runs[0].config)
        config["time_limit"] = "0.05 s"
        _sane(simulate(check_experiment(config, str(path)), seed=runs[0].seed,
                       base=base).metrics)

    _expect_clean(run, f"{source.name}: {what}")


# ----------------------------------------------------------- traces and frameworks
# Fewer cases: each is a small trace or framework file, cheap to load and run.
FILE_CASES = 60
CELL_VALUES = ["", "x", "-1", "nan", "inf", "1e400", "0", "3.5", "conv", "fwd", "int4",
               "1;2", "-3", "999999999", "1e30"]


def _lenet_trace_csv(tmp_path: Path) -> str:
    from simulator.trace import save_trace
    from workloads.generate import generate_trace

    path = tmp_path / "lenet.csv"
    save_trace(generate_trace("lenet5", "training", batch=2), path)
    return path.read_text(encoding="utf-8")


def mutate_csv(text: str, rng: random.Random) -> tuple[bytes, str]:
    """One random mutation of a CSV trace: a cell, a column, a row, or the bytes."""
    kind = rng.choice(["cell", "cell", "cell", "column", "row", "cut", "bytes"])
    lines = text.splitlines()
    at = rng.randrange(len(text))
    if kind == "cut":
        return text[:at].encode(), f"cut at {at}"
    if kind == "bytes":
        return text[:at].encode() + b"\xff\xfe\x00" + text[at:].encode(), f"bytes at {at}"
    header = lines[0].split(",")
    if kind == "column":
        drop = rng.randrange(len(header))
        rows = [",".join(c for i, c in enumerate(line.split(",")) if i != drop)
                for line in lines]
        return "\n".join(rows).encode(), f"drop column {header[drop]}"
    if kind == "row":
        at = rng.randrange(1, len(lines))
        return "\n".join(lines[:at] + lines[at + 1:]).encode(), f"drop row {at}"
    at = rng.randrange(1, len(lines))
    cells = lines[at].split(",")
    column = rng.randrange(len(cells))
    cells[column] = rng.choice(CELL_VALUES)
    lines[at] = ",".join(cells)
    return "\n".join(lines).encode(), f"row {at} {header[column]} = {cells[column]!r}"


@pytest.mark.parametrize("seed", range(FILE_CASES))
def test_a_mutated_trace_file_is_one_line_bad_input_or_a_sane_run(seed, tmp_path):
    from simulator.spec.experiment import ExperimentSpec
    from simulator.trace import load_trace

    rng = random.Random(3000 + seed)
    data, what = mutate_csv(_lenet_trace_csv(tmp_path), rng)
    path = tmp_path / "mutated.csv"
    path.write_bytes(data)

    def run() -> None:
        trace = load_trace(path)
        spec = ExperimentSpec.model_validate({
            "name": "fuzz", "soc": "snapdragon865", "workload": {"trace": str(path)},
            "policy": {"name": "single"}, "time_limit": "0.05 s"})
        _sane(simulate(spec, traces={0: trace}).metrics)

    _expect_clean(run, f"trace: {what}")


@pytest.mark.parametrize("seed", range(FILE_CASES))
def test_a_mutated_framework_file_is_one_line_bad_input_or_a_clean_rewrite(seed, tmp_path):
    from workloads.frameworks import apply_framework, load_framework
    from workloads.generate import generate_trace

    rng = random.Random(4000 + seed)
    source = ROOT / "workloads" / "frameworks" / rng.choice(["mnn.yaml", "tflite.yaml"])
    data, what = mutate(source.read_text(encoding="utf-8"), rng)
    path = tmp_path / source.name
    path.write_bytes(data)
    trace = generate_trace("lenet_mnn", "training", batch=2)
    _expect_clean(lambda: apply_framework(trace, load_framework(path)),
                  f"{source.name}: {what}")
