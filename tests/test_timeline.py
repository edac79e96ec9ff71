"""The Chrome/Perfetto timeline: one lane per core, counters for freq/power/temperature."""

from __future__ import annotations

import json

from conftest import kernel, make_trace, run

from simulator.timeline import write_timeline


def test_timeline_has_kernel_lanes_transfers_and_counters(tmp_path, tiny_soc):
    trace = make_trace([kernel(0, precision="int8"), kernel(1, "0", precision="int8"),
                        kernel(2, "0", precision="int8")])
    result = run(tiny_soc, trace, {"name": "manual", "default": "cpu.big",
                                   "kernels": {2: "dsp"}, "cores": {"cpu.big": 1}})
    path = write_timeline(result, tmp_path / "timeline.json")
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert {"cpu.big", "dsp", "dsp.offload", "counters"} <= names
    kernels = [e for e in events if e["ph"] == "X" and e.get("cat") != "transfer"]
    assert len(kernels) == 3 and all(e["dur"] > 0 for e in kernels)
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert {"freq.cpu.big", "power.total", "temp.cpu"} <= counters
    # kernels 1 and 0 share core lane 0 one after the other (1 core used)
    lane0 = sorted((e["ts"], e["ts"] + e["dur"]) for e in kernels if e["tid"] == 0
                   and e["pid"] == kernels[0]["pid"])
    assert all(a[1] <= b[0] + 1e-6 for a, b in zip(lane0, lane0[1:]))


def test_the_timeline_has_the_permissions_of_every_other_output(tmp_path, tiny_soc):
    import os
    import stat

    from simulator.results import write_json

    result = run(tiny_soc, make_trace([kernel(0)]), {"name": "single", "processor": "cpu.big"})
    timeline = write_timeline(result, tmp_path / "timeline.json")
    write_json(tmp_path / "other.json", {"a": 1})
    mode = stat.S_IMODE(os.stat(timeline).st_mode)
    # under the usual umask (022) every output is 0644; mkstemp made the timeline 0600
    assert mode == stat.S_IMODE(os.stat(tmp_path / "other.json").st_mode)
