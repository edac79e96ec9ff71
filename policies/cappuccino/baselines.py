"""Cappuccino's baselines: single-threaded Java and a CNNdroid-like GPU program.

* ``single-thread``: the paper's baseline, a single-threaded Java program:
  every kernel on one core, one operator at a time, costed with the core's
  ``java`` kernel library (scalar code times an interpretation overhead, the
  one number fitted on the Nexus 5; see ``socs/snapdragon800.yaml``).
* ``cnndroid``: CNNdroid (Latifi Oskouei et al., ACM MM 2016) runs the
  convolution and fully connected layers as RenderScript kernels on the GPU
  and the other layers on the CPU cores. Its vector code runs along kernel
  rows (no map-major order), so lanes idle at row ends (:mod:`.vectors`).
"""

from __future__ import annotations

from simulator.errors import ConfigError
from simulator.policy import POLICIES, Job, Placement, Plan, Policy

from ..rewrite import Rewriter
from ..split import serialize
from .olp import Estimator, part_record
from .vectors import VECTOR_OPS, simd_waste


@POLICIES.register("single-thread")
class SingleThread(Policy):
    """Everything on one core, one kernel at a time, with a scalar library.

    Args:
        processor: CPU cluster (default: the device's first).
        library: the kernel library costing it (``java``).
    """

    name = "single-thread"
    conformance = {"params": {"processor": "cpu.gold"}, "workload": {"model": "lenet5"}}

    def __init__(self, processor: str | None = None, library: str = "java"):
        self.processor = processor
        self.library = library

    def plan(self, job: Job) -> Plan:
        specs = self.context.processors(job.device)
        processor = self.processor or next((n for n in specs if n.startswith("cpu.")),
                                           next(iter(specs)))
        self.context.require_processor(processor, job.device)
        placement = Placement(processor, 1, library=self.library)
        trace = serialize(job.trace)
        return Plan([placement] * len(trace), trace=trace)


@POLICIES.register("cnndroid")
class CnnDroid(Policy):
    """Convolutions and FC layers on the GPU (vector code along kernel rows), the
    rest on the CPU clusters, one layer at a time.

    Args:
        gpu: the GPU processor.
        cpu: CPU clusters for the other layers (default: all).
        library: RenderScript mode of the GPU kernels.
        cpu_library: library of the CPU layers.
        lanes: vector width (float4).
    """

    name = "cnndroid"
    conformance = {"params": {}, "workload": {"model": "lenet5"}}

    def __init__(self, gpu: str = "gpu", cpu: list[str] | None = None,
                 library: str = "renderscript-imprecise",
                 cpu_library: str = "renderscript-relaxed", lanes: int = 4):
        self.gpu = gpu
        self.cpu = cpu
        self.library = library
        self.cpu_library = cpu_library
        self.lanes = lanes

    def plan(self, job: Job) -> Plan:
        est = Estimator(self.context, job)
        self.context.require_processor(self.gpu, job.device, path="gpu")
        clusters = self.cpu or [n for n in est.specs if n.startswith("cpu.")]
        for name in clusters:
            self.context.require_processor(name, job.device, path="cpu")
        cpus = [Placement(n, est.specs[n].units, library=self.cpu_library) for n in clusters]
        gpu = Placement(self.gpu, est.specs[self.gpu].units, library=self.library)
        trace = serialize(job.trace)
        rw = Rewriter(trace)
        for row in range(len(trace)):
            record = rw.record(row)
            deps = rw.inputs(row)
            if record["op"] in VECTOR_OPS and est.time(record, gpu) < float("inf"):
                record["simd_waste"] = simd_waste(record, map_major=False, lanes=self.lanes)
                rw.finish(row, [rw.emit(record, gpu, deps)])
                continue
            parts, _ = est.split(record, cpus)
            if not parts:
                raise ConfigError(f"kernel {record['name']!r} cannot run on {clusters}",
                                  path="cpu")
            rw.finish(row, [rw.emit(part_record(record, f) if len(parts) > 1 else record, p,
                                    deps) for p, f in parts])
        new_trace, placements = rw.build("cnndroid")
        return Plan(placements, trace=new_trace)
