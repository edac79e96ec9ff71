"""Fit the DynO client's and server's compute parameters to public latencies.

Per processor a few parameters (efficiencies are fractions of peak, the dispatch
overhead is seconds per kernel) are fitted to the measured per-model latencies of
:mod:`validation.dyno.client_refs` by least squares on log(simulated / measured):

* Jetson AGX Xavier Carmel CPU (``cpu.carmel``): PyTorch's FP32 CPU kernels --
  the ``conv`` and ``dwconv`` efficiencies and the per-operator dispatch
  overhead -- to PyTorch latencies of the same ARMv8 NEON kernels measured on a
  Raspberry Pi 4 (simulated on that host: :class:`validation.dyno.client_refs.Host`),
  and the parallel efficiency to the 1-thread / 4-thread latency ratios of ncnn
  (the ratio cancels ncnn's faster algorithms; its absolute latencies are lower
  bounds, checked, not fitted);
* Jetson AGX Xavier GPU: the dispatch overhead, to PyTorch eager FP16 latencies
  of the dispatch-bound CNNs (ResNets, MobileNetV2);
* GTX 1080 Ti (``desktop-i7-1080ti`` ``gpu``): ``conv`` efficiency and dispatch
  overhead, to a PyTorch FP32 batch-16 ResNet-152 and MXNet FP32 batch-1
  latencies (``dwconv`` stays estimated: one MobileNetV2 figure cannot separate it).

The refs are PyTorch's (bounds: ncnn's, MXNet's), so the kernels are costed with
the processor's ``pytorch`` library (:data:`LIBRARY`) where it has one, and the
efficiencies and dispatch overhead are fitted there (the Xavier's); the parallel
efficiency is the processor's. The hardware facts (peaks, clocks, bandwidths)
stay as written. A model's latency is the sum of its kernels' costs
(:class:`CostModel`) at the top OPP: inference runs its kernels one after another.

Run: ``python -m validation.dyno.fit_clients`` (simulated vs measured with the
SoC files as written) or ``python -m validation.dyno.fit_clients --fit`` (fit,
then the table with the fitted values).
"""

from __future__ import annotations

import argparse
from functools import lru_cache

import numpy as np
from scipy.optimize import least_squares

from policies.dyno.base import FRAMEWORK
from simulator.hardware.cost import CostModel
from simulator.library import load_soc
from simulator.spec.processor import CacheLevel
from simulator.spec.soc import SocSpec
from validation.dyno.client_refs import HOSTS, REFS, ClientRef
from workloads.generate import generate_trace

# the kernel library the refs' kernels are costed with (a processor without its table: its
# own, :func:`library`): the one the DynO policies place the model's kernels with
LIBRARY = FRAMEWORK
# Fitted parameters per (soc, processor): (name, lower bound, upper bound). A name is
# ``dispatch_overhead`` (s), ``parallel_efficiency`` or an efficiency key (``fp16.conv``: a
# precision's table); all but the parallel efficiency go to the library when there is one.
PARAMETERS: dict[tuple[str, str], tuple[tuple[str, float, float], ...]] = {
    ("jetson-agx-xavier", "cpu.carmel"): (("parallel_efficiency", 0.05, 1.0),
                                          ("fp32.conv", 0.02, 1.0),
                                          ("fp32.dwconv", 0.002, 1.0),
                                          ("dispatch_overhead", 0.0, 2e-3)),
    ("jetson-agx-xavier", "gpu"): (("fp16.conv", 0.02, 1.0), ("dispatch_overhead", 0.0, 2e-3)),
    ("desktop-i7-1080ti", "gpu"): (("conv", 0.02, 1.0), ("dispatch_overhead", 0.0, 2e-3)),
}


def library(soc: SocSpec, processor: str) -> str | None:
    """The library ``processor``'s refs are costed and fitted with: :data:`LIBRARY` where
    the processor has that table, else None (its own numbers: the 1080 Ti's refs are
    MXNet's). The one place of the rule: the fit, its table and the checks' engine runs
    (where naming a library the processor lacks is an input error) all ask here."""
    return LIBRARY if LIBRARY in soc.processors()[processor].libraries else None


@lru_cache(maxsize=None)
def _rows(model: str, batch: int, input_size: int, precision: str,
          width: float | None = None) -> tuple[dict, ...]:
    trace = generate_trace(model, batch=batch, input_size=input_size, width=width)
    if precision != "fp32":
        trace = trace.with_precision(precision)
    return tuple(trace.table.to_dict("records"))


def with_parameters(soc: SocSpec, processor: str, values: dict[str, float]) -> SocSpec:
    """A copy of ``soc`` with ``processor``'s parameters replaced by ``values`` (in its
    :data:`LIBRARY` table when it has one, the parallel efficiency in the processor)."""
    proc = soc.processors()[processor]
    name = library(soc, processor)
    lib = proc.libraries[name] if name else None
    update: dict = {}
    kernels: dict = {}  # the update of the library (or of the processor)
    table = dict((lib or proc).efficiency)
    for name, value in values.items():
        if name == "parallel_efficiency":
            update[name] = float(value)
        elif name == "dispatch_overhead":
            kernels[name] = float(value)
        elif "." in name and name.split(".", 1)[0] in table:  # a precision's table: fp16.conv
            precision, key = name.split(".", 1)
            table[precision] = {**table[precision], key: float(value)}
        else:
            table[name] = float(value)
    kernels["efficiency"] = table
    if lib is None:
        update.update(kernels)
    else:
        update["libraries"] = {**proc.libraries, name: lib.model_copy(update=kernels)}
    new = proc.model_copy(update=update)
    if processor.startswith("cpu."):
        cpus = dict(soc.cpu)
        cpus[processor.split(".", 1)[1]] = new
        return soc.model_copy(update={"cpu": cpus})
    return soc.model_copy(update={processor: new})


def on_host(soc: SocSpec, processor: str, host_name: str) -> SocSpec:
    """``soc`` with ``processor`` (a CPU cluster) moved to another machine's hardware:
    its efficiencies (the framework's kernels) kept, the host's clock, cores, caches
    and DRAM bandwidth (at the SoC's DRAM efficiency) put in. The per-operator
    overhead (the processor's and its libraries') is framework code on the same cores:
    the same number of cycles (E: equal instructions per cycle on branchy code), so it
    scales with the clock ratio."""
    host = HOSTS[host_name]
    proc = soc.processors()[processor]
    clock_ratio = proc.opps[-1].frequency / host.frequency_hz
    dram = soc.memory["dram"]
    top = proc.opps[-1].model_copy(update={"frequency": host.frequency_hz})
    caches = [CacheLevel(name="l1", size=f"{host.l1_bytes} B", bytes_per_cycle=32),
              CacheLevel(name="l2", size=f"{host.l2_bytes} B", per_unit=False,
                         bytes_per_cycle=32)]
    libraries = {name: lib if lib.dispatch_overhead is None else lib.model_copy(
        update={"dispatch_overhead": lib.dispatch_overhead * clock_ratio})
        for name, lib in proc.libraries.items()}
    new = proc.model_copy(update={
        "units": host.units, "opps": [top], "caches": caches, "shared_memories": ["dram"],
        "dram_bandwidth": host.dram_bytes_per_s * dram.efficiency,
        "dispatch_overhead": proc.dispatch_overhead * clock_ratio, "libraries": libraries})
    cpus = dict(soc.cpu)
    cpus[processor.split(".", 1)[1]] = new
    return soc.model_copy(update={"cpu": cpus})


def simulated_ms(ref: ClientRef, soc: SocSpec | None = None) -> float:
    """Simulated latency (ms) of ``ref``'s forward pass on its processor at the top OPP
    (on ``ref.host``'s hardware when it was measured elsewhere)."""
    soc = soc or load_soc(ref.soc)
    if ref.host:
        soc = on_host(soc, ref.processor, ref.host)
    proc = soc.processors()[ref.processor]
    units = ref.units or proc.units
    frequency = proc.opps[-1].frequency
    model = CostModel(soc)
    rows = _rows(ref.model, ref.batch, ref.input_size, ref.precision, ref.width)
    lib = library(soc, ref.processor)
    return sum(model.kernel_cost(ref.processor, units, row, lib).duration(frequency)
               for row in rows) * 1e3


def fit(soc_name: str, processor: str) -> dict[str, float]:
    """Least-squares fit of ``PARAMETERS[(soc_name, processor)]`` to the fitted refs."""
    spec = PARAMETERS[(soc_name, processor)]
    mine = [r for r in REFS if r.fit and r.soc == soc_name and r.processor == processor]
    refs = [r for r in mine if not r.lower_bound]
    pairs = [(one, many) for one in mine if one.lower_bound and one.units == 1
             for many in mine if many.lower_bound and many.model == one.model
             and (many.units or 0) > 1]
    base = load_soc(soc_name)
    proc = base.processors()[processor]
    name = library(base, processor)
    lib = proc.libraries[name] if name else None

    def current(name: str) -> float:
        if name == "parallel_efficiency":
            return float(proc.parallel_efficiency)
        if name == "dispatch_overhead":
            return float(proc.dispatch_overhead if lib is None or lib.dispatch_overhead is None
                         else lib.dispatch_overhead)
        table = (lib or proc).efficiency
        if "." in name and isinstance(table.get(name.split(".", 1)[0]), dict):
            precision, name = name.split(".", 1)
            table = table[precision]
        return float(table.get(name, table.get("default", 0.2)))

    names = [name for name, _, _ in spec]
    lower = np.array([lo for _, lo, _ in spec])
    upper = np.array([hi for _, _, hi in spec])
    start = np.clip([current(name) for name in names], lower + 1e-9, upper - 1e-9)
    scale = np.where(np.array(names) == "dispatch_overhead", 1e-5, 0.1)

    def residuals(x: np.ndarray) -> np.ndarray:
        soc = with_parameters(base, processor, dict(zip(names, x * scale)))
        out = [np.log(simulated_ms(r, soc) / r.latency_ms) for r in refs]
        out += [np.log(simulated_ms(one, soc) / simulated_ms(many, soc))
                - np.log(one.latency_ms / many.latency_ms) for one, many in pairs]
        return np.array(out)

    result = least_squares(residuals, start / scale, bounds=(lower / scale, upper / scale))
    return dict(zip(names, result.x * scale))


def table(fitted: dict[tuple[str, str], dict[str, float]] | None = None) -> list[tuple]:
    """Rows (ref, simulated ms, error %) with the SoC files or ``fitted`` values."""
    out = []
    socs: dict[tuple[str, str], SocSpec] = {}
    for ref in REFS:
        key = (ref.soc, ref.processor)
        if key not in socs:
            socs[key] = load_soc(ref.soc)
            if fitted and key in fitted:
                socs[key] = with_parameters(socs[key], ref.processor, fitted[key])
        sim = simulated_ms(ref, socs[key])
        out.append((ref, sim, 100.0 * (sim / ref.latency_ms - 1.0)))
    return out


def _print(rows: list[tuple]) -> None:
    print(f"{'reference':54s} {'measured':>9s} {'simulated':>9s} {'error':>7s}  use")
    for ref, sim, err in rows:
        use = "bound" if ref.lower_bound else ("fit" if ref.fit else "-")
        print(f"{ref.key:54s} {ref.latency_ms:9.2f} {sim:9.2f} {err:+6.1f}%  {use}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit, then tabulate")
    args = parser.parse_args(argv)
    fitted = None
    if args.fit:
        fitted = {}
        for soc_name, processor in PARAMETERS:
            fitted[(soc_name, processor)] = values = fit(soc_name, processor)
            shown = ", ".join(f"{k}={v * 1e6:.1f} us" if k == "dispatch_overhead"
                              else f"{k}={v:.3f}" for k, v in values.items())
            print(f"{soc_name} {processor}: {shown}")
    _print(table(fitted))


if __name__ == "__main__":
    main()
