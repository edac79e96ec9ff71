"""The parameters ``socsim calibrate`` fits when ``--params`` is not given.

From what the measurements exercise: per processor (CPU clusters of the same
core tied: one efficiency table, the same per-operator cycles) and precision,
the efficiency of every op kind the measured traces run there; the parallel
efficiency of each cluster measured with more than one core; each processor's
per-operator cost (``dispatch_overhead``); the narrow-convolution factor
(``gemm_half_channels``) and serial im2col rate (``im2col_bytes_per_cycle``) of
CPUs that run convolutions, the grouped-convolution factor (``group_half_channels``)
of CPUs that run grouped ones; the host-transfer cost
(``offload.switch``) of accelerators measured end to end; the switched
capacitance (``power.ceff``) of each processor with energy measurements (not
tied: same-core clusters are built differently). The candidates the data cannot identify are then dropped,
each with its reason (:meth:`validation.fitting.engine.Problem.identifiable`).
DRAM efficiency is shared by every processor, so it is fitted only on request.
"""

from __future__ import annotations

from simulator.spec.soc import SocSpec
from validation.fitting.engine import EnergyRow, Row
from validation.fitting.params import Parameter, parse


def processor_groups(soc: SocSpec) -> dict[str, str]:
    """processor -> its fitted name: CPU clusters of one core tied (``cpu.prime+gold``)."""
    by_core: dict[str, list[str]] = {}
    for cluster, spec in soc.cpu.items():
        by_core.setdefault(spec.core or cluster, []).append(cluster)
    out = {f"cpu.{c}": "cpu." + "+".join(members)
           for members in by_core.values() for c in members}
    for name in soc.processors():
        out.setdefault(name, name)
    return out


def candidates(soc: SocSpec, rows: list[Row], energy_rows: list[EnergyRow] = ()
               ) -> list[Parameter]:
    """Default parameters for ``rows`` (before the identifiability filter), sorted."""
    groups = processor_groups(soc)
    specs = soc.processors()
    names: list[str] = []
    for row in rows:
        s = row.case.setting
        group = groups[s.processor]
        names += [f"{group}.efficiency.{s.precision}.{k}" for k in row.case.kinds]
        names.append(f"{group}.dispatch_overhead")
        if s.cores > 1:
            names.append(f"{s.processor}.parallel_efficiency.{s.precision}")
        if s.processor.startswith("cpu.") and "conv" in row.case.kinds:
            names += [f"{group}.gemm_half_channels", f"{group}.im2col_bytes_per_cycle"]
        if s.processor.startswith("cpu.") and "group_conv" in row.case.kinds:
            names.append(f"{group}.group_half_channels")
        if specs[s.processor].offload is not None and row.op is None:
            names.append(f"{s.processor}.offload.switch")
    # per cluster: same-core clusters differ in implementation (SD855: prime 0.366 nF,
    # gold 0.321 nF from the EAS coefficients of the device tree)
    names += [f"{r.case.setting.processor}.power.ceff" for r in energy_rows]
    return [parse(n, soc) for n in sorted(set(names))]
