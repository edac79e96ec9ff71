"""The fitted parameters and how they map onto the SoC description."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.hardware.cost import lookup
from simulator.spec.soc import SocSpec

CLUSTERS = {"a76": ("prime", "gold"), "a55": ("silver",)}


@dataclass(frozen=True)
class Param:
    """A fitted parameter. ``name``: ``<core>.<precision>.<op>`` (efficiency),
    ``<core>.dispatch`` (per-op cost) or ``<cluster>.parallel``."""

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
    Param("a76.int8.conv", 0.5, "", "A76 INT8 (SDOT) convolution efficiency"),
    Param("a76.int8.dwconv", 0.05, "", "A76 INT8 depthwise convolution efficiency"),
    Param("a55.fp32.conv", 0.5, "", "A55 FP32 convolution efficiency"),
    Param("a55.fp32.dwconv", 0.1, "", "A55 FP32 depthwise convolution efficiency"),
    Param("a55.int8.conv", 0.4, "", "A55 INT8 convolution efficiency"),
    Param("a55.int8.dwconv", 0.05, "", "A55 INT8 depthwise convolution efficiency"),
    Param("gpu.fp32.conv", 0.25, "", "Adreno 640 convolution efficiency"),
    Param("a76.dispatch", 100.0, "kcycles", "A76 per-operator fixed cost (core cycles)"),
    Param("a55.dispatch", 200.0, "us", "A55 per-operator fixed cost"),
    Param("gpu.offload", 300.0, "us", "GPU delegate per-transfer cost (input upload, output "
          "download)"),
    Param("gold.parallel", 0.7, "", "gold cluster parallel efficiency"),
    Param("silver.parallel", 0.9, "", "silver cluster parallel efficiency"),
]
PARAM_NAMES = [p.name for p in PARAMS]
# Read off the per-op GPU latencies instead of fitted end to end (see gpu_dwconv_from_ops).
DERIVED = ["gpu.fp32.dwconv"]


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
            if len(parts) == 3:
                updates[target]["efficiency"] = _set_efficiency(eff(target), parts[1], parts[2],
                                                                value)
            elif parts[1] == "dispatch":
                spec = processors[target]
                updates[target]["dispatch_overhead"] = (
                    value * 1e3 / spec.opps[-1].frequency if core == "a76" else value * 1e-6)
            elif parts[1] == "parallel":
                updates[target]["parallel_efficiency"] = value
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
        if len(parts) == 3:
            out[name] = lookup(proc.efficiency, parts[1], parts[2], "fwd")
        elif parts[1] == "dispatch":
            out[name] = (proc.dispatch_overhead * proc.opps[-1].frequency / 1e3
                         if core == "a76" else proc.dispatch_overhead * 1e6)
        elif parts[1] == "offload":
            out[name] = proc.offload.switch * 1e6
        else:
            out[name] = proc.parallel_efficiency
    return out


