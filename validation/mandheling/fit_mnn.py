"""Fit MNN's CPU training kernels and the SD888 CPU power to Mandheling's Table 7.

The table gives MNN-FP32 and MNN-INT8 (NITI) training of VGG-16 (CIFAR-10,
batch 64) on six CPU configurations of the Xiaomi 11 Pro, per batch: time
and energy at the highest (H) and the lowest (L) CPU frequency.

Physical parameters, three stages (least squares on log error):

1. time (H rows but ``all8``, see :data:`UNFITTED`; an exact fast model of
   the serial execution):
   per core type (X1, A78, A55) and precision (FP32, INT8) the forward
   convolution efficiency ``s`` of MNN's kernels; the error-gradient and
   weight-gradient kernels at ``r_data * s`` and ``r_weight * s`` (two ratios
   shared by all cores and precisions: how much worse MNN's backward kernels
   are); the parallel efficiency of the gold and silver clusters per
   precision. The paper's "training ~7x inference at batch 64" is checked,
   not fitted (``socsim validate --group mandheling``);
2. floor (L time rows but ``all8``): the lowest frequency the phone lets each cluster run
   at, an OPP (``min_frequency``). The measured L/H time ratios (1.6-2.6) are
   far below the 3.4-6x of the lowest OPPs, which no kernel efficiency can
   change: the phone's "lowest" is a vendor floor;
3. energy (H rows but ``all8``, engine runs): the switched capacitance ``ceff`` of each
   core type, the switching activity of INT8 compute relative to FP32 (shared
   by the cores) and the device's base power.

The L energies are predictions.

Run: ``python -m validation.mandheling.fit_mnn [--fit]``; it prints
the parameters and the table (simulated vs measured, error %).
"""

from __future__ import annotations

import argparse
from functools import lru_cache

import numpy as np

from simulator.engine.simulation import simulate
from simulator.library import load_soc
from simulator.spec.experiment import ExperimentSpec
from simulator.spec.soc import LibrarySpec, SocSpec
from validation.fitting import least_squares_log
from validation.mandheling import refs

SOC = "snapdragon888"
LIBRARY = "mnn"
CORES = {"x1": ("prime",), "a78": ("gold",), "a55": ("silver",)}
EFFICIENCY_NAMES = [f"{core}.{p}" for core in CORES for p in ("fp32", "int8")]
RATIO_NAMES = ["r_data", "r_weight"]
PARALLEL_NAMES = ["gold.fp32", "gold.int8", "silver.fp32", "silver.int8"]
POWER_NAMES = ["x1.ceff_nF", "a78.ceff_nF", "a55.ceff_nF", "base_W", "int8_activity"]
BASE_FLOOR_W = 0.1
STAGES = ("time", "floor", "energy")
# Eight threads over both clusters: the phone draws the big4 power and the
# measured INT8 time (2.71 s) is far below an equal split's slowest thread
# (little4 10.36 s / 2): the phone's scheduler ran or moved the threads onto the
# big cores (EAS), where MNN's pool spin-waits at its barriers; the engine runs
# each thread on the core it names. Fitting these rows would bias the A55 kernels
# and the core power, so the stages leave them as predictions.
UNFITTED = ("all8",)


def mnn_table(forward: float, r_data: float, r_weight: float) -> dict[str, float]:
    """MNN's efficiency keys for one precision from its forward conv efficiency."""
    return {"conv": forward, "deconv": forward * r_data, "conv.bwd_weight": forward * r_weight,
            "fc": forward, "fc.bwd_data": forward * r_data, "fc.bwd_weight": forward * r_weight}


def with_parameters(soc: SocSpec, efficiency: dict[str, float], parallel: dict[str, float],
                    power: dict[str, float] | None = None,
                    floors: dict[str, float] | None = None) -> SocSpec:
    """``soc`` with MNN tables and (optionally) CPU power parameters and OS
    frequency floors (Hz by cluster) replaced."""
    cpu = dict(soc.cpu)
    for core, clusters in CORES.items():
        for cluster in clusters:
            spec = cpu[cluster]
            ratios = efficiency["r_data"], efficiency["r_weight"]
            table = {**mnn_table(efficiency[f"{core}.fp32"], *ratios),
                     "int8": mnn_table(efficiency[f"{core}.int8"], *ratios)}
            pe = {p: parallel[f"{cluster}.{p}"] for p in ("fp32", "int8")
                  if f"{cluster}.{p}" in parallel}
            old = spec.libraries.get(LIBRARY) or LibrarySpec()
            # only the fitted fields change (per-operator cost, spin-waiting stay)
            library = old.model_copy(update={"efficiency": table,
                                             "parallel_efficiency": pe or None})
            update = {"libraries": {**spec.libraries, LIBRARY: library}}
            if power is not None:
                activity = {**spec.power.precision_activity, "int8": power["int8_activity"]}
                update["power"] = spec.power.model_copy(
                    update={"ceff": power[f"{core}.ceff_nF"] * 1e-9,
                            "precision_activity": activity})
            if floors is not None:
                update["min_frequency"] = floors[cluster]
            cpu[cluster] = spec.model_copy(update=update)
    update = {"cpu": cpu}
    if power is not None:
        update["power"] = soc.power.model_copy(update={"base": power["base_W"]})
    return soc.model_copy(update=update)


def current(soc: SocSpec) -> tuple[dict, dict, dict, dict]:
    """The parameters as written in the SoC file: (efficiency, parallel, power, floors)."""
    efficiency, parallel, power, floors = {}, {}, {"base_W": soc.power.base}, {}
    for core, (cluster, *_) in CORES.items():
        spec = soc.cpu[cluster]
        floors[cluster] = spec.min_frequency
        library = spec.libraries.get(LIBRARY)
        table = library.efficiency if library else {}
        forward = float(table.get("conv", 0.3))
        efficiency[f"{core}.fp32"] = forward
        efficiency[f"{core}.int8"] = float(table.get("int8", {}).get("conv", 0.3))
        efficiency["r_data"] = float(table.get("deconv", 0.5 * forward)) / forward
        efficiency["r_weight"] = float(table.get("conv.bwd_weight", 0.25 * forward)) / forward
        power[f"{core}.ceff_nF"] = spec.power.ceff * 1e9
        power["int8_activity"] = spec.power.precision_activity.get("int8", 1.0)
        for p in ("fp32", "int8"):
            default = spec.parallel(p)
            parallel[f"{cluster}.{p}"] = library.parallel(p, default) if library else default
    return efficiency, parallel, power, floors


def simulate_row(soc: SocSpec, method: str, cpu: str, cpu_freq: str) -> tuple[float, float]:
    """(seconds, joules) of one VGG-16 batch with ``method`` on ``cpu`` at ``cpu_freq``."""
    exp = ExperimentSpec.model_validate({
        "name": "table7", "soc": SOC, "workload": {**refs.VGG16_CIFAR, "iterations": 1},
        "policy": {"name": method, "cpu": cpu, "cpu_freq": cpu_freq},
        "outputs": {"timeline": False, "kernels": False, "timeseries": False}})
    metrics = simulate(exp, soc=soc).metrics
    return metrics["latency_s"], metrics["energy_per_iteration_j"]


def table(soc: SocSpec) -> list[dict]:
    """Simulated vs measured Table 7 (MNN rows): one dict per (method, config)."""
    rows = []
    for (method, cpu), (t_h, t_l, e_h, e_l) in refs.CPU_CONFIG_TABLE.items():
        (st_h, se_h), (st_l, se_l) = (simulate_row(soc, method, cpu, f) for f in ("max", "min"))
        rows.append({"method": method, "cpu": cpu,
                     "time_H": (st_h, t_h), "time_L": (st_l, t_l),
                     "energy_H": (se_h, e_h), "energy_L": (se_l, e_l)})
    return rows


@lru_cache(maxsize=4)
def _step_records(method: str) -> tuple[dict, ...]:
    """The kernels one VGG-16 batch of ``method`` runs (MNN's own operators)."""
    from simulator.engine.simulation import build_trace
    from simulator.spec.experiment import WorkloadSpec
    from workloads.frameworks import apply_framework
    from workloads.mixed_precision import apply_algorithm

    trace = build_trace(WorkloadSpec.model_validate(refs.VGG16_CIFAR))
    if method == "mnn-int8":
        trace = apply_algorithm(trace, "niti")
    trace = apply_framework(trace, LIBRARY)  # the policies run MNN's own operators
    return tuple(trace.table.to_dict("records"))


def fast_time(soc: SocSpec, method: str, cpu: str, cpu_freq: str = "max") -> float:
    """Seconds of one batch at the top OPPs (``max``) or the OS floors (``min``)
    without the engine: the policies run one operator at a time, each taking its
    slowest thread (equal to the engine's result on the CPU, where no data
    crosses address spaces)."""
    from policies.mandheling.cpu import thread_pool, thread_share
    from simulator.engine.dvfs import FrequencyDomain
    from simulator.hardware.cost import CostModel

    records = _step_records(method)
    model = CostModel(soc)
    specs = soc.processors()
    pool = thread_pool(specs, cpu, LIBRARY)
    frequency = {}
    for placement, _ in pool:
        spec = specs[placement.processor]
        domain = FrequencyDomain(placement.processor, spec.opps, spec.min_frequency)
        frequency[placement.processor] = domain.frequencies[
            domain.top if cpu_freq == "max" else domain.floor]
    total = 0.0
    for record in records:
        total += max(model.kernel_cost(p.processor, p.units, thread_share(record, f),
                                       p.library).duration(frequency[p.processor])
                     for p, f in pool)
    return total


def _h_rows(soc: SocSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    sim_t, sim_e, ref_t, ref_e = [], [], [], []
    for (method, cpu), (t_h, _, e_h, _) in refs.CPU_CONFIG_TABLE.items():
        if cpu in UNFITTED:
            continue
        seconds, joules = simulate_row(soc, method, cpu, "max")
        sim_t.append(seconds)
        sim_e.append(joules)
        ref_t.append(t_h)
        ref_e.append(e_h)
    return np.array(sim_t), np.array(sim_e), np.array(ref_t), np.array(ref_e)


def fit(stages: tuple[str, ...] = STAGES) -> tuple[dict, dict, dict, dict]:
    """Fit the stages in order, from the SoC file's values; returns
    (efficiency, parallel, power, floors)."""
    soc = load_soc(SOC)
    efficiency, parallel, power, floors = current(soc)
    if "time" in stages:
        efficiency, parallel = _fit_time(soc, efficiency, parallel)
    if "floor" in stages:
        floors = _fit_floors(with_parameters(soc, efficiency, parallel))
    if "energy" in stages:
        power = _fit_energy(with_parameters(soc, efficiency, parallel, floors=floors),
                            efficiency, parallel, power)
    return efficiency, parallel, power, floors


def _fit_time(soc: SocSpec, efficiency: dict, parallel: dict) -> tuple[dict, dict]:
    names = EFFICIENCY_NAMES + RATIO_NAMES
    rows = [item for item in refs.CPU_CONFIG_TABLE.items() if item[0][1] not in UNFITTED]

    def time_residuals(x: np.ndarray) -> np.ndarray:
        eff = dict(zip(names, x[:8]))
        par = dict(zip(PARALLEL_NAMES, x[8:]))
        trial = with_parameters(soc, eff, par)
        return np.array([np.log(fast_time(trial, method, cpu) / values[0])
                         for (method, cpu), values in rows])

    x0 = [efficiency[n] for n in names] + [parallel[n] for n in PARALLEL_NAMES]
    lower = [0.01] * 8 + [0.05] * 4
    upper = [1.0] * 12
    x = least_squares_log(time_residuals, x0, lower, upper, log=False, diff_step=0.01,
                          max_nfev=400)
    return dict(zip(names, x[:8])), dict(zip(PARALLEL_NAMES, x[8:]))


def _fit_floors(soc: SocSpec) -> dict[str, float]:
    """Each cluster's OS floor (Hz): the OPPs that best give the L time rows.

    Coordinate descent over the OPP tables (the floor is an OPP; one cluster
    at a time, until no change), least squares on log time.
    """
    rows = [item for item in refs.CPU_CONFIG_TABLE.items() if item[0][1] not in UNFITTED]
    floors = {cluster: soc.cpu[cluster].min_frequency or soc.cpu[cluster].opps[0].frequency
              for (cluster,) in CORES.values()}

    efficiency, parallel, *_ = current(soc)

    def cost(trial: dict[str, float]) -> float:
        candidate = with_parameters(soc, efficiency, parallel, floors=trial)
        return sum(np.log(fast_time(candidate, method, cpu, "min") / values[1]) ** 2
                   for (method, cpu), values in rows)

    best = cost(floors)
    changed = True
    while changed:
        changed = False
        for cluster in floors:
            for opp in soc.cpu[cluster].opps:
                trial = {**floors, cluster: opp.frequency}
                value = cost(trial)
                if value < best - 1e-12:
                    best, floors, changed = value, trial, True
    return floors


def _fit_energy(soc: SocSpec, efficiency: dict, parallel: dict, power: dict) -> dict:
    def energy_residuals(y: np.ndarray) -> np.ndarray:
        pw = dict(zip(POWER_NAMES, y))
        _, sim_e, _, ref_e = _h_rows(with_parameters(soc, efficiency, parallel, pw))
        return np.log(sim_e / ref_e)

    y0 = [power[n] for n in POWER_NAMES]
    # base: an awake SoC with the screen off draws at least ~0.1 W (uncore, PMIC, DRAM)
    lower, upper = [0.05, 0.05, 0.05, BASE_FLOOR_W, 0.2], [5.0, 5.0, 5.0, 5.0, 1.0]
    y = least_squares_log(energy_residuals, y0, lower, upper, log=False, diff_step=0.02,
                          max_nfev=60)
    return dict(zip(POWER_NAMES, y))


def _print_table(soc: SocSpec) -> None:
    print(f"{'method':9s} {'cpu':8s}" + "".join(f"{c:>26s}" for c in
                                                ("time H (s)", "time L (s)", "energy H (J)",
                                                 "energy L (J)")))
    for row in table(soc):
        cells = []
        for column in ("time_H", "time_L", "energy_H", "energy_L"):
            sim, ref = row[column]
            cells.append(f"{sim:8.2f} /{ref:6.2f} ({100 * (sim - ref) / ref:+4.0f}%)")
        print(f"{row['method']:9s} {row['cpu']:8s}" + "".join(f"{c:>26s}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit, then print the table")
    parser.add_argument("--stages", default=",".join(STAGES),
                        help="stages to fit (time, floor, energy); the others keep the "
                             "file's values")
    args = parser.parse_args()
    soc = load_soc(SOC)
    if args.fit:
        efficiency, parallel, power, floors = fit(tuple(args.stages.split(",")))
        for name, value in {**efficiency, **parallel, **power}.items():
            print(f"{name:16s} {value:.4g}")
        for cluster, hertz in floors.items():
            print(f"{cluster + '.min':16s} " + (f"{hertz / 1e6:.1f} MHz" if hertz else "none"))
        soc = with_parameters(soc, efficiency, parallel, power, floors)
    _print_table(soc)


if __name__ == "__main__":
    main()
