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
