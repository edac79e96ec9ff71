"""The baselines of the Mandheling paper: framework training on the CPU or the GPU.

* ``tflite-fp32`` / ``mnn-fp32``: FP32 training on a CPU thread pool with the
  framework's kernels (its ``libraries`` table on the cores, when the SoC has
  one) and the framework's own operators (``workloads/frameworks``: MNN's
  decomposed batch norm, im2col weight gradients, SGD passes, ...);
* ``mnn-int8``: the integer algorithm Mandheling uses (NITI by default) run
  by MNN on the CPU with NEON;
* ``mnn-gpu``: FP32 training through MNN's OpenCL backend, on MNN's own
  training operators (``workloads/frameworks/mnn.yaml``, as the CPU baselines:
  no fused backward kernels). Its low GPU utilisation in training (30-50 % in
  the paper) comes from the ``mnn`` table of the GPU: a per-kernel
  synchronisation cost (the backend finishes the command queue and maps
  buffers after each training operator) and poor weight-gradient kernels. A step whose tensors do not fit the GPU's
  ``memory_budget`` raises :class:`~simulator.errors.OutOfMemory` (a result
  with status ``oom``, as VGG-19 on ImageNet in the paper).

All run one operator at a time in trace order, like the frameworks.
"""

from __future__ import annotations

from simulator.errors import ConfigError, OutOfMemory
from simulator.policy import POLICIES, Job, Placement, Plan, Policy
from simulator.trace import Trace
from workloads.frameworks import apply_framework

from ..split import serialize, split_across
from .cpu import CpuConfig, CpuFreq, pin_frequency, thread_pool
from .workload import fp32_trace, integer_trace, peak_memory

TRAINING = {"model": "lenet5", "mode": "training", "batch": 4}


class CpuTraining(Policy):
    """A framework training on a CPU thread pool (base class).

    Args:
        cpu: thread pool (``big4``, ``big2``, ``big1``, ``little4``, ``little1``, ``all8``).
        cpu_freq: ``max``, ``min`` (the lowest frequency the phone's OS allows) or
            ``governor`` (the experiment's).
    """

    library = ""  # kernel-library table of the cores, and framework file, of this name
    conformance = {"params": {"cpu": "big2"}, "workload": TRAINING}

    def __init__(self, cpu: CpuConfig = "big4", cpu_freq: CpuFreq = "governor"):
        self.cpu = cpu
        self.cpu_freq = cpu_freq

    def training_trace(self, job: Job) -> Trace:
        return fp32_trace(job, self.name)

    def plan(self, job: Job) -> Plan:
        trace = serialize(apply_framework(self.training_trace(job), self.library))
        pin_frequency(self.context, job.device, self.cpu_freq)
        pool = thread_pool(self.context.processors(job.device), self.cpu, self.library)
        if len(pool) == 1:
            return Plan([pool[0][0]] * len(trace), trace=trace)
        split, placements = split_across(trace, pool)
        return Plan(placements, trace=split)


@POLICIES.register("tflite-fp32")
class TfliteFp32(CpuTraining):
    """FP32 training with TFLite's CPU kernels (``tflite`` tables)."""

    name = "tflite-fp32"
    library = "tflite"


@POLICIES.register("mnn-fp32")
class MnnFp32(CpuTraining):
    """FP32 training with MNN's CPU kernels (``mnn`` tables)."""

    name = "mnn-fp32"
    library = "mnn"


@POLICIES.register("mnn-int8")
class MnnInt8(CpuTraining):
    """Integer training (an algorithm of ``workloads/algorithms``) with MNN on the CPU.

    Args:
        cpu: thread pool, as for ``mnn-fp32``.
        cpu_freq: ``max``, ``min`` or ``governor``.
        algorithm: the integer training algorithm applied to an FP32 workload.
    """

    name = "mnn-int8"
    library = "mnn"

    def __init__(self, cpu: CpuConfig = "big4", cpu_freq: CpuFreq = "governor",
                 algorithm: str = "niti"):
        super().__init__(cpu, cpu_freq)
        self.algorithm = algorithm

    def training_trace(self, job: Job) -> Trace:
        return integer_trace(job, self.algorithm)


@POLICIES.register("mnn-gpu")
class MnnGpu(Policy):
    """FP32 training on the GPU with MNN's OpenCL backend.

    Args:
        processor: the GPU.
    """

    name = "mnn-gpu"
    library = "mnn"
    conformance = {"params": {}, "workload": TRAINING}

    def __init__(self, processor: str = "gpu"):
        self.processor = processor

    def plan(self, job: Job) -> Plan:
        specs = self.context.processors(job.device)
        if self.processor not in specs:
            raise ConfigError(f"this SoC has no {self.processor!r}", path="processor")
        spec = specs[self.processor]
        # MNN's OpenCL backend trains the same graph as its CPU backend: MNN's own
        # training operators (decomposed batch norm, im2col/col2im gradients, SGD
        # passes per parameter), each a kernel launch the backend synchronises after
        trace = serialize(apply_framework(fp32_trace(job, self.name), self.library))
        need = peak_memory(trace)
        if spec.memory_budget is not None and need > spec.memory_budget:
            raise OutOfMemory(f"{self.name}: one training step needs {need / 2**30:.2f} GiB "
                              f"on {self.processor}; its budget is "
                              f"{spec.memory_budget / 2**30:.2f} GiB")
        placement = Placement(self.processor, spec.units, library=self.library)
        return Plan([placement] * len(trace), trace=trace)
