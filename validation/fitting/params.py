"""Fittable parameters of a SoC description, named by their YAML path.

A parameter name is ``<processor>.<field>``:

* ``<processor>``: ``cpu.<cluster>``, ``gpu``, ``dsp``, ``npu``, or several CPU
  clusters tied together, ``cpu.prime+gold`` (one value for clusters of the same
  core: one efficiency table, the same per-operator cycles);
* ``<field>``:

  - ``efficiency.<precision>.<op kind>``: fraction of the precision's peak a
    kernel kind reaches (``efficiency.fp32.conv``), bounds (1e-4, 1];
  - ``memory_efficiency.<precision>.<op kind>``: fraction of each memory level's
    bandwidth a kernel kind reaches, (1e-3, 1];
  - ``parallel_efficiency.<precision>``: the speed-up each further core adds, (0.01, 1];
  - ``dispatch_overhead``: fixed seconds per operator, [0.1 us, 100 ms]; tied
    clusters get the same cycles (seconds scale with their top clocks);
  - ``gemm_half_channels``: output channels at which a convolution reaches half
    its efficiency, [0.1, 1000];
  - ``group_half_channels``: input channels per group at which a grouped
    convolution reaches half its efficiency, [0.1, 1000];
  - ``im2col_bytes_per_cycle``: bytes per clock cycle of the serial im2col copy
    before a CPU's kxk or strided convolution, [0.1, 1000];
  - ``offload.switch``: seconds per host transfer of an accelerator, [1 us, 100 ms];
  - ``power.ceff``: switched capacitance per core (F), needs energy rows;

* or ``memory.<name>.efficiency``: the sustained fraction of a memory's bandwidth
  (``memory.dram.efficiency``), (0.05, 1].

Values are fitted in log space within these bounds (physical limits: a fraction
cannot exceed 1, a cost cannot be negative), so a fit never leaves them.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass

from simulator.errors import ConfigError
from simulator.hardware.cost import lookup
from simulator.ops import OP_KINDS, PRECISIONS
from simulator.spec.soc import SocSpec
from simulator.spec.yamlio import validate

# field -> (unit, lower, upper, start when the base value is outside the bounds)
KINDS = {
    "efficiency": ("", 1e-4, 1.0, 0.3),
    "memory_efficiency": ("", 1e-3, 1.0, 0.5),
    "parallel_efficiency": ("", 0.01, 1.0, 0.8),
    "dispatch_overhead": ("s", 1e-7, 0.1, 20e-6),
    "gemm_half_channels": ("channels", 0.1, 1000.0, 10.0),
    "group_half_channels": ("channels", 0.1, 1000.0, 10.0),
    "im2col_bytes_per_cycle": ("B/cycle", 0.1, 1000.0, 8.0),
    "offload.switch": ("s", 1e-6, 0.1, 100e-6),
    "power.ceff": ("F", 1e-12, 1e-8, 0.3e-9),
    "memory.efficiency": ("", 0.05, 1.0, 0.8),
}


@dataclass(frozen=True)
class Parameter:
    """One fitted number and where it goes.

    Attributes:
        name: as written by the user (see the module docstring).
        kind: key of :data:`KINDS`.
        processors: processor names it sets (``cpu.prime``, ``gpu``), empty for memory.
        path: the YAML path under each processor (or the memory), e.g.
            ``("efficiency", "int8", "conv")``.
    """

    name: str
    kind: str
    processors: tuple[str, ...]
    path: tuple[str, ...]

    @property
    def unit(self) -> str:
        return KINDS[self.kind][0]

    @property
    def bounds(self) -> tuple[float, float]:
        return KINDS[self.kind][1], KINDS[self.kind][2]

    @property
    def energy(self) -> bool:
        """Only energy measurements move it."""
        return self.kind == "power.ceff"

    def value(self, soc: SocSpec) -> float:
        """The value the cost model uses now (the first processor's, for tied ones)."""
        if self.kind == "memory.efficiency":
            return soc.memory[self.path[0]].efficiency
        proc = soc.processors()[self.processors[0]]
        if self.kind in ("efficiency", "memory_efficiency"):
            return lookup(getattr(proc, self.kind), self.path[1], self.path[2], "fwd")
        if self.kind == "parallel_efficiency":
            return proc.parallel(self.path[1])
        if self.kind == "offload.switch":
            return proc.offload.switch
        if self.kind == "power.ceff":
            return proc.power.ceff
        return float(getattr(proc, self.kind))

    def start(self, soc: SocSpec) -> float:
        """Starting value: the base's, or the kind's default when outside the bounds."""
        value = self.value(soc)
        lower, upper = self.bounds
        return value if lower <= value <= upper else KINDS[self.kind][3]

    def set(self, raw: dict, soc: SocSpec, value: float, digits: int | None = None) -> None:
        """Write ``value`` into the raw SoC mapping ``raw`` (in place); with ``digits``,
        rounded to that many significant digits in a readable unit (us, nF)."""
        if self.kind == "memory.efficiency":
            raw["memory"][self.path[0]]["efficiency"] = _quantity(value, "", digits)
            return
        specs = soc.processors()
        first = specs[self.processors[0]].opps[-1].frequency
        for name in self.processors:
            node = _processor_node(raw, name)
            if self.kind == "dispatch_overhead":
                # tied clusters share cycles: seconds scale with each one's top clock
                node["dispatch_overhead"] = _quantity(
                    value * first / specs[name].opps[-1].frequency, "s", digits)
            elif self.kind == "parallel_efficiency":
                current = node.get("parallel_efficiency", 1.0)
                if not isinstance(current, dict):
                    current = {p: current for p in PRECISIONS}
                node["parallel_efficiency"] = {**current,
                                               self.path[1]: _quantity(value, "", digits)}
            elif self.kind in ("efficiency", "memory_efficiency"):
                table = node.setdefault(self.kind, {})
                _, precision, op = self.path
                if precision != "fp32":
                    table = table.setdefault(precision, {})
                table[op] = _quantity(value, "", digits)
            elif self.kind in ("offload.switch", "power.ceff"):
                node[self.path[0]][self.path[1]] = _quantity(value, self.unit, digits)
            else:
                node[self.kind] = _quantity(value, self.unit, digits)

    def yaml_paths(self) -> list[tuple[str, ...]]:
        """The YAML paths the value is written at (for provenance comments)."""
        if self.kind == "memory.efficiency":
            return [("memory", self.path[0], "efficiency")]
        out = []
        for name in self.processors:
            base = tuple(name.split("."))
            path = self.path
            if self.kind in ("efficiency", "memory_efficiency") and path[1] == "fp32":
                path = (path[0], path[2])
            out.append(base + path)
        return out


def parse(name: str, soc: SocSpec) -> Parameter:
    """The :class:`Parameter` called ``name`` on ``soc``.

    Raises:
        ConfigError: unknown processor, field, precision or op kind (path ``--params``).
    """
    def bad(message: str) -> ConfigError:
        return ConfigError(f"{name!r}: {message}", path="--params")

    parts = name.split(".")
    if parts[0] == "memory":
        if len(parts) != 3 or parts[2] != "efficiency" or parts[1] not in soc.memory:
            raise bad(f"expected memory.<{'|'.join(soc.memory)}>.efficiency")
        return Parameter(name, "memory.efficiency", (), (parts[1],))
    if parts[0] == "cpu":
        if len(parts) < 3:
            raise bad("expected cpu.<cluster>.<field>")
        clusters = parts[1].split("+")
        processors = tuple(f"cpu.{c}" for c in clusters)
        rest = parts[2:]
    else:
        processors, rest = (parts[0],), parts[1:]
    specs = soc.processors()
    for proc in processors:
        if proc not in specs:
            raise bad(f"no processor {proc!r} in SoC {soc.name!r} (has {', '.join(specs)})")
    field = ".".join(rest[:2]) if rest[:1] in (["offload"], ["power"]) else rest[0] if rest else ""
    if field not in KINDS or field == "memory.efficiency":
        raise bad(f"unknown field {'.'.join(rest)!r}; fittable: "
                  + ", ".join(k for k in KINDS if k != "memory.efficiency"))
    needed = {"efficiency": 3, "memory_efficiency": 3, "parallel_efficiency": 2}.get(
        field, len(field.split(".")))
    if len(rest) != needed:
        raise bad(f"{field} takes {needed - 1} more part(s): "
                  + {3: f"{field}.<precision>.<op kind>", 2: f"{field}.<precision>"}.get(
                      needed, field))
    if field in ("efficiency", "memory_efficiency", "parallel_efficiency") and \
            rest[1] not in PRECISIONS:
        raise bad(f"unknown precision {rest[1]!r} (one of {', '.join(PRECISIONS)})")
    if needed == 3 and rest[2] not in OP_KINDS:
        raise bad(f"unknown op kind {rest[2]!r}")
    if field == "offload.switch" and any(specs[p].offload is None for p in processors):
        raise bad("the processor has no offload (host transfers) to fit")
    if len(processors) > 1 and len({specs[p].core for p in processors}) > 1:
        raise bad("tied clusters must have the same core")
    return Parameter(name, field, processors, tuple(rest))


def plain(raw: dict) -> dict:
    """A deep copy of a loaded SoC mapping without shared sub-objects (YAML anchors
    become separate copies, so setting one cluster's table leaves the other's)."""
    return json.loads(json.dumps(raw))


def apply(raw: dict, soc: SocSpec, params: list[Parameter], values, file: str = "<fit>",
          digits: int | None = None) -> tuple[dict, SocSpec]:
    """(raw mapping, validated SocSpec) with ``values`` (one per parameter) in place
    (rounded to ``digits`` significant digits if given: what a written file holds)."""
    out = copy.deepcopy(raw)
    for param, value in zip(params, values):
        param.set(out, soc, float(value), digits)
    return out, validate(SocSpec, out, file=file)


def _quantity(value: float, unit: str, digits: int | None):
    """``value`` as the schema reads it: a number, or a string with its unit."""
    if digits is not None:
        value = float(f"{value:.{digits}g}")
    if unit == "s":
        return f"{value!r} s" if digits is None else _with_prefix(value, "s", digits)
    if unit == "F":
        return f"{value!r} F" if digits is None else f"{value * 1e9:.{digits}g} nF"
    return value if digits is None else float(f"{value:.{digits}g}")


def _with_prefix(seconds: float, unit: str, digits: int) -> str:
    for scale, name in ((1e-6, "us"), (1e-3, "ms")):
        if seconds < scale * 1000:
            return f"{seconds / scale:.{digits}g} {name}"
    return f"{seconds:.{digits}g} {unit}"


def _processor_node(raw: dict, name: str) -> dict:
    kind, _, cluster = name.partition(".")
    return raw[kind][cluster] if cluster else raw[kind]


def log_bounds(params: list[Parameter]) -> tuple[list[float], list[float]]:
    """Bounds of the log-space variables."""
    return ([math.log(p.bounds[0]) for p in params], [math.log(p.bounds[1]) for p in params])
