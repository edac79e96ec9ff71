"""Descendant latencies from simulating the pruned models on the SoC.

The latency of a descendant at full compute, ``L(m)`` in NestDNN's cost
function, is what one inference of its trace takes when it has the whole
processor: the trace runs alone under the ``single`` policy (one operator at
a time, as TensorFlow and TFLite do) at the top OPP (performance governor,
thermal governor off). Sharing the processor then stretches it to ``L / u``,
which the engine enforces itself (a kernel at share ``u`` runs at ``u`` of
its stand-alone speed).

Results are memoised per (SoC, processor, cores, model, options, width): the
simulation is a pure function of them.
"""

from __future__ import annotations

from functools import lru_cache

from simulator.spec.soc import SocSpec

from .profile import AppProfile


def profile_latencies(apps: dict[str, AppProfile], soc: SocSpec, processor: str,
                      cores: int | None = None) -> dict[str, AppProfile]:
    """``apps`` with every descendant's latency simulated on ``soc`` (measured ones kept).

    Args:
        apps: profiles from :func:`~workloads.multicapacity.profile.load_profiles`.
        soc: the device.
        processor: where the apps run (``cpu.big``).
        cores: units used (all of the processor's if None).
    """
    key = _SocKey(soc)
    out = {}
    for name, app in apps.items():
        options = tuple(sorted(app.options.items()))
        latencies = [_latency(key, processor, cores, app.model, options, d.width)
                     if d.latency is None else d.latency for d in app.descendants]
        baseline = [_latency(key, processor, cores, app.model, options, d.width)
                    if d.latency is None else d.latency for d in app.baseline_models]
        out[name] = app.with_latencies(latencies, baseline)
    return out


def descendant_latency(soc: SocSpec, processor: str, cores: int | None, model: str,
                       options: dict, width: float) -> float:
    """Seconds of one inference of ``model`` at ``width`` alone on ``processor``."""
    return _latency(_SocKey(soc), processor, cores, model, tuple(sorted(options.items())),
                    width)


class _SocKey:
    """A SoC as a memo key: equal when the descriptions are equal."""

    __slots__ = ("soc", "key")

    def __init__(self, soc: SocSpec):
        self.soc = soc
        self.key = soc.model_dump_json()

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SocKey) and other.key == self.key


@lru_cache(maxsize=512)
def _latency(soc_key: _SocKey, processor: str, cores: int | None, model: str, options: tuple,
             width: float) -> float:
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec

    from .profile import descendant_trace

    soc = soc_key.soc
    policy = {"name": "single", "processor": processor}
    if cores is not None:
        policy["cores"] = cores
    exp = ExperimentSpec.model_validate({
        "name": "descendant-latency", "soc": soc.name, "workload": {"trace": "<memory>"},
        "policy": policy, "dvfs": {"governor": "performance"},
        "thermal": {"governor": False},
        "outputs": {"timeline": False, "kernels": False, "timeseries": False}})
    result = simulate(exp, traces={0: descendant_trace(model, options, width)}, soc=soc)
    return float(result.metrics["latency_s"])
