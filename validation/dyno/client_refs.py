"""Independent per-model latency measurements of DynO's client and server hardware.

Public benchmarks of the Jetson AGX Xavier and of the GTX 1080 Ti, typed in with
their sources; none comes from DynO's own paper or code (held out). Each entry
states what was measured: framework, precision, batch, threads, input size and
power mode. :mod:`validation.dyno.fit_clients` fits the SoC files' efficiencies and
dispatch overheads to the entries with ``fit=True``; the others are shown for
comparison only (the reason is in their ``note``).

Sources:

* ``NCNN``: Tencent/ncnn ``benchmark/README.md``, section "NVIDIA Jetson AGX
  Xavier": ``benchncnn 8 4 2 -1 1`` (4 threads) and ``benchncnn 8 1 2 -1 1``
  (1 thread), CPU only, FP32, batch 1, 224x224 ncnn model zoo graphs (batch norm
  folded into the convolutions, activations fused), average of 8 loops. The power
  mode is not stated; read as MAXN (E).
* ``TORCH2TRT``: NVIDIA-AI-IOT/torch2trt ``docs/benchmarks/jetson_xavier.md``
  ("Jetson Xavier", AGX by the repository's other tables; U): torchvision models
  in PyTorch eager mode on the GPU, ``float16``, batch 1, 224x224, latency column
  "Latency (PyTorch)". Power mode not stated (MAXN read, E). TensorRT latencies of
  the same table are an upper bound on the hardware, not used.
* ``U39KUN``: u39kun/deep-learning-benchmark ``README.md``, "PyTorch 0.3.0 /
  1080 Ti": one forward pass ("eval") of torchvision VGG16 and ResNet-152, FP32,
  batch 16, 224x224, CUDA 9.0, cuDNN 7.0, mean of 20 passes after 20 warm-ups.
* ``CVBENCH``: linbo0518/CVBenchmarks ``README.md``, "GeForce GTX 1080 Ti"
  section: MXNet 1.4.0 (gluon-cv models), CUDA 10.0, cuDNN 7.5, FP32, batch 1,
  1x3x224x224, "GPU time(ms)". MXNet, not PyTorch: an eager-style framework with
  a per-operator launch cost of the same kind.
"""

from __future__ import annotations

from dataclasses import dataclass

NCNN = "Tencent/ncnn benchmark/README.md, NVIDIA Jetson AGX Xavier (ncnn CPU FP32)"
TORCH2TRT = ("NVIDIA-AI-IOT/torch2trt docs/benchmarks/jetson_xavier.md "
             "(PyTorch eager FP16 on the GPU)")
U39KUN = "u39kun/deep-learning-benchmark README.md, PyTorch 0.3.0 on a GTX 1080 Ti"
CVBENCH = "linbo0518/CVBenchmarks README.md, MXNet 1.4.0 on a GTX 1080 Ti"


@dataclass(frozen=True)
class ClientRef:
    """One measured latency.

    Attributes:
        soc: SoC file (with ``@variant`` for a power mode).
        processor: processor path in the SoC (``cpu.carmel``, ``gpu``).
        model: zoo model name.
        latency_ms: the measured latency of one forward pass (ms).
        source: where it was published (one of the module constants).
        units: cores (threads) used; ``None`` = all of the processor's units.
        batch: samples per forward pass.
        input_size: input height = width (pixels).
        precision: ``fp32`` or ``fp16`` (of the measured run and of the trace).
        fit: used by the fit (else shown for comparison only).
        lower_bound: the measurement is a lower bound of the simulated PyTorch-like
            latency (a faster framework), not a target; the Carmel's ncnn runs fit
            only the parallel efficiency through their 1-thread / 4-thread ratios.
        note: what differs from the simulated setup.
    """

    soc: str
    processor: str
    model: str
    latency_ms: float
    source: str
    units: int | None = None
    batch: int = 1
    input_size: int = 224
    precision: str = "fp32"
    fit: bool = True
    lower_bound: bool = False
    note: str = ""

    @property
    def key(self) -> str:
        """Short unique name: ``<soc>.<processor>.<model>[.<n>t][.b<batch>].<precision>``."""
        threads = f".{self.units}t" if self.units else ""
        batch = f".b{self.batch}" if self.batch != 1 else ""
        return f"{self.soc}.{self.processor}.{self.model}{threads}{batch}.{self.precision}"


XAVIER = "jetson-agx-xavier"
DESKTOP = "desktop-i7-1080ti"
_FUSED = ("ncnn: batch norm folded, activations fused, Winograd 3x3 convolutions, FP16 "
          "arithmetic on ARMv8.2 by default (U); faster than PyTorch eager: a lower bound")
_TC = ("FP16 on Volta uses the tensor cores (not modelled: FP32 PyTorch does not); "
       "compute-bound, so not a dispatch-overhead figure")
_WINO = ("faster than the FP32 peak allows for direct convolution (cuDNN Winograd/FFT "
         "3x3 algorithms, not modelled): not fitted")

REFS: tuple[ClientRef, ...] = (
    # Jetson AGX Xavier Carmel CPU, ncnn FP32 (avg of 8 loops).
    ClientRef(XAVIER, "cpu.carmel", "mobilenet_v2", 14.23, NCNN, units=4, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "resnet18", 30.45, NCNN, units=4, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "googlenet", 34.11, NCNN, units=4, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "resnet50", 75.47, NCNN, units=4, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "vgg16", 121.46, NCNN, units=4, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "mobilenet_v2", 36.66, NCNN, units=1, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "resnet18", 90.10, NCNN, units=1, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "googlenet", 97.71, NCNN, units=1, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "resnet50", 244.09, NCNN, units=1, lower_bound=True,
              note=_FUSED),
    ClientRef(XAVIER, "cpu.carmel", "vgg16", 395.76, NCNN, units=1, lower_bound=True,
              note=_FUSED),
    # Jetson AGX Xavier GPU, PyTorch eager FP16 (torch2trt benchmark table).
    ClientRef(XAVIER, "gpu", "resnet18", 7.33, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "resnet50", 17.9, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "resnet152", 53.2, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "mobilenet_v2", 15.4, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "vgg16", 16.5, TORCH2TRT, precision="fp16", fit=False,
              note=_TC),
    ClientRef(XAVIER, "gpu", "vgg19", 18.7, TORCH2TRT, precision="fp16", fit=False,
              note=_TC),
    # GTX 1080 Ti: PyTorch FP32 batch 16 (compute-bound) and MXNet FP32 batch 1.
    ClientRef(DESKTOP, "gpu", "vgg16", 39.3, U39KUN, batch=16, fit=False, note=_WINO),
    ClientRef(DESKTOP, "gpu", "resnet152", 57.8, U39KUN, batch=16),
    ClientRef(DESKTOP, "gpu", "mobilenet_v2", 3.91, CVBENCH, note="MXNet, not PyTorch"),
    ClientRef(DESKTOP, "gpu", "resnet50", 6.29, CVBENCH, note="MXNet, not PyTorch"),
)
