"""The study's fitted parameters: the fitting engine's parameters
(:mod:`validation.fitting.params`, named by YAML path) with the study's short names,
fixed starting values and display units."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.library import soc_path
from simulator.spec.soc import SocSpec
from simulator.spec.yamlio import read_yaml, validate
from validation.fitting.params import Parameter, apply, parse, plain
from validation.pixel4.data import SOC

# display unit -> seconds per unit ("kcycles": per 1000 cycles of the first processor's
# top clock, so tied A76 clusters get the same cycles); other units are the YAML's own
_SECONDS = {"us": 1e-6}


@dataclass(frozen=True)
class Param:
    """A fitted parameter. ``name``: the study's short name (``a76.fp32.conv``);
    ``path``: the fitting engine's name (``cpu.prime+gold.efficiency.fp32.conv``,
    :func:`validation.fitting.params.parse`); ``start``: where every fit starts, in
    ``unit`` (fixed, so a fit does not depend on the committed file)."""

    name: str
    path: str
    start: float
    unit: str  # "" (fraction), "kcycles", "us", "channels", "B/cycle"
    description: str

    @property
    def bounded(self) -> bool:
        """Fractions are capped at 1."""
        return self.unit == ""

    def scale(self, soc: SocSpec, param: Parameter) -> float:
        """The YAML unit (seconds for times) per display unit."""
        if self.unit == "kcycles":
            return 1e3 / soc.processors()[param.processors[0]].opps[-1].frequency
        return _SECONDS.get(self.unit, 1.0)


A76, A55 = "cpu.prime+gold", "cpu.silver"
PARAMS = [
    Param("a76.fp32.conv", f"{A76}.efficiency.fp32.conv", 0.6, "",
          "A76 FP32 convolution efficiency (prime and gold)"),
    Param("a76.fp32.dwconv", f"{A76}.efficiency.fp32.dwconv", 0.2, "",
          "A76 FP32 depthwise convolution efficiency"),
    Param("a76.fp32.group_conv", f"{A76}.efficiency.fp32.group_conv", 0.05, "",
          "A76 FP32 grouped convolution efficiency (TFLite's single-threaded reference kernel)"),
    Param("a76.int8.conv", f"{A76}.efficiency.int8.conv", 0.5, "",
          "A76 INT8 (SDOT) convolution efficiency"),
    Param("a76.int8.dwconv", f"{A76}.efficiency.int8.dwconv", 0.05, "",
          "A76 INT8 depthwise convolution efficiency"),
    Param("a76.int8.group_conv", f"{A76}.efficiency.int8.group_conv", 0.02, "",
          "A76 INT8 grouped convolution efficiency"),
    Param("a55.fp32.conv", f"{A55}.efficiency.fp32.conv", 0.5, "",
          "A55 FP32 convolution efficiency"),
    Param("a55.fp32.dwconv", f"{A55}.efficiency.fp32.dwconv", 0.1, "",
          "A55 FP32 depthwise convolution efficiency"),
    Param("a55.fp32.group_conv", f"{A55}.efficiency.fp32.group_conv", 0.05, "",
          "A55 FP32 grouped convolution efficiency"),
    Param("a55.int8.conv", f"{A55}.efficiency.int8.conv", 0.4, "",
          "A55 INT8 convolution efficiency"),
    Param("a55.int8.dwconv", f"{A55}.efficiency.int8.dwconv", 0.05, "",
          "A55 INT8 depthwise convolution efficiency"),
    Param("a55.int8.group_conv", f"{A55}.efficiency.int8.group_conv", 0.02, "",
          "A55 INT8 grouped convolution efficiency"),
    Param("a76.dispatch", f"{A76}.dispatch_overhead", 100.0, "kcycles",
          "A76 per-operator fixed cost (core cycles)"),
    Param("a55.dispatch", f"{A55}.dispatch_overhead", 200.0, "us",
          "A55 per-operator fixed cost"),
    Param("gpu.offload", "gpu.offload.switch", 300.0, "us",
          "GPU delegate per-transfer cost (input upload, output download)"),
    Param("a76.gemm_half", f"{A76}.gemm_half_channels", 10.0, "channels",
          "A76 output channels at which a convolution reaches half its efficiency "
          "(input packing per call)"),
    Param("a55.gemm_half", f"{A55}.gemm_half_channels", 10.0, "channels",
          "A55 output channels at which a convolution reaches half its efficiency"),
    Param("a76.group_half", f"{A76}.group_half_channels", 10.0, "channels",
          "A76 input channels per group at which a grouped convolution reaches half its "
          "efficiency (reference kernel's inner loop)"),
    Param("a55.group_half", f"{A55}.group_half_channels", 10.0, "channels",
          "A55 input channels per group at which a grouped convolution reaches half its "
          "efficiency"),
    Param("a76.im2col", f"{A76}.im2col_bytes_per_cycle", 8.0, "B/cycle",
          "A76 im2col copy rate: TFLite copies a kxk or strided convolution's input patches "
          "on the calling thread alone"),
    Param("a55.im2col", f"{A55}.im2col_bytes_per_cycle", 8.0, "B/cycle",
          "A55 im2col copy rate (one thread)"),
    Param("gold.parallel.fp32", "cpu.gold.parallel_efficiency.fp32", 0.7, "",
          "gold cluster parallel efficiency, FP32 kernels"),
    Param("gold.parallel.int8", "cpu.gold.parallel_efficiency.int8", 0.7, "",
          "gold cluster parallel efficiency, INT8 kernels"),
    Param("silver.parallel.fp32", "cpu.silver.parallel_efficiency.fp32", 0.9, "",
          "silver cluster parallel efficiency, FP32 kernels"),
    Param("silver.parallel.int8", "cpu.silver.parallel_efficiency.int8", 0.9, "",
          "silver cluster parallel efficiency, INT8 kernels"),
]
PARAM_NAMES = [p.name for p in PARAMS]
# Fitted to the per-op GPU latencies (kernel classes), before and apart from the end-to-end fit
# (see validation.pixel4.fit.fit_gpu_ops). Depthwise, FC and pooling layers are memory-bound on
# the GPU in the cost model (FP32 bytes; the delegate may store FP16), so their efficiencies do
# not move these latencies and are not fitted.
GPU_PARAMS = [
    Param("gpu.fp32.conv", "gpu.efficiency.fp32.conv", 0.25, "",
          "Adreno 640 convolution efficiency"),
    Param("gpu.fp32.group_conv", "gpu.efficiency.fp32.group_conv", 0.2, "",
          "Adreno 640 grouped convolution efficiency"),
    Param("gpu.fp32.global_pool", "gpu.efficiency.fp32.global_pool", 0.01, "",
          "Adreno 640 global pooling (MEAN) efficiency"),
    Param("gpu.dispatch", "gpu.dispatch_overhead", 5.0, "us", "Adreno 640 per-kernel launch cost"),
]
DERIVED = [p.name for p in GPU_PARAMS]
_BY_NAME = {p.name: p for p in PARAMS + GPU_PARAMS}


@dataclass(frozen=True)
class Base:
    """A SoC description as the fitting engine edits it: the plain YAML mapping and its
    validated spec (:func:`validation.fitting.params.apply`)."""

    raw: dict
    soc: SocSpec


def load_base(name: str = SOC) -> Base:
    """The shipped description ``name`` (default the Snapdragon 855)."""
    path = soc_path(name)
    raw = plain(read_yaml(path))
    return Base(raw, validate(SocSpec, raw, file=str(path)))


def resolve(names: list[str], soc: SocSpec) -> tuple[list[Parameter], list[float]]:
    """(the fitting engine's parameters, YAML units per display unit) of ``names`` (short
    names of :data:`PARAMS` and :data:`GPU_PARAMS`) on ``soc``."""
    params, scales = [], []
    for name in names:
        if name not in _BY_NAME:
            raise KeyError(f"unknown parameter {name!r}")
        params.append(parse(_BY_NAME[name].path, soc))
        scales.append(_BY_NAME[name].scale(soc, params[-1]))
    return params, scales


def apply_params(base: Base, values: dict[str, float]) -> Base:
    """A copy of ``base`` with fitted ``values`` (short names, display units) in place."""
    params, scales = resolve(list(values), base.soc)
    return Base(*apply(base.raw, base.soc, params,
                       [v * s for v, s in zip(values.values(), scales)]))


def read_params(soc: SocSpec) -> dict[str, float]:
    """The current values of :data:`PARAMS` and :data:`DERIVED` in ``soc``, display units
    (the inverse of :func:`apply_params`)."""
    names = PARAM_NAMES + DERIVED
    params, scales = resolve(names, soc)
    return {n: p.value(soc) / s for n, p, s in zip(names, params, scales)}
