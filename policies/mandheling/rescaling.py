"""Self-adaptive rescaling: rescale an integer layer only as often as its scale changes.

NITI-style training rescales every INT32 result back to INT8 with a scale
found at run time: the operator writes INT32 accumulators, a ReduceMax finds
their maximum and a Shift re-reads them (the trace's ``reduce_max`` and
``shift`` kernels after each conv/deconv/FC): at least twice the work of the
same operator with a known scale, whose requantisation is fused into the
operator (it writes INT8 directly). Each such *rescale group* therefore gets
a static-scale alternative kernel; in every batch exactly one of the two
versions runs (the plan's conditional kernels).

Which one runs follows each weighted layer's scale factor, a seeded
stochastic process (:class:`ScaleProcess`): frequent changes early in
training, then flipping between two neighbouring values, each value held for
10-60 batches (the paper's observation). The policy (:func:`rescale_schedule`)
rescales every batch during a measurement window of ``window`` batches, takes
the frequency ``f`` of actual changes in it (changes per batch) and then
rescales every ``round(2 / f)`` batches (frequency ``f / 2``) until the next
window, ``period`` batches later. Layers measure independently: each layer's
windows start at its own (seeded) phase. Without the technique every batch
rescales.

On a library whose operators need their output range before they run
(``range_retry``: Hexagon NN fuses the requantisation into the operator and
re-runs it when the range it was given is wrong), the dynamic version's Shift
is not a pass over the INT32 tensor but the operator again with the scale just
found (:func:`retry_form`): writing the INT32 result and finding its maximum,
then recomputing, costs the operator twice and more, whatever the layer's
shape (a compute-bound layer gains nothing from a cheap Shift).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rows import Rewrite

_COMPUTE = ("conv", "dwconv", "deconv", "fc", "matmul")


@dataclass(frozen=True)
class ScaleProcess:
    """The scale factor of one layer over training (batch by batch).

    Attributes:
        early: batches at the start of training with frequent changes.
        early_change: probability of a change per batch early on.
        dwell: (shortest, longest) number of batches a value is held later
            (uniform), the paper's 10-60.
    """

    early: int = 100
    early_change: float = 0.3
    dwell: tuple[int, int] = (10, 60)

    def changes(self, rng: np.random.Generator, batches: int) -> np.ndarray:
        """Booleans: did the scale change at each batch (0 .. ``batches`` - 1)."""
        changed = np.zeros(batches, dtype=bool)
        early = min(self.early, batches)
        changed[:early] = rng.random(early) < self.early_change
        t = early
        low, high = self.dwell
        while t < batches:
            t += int(rng.integers(low, high + 1))
            if t < batches:
                changed[t] = True
        return changed


def rescale_schedule(changed: np.ndarray, window: int = 50, period: int = 500,
                     phase: int = 0) -> np.ndarray:
    """Booleans: does the layer rescale at each batch (the f/2 rule).

    Args:
        changed: the layer's scale changes per batch (from the start of training).
        window: batches of the measurement window (rescaling every batch).
        period: batches from the start of one window to the next.
        phase: start of the second window (the first opens with training).
    """
    batches = len(changed)
    out = np.zeros(batches, dtype=bool)
    starts = [0, *range(phase % period or period, batches, period)]
    for start, following in zip(starts, [*starts[1:], batches]):
        stop = min(start + window, batches)
        out[start:stop] = True
        f = changed[start:stop].mean() if stop > start else 0.0
        every = max(1, round(2.0 / f)) if f > 0 else period
        out[stop:following:every] = True
    return out


@dataclass
class RescaleGroup:
    """One rescaling site: the operator kernel(s), its ReduceMax and Shift, and
    the static-scale alternative kernel(s) added for it.

    Attributes:
        layer: the weighted layer whose scale it follows.
        compute: ids of the operator's kernels (several after batch splitting).
        reduce_max: ids of the ReduceMax kernel(s), the last one the original.
        shift: ids of the Shift kernel(s), the last one the original.
        static: ids of the static-scale alternative kernels.
        shift_flops: operations of the Shift as the trace gives it (the static
            version fuses them into the operator).
        int8_bytes: bytes of the Shift's INT8 output (what the static version writes).
    """

    layer: str
    compute: list[int]
    reduce_max: list[int]
    shift: list[int]
    static: list[int]
    shift_flops: float = 0.0
    int8_bytes: float = 0.0


def find_groups(rewrite: Rewrite) -> list[RescaleGroup]:
    """The rescale groups of an integer trace: compute -> reduce_max -> shift chains,
    consecutive in the trace's order (as a translation rule emits them).

    Raises:
        ValueError: a site's kernels are not consecutive (the co-scheduler places each
            site as one unit; skipping it would silently drop its rescaling choice).
    """
    by_id = rewrite.by_id()
    successors = rewrite.successors()
    position = {r["id"]: i for i, r in enumerate(rewrite.records)}
    groups = []
    for record in rewrite.records:
        if record["op"] != "reduce_max" or len(record["deps"]) != 1:
            continue
        producer = by_id[record["deps"][0]]
        after = successors[record["id"]]
        if producer["op"] not in _COMPUTE or len(after) != 1:
            continue
        shift = by_id[after[0]]
        # the Shift reads the ReduceMax's scalar and the operator's INT32 output
        if shift["op"] != "shift" or not set(shift["deps"]) <= {record["id"], producer["id"]}:
            continue
        # one unit of the co-scheduler: the three kernels one after another
        if (position[producer["id"]] + 1, position[shift["id"]] - 1) != (
                position[record["id"]],) * 2:
            raise ValueError(f"rescaling site of {producer['name']!r} (kernels "
                             f"{producer['id']}, {record['id']}, {shift['id']}) is not "
                             "consecutive in the trace")
        groups.append(RescaleGroup(str(producer.get("layer") or producer["name"]),
                                   [producer["id"]], [record["id"]], [shift["id"]], [],
                                   float(shift["flops"]), float(shift["bytes_out"])))
    return groups


def retry_form(producer: dict, shift: dict) -> dict:
    """The Shift of a rescaling site on a ``range_retry`` library: the operator
    run again with the scale the ReduceMax found, the shift fused (INT8 output,
    as the static version). It keeps the Shift's id and dependencies (the
    range, and the operator's first run)."""
    row = dict(producer)
    row.update(id=shift["id"], name=f"{shift['name']}.rerun", deps=shift["deps"],
               flops=producer["flops"] + shift["flops"], bytes_out=shift["bytes_out"])
    return row


def retry_rows(rewrite: Rewrite, groups: list[RescaleGroup]) -> dict[int, dict]:
    """Shift id -> its :func:`retry_form`, for every group (not yet split)."""
    by_id = rewrite.by_id()
    return {g.shift[0]: retry_form(by_id[g.compute[0]], by_id[g.shift[0]]) for g in groups}


def static_parts(parts: list[dict], shift_flops: float, int8_bytes: float) -> list[dict]:
    """The static-scale version of a site's operator kernels (one per micro-batch
    part): each part with its share of the Shift's work fused in, writing its
    share of the INT8 output instead of INT32 (what the co-scheduler prices and
    :func:`add_static_alternatives` emits)."""
    total_flops = sum(p["flops"] for p in parts) or 1.0
    int32_bytes = sum(p["bytes_out"] for p in parts) or 1.0
    out = []
    for part in parts:
        alt = dict(part)
        alt["flops"] = part["flops"] + shift_flops * part["flops"] / total_flops
        alt["bytes_out"] = part["bytes_out"] * int8_bytes / int32_bytes
        out.append(alt)
    return out


def add_static_alternatives(rewrite: Rewrite, groups: list[RescaleGroup],
                            target: dict[int, str]) -> None:
    """Add each group's static-scale kernels (one per operator kernel), placed
    like them: INT8 output, the shift's work fused in, the same inputs; the
    shift's dependants wait for them too (one of the two versions is skipped).
    A group whose Shift is a re-run (:func:`retry_form`) already has the static
    kernels' form, split as the profiling found best: its copies are used."""
    by_id = rewrite.by_id()
    position = {record["id"]: i for i, record in enumerate(rewrite.records)}
    inserts: dict[int, list[dict]] = {}
    for group in groups:
        # the Shift as the trace gave it (its kernels may since be a re-run, split)
        shift_flops, int8_bytes = group.shift_flops, group.int8_bytes
        parts = [by_id[i] for i in group.compute]
        reruns = [by_id[i] for i in group.shift]
        rerun = all(r["op"] in _COMPUTE for r in reruns)
        forms = [dict(r) for r in reruns] if rerun else static_parts(parts, shift_flops,
                                                                     int8_bytes)
        previous = None
        for part, alt in zip(reruns if rerun else parts, forms):
            alt["id"] = rewrite.new_id()
            alt["name"] = f"{part['name']}.static"
            alt["deps"] = parts[0]["deps"] if previous is None else (previous,)
            target[alt["id"]] = target[part["id"]]
            group.static.append(alt["id"])
            inserts.setdefault(position[group.shift[-1]], []).append(alt)
            previous = alt["id"]
        # the Shift's dependants wait for the static version's output too: all its
        # parts (each holds a share of it) unless they are whole weight gradients
        outputs = tuple(group.static) if parts[-1]["pass"] != "bwd_weight" else (previous,)
        for record in rewrite.records:
            if group.shift[-1] in record["deps"]:
                record["deps"] = (*record["deps"], *outputs)
    records = []
    for i, record in enumerate(rewrite.records):
        records.append(record)
        records.extend(inserts.get(i, []))
    rewrite.records = records
