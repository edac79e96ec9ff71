"""Turning a finished run's records into tables and scalar metrics.

Metric names carry their unit: ``latency_s`` (mean iteration latency),
``makespan_s``, ``energy_j`` (all components, whole run),
``energy_per_iteration_j``, ``avg_power_w``, ``peak_temp_c`` (hottest node),
``peak_skin_temp_c``, ``throughput_per_s`` (samples per second),
``energy_<component>_j``, ``min_freq_<domain>_hz`` and, with several jobs,
``<job>.latency_s``. With several devices ``energy_j`` and ``avg_power_w`` are sums
over the devices, and each device also gets its own (``<device>.energy_j``,
``<device>.avg_power_w``) and its components (``<device>.energy_<component>_j``).
Jobs that pause or fast-forward add ``active_time_s`` (the iterations' durations
summed over the jobs: with tenants side by side it exceeds the makespan),
``pause_time_s``, ``energy_pause_j``, ``energy_active_j`` (the rest) and
``replayed_iterations`` (iterations repeated from the
fast-forward memo, which leave no kernel records, frames of a steady pipeline
held, which get their template frame's records when records are kept, or frames
of a job sharing its device held whole, which leave none).
``kernels`` counts the kernels executed (replayed and held ones not).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .engine.result import RunResult

KERNEL_COLUMNS = ["job", "iteration", "row", "label", "processor", "units", "share", "lanes",
                  "start_s", "end_s"]
TRANSFER_COLUMNS = ["channel", "label", "bytes", "start_s", "end_s"]


def collect_metrics(env, system, jobs, runners, recorder):
    """Build the :class:`~simulator.engine.result.RunResult` of a finished run."""
    kernels = pd.DataFrame(recorder.tasks, columns=KERNEL_COLUMNS)
    kernels["duration_s"] = kernels["end_s"] - kernels["start_s"]
    transfers = pd.DataFrame(recorder.transfers, columns=TRANSFER_COLUMNS)
    columns = [dev.sample_columns(final=True) for dev in system.devices.values()]
    if any(len(codes) for _, _, codes, _, _ in columns):
        # Columns built once from the devices' arrays (no tuple per value); the
        # names taken from each device's label table by code, in the dtype pandas
        # infers for strings (a list of a million names cost ~60 bytes a value),
        # before the time column exists (its transients then add to less). A long
        # run's peak RSS is the finished table next to the devices' arrays.
        labels, codes, offset = [], [], 0
        for _, _, device_codes, device_labels, _ in columns:
            codes.append(device_codes + offset if offset else device_codes)
            labels.extend(device_labels)
            offset += len(device_labels)
        names = _names(labels, _join(codes))
        del codes
        # at most one copy of each column (the devices' arrays are views; one
        # device's values are the column as they are)
        timeseries = pd.DataFrame(
            {"time_s": _join([np.repeat(c[0], c[1]) for c in columns]),
             "name": names, "value": _join([c[4] for c in columns])}, copy=False)
    else:
        timeseries = pd.DataFrame([], columns=["time_s", "name", "value"])

    metrics: dict[str, float] = {}
    samples_done = 0
    completed = True
    for job, runner in zip(jobs, runners):
        count = len(runner.iteration_times)
        samples_done += job.samples * count
        # a job stopped at run time by its policy has done what it was to do
        completed &= count == job.iterations or runner.control.stopped
        if len(jobs) > 1:
            metrics[f"{job.name}.latency_s"] = (_busy([runner]) / count if count
                                                else float("nan"))
    iterations = sum(len(runner.iteration_times) for runner in runners)
    makespan = env.now
    metrics["latency_s"] = _busy(runners) / iterations if iterations else float("nan")
    metrics["makespan_s"] = makespan
    energy = sum(dev.total_energy for dev in system.devices.values())
    metrics["energy_j"] = energy
    metrics["energy_per_iteration_j"] = energy / iterations if iterations else float("nan")
    metrics["avg_power_w"] = energy / makespan if makespan > 0 else 0.0
    metrics["throughput_per_s"] = samples_done / makespan if makespan > 0 else 0.0
    metrics["peak_temp_c"] = max(dev.peak_temperature() for dev in system.devices.values())
    for name, dev in system.devices.items():
        pre = "" if len(system.devices) == 1 else f"{name}."
        skin = dev.spec.thermal.skin_node
        if skin:
            metrics[f"{pre}peak_skin_temp_c"] = dev.peak_temperature([skin])
        for component, joules in dev.energy.items():
            metrics[f"{pre}energy_{component}_j"] = joules
        if pre:  # energy_j and avg_power_w add the devices up; each one's own share
            metrics[f"{pre}energy_j"] = dev.total_energy
            metrics[f"{pre}avg_power_w"] = dev.total_energy / makespan if makespan > 0 else 0.0
        for local, freq in dev.min_frequency.items():
            metrics[f"{pre}min_freq_{local}_hz"] = freq
    if any(job.pause_every or job.fast_forward for job in jobs):
        metrics["active_time_s"] = _busy(runners)
        metrics["pause_time_s"] = sum(runner.pause_time for runner in runners)
        metrics["energy_pause_j"] = sum(runner.pause_energy for runner in runners)
        metrics["energy_active_j"] = energy - metrics["energy_pause_j"]
        metrics["replayed_iterations"] = sum(
            runner.fast_forward.replayed for runner in runners if runner.fast_forward) + sum(
            runner.pipeline.held_frames for runner in runners if runner.pipeline) + sum(
            runner.tenant.held for runner in runners if runner.tenant)
    metrics["kernels"] = recorder.count  # also when the records were not kept
    metrics["completed"] = float(completed)
    return RunResult(metrics=metrics, kernels=kernels, transfers=transfers,
                     timeseries=timeseries)


def _busy(runners) -> float:
    """Seconds the runners' completed iterations took, added left to right in
    completion order, job by job (explicitly: ``sum()`` of floats compensates from
    Python 3.12 and would give another float there). One job's is its log's running
    total (:attr:`IterationLog.busy`, the same left-to-right additions); several
    jobs' logs keep every iteration and are walked (the running totals added up
    would round differently)."""
    if len(runners) == 1:
        return runners[0].iteration_times.busy
    busy = 0.0
    for runner in runners:
        for start, end in runner.iteration_times:
            busy += end - start
    return busy


def _join(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays end to end; one array as it is (a long run's series is one
    device's: no second copy of it)."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


# Names taken with one Arrow ``take`` up to this many values (see _names), and the
# values _exact_strings gathers at a time beyond (its transients: ~0.7 MB)
_TAKE_AT_MOST = 65_536
_BLOCK = 4_096


def _exact_strings(labels: list[str], codes: np.ndarray, kind):
    """An Arrow string array (``kind``: ``large_string`` or ``string``) of
    ``labels[code]`` per code, in offset and UTF-8 buffers of their exact final size,
    the bytes gathered with numpy from the labels' concatenation a block of
    :data:`_BLOCK` values at a time (its index arrays are the only transients)."""
    import pyarrow as pa

    encoded = [label.encode() for label in labels]
    blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    sizes = np.array([len(label) for label in encoded],
                     dtype=np.int64 if kind == pa.large_string() else np.int32)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)  # in blob
    offsets = np.zeros(len(codes) + 1, dtype=sizes.dtype)
    np.take(sizes, codes, out=offsets[1:])  # each value's length, then where it ends
    np.cumsum(offsets, out=offsets)
    data = np.empty(offsets[-1], dtype=np.uint8)
    for first in range(0, len(codes), _BLOCK):
        block = codes[first:first + _BLOCK]
        begin, end = int(offsets[first]), int(offsets[first + len(block)])
        # byte i of the block comes from blob[its label's start + i - its value's start]
        source = np.repeat(starts[block] - (offsets[first:first + len(block)] - begin),
                           sizes[block])
        source += np.arange(end - begin)
        data[begin:end] = blob[source]
    return pa.Array.from_buffers(kind, len(codes),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _names(labels: list[str], codes: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """``labels[code]`` for every code, in the dtype pandas infers for the labels.

    Arrow-backed strings: a short series takes from the labels by code (Arrow's
    ``take``, straight from the uint32 codes; pandas' ``take`` would copy them to
    int64 twice). A long one is assembled in two buffers of their exact final size
    (:func:`_exact_strings`): one ``take`` of it all grows its buffers in Arrow's
    allocator (mimalloc), which keeps the pages it let go, measured ~2.5 MB more peak
    RSS for the 0.4 M names (7.6 MB) of a 150-epoch run of convergence.yaml."""
    dtype = pd.Series(labels).dtype
    table = pd.array(labels, dtype=dtype)
    if getattr(dtype, "storage", None) == "pyarrow":
        import pyarrow as pa  # there, since pandas stores these strings with it

        if len(codes) <= _TAKE_AT_MOST:
            return pd.array(pa.array(table).take(pa.array(codes)), dtype=dtype)
        return pd.array(_exact_strings(labels, codes, pa.array(table).type), dtype=dtype)
    return table.take(codes.astype(np.intp))
