"""Chrome trace-event JSON of a run (open it in https://ui.perfetto.dev or chrome://tracing).

One process per processor and one thread (lane) per core, GPU or DSP context;
kernels are complete ("X") events on every core they occupied; transfers get a
process per channel; frequency, power and temperature samples become counter
("C") tracks. Times are microseconds, as the format requires.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .engine.simulation import RunResult

_US = 1e6


def timeline_events(result: RunResult) -> list[dict]:
    """The trace events of ``result`` (deterministic order)."""
    events: list[dict] = []
    pids: dict[str, int] = {}

    def pid(name: str) -> int:
        if name not in pids:
            pids[name] = len(pids) + 1
            events.append({"ph": "M", "name": "process_name", "pid": pids[name], "tid": 0,
                           "args": {"name": name}})
            events.append({"ph": "M", "name": "process_sort_index", "pid": pids[name],
                           "tid": 0, "args": {"sort_index": pids[name]}})
        return pids[name]

    for row in result.kernels.itertuples(index=False):
        lanes = row.lanes if len(row.lanes) else ("shared",)
        for lane in lanes:
            events.append({
                "ph": "X", "name": row.label.split(":", 1)[-1], "cat": row.job,
                "pid": pid(row.processor), "tid": lane if lane != "shared" else 999,
                "ts": row.start_s * _US, "dur": (row.end_s - row.start_s) * _US,
                "args": {"job": row.job, "iteration": int(row.iteration), "units": int(row.units),
                         "share": float(row.share)}})
    for row in result.transfers.itertuples(index=False):
        events.append({"ph": "X", "name": f"{row.bytes / 1024:.0f} KiB", "cat": "transfer",
                       "pid": pid(row.channel), "tid": 0, "ts": row.start_s * _US,
                       "dur": (row.end_s - row.start_s) * _US, "args": {"from": row.label}})
    counters = pid("counters")
    for row in result.timeseries.itertuples(index=False):
        events.append({"ph": "C", "name": row.name, "pid": counters, "ts": row.time_s * _US,
                       "args": {"value": float(row.value)}})
    return events


def write_timeline(result: RunResult, path: str | Path) -> Path:
    """Write the timeline JSON atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"traceEvents": timeline_events(result), "displayTimeUnit": "ms",
               "otherData": {"generator": "socsim"}}
    # a plain open() (not mkstemp, which makes the file 0600) so the timeline gets the
    # same permissions as every other output; the temp name is per process
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, separators=(",", ":"))
    os.replace(tmp, path)
    return path
