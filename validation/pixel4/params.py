"""The fitted parameters and how they map onto the SoC description."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.hardware.cost import lookup
from simulator.spec.soc import SocSpec

CLUSTERS = {"a76": ("prime", "gold"), "a55": ("silver",)}


@dataclass(frozen=True)
class Param:
    """A fitted parameter. ``name``: ``<core>.<precision>.<op>`` (efficiency),
    ``<core>.dispatch`` (per-op cost), ``<core>.gemm_half`` / ``.group_half`` /
    ``.im2col`` (the processor fields ``gemm_half_channels``, ``group_half_channels``,
    ``im2col_bytes_per_cycle``) or ``<cluster>.parallel.<precision>``."""

    name: str
    start: float
    unit: str  # "" (fraction), "kcycles", "us"
    description: str

    @property
    def bounded(self) -> bool:
        """Fractions are capped at 1."""
        return self.unit == ""


PARAMS = [
    Param("a76.fp32.conv", 0.6, "", "A76 FP32 convolution efficiency (prime and gold)"),
    Param("a76.fp32.dwconv", 0.2, "", "A76 FP32 depthwise convolution efficiency"),
    Param("a76.fp32.group_conv", 0.05, "", "A76 FP32 grouped convolution efficiency "
          "(TFLite's single-threaded reference kernel)"),
    Param("a76.int8.conv", 0.5, "", "A76 INT8 (SDOT) convolution efficiency"),
    Param("a76.int8.dwconv", 0.05, "", "A76 INT8 depthwise convolution efficiency"),
    Param("a76.int8.group_conv", 0.02, "", "A76 INT8 grouped convolution efficiency"),
    Param("a55.fp32.conv", 0.5, "", "A55 FP32 convolution efficiency"),
    Param("a55.fp32.dwconv", 0.1, "", "A55 FP32 depthwise convolution efficiency"),
    Param("a55.fp32.group_conv", 0.05, "", "A55 FP32 grouped convolution efficiency"),
    Param("a55.int8.conv", 0.4, "", "A55 INT8 convolution efficiency"),
    Param("a55.int8.dwconv", 0.05, "", "A55 INT8 depthwise convolution efficiency"),
    Param("a55.int8.group_conv", 0.02, "", "A55 INT8 grouped convolution efficiency"),
    Param("a76.dispatch", 100.0, "kcycles", "A76 per-operator fixed cost (core cycles)"),
    Param("a55.dispatch", 200.0, "us", "A55 per-operator fixed cost"),
    Param("gpu.offload", 300.0, "us", "GPU delegate per-transfer cost (input upload, output "
          "download)"),
    Param("a76.gemm_half", 10.0, "channels", "A76 output channels at which a convolution "
          "reaches half its efficiency (input packing per call)"),
    Param("a55.gemm_half", 10.0, "channels", "A55 output channels at which a convolution "
          "reaches half its efficiency"),
    Param("a76.group_half", 10.0, "channels", "A76 input channels per group at which a "
          "grouped convolution reaches half its efficiency (reference kernel's inner loop)"),
    Param("a55.group_half", 10.0, "channels", "A55 input channels per group at which a "
          "grouped convolution reaches half its efficiency"),
    Param("a76.im2col", 8.0, "B/cycle", "A76 im2col copy rate: TFLite copies a kxk or strided "
          "convolution's input patches on the calling thread alone"),
    Param("a55.im2col", 8.0, "B/cycle", "A55 im2col copy rate (one thread)"),
    Param("gold.parallel.fp32", 0.7, "", "gold cluster parallel efficiency, FP32 kernels"),
    Param("gold.parallel.int8", 0.7, "", "gold cluster parallel efficiency, INT8 kernels"),
    Param("silver.parallel.fp32", 0.9, "", "silver cluster parallel efficiency, FP32 kernels"),
    Param("silver.parallel.int8", 0.9, "", "silver cluster parallel efficiency, INT8 kernels"),
]
PARAM_NAMES = [p.name for p in PARAMS]
# Fitted to the per-op GPU latencies (kernel classes), before and apart from the end-to-end fit
# (see validation.pixel4.fit.fit_gpu_ops). Depthwise, FC and pooling layers are memory-bound on
# the GPU in the cost model (FP32 bytes; the delegate may store FP16), so their efficiencies do
# not move these latencies and are not fitted.
GPU_PARAMS = [
    Param("gpu.fp32.conv", 0.25, "", "Adreno 640 convolution efficiency"),
    Param("gpu.fp32.group_conv", 0.2, "", "Adreno 640 grouped convolution efficiency"),
    Param("gpu.fp32.global_pool", 0.01, "", "Adreno 640 global pooling (MEAN) efficiency"),
    Param("gpu.dispatch", 5.0, "us", "Adreno 640 per-kernel launch cost"),
]
DERIVED = [p.name for p in GPU_PARAMS]


def _set_efficiency(table: dict, precision: str, op: str, value: float) -> dict:
    table = dict(table)
    if precision == "fp32":
        table[op] = value
    else:
        nested = dict(table.get(precision) or {})
        nested[op] = value
        table[precision] = nested
    return table


def apply_params(soc: SocSpec, values: dict[str, float]) -> SocSpec:
    """A copy of ``soc`` with fitted ``values`` (names of :data:`PARAMS`) in place."""
    processors = {f"cpu.{n}": p for n, p in soc.cpu.items()}
    processors["gpu"] = soc.gpu
    updates: dict[str, dict] = {name: {} for name in processors}

    def eff(name: str) -> dict:
        return updates[name].get("efficiency", processors[name].efficiency)

    for name, value in values.items():
        parts = name.split(".")
        core = parts[0]
        targets = ([f"cpu.{c}" for c in CLUSTERS[core]] if core in CLUSTERS
                   else ["gpu"] if core == "gpu" else [f"cpu.{core}"])
        for target in targets:
            if len(parts) == 3 and parts[1] != "parallel":
                updates[target]["efficiency"] = _set_efficiency(eff(target), parts[1], parts[2],
                                                                value)
            elif parts[1] == "dispatch":
                spec = processors[target]
                updates[target]["dispatch_overhead"] = (
                    value * 1e3 / spec.opps[-1].frequency if core == "a76" else value * 1e-6)
            elif parts[1] == "parallel":
                current = updates[target].get("parallel_efficiency",
                                              processors[target].parallel_efficiency)
                if not isinstance(current, dict):
                    current = {p: current for p in ("fp32", "int8")}
                updates[target]["parallel_efficiency"] = {**current, parts[2]: value}
            elif parts[1] == "gemm_half":
                updates[target]["gemm_half_channels"] = value
            elif parts[1] == "group_half":
                updates[target]["group_half_channels"] = value
            elif parts[1] == "im2col":
                updates[target]["im2col_bytes_per_cycle"] = value
            elif parts[1] == "offload":
                updates[target]["offload"] = processors[target].offload.model_copy(
                    update={"switch": value * 1e-6})
            else:
                raise KeyError(f"unknown parameter {name!r}")
    cpu = {n: p.model_copy(update=updates[f"cpu.{n}"]) for n, p in soc.cpu.items()}
    return soc.model_copy(update={"cpu": cpu, "gpu": soc.gpu.model_copy(update=updates["gpu"])})


def read_params(soc: SocSpec) -> dict[str, float]:
    """The current values of :data:`PARAMS` and :data:`DERIVED` in ``soc`` (the
    inverse of :func:`apply_params`)."""
    out = {}
    for name in PARAM_NAMES + DERIVED:
        parts = name.split(".")
        core = parts[0]
        proc = (soc.cpu[CLUSTERS[core][-1]] if core in CLUSTERS else
                soc.gpu if core == "gpu" else soc.cpu[core])
        if len(parts) == 3 and parts[1] != "parallel":
            out[name] = lookup(proc.efficiency, parts[1], parts[2], "fwd")
        elif parts[1] == "dispatch":
            out[name] = (proc.dispatch_overhead * proc.opps[-1].frequency / 1e3
                         if core == "a76" else proc.dispatch_overhead * 1e6)
        elif parts[1] == "offload":
            out[name] = proc.offload.switch * 1e6
        elif parts[1] == "gemm_half":
            out[name] = proc.gemm_half_channels
        elif parts[1] == "group_half":
            out[name] = proc.group_half_channels
        elif parts[1] == "im2col":
            out[name] = proc.im2col_bytes_per_cycle
        else:
            out[name] = proc.parallel(parts[2])
    return out


