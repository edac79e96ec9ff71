"""``cappuccino``: RenderScript CNN inference synthesised by Cappuccino.

Per kernel, in each arithmetic mode the accuracy data allow, the policy
estimates the best output-level split (:mod:`.olp`) over

* the CPU clusters together (all their cores: RenderScript's CPU thread pool),
* in ``relaxed`` and ``imprecise`` mode also the GPU alone (RenderScript's GPU
  drivers do not run IEEE-exact scripts),

never a kernel split over the CPU clusters and the GPU at once: a RenderScript
context runs on one HAL driver (the reference CPU driver, or a vendor driver
such as Qualcomm's ``libRSDriver_adreno.so``, chosen per device by
``OVERRIDE_RS_DRIVER`` in its board configuration), which runs each launch on
the GPU or falls back to its CPU code, so one ``forEach`` never spans both
(``cross_device_split=True`` allows it, as an idealised OLP),

with the matching kernel library of each processor (``renderscript-<mode>``)
and, in imprecise mode, the vector code's idle lanes (:mod:`.vectors`). It
then picks a mode per layer under the accuracy-loss limit (:mod:`.modes`) and
rewrites the trace into the chosen parts. RenderScript launches one kernel at
a time, so the layers run in topological order (branches do not overlap).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated

from pydantic import Field

from simulator.errors import ConfigError
from simulator.policy import POLICIES, Job, Placement, Plan, Policy

from ..rewrite import Rewriter
from ..split import serialize
from .modes import MODES, Mode, choose_modes, load_accuracy
from .olp import Estimator, part_record
from .vectors import simd_waste


@POLICIES.register("cappuccino")
class Cappuccino(Policy):
    """Cappuccino's synthesised inference program.

    Args:
        mode: the most inexact mode allowed: ``exact`` (the paper's "parallel"
            column), ``relaxed`` or ``imprecise``.
        accuracy_loss: largest total top-1 accuracy loss allowed (fraction).
        map_major: feature maps stored map-major (False: planar, vectors along
            kernel rows).
        processors: processors to use (default: every CPU cluster and the GPU).
        accuracy: path of an accuracy table (default: the bundled
            ``policies/cappuccino/accuracy.yaml``).
        lanes: vector width in elements (float4).
        cross_device_split: let one kernel's outputs be split over the CPU
            clusters and the GPU together (not what RenderScript's runtime does).
    """

    name = "cappuccino"
    metrics_read_records = False  # its metrics are the modes it chose (self._chosen)
    conformance = {"params": {"mode": "imprecise", "accuracy_loss": 0.01},
                   "workload": {"model": "lenet5", "batch": 1}}

    def __init__(self, mode: Mode = "imprecise",
                 accuracy_loss: Annotated[float, Field(ge=0, le=1)] = 0.0,
                 map_major: bool = True, processors: list[str] | None = None,
                 accuracy: str | None = None, lanes: Annotated[int, Field(ge=1)] = 4,
                 cross_device_split: bool = False):
        self.mode = mode
        self.accuracy_loss = float(accuracy_loss)
        self.map_major = bool(map_major)
        self.processors = processors
        self.accuracy = accuracy
        self.lanes = lanes
        self.cross_device_split = bool(cross_device_split)
        self._table = load_accuracy(accuracy)
        self._chosen: dict[str, str] = {}
        self._loss = 0.0

    def _processor_sets(self, job: Job, mode: str, est: Estimator) -> list[list[Placement]]:
        names = list(self.processors or est.specs)
        for name in names:
            self.context.require_processor(name, job.device, path="processors")
        library = f"renderscript-{mode}"
        cpus = [Placement(n, est.specs[n].units, library=library)
                for n in names if n.startswith("cpu.")]
        others = [Placement(n, est.specs[n].units, library=library)
                  for n in names if not n.startswith("cpu.")]
        sets = [cpus] if cpus else []
        if mode != "exact":  # GPU drivers need relaxed or imprecise floats
            sets += [[p] for p in others]
            if cpus and others and self.cross_device_split:
                sets.append(cpus + others)
        return sets

    def _best(self, est: Estimator, record: dict, mode: str,
              sets: list[list[Placement]]) -> tuple[list, float, dict]:
        """Fastest processor set for ``record`` in ``mode`` (:meth:`Estimator.best`):
        (parts, seconds, the record as costed, with its idle vector lanes on that set)."""
        def costed(placements: list[Placement]) -> dict:
            # a set with CPU cores pays the CPU driver's lane-by-lane math on its
            # whole share (conservative for a mixed set's GPU part: the record is
            # costed once for all its parts)
            on_cpu = any(p.processor.startswith("cpu.") for p in placements)
            waste = (simd_waste(record, self.map_major, self.lanes, scalar_math=on_cpu)
                     if mode == "imprecise" else 0.0)
            return {**record, "simd_waste": waste}

        return est.best(record, sets, costed)

    def plan(self, job: Job) -> Plan:
        trace = serialize(job.trace)
        est = Estimator(self.context, job)
        records = trace.table.to_dict("records")
        modes = MODES[:MODES.index(self.mode) + 1]
        sets = {mode: self._processor_sets(job, mode, est) for mode in modes}
        options: list[dict[str, tuple[list, dict]]] = []
        layer_times: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for record in records:
            per_mode = {}
            for mode in modes:
                parts, seconds, rec = self._best(est, record, mode, sets[mode])
                if parts:
                    per_mode[mode] = (parts, rec)
                    layer_times[_layer(record)][mode] += seconds
            if "exact" not in per_mode:
                raise ConfigError(f"kernel {record['name']!r} cannot run on the chosen "
                                  "processors", path="processors")
            options.append(per_mode)
        model = str(records[0].get("model", "")) if records else ""
        losses = {layer: {m: loss for m in modes
                          if (loss := self._table.loss(model, layer, m)) is not None}
                  for layer in layer_times}
        # every kernel of a layer needs the mode for the layer to use it
        times = {layer: {m: t for m, t in per.items()
                         if all(m in options[r] for r, rec in enumerate(records)
                                if _layer(rec) == layer)}
                 for layer, per in layer_times.items()}
        self._chosen = choose_modes(times, losses, self.accuracy_loss)
        self._loss = sum(losses[layer].get(mode, 0.0) for layer, mode in self._chosen.items())
        rw = Rewriter(trace)
        for row, record in enumerate(records):
            parts, rec = options[row][self._chosen[_layer(record)]]
            deps = rw.inputs(row)
            ids = [rw.emit(part_record(rec, fraction) if len(parts) > 1 else rec, placement,
                           deps, name=f"{record['name']}[{i}]" if len(parts) > 1 else None)
                   for i, (placement, fraction) in enumerate(parts)]
            rw.finish(row, ids)
        new_trace, placements = rw.build(f"cappuccino {self.mode}")
        return Plan(placements, trace=new_trace)

    def metrics(self, result, iterations) -> dict[str, float]:
        modes = list(self._chosen.values())
        return {"cappuccino.inexact_layers": float(sum(m != "exact" for m in modes)),
                "cappuccino.layers": float(len(modes)),
                "cappuccino.accuracy_loss": self._loss}


def _layer(record: dict) -> str:
    layer = record.get("layer")
    return str(layer) if isinstance(layer, str) and layer else str(record["name"])
