"""A Dask cluster gives the same results as the local executors."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import kernel, make_trace

from simulator.errors import ConfigError
from simulator.executors import DaskExecutor
from simulator.runner import run_experiment
from simulator.trace import save_trace

distributed = pytest.importorskip("dask.distributed")


def test_dask_local_cluster_matches_in_process(tmp_path, monkeypatch):
    # the "npu" run must fail in the workers, not in the pre-flight
    monkeypatch.setattr("simulator.runner.check_runs", lambda *args, **kwargs: None)
    save_trace(make_trace([kernel(i, str(i - 1) if i else "") for i in range(4)]),
               tmp_path / "chain.csv")
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({
        "name": "tiny", "soc": "snapdragon865", "workload": {"trace": "chain.csv"},
        "policy": {"name": "single", "processor": "cpu.gold"}, "repeats": 2,
        "sweep": {"policy.processor": ["cpu.gold", "npu", "gpu"]}}))
    local = run_experiment(path, out=tmp_path / "local", workers=1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  host="127.0.0.1", protocol="tcp", dashboard_address=None
                                  ) as cluster:
        remote = run_experiment(path, out=tmp_path / "dask",
                                scheduler_address=cluster.scheduler_address)
    assert remote.manifest["executor"]["kind"] == "dask"
    assert list(remote.results["status"]) == ["ok", "ok", "failed", "failed", "ok", "ok"]
    pd.testing.assert_frame_equal(local.results, remote.results)
    for name in ("results.csv", "summary.csv", "timeseries.parquet"):
        assert (tmp_path / "local" / name).read_bytes() == \
            (tmp_path / "dask" / name).read_bytes(), name


def test_unreachable_scheduler_is_a_config_error():
    with pytest.raises(ConfigError, match="cannot connect"):
        DaskExecutor("tcp://127.0.0.1:9", timeout=1)


def test_a_cluster_without_workers_is_a_config_error_before_anything_is_written(tmp_path):
    with distributed.LocalCluster(n_workers=0, processes=False, host="127.0.0.1",
                                  protocol="tcp", dashboard_address=None) as cluster:
        with pytest.raises(ConfigError, match="no Dask worker joined"):
            DaskExecutor(cluster.scheduler_address, workers_timeout=0.5)


def test_workers_running_another_socsim_are_refused():
    from simulator import __version__
    from simulator.executors import check_worker_versions

    check_worker_versions({"tcp://a:1": __version__}, "tcp://s:8786")
    with pytest.raises(ConfigError, match="tcp://b:1 has 0.0.1"):
        check_worker_versions({"tcp://a:1": __version__, "tcp://b:1": "0.0.1"},
                              "tcp://s:8786")


def test_a_sweep_that_breaks_leaves_a_failed_manifest_not_running(tmp_path):
    import json

    class Broken:
        """An executor whose cluster goes away after the first run."""

        def describe(self):
            return {"kind": "broken", "workers": 1}

        def map_unordered(self, fn, tasks):
            yield 0, fn(tasks[0])
            raise OSError("lost the scheduler")

        def close(self):
            """Nothing to release (no processes)."""

    save_trace(make_trace([kernel(i, str(i - 1) if i else "") for i in range(4)]),
               tmp_path / "chain.csv")
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({
        "name": "tiny", "soc": "snapdragon865", "workload": {"trace": "chain.csv"},
        "policy": {"name": "single", "processor": "cpu.gold"},
        "sweep": {"policy.cores": [1, 2, 3]}}))
    with pytest.raises(OSError, match="lost the scheduler"):
        run_experiment(path, out=tmp_path / "out", executor=Broken())
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["completed"] == 1
    assert len(pd.read_csv(tmp_path / "out" / "results.csv")) == 1


def _nap(seconds: float) -> float:
    """A stand-in run: sleeps (a hung run when long)."""
    import time

    time.sleep(seconds)
    return seconds


def test_a_run_over_the_run_timeout_is_given_up_and_the_others_finish():
    from simulator.executors import RunTimeout

    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  host="127.0.0.1", protocol="tcp", dashboard_address=None
                                  ) as cluster:
        executor = DaskExecutor(cluster.scheduler_address, run_timeout=1.5)
        executor.POLL_S = 0.2
        try:
            values = dict(executor.map_unordered(_nap, [0.1, 5.0, 0.2, 0.1]))
        finally:
            executor.close()
    assert values[0] == 0.1 and values[2] == 0.2 and values[3] == 0.1
    assert isinstance(values[1], RunTimeout)
    assert "longer than --run-timeout 1.5 s on Dask worker tcp://127.0.0.1" in str(values[1])


def test_a_run_timeout_needs_a_dask_cluster(tmp_path):
    with pytest.raises(ConfigError, match="--run-timeout: --run-timeout needs a positive"):
        run_experiment(tmp_path / "exp.yaml", run_timeout=10.0, workers=1)
