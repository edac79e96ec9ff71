"""The socsim command line: run/plot/validate/list/import, errors, interrupts."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import kernel, make_trace

from simulator.checks import CHECKS, Check, DataUnavailable
from simulator.cli import main
from simulator.trace import save_trace

EXPERIMENT = {"name": "tiny", "soc": "snapdragon865", "workload": {"trace": "chain.csv"},
              "policy": {"name": "single", "processor": "cpu.gold", "cores": 3}}


def write_experiment(folder: Path, text: str | None = None, **extra) -> Path:
    save_trace(make_trace([kernel(i, str(i - 1) if i else "") for i in range(4)]),
               folder / "chain.csv")
    path = folder / "exp.yaml"
    path.write_text(text if text is not None else yaml.safe_dump({**EXPERIMENT, **extra}))
    return path


def socsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m simulator`` as a user would."""
    return subprocess.run([sys.executable, "-m", "simulator", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def one_line_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("socsim: error: ") and "Traceback" not in stderr
    return lines[0]


def test_run_single_prints_key_metrics_and_writes_results(tmp_path, capsys):
    path = write_experiment(tmp_path, plots=[{"kind": "bar", "x": "run", "y": "latency_s"}])
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    for label in ("latency", "energy", "avg power", "peak temperature"):
        assert label in printed
    assert (out / "results.csv").is_file() and (out / "plots" / "00-bar-latency_s.png").is_file()


def test_run_default_folder_and_resume_latest(tmp_path, capsys, monkeypatch):
    path = write_experiment(tmp_path, sweep={"policy.cores": [1, 2]})
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(path), "--workers", "1", "--set", "workload.iterations=2"]) == 0
    folders = list((tmp_path / "results" / "tiny").iterdir())
    assert len(folders) == 1 and folders[0].name.endswith("Z")
    table = pd.read_csv(folders[0] / "results.csv")
    assert list(table["policy.cores"]) == [1, 2] and set(table["workload.iterations"]) == {2}
    assert "policy.cores" in capsys.readouterr().out
    assert main(["run", str(path), "--workers", "1", "--resume", "--quiet",
                 "--set", "workload.iterations=2"]) == 0
    assert list((tmp_path / "results" / "tiny").iterdir()) == folders
    manifest = json.loads((folders[0] / "manifest.json").read_text())
    assert manifest["resumed"] == 2


BAD_INPUT = {
    "unknown key": ("name: tiny\nsoc: snapdragon865\nworkload: {trace: chain.csv}\n"
                    "policy: {name: single}\ncolour: red\n", "colour"),
    "wrong unit": ("name: tiny\nsoc: snapdragon865\nworkload: {trace: chain.csv}\n"
                   "policy: {name: single}\ntime_limit: 3 kg\n", "time_limit"),
    "malformed YAML": ("name: tiny\nsoc: [snapdragon865\n", "line "),
    "nested unknown key": ("name: tiny\nsoc: snapdragon865\nworkload: {trace: chain.csv,"
                           " batchh: 2}\npolicy: {name: single}\n", "workload.batchh"),
    "bad plot": ("name: tiny\nsoc: snapdragon865\nworkload: {trace: chain.csv}\n"
                 "policy: {name: single}\nplots: [{kind: pie, x: a, y: b}]\n", "plots[0].kind"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_experiment_is_one_line_exit_2(case, tmp_path, capsys):
    text, where = BAD_INPUT[case]
    path = write_experiment(tmp_path, text)
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert str(path) in line and where in line


def test_missing_file_and_bad_set(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml: file not found" in one_line_error(capsys.readouterr().err)
    path = write_experiment(tmp_path)
    assert main(["run", str(path), "--set", "workload.batch"]) == 2
    assert "--set" in one_line_error(capsys.readouterr().err)
    assert main(["run", str(path), "--set", "workload.batch=many"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "workload.batch" in line and "--set" in line


def test_real_entry_points_report_bad_input_in_one_line(tmp_path):
    path = write_experiment(tmp_path, BAD_INPUT["wrong unit"][0])
    result = socsim("run", str(path))
    assert result.returncode == 2
    assert "time_limit" in one_line_error(result.stderr)
    assert socsim("run", str(path), "--workers", "0").returncode == 2
    if shutil.which("socsim"):
        result = subprocess.run(["socsim", "run", str(path)], capture_output=True, text=True)
        assert result.returncode == 2 and "time_limit" in one_line_error(result.stderr)


def test_an_input_error_found_by_planning_exits_2_before_writing(tmp_path, capsys):
    # the processor is checked when the policy plans: the pre-flight plans a run
    path = write_experiment(tmp_path, policy={"name": "single", "processor": "npu"})
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.endswith(f"{path}: policy.processor: unknown processor 'npu'; this SoC has "
                         "cpu.prime, cpu.gold, cpu.silver, gpu, dsp")
    assert not (tmp_path / "out").exists()


def test_a_library_no_chosen_processor_has_exits_2_before_writing(tmp_path, capsys):
    # a typo in ``library`` would otherwise cost every kernel with the processor's own numbers
    policy = {"name": "single", "processor": "cpu.gold", "fallback": "gpu", "library": "mnnn"}
    path = write_experiment(tmp_path, policy=policy)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert f"{path}: policy.library: " in line and "'mnnn'" in line and "mnn" in line
    assert not (tmp_path / "out").exists()
    path = write_experiment(tmp_path, policy={**policy, "library": "mnn"})
    assert main(["run", str(path), "--out", str(tmp_path / "ok"), "--quiet"]) == 0


def _records(out: Path) -> int:
    return len(list(out.glob("runs/*/metrics.json")))


RUNS = 24  # in _start_sweep's sweep


def _start_sweep(tmp_path: Path) -> tuple[Path, Path, subprocess.Popen]:
    # 24 runs long enough (~0.1 s each) that a loaded machine cannot finish the sweep
    # between the third record and the signal (16 once did, under a load of ~4)
    path = write_experiment(tmp_path, sweep={"policy.cores": [1, 2],
                                             "policy.processor": ["cpu.gold", "cpu.silver"],
                                             "workload.iterations": list(range(1000, 1006))},
                            outputs={"timeline": False})
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "simulator", "run", str(path), "--out",
                                str(out), "--workers", "1", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _records(out) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return path, out, process


def test_kill_9_then_resume_gives_every_run_once(tmp_path):
    path, out, process = _start_sweep(tmp_path)
    process.kill()  # SIGKILL: no chance to clean up
    process.communicate()
    done = _records(out)
    assert 3 <= done < RUNS, "the sweep finished before it could be killed"
    result = socsim("run", str(path), "--out", str(out), "--workers", "2", "--resume",
                    "--quiet")
    assert result.returncode == 0, result.stderr
    resumed = pd.read_csv(out / "results.csv")
    assert len(resumed) == RUNS and not resumed.duplicated(["run", "repeat"]).any()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["resumed"] >= done
    reference = tmp_path / "reference"
    assert main(["run", str(path), "--out", str(reference), "--workers", "1",
                 "--quiet"]) == 0
    assert (out / "results.csv").read_bytes() == (reference / "results.csv").read_bytes()


def _children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_a_pool_sweep_takes_its_workers_down(tmp_path):
    # runs of several seconds each: the workers are busy when the parent dies
    path = write_experiment(tmp_path, sweep={"workload.iterations": [200000, 200001]},
                            outputs={"timeline": False, "kernels": False})
    process = subprocess.Popen([sys.executable, "-m", "simulator", "run", str(path), "--out",
                                str(tmp_path / "out"), "--workers", "2", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(workers := _children(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(workers) >= 2, "the pool never started"
    time.sleep(0.5)  # the workers are inside their runs
    process.kill()
    # the caller's pipes close at once: no orphan holds them open
    process.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, workers))


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_flushes_completed_runs_and_exits_130(tmp_path):
    path, out, process = _start_sweep(tmp_path)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    table = pd.read_csv(out / "results.csv")
    assert 3 <= len(table) < RUNS and (table["status"] == "ok").all()
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"


def test_plot_redraws_from_saved_results(tmp_path, capsys):
    path = write_experiment(tmp_path, sweep={"policy.cores": [1, 2]},
                            plots=[{"kind": "line", "x": "policy.cores", "y": "energy_j",
                                    "name": "energy"},
                                   {"kind": "bar", "x": "policy.cores", "y": "latency_s",
                                    "name": "latency"}])
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    drawn = {p.name: p.read_bytes() for p in (out / "plots").iterdir()}
    assert sorted(drawn) == ["energy.pdf", "energy.png", "latency.pdf", "latency.png"]
    for workers in ("1", "2"):  # in this process; two workers, one plot each
        shutil.rmtree(out / "plots")
        assert main(["plot", str(out), "--workers", workers]) == 0
        assert {p.name: p.read_bytes() for p in (out / "plots").iterdir()} == drawn
    assert main(["plot", str(tmp_path / "nothing")]) == 2
    assert "no config.yaml" in one_line_error(capsys.readouterr().err)


@pytest.fixture
def test_checks(monkeypatch):
    """Checks of a private group (a passing calibration, a failing prediction, a
    failing documented exception, a skipped calibration), removed after the test."""

    def unavailable() -> float:
        raise DataUnavailable("no data here")

    for name, reference, unit, simulate, status, reason in (
            ("pass", 10.0, "ms", lambda: 10.5, "calibration", ""),
            ("fail", 10.0, "ms", lambda: 20.0, "prediction", ""),
            ("exc", 10.0, "ms", lambda: 30.0, "exception", "the data contradict each other"),
            ("skip", 1.0, "W", unavailable, "calibration", "")):
        full = f"zz_cli_test.{name}"
        monkeypatch.setitem(CHECKS._entries, full,
                            Check(full, reference, unit, 10, "test", "zz-cli-test", simulate,
                                  status=status, reason=reason))


def test_validate_writes_the_scoreboard(tmp_path, capsys, test_checks):
    assert main(["validate", "--group", "zz-cli-test", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "PASS" in printed and "FAIL" in printed and "SKIP" in printed
    # the exception fails but is not counted; the skip says why
    assert ("calibration 1/1 passed, predictions 0/1 passed, 1 documented exception, "
            "1 skipped (data unavailable: no data here)") in printed
    assert "zz_cli_test.exc (FAIL): the data contradict each other" in printed
    assert "data unavailable: no data here: zz_cli_test.skip" in printed
    header = printed.splitlines()[0].split()
    assert header[:3] == ["check", "group", "status"] and header[-1] == "result"
    table = pd.read_csv(tmp_path / "validation.csv")
    assert list(table.columns) == ["check", "source", "reference", "simulated", "unit",
                                   "error_pct", "tolerance_pct", "passed", "group", "status",
                                   "reason"]
    rows = table.set_index("check")
    assert rows.loc["zz_cli_test.pass", "error_pct"] == pytest.approx(5.0)
    assert rows.loc["zz_cli_test.fail", "passed"] == False  # noqa: E712 (CSV boolean)
    assert math.isnan(rows.loc["zz_cli_test.skip", "simulated"])
    assert rows["status"].to_dict() == {"zz_cli_test.pass": "calibration",
                                        "zz_cli_test.fail": "prediction",
                                        "zz_cli_test.exc": "exception",
                                        "zz_cli_test.skip": "calibration"}
    assert rows["reason"].fillna("").to_dict()["zz_cli_test.exc"] == "the data contradict each other"
    assert rows["reason"].isna().sum() == 3  # only the exception gives one
    assert set(rows["group"]) == {"zz-cli-test"}
    assert main(["validate", "--group", "no-such-group"]) == 2
    assert "unknown check group" in one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize("what,expected", [("socs", "snapdragon865"), ("policies", "single"),
                                           ("governors", "schedutil")])
def test_list(what, expected, capsys):
    assert main(["list", what]) == 0
    assert expected in capsys.readouterr().out


def test_list_models_importers_and_checks_do_not_crash(capsys):
    for what in ("models", "importers", "checks"):
        assert main(["list", what]) in (0, 2)
        err = capsys.readouterr().err
        assert "Traceback" not in err


def test_import_errors_are_one_line(tmp_path, capsys):
    assert main(["import", "no-such-format", str(tmp_path / "x"), "-o",
                 str(tmp_path / "y.csv")]) == 2
    one_line_error(capsys.readouterr().err)
    assert main(["import", "onnx", str(tmp_path / "x"), "-o", str(tmp_path / "y.csv"),
                 "--option", "oops"]) == 2
    one_line_error(capsys.readouterr().err)


def test_argparse_errors_exit_2_in_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["list", "pizzas"])
    assert info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_run_finds_a_bundled_experiment_by_name(tmp_path, monkeypatch, capsys):
    from simulator.bundled import bundled_experiment, experiments_dir

    assert bundled_experiment("quickstart") == (experiments_dir() / "quickstart.yaml").resolve()
    monkeypatch.chdir(tmp_path)  # no experiments/ folder here
    assert main(["run", "quickstart", "--out", "q", "--quiet"]) == 0
    assert (tmp_path / "q" / "results.csv").is_file()
    assert main(["run", "../quickstart"]) == 2  # names stay inside the bundled folder
    assert "bundled: quickstart, sweep-example" in capsys.readouterr().err


@pytest.mark.parametrize("content, extra", [
    ("utf16", []), ("laughs", []), ("plain", ["--set", "seed=.inf"]),
    ("plain", ["--set", "name=../../escaped"]), ("plain", ["--set", "name=/tmp/abs"]),
    ("plain", ["--set", "name=.."]),
])
def test_bad_input_exits_2_with_one_line_before_writing(tmp_path, monkeypatch, capsys,
                                                        content, extra):
    path = write_experiment(tmp_path)
    text = path.read_text()
    if content == "utf16":
        path.write_text(text, encoding="utf-16")
    elif content == "laughs":
        path.write_text(text + "l0: &l0 [a, b, c, d, e, f, g, h, i]\n" + "".join(
            f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9)))
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(path), *extra]) == 2
    one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "results").exists() and not Path("/tmp/abs").exists()


def test_list_descriptions_are_whole_first_paragraphs(capsys):
    from simulator.cli import _doc

    class Wrapped:
        """A policy whose first sentence runs over
        two lines of its docstring.

        Details that stay out of the listing.
        """

    assert _doc(Wrapped) == "A policy whose first sentence runs over two lines of its docstring."
    assert main(["list", "policies"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines()
                if row.startswith("neurosurgeon "))
    assert line.rstrip().endswith(".")  # its docstring's first sentence, not its first line


def test_a_sweep_with_failed_runs_exits_1_keeps_every_result_and_logs_progress(
        tmp_path, capsys, monkeypatch):
    # make one run fail at run time (the pre-flight would reject it up front)
    monkeypatch.setattr("simulator.runner.check_runs", lambda *args, **kwargs: None)
    path = write_experiment(tmp_path, sweep={"policy.processor": ["cpu.gold", "npu",
                                                                  "cpu.silver"]})
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--workers", "1"]) == 1
    err = capsys.readouterr().err
    assert "1 of 3 runs failed" in err
    assert pd.read_csv(tmp_path / "out" / "results.csv")["status"].tolist() == [
        "ok", "failed", "ok"]
    # no terminal here: progress comes as lines, the last one at the end
    assert "socsim: 3/3 runs done, 1 failed" in err


def test_the_resume_hint_replays_the_original_command(tmp_path):
    from simulator.cli import _resume_command, build_parser

    args = build_parser().parse_args(["run", "my exp.yaml", "--set", "policy.cores=2",
                                      "--set", "workload.batch=[1, 2]", "--workers", "2",
                                      "--retry-failed"])
    assert _resume_command(args, tmp_path / "out") == (
        "socsim run 'my exp.yaml' --set policy.cores=2 --set 'workload.batch=[1, 2]' "
        f"--workers 2 --retry-failed --out {tmp_path / 'out'} --resume")


def test_the_summary_table_clips_long_cells(tmp_path, capsys):
    options = {"a_long_option_name": "a long value " * 10}
    path = write_experiment(tmp_path, sweep={"policy.cores": [1, 2],
                                             "workload.options": [options]})
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) < 200
    assert "…" in out
    assert "a long value " * 10 in (tmp_path / "out" / "results.csv").read_text()


def test_run_timeout_is_a_time_kept_in_the_resume_hint_and_needs_dask(tmp_path, capsys):
    from simulator.cli import _resume_command, build_parser

    args = build_parser().parse_args(["run", "exp.yaml", "--scheduler-address",
                                      "tcp://h:8786", "--run-timeout", "10 min"])
    assert args.run_timeout == 600.0
    assert _resume_command(args, tmp_path / "out") == (
        "socsim run exp.yaml --scheduler-address tcp://h:8786 --run-timeout '10 min' "
        f"--out {tmp_path / 'out'} --resume")
    assert build_parser().parse_args(["run", "e.yaml", "--run-timeout", "90"]).run_timeout \
        == 90.0
    for bad in ("-1", "0", "ten", "5 GHz", "inf"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["run", "e.yaml", "--run-timeout", bad])
    path = write_experiment(tmp_path)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--run-timeout", "30"]) == 2
    assert "--run-timeout needs a positive time and a Dask cluster" in capsys.readouterr().err
    assert not out.exists()


def test_a_plot_order_naming_a_missing_value_exits_2_before_writing(tmp_path, capsys):
    path = write_experiment(tmp_path, sweep={"policy.cores": [1, 2]},
                            plots=[{"kind": "bar", "x": "policy.cores", "y": "latency_s",
                                    "order": [3]}])
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"socsim: error: {path}: plots[0].order: 3 is not a value of "
                   f"'policy.cores'; its values: 1, 2")
    assert not out.exists()


def test_a_plot_where_matching_no_run_exits_2_before_writing(tmp_path, capsys):
    # found by the fuzzer: the plot used to be skipped after every run had been simulated
    plot = {"kind": "bar", "x": "policy.cores", "y": "latency_s"}
    path = write_experiment(tmp_path, sweep={"policy.cores": [1, 2]},
                            plots=[{**plot, "where": {"policy.cores": 1}},
                                   {**plot, "where": {"policy.cores": [3, "0 K"]}}])
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"socsim: error: {path}: plots[1].where.policy.cores: [3, '0 K'] matches "
                   f"no run; the values of 'policy.cores': 1, 2")
    assert not out.exists()
    # a sweep narrowed by --set keeps running; the plot that no longer fits is skipped
    assert main(["run", str(path), "--out", str(out), "--workers", "1",
                 "--set", "policy.cores=2"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert [e for e in manifest["plot_errors"] if "plots[0]" in e and "no rows left" in e]
