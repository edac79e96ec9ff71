"""The build phase of a run: devices, governors and jobs from a resolved experiment.

Pure construction: nothing here starts a SimPy process or advances time, so
code that needs a run's components without running it (a policy's decision
time, a device for a check) gets the same objects as a real run through
:meth:`simulator.engine.simulation.Simulation.build`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import simpy

from ..errors import ConfigError
from ..library import load_soc
from ..params import check_keywords
from ..policy import Job
from ..registry import WORKLOADS
from ..spec.experiment import ExperimentSpec, WorkloadSpec
from ..spec.soc import SocSpec
from ..trace import Trace, load_trace
from .device import Device
from .dvfs import GOVERNORS, Governor
from .pipeline import holds_system

DEFAULT_DEVICE = "device"


def build_trace(workload: WorkloadSpec, base: Path | None = None) -> Trace:
    """The kernel trace of one workload (zoo model or trace file)."""
    if workload.trace is not None:
        path = Path(workload.trace)
        if not path.is_absolute() and base is not None and (base / path).exists():
            path = base / path
        trace = load_trace(path)
        if workload.precision is not None and workload.algorithm is None:
            trace = trace.with_precision(workload.precision)
    else:
        # the model zoo's generator, found through its registry (a plugin of the core)
        generate_trace = WORKLOADS.get("zoo")
        params = {k: v for k, v in (("input_size", workload.input_size),
                                    ("num_classes", workload.num_classes),
                                    ("width", workload.width),
                                    ("algorithm", workload.algorithm),
                                    ("stem", workload.stem)) if v is not None}
        params.update(workload.options)
        # generated at the workload's precision already (no with_precision pass)
        trace = generate_trace(workload.model, mode=workload.mode, batch=workload.batch,
                               precision=workload.precision or "fp32", **params)
    return trace


def build_governors(exp: ExperimentSpec, soc: SocSpec) -> dict[str, Governor]:
    """One governor per frequency domain of ``soc`` (``dvfs:`` of the experiment).

    A domain without its own entry under ``dvfs.domains`` takes the top-level
    governor and parameters; one with an entry takes only that entry's
    parameters (and the top-level governor if it names none).

    Raises:
        ConfigError: an unknown governor or domain, or a parameter the chosen
            governor does not take (``dvfs.period`` given to ``performance``),
            with its YAML path.
    """
    governors = {}
    for local in soc.processors():
        own = local in exp.dvfs.domains
        choice = exp.dvfs.domains[local] if own else exp.dvfs
        where = f"dvfs.domains.{local}" if own else "dvfs"
        name = choice.governor or exp.dvfs.governor or soc.default_governor
        cls = GOVERNORS.get(name, path=f"{where}.governor")
        # params() holds only the keys the user wrote (the schema's defaults are None)
        params = choice.params()
        check_keywords(cls, params, f"governor {name!r}", where)
        try:
            governors[local] = cls(**params)
        except TypeError as err:
            raise ConfigError(f"governor {name!r}: {err}", path=where) from None
    for local in exp.dvfs.domains:
        if local not in governors:
            raise ConfigError(f"unknown frequency domain {local!r}; this SoC has "
                              f"{', '.join(governors)}", path=f"dvfs.domains.{local}")
    return governors


def load_device_specs(exp: ExperimentSpec, base: Path | None = None,
                      soc: SocSpec | None = None) -> dict[str, SocSpec]:
    """The SoC of every device by name, the experiment's own (``soc:``) first."""
    specs = {DEFAULT_DEVICE: soc or load_soc(exp.soc, base)}
    for name, entry in exp.devices.items():
        if name == DEFAULT_DEVICE:
            if entry.soc is not None:
                raise ConfigError(f"{DEFAULT_DEVICE!r} is the experiment's own device: its "
                                  "SoC is the top-level 'soc'", path=f"devices.{name}.soc")
            continue
        if entry.soc is None:
            raise ConfigError("a device needs a 'soc'", path=f"devices.{name}")
        try:
            specs[name] = load_soc(entry.soc, base)
        except ConfigError as err:
            raise err if err.file else err.within(prefix=f"devices.{name}.soc") from None
    return specs


def build_devices(env: simpy.Environment, exp: ExperimentSpec, specs: dict[str, SocSpec],
                  on_task: Callable, on_transfer: Callable) -> dict[str, Device]:
    """A :class:`Device` per spec (processors, governors, thermal network, storage).

    Args:
        env: the run's SimPy environment.
        exp: the experiment (thermal options, sampling period, slowdowns, dvfs).
        specs: SoC per device name.
        on_task: called with (processor, task, end_s) for every finished kernel.
        on_transfer: called with (channel, start_s, end_s, bytes, label) per transfer.
    """
    multi = len(specs) > 1
    devices = {}
    for name, spec in specs.items():
        if exp.thermal.ambient is not None:
            spec = spec.model_copy(update={"thermal": spec.thermal.model_copy(
                update={"ambient": exp.thermal.ambient})})
        sample_every = max(1, round(exp.outputs.sample_period / spec.thermal.step))
        devices[name] = Device(env, name, spec, build_governors(exp, spec), on_task,
                               on_transfer, prefix=f"{name}:" if multi else "",
                               initial_temperature=exp.thermal.initial,
                               thermal_governor=exp.thermal.governor,
                               sample_every=sample_every,
                               slowdown=exp.devices[name].slowdown
                               if name in exp.devices else 1.0,
                               # (the timeline's counters are drawn from the samples)
                               keep_samples=exp.outputs.timeseries or exp.outputs.timeline)
    return devices


def build_jobs(exp: ExperimentSpec, devices: dict[str, Device], base: Path | None = None,
               traces: dict[int, Trace] | None = None) -> list[Job]:
    """A :class:`Job` per workload; ``traces[i]`` replaces workload ``i``'s trace."""
    jobs: list[Job] = []
    for i, workload in enumerate(exp.workloads()):
        trace = traces[i] if traces and i in traces else build_trace(workload, base)
        name = workload.name or workload.model or Path(workload.trace).stem
        if any(j.name == name for j in jobs):
            name = f"{name}#{i}"
        device_name = workload.device or DEFAULT_DEVICE
        if device_name not in devices:
            raise ConfigError(f"unknown device {device_name!r}; devices are "
                              f"{', '.join(devices)}", path="workload.device")
        jobs.append(Job(name=name, trace=trace, device=device_name,
                        iterations=workload.total_iterations(), start=workload.start,
                        samples=workload.batch, params=workload.model_dump(),
                        max_in_flight=workload.max_in_flight,
                        pause_every=workload.pause_every(),
                        pause=workload.pause.duration if workload.pause else 0.0,
                        fast_forward=workload.fast_forward))
    for i, job in enumerate(jobs):
        if not job.fast_forward:
            continue
        path = "workload.fast_forward" if len(jobs) == 1 else f"workload[{i}].fast_forward"
        if sum(other.device == job.device for other in jobs) > 1:
            # a tenant's steady frames are held one at a time (simulator.engine.tenant)
            if job.max_in_flight > 1 or len(devices) > 1:
                raise ConfigError("fast_forward of a job sharing its device with other "
                                  "jobs needs max_in_flight 1 on a one-device system",
                                  path=path)
            continue
        # with several frames in flight or several devices, fast-forward holds whole
        # periods of the whole system (simulator.engine.pipeline): no other job may
        # load it, and the job never pauses
        if holds_system(job.max_in_flight, len(devices)) and (len(jobs) > 1 or job.pause_every):
            raise ConfigError("fast_forward with max_in_flight > 1 or several devices "
                              "holds the whole system's steady periods: it needs the job "
                              "alone in the system, without pauses", path=path)
    return jobs
