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
* ``RPI4``: pytorch/tutorials ``intermediate_source/realtime_rpi.rst``, "Raspberry
  Pi 4 Benchmark Results", column "Model Time (ms/frame)": torchvision models in
  PyTorch (aarch64 CPU build, 1.10 at the time of the tutorial) on the Raspberry
  Pi 4's four Cortex-A72 cores (PyTorch's default: every core), 224x224 camera
  frames (Inception-v3 too), batch 1. The models without a ``qnnpack``
  pretrained variant (ResNet-18/50, GoogLeNet, Inception-v3, ShuffleNetV2 x0.5 to
  x2.0) run in FP32; MobileNetV2/V3 there are INT8 (not used). No PyTorch CPU
  latency of the Jetson's Carmel cores was found; these are PyTorch's own ARMv8
  NEON CPU kernels on another core with the same FP32 datapath (2 x 128-bit FMA
  pipes, 16 FLOP/cycle: Cortex-A72 and Carmel alike, U), so they are simulated on
  the Carmel's processor description moved to the Pi's host (:data:`HOSTS`:
  clock, cores, caches, DRAM) and fit the Carmel's PyTorch efficiencies.
"""

from __future__ import annotations

from dataclasses import dataclass

NCNN = "Tencent/ncnn benchmark/README.md, NVIDIA Jetson AGX Xavier (ncnn CPU FP32)"
TORCH2TRT = ("NVIDIA-AI-IOT/torch2trt docs/benchmarks/jetson_xavier.md "
             "(PyTorch eager FP16 on the GPU)")
U39KUN = "u39kun/deep-learning-benchmark README.md, PyTorch 0.3.0 on a GTX 1080 Ti"
CVBENCH = "linbo0518/CVBenchmarks README.md, MXNet 1.4.0 on a GTX 1080 Ti"
RPI4 = ("pytorch/tutorials intermediate_source/realtime_rpi.rst, PyTorch FP32 CPU on a "
        "Raspberry Pi 4 (4x Cortex-A72, 1.5 GHz)")


@dataclass(frozen=True)
class Host:
    """Another machine whose cores run the same kernels as a processor of ``soc``.

    A latency measured there is simulated with the processor's efficiencies and
    dispatch overhead (the framework's kernels) on this host's clock, cores,
    caches and DRAM (the hardware).

    Attributes:
        name: short name (in check keys).
        units: cores used.
        frequency_hz: core clock (Hz).
        l1_bytes: private L1 data cache per core.
        l2_bytes: L2 shared by the cores.
        dram_bytes_per_s: DRAM peak bandwidth.
        source: where the facts come from.
    """

    name: str
    units: int
    frequency_hz: float
    l1_bytes: int
    l2_bytes: int
    dram_bytes_per_s: float
    source: str


RPI4_HOST = Host(
    "rpi4", units=4, frequency_hz=1.5e9, l1_bytes=32 * 1024, l2_bytes=1024 * 1024,
    dram_bytes_per_s=12.8e9,
    source=("Raspberry Pi 4 Model B: BCM2711, 4x Cortex-A72 at 1.5 GHz (V, Raspberry Pi "
            "product brief); 32 KiB L1D per core, 1 MiB shared L2 (U, Raspberry Pi "
            "BCM2711 documentation as recalled); LPDDR4-3200 on a 32-bit bus = 12.8 GB/s "
            "(bus width U); the DRAM efficiency is the Xavier file's (E)"))
HOSTS = {RPI4_HOST.name: RPI4_HOST}


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
        host: measured on another machine (:data:`HOSTS`) with the same kernels.
        width: the model's width multiplier (ShuffleNetV2 x0.5 .. x2.0), if not 1.
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
    host: str | None = None
    width: float | None = None

    @property
    def key(self) -> str:
        """Short unique name:
        ``<soc>.<processor>.<model>[_x<width>][.<n>t][.b<batch>][.<host>].<precision>``."""
        width = f"_x{self.width:g}" if self.width else ""
        threads = f".{self.units}t" if self.units else ""
        batch = f".b{self.batch}" if self.batch != 1 else ""
        host = f".{self.host}" if self.host else ""
        return (f"{self.soc}.{self.processor}.{self.model}{width}{threads}{batch}{host}"
                f".{self.precision}")


XAVIER = "jetson-agx-xavier"
DESKTOP = "desktop-i7-1080ti"
_FUSED = ("ncnn: batch norm folded, activations fused, Winograd 3x3 convolutions, FP16 "
          "arithmetic on ARMv8.2 by default (U); faster than PyTorch eager: a lower bound")
_TC = ("compute-bound on the tensor cores (PyTorch runs FP16 convolutions with cuDNN's "
       "tensor-op math): fits the FP16 convolution efficiency with the dispatch-bound CNNs")
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
    # PyTorch's FP32 ARMv8 CPU kernels, measured on a Raspberry Pi 4 (4 threads).
    ClientRef(XAVIER, "cpu.carmel", "resnet18", 100.3, RPI4, units=4, host="rpi4"),
    ClientRef(XAVIER, "cpu.carmel", "resnet50", 225.2, RPI4, units=4, host="rpi4"),
    ClientRef(XAVIER, "cpu.carmel", "googlenet", 132.0, RPI4, units=4, host="rpi4"),
    ClientRef(XAVIER, "cpu.carmel", "inception_v3", 195.5, RPI4, units=4, host="rpi4",
              note="224x224 camera frames, not 299x299"),
    ClientRef(XAVIER, "cpu.carmel", "shufflenet_v2", 18.2, RPI4, units=4, host="rpi4",
              width=0.5),
    ClientRef(XAVIER, "cpu.carmel", "shufflenet_v2", 37.7, RPI4, units=4, host="rpi4"),
    ClientRef(XAVIER, "cpu.carmel", "shufflenet_v2", 56.3, RPI4, units=4, host="rpi4",
              width=1.5),
    ClientRef(XAVIER, "cpu.carmel", "shufflenet_v2", 82.7, RPI4, units=4, host="rpi4",
              width=2.0),
    # Jetson AGX Xavier GPU, PyTorch eager FP16 (torch2trt benchmark table).
    ClientRef(XAVIER, "gpu", "resnet18", 7.33, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "resnet50", 17.9, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "resnet152", 53.2, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "mobilenet_v2", 15.4, TORCH2TRT, precision="fp16"),
    ClientRef(XAVIER, "gpu", "vgg16", 16.5, TORCH2TRT, precision="fp16", note=_TC),
    ClientRef(XAVIER, "gpu", "vgg19", 18.7, TORCH2TRT, precision="fp16", fit=False,
              note=_TC + "; held out of the fit: a check of the tensor-core model"),
    # GTX 1080 Ti: PyTorch FP32 batch 16 (compute-bound) and MXNet FP32 batch 1.
    ClientRef(DESKTOP, "gpu", "vgg16", 39.3, U39KUN, batch=16, fit=False,
              note=_WINO + "; held out of the fit: a check of the Winograd model"),
    ClientRef(DESKTOP, "gpu", "resnet152", 57.8, U39KUN, batch=16),
    ClientRef(DESKTOP, "gpu", "mobilenet_v2", 3.91, CVBENCH, note="MXNet, not PyTorch"),
    ClientRef(DESKTOP, "gpu", "resnet50", 6.29, CVBENCH, note="MXNet, not PyTorch"),
)
