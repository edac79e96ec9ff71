"""Turn what phones produce into the measurement format (:mod:`.measurements`).

* :func:`from_mobile_ml_benchmark`: the mobile-ml-benchmark CSVs (Li, Paolieri,
  Golubchik, EdgeSys 2024): end-to-end latencies per model and configuration
  (``<device>|<config>|<float|quant>|mean``, microseconds), and the per-op GPU
  latencies of the operator list.
* :func:`from_tflite_benchmark`: the text output of TFLite's ``benchmark_model``
  (``Inference (avg)``, microseconds), with ``--enable_op_profiling=true`` also
  its "Summary by node type" (per-kind milliseconds: one row per op kind).

Run::

    python -m validation.calibrate.importers mobile-ml-benchmark E2E.csv OPS.csv -o rows.csv
    python -m validation.calibrate.importers tflite LOG.txt --model mobilenet_v2 \\
        --processor cpu.gold [--cores N] [--precision int8] -o rows.csv
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import pandas as pd

from simulator.errors import ConfigError

# mobile-ml-benchmark configuration names: <cores><cluster size>; the cluster sizes
# of a 1+3+4 phone (large = prime, med = gold, small = silver)
CLUSTERS = {"large": "cpu.prime", "med": "cpu.gold", "small": "cpu.silver"}
PRECISION = {"float": "fp32", "quant": "int8"}
# TFLite builtin operators -> the project's op kinds (the mobile-ml-benchmark importer's
# names; element-wise operators by their kind). TFLite runs grouped convolutions as CONV_2D
# nodes, which the traces hold as group_conv: a CONV_2D row sums both kinds.
TFLITE_KINDS = {"CONV_2D": "conv+group_conv", "DEPTHWISE_CONV_2D": "dwconv", "FULLY_CONNECTED": "fc",
                "MAX_POOL_2D": "maxpool", "AVERAGE_POOL_2D": "avgpool", "MEAN": "global_pool",
                "CONCATENATION": "concat", "ADD": "add", "MUL": "mul", "PAD": "pad",
                "RESHAPE": "reshape", "SOFTMAX": "softmax", "TRANSPOSE_CONV": "deconv",
                "LOGISTIC": "sigmoid", "TANH": "tanh", "QUANTIZE": "quantize",
                "DEQUANTIZE": "dequantize", "TRANSPOSE": "transpose", "BATCH_MATMUL": "matmul"}


def from_mobile_ml_benchmark(e2e_csv: str | Path, ops_csv: str | Path, relative_to: Path,
                             clusters: dict[str, str] | None = None) -> pd.DataFrame:
    """Measurement rows of the mobile-ml-benchmark files.

    Args:
        e2e_csv: one row per model, ``<device>|<config>|<float|quant>|mean`` columns (us).
        ops_csv: the operator list (``model, operation, feature``; optional per-op GPU
            latency ``<device>|gpu|float``, us): the models' traces (``OPS#model``) and
            one per-op row per listed GPU operator.
        relative_to: folder the written rows file will be in (model paths are relative).
        clusters: config name part -> processor (default :data:`CLUSTERS`). Configs
            spanning two clusters (``1large1med``) are left out: the fast model runs
            one processor.
    """
    from workloads.importers.mobile_ml_benchmark import read_ops

    clusters = clusters or CLUSTERS
    e2e = _read_csv(e2e_csv)
    if "model" not in e2e.columns:
        raise ConfigError("missing column 'model'", file=str(e2e_csv))
    ops = read_ops(ops_csv)
    source = os.path.relpath(Path(ops_csv).resolve(), Path(relative_to).resolve())
    pattern = re.compile(r"^[^|]+\|(\d+)(\w+?)\|(float|quant)\|mean$")
    rows = []
    for column in e2e.columns:
        if column.endswith("|gpu|float|mean"):
            processor, cores, precision = "gpu", 1, "fp32"
        else:
            match = pattern.match(column)
            if not match or match.group(2) not in clusters:
                continue
            processor = clusters[match.group(2)]
            cores, precision = int(match.group(1)), PRECISION[match.group(3)]
        measured = dict(zip(e2e["model"], e2e[column]))
        # models in the operator list's order (cross-validation folds follow row order)
        for model in ops:
            value = measured.get(model)
            if value is not None and pd.notna(value):
                rows.append({"model": f"{source}#{model}", "precision": precision,
                             "processor": processor, "cores": cores, "latency_us": value})
    table = _read_csv(ops_csv)
    gpu = [c for c in table.columns if c.endswith("|gpu|float")]
    if gpu:
        for model, group in table.groupby("model", sort=False):
            if model not in ops or len(group) != len(ops[model]):
                continue  # the importer merged or dropped rows: no one-to-one map
            for index, value in enumerate(group[gpu[0]]):
                if pd.notna(value) and value > 0:
                    rows.append({"model": f"{source}#{model}", "precision": "fp32",
                                 "processor": "gpu", "cores": 1, "latency_us": value,
                                 "op": index})
    if not rows:
        raise ConfigError("no <device>|<config>|<float|quant>|mean column matches the "
                          "clusters " + ", ".join(clusters), file=str(e2e_csv))
    out = pd.DataFrame(rows)
    out["op"] = out["op"].astype("Int64") if "op" in out else pd.NA
    return out


def from_tflite_benchmark(log: str | Path, model: str, processor: str,
                          cores: int | None = None, precision: str = "fp32") -> pd.DataFrame:
    """Measurement rows of one ``benchmark_model`` run: end to end, and per op kind when
    the log has op profiling. ``cores`` defaults to the log's ``Num threads`` (CPU) or 1.

    ``model`` names the measured model in a form the simulator can build (a zoo name or
    a trace/ONNX file): the ``.tflite`` file itself is not imported.
    """
    text = _read_text(log)
    match = re.search(r"Inference \(avg\):\s*([0-9.eE+]+)", text)
    if not match:
        raise ConfigError("no 'Inference (avg): <us>' line (is this benchmark_model "
                          "output?)", file=str(log))
    if cores is None:
        threads = re.search(r"Num threads:\s*\[(\d+)\]", text)
        cores = int(threads.group(1)) if threads and processor.startswith("cpu.") else 1
    base = {"model": model, "precision": precision, "processor": processor, "cores": cores}
    rows = [{**base, "latency_us": float(match.group(1))}]
    for node, avg_ms in _summary_by_node_type(text):
        kind = TFLITE_KINDS.get(node)
        if kind is not None:
            rows.append({**base, "latency_us": avg_ms * 1e3, "op": kind})
    return pd.DataFrame(rows)


def _summary_by_node_type(text: str) -> list[tuple[str, float]]:
    """(node type, avg ms) of the first "Summary by node type" table after the regular
    runs' profile (the warm-up profile, if printed, comes first)."""
    start = text.find("Operator-wise Profiling Info for Regular Benchmark Runs")
    start = text.find("Summary by node type", max(start, 0))
    if start < 0:
        return []
    out = []
    for line in text[start:].splitlines()[1:]:
        line = re.sub(r"^\s*(INFO:)?\s*", "", line)
        if line.startswith("[Node type]") or not line:
            continue
        if line.startswith("="):
            break
        fields = line.split()
        if len(fields) >= 3:
            try:
                out.append((fields[0], float(fields[2])))
            except ValueError:
                break
    return out


def _read_csv(path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(path)) from None
    except Exception as exc:
        raise ConfigError(f"cannot read CSV: {' '.join(str(exc).split())}",
                          file=str(path)) from None


def _read_text(path) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=str(path)) from None


def main(argv: list[str] | None = None) -> int:
    from simulator.cli import _stderr

    parser = argparse.ArgumentParser(prog="python -m validation.calibrate.importers",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="format", required=True)
    mmb = sub.add_parser("mobile-ml-benchmark")
    mmb.add_argument("e2e")
    mmb.add_argument("ops")
    tfl = sub.add_parser("tflite")
    tfl.add_argument("log")
    tfl.add_argument("--model", required=True)
    tfl.add_argument("--processor", required=True)
    tfl.add_argument("--cores", type=int)
    tfl.add_argument("--precision", default="fp32")
    for p in (mmb, tfl):
        p.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    out = Path(args.output)
    try:
        if args.format == "mobile-ml-benchmark":
            table = from_mobile_ml_benchmark(args.e2e, args.ops, out.parent)
        else:
            table = from_tflite_benchmark(args.log, args.model, args.processor, args.cores,
                                          args.precision)
    except ConfigError as err:
        _stderr(f"socsim: error: {err}")
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"{out}: {len(table)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
