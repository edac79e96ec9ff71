"""The experiment schema: what to simulate, on what, under which policy.

Minimal form::

    name: quickstart
    soc: snapdragon865
    workload: {model: resnet18, mode: inference, batch: 1, precision: fp32}
    policy: {name: single, processor: cpu.gold, cores: 3}

``workload`` may also be a list (several tenants sharing the SoC) and a
workload may be ``{trace: path/to/trace.csv}``. ``sweep``, ``repeats`` and
``--set`` overrides address any key by its dotted path.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from ..ops import PRECISIONS
from .base import Celsius, Hertz, Seconds, Strict
from .plot import FOLDER_NAME, PlotSpec, PlotStyle
from .system import DeviceEntry, LinkSpec


def folder_name(value: str) -> str:
    """Check ``value`` is one plain path component (:data:`FOLDER_NAME`)."""
    if not re.fullmatch(FOLDER_NAME, value):
        raise ValueError(f"must be a plain folder name (letters, digits, '_', '.', '-'; "
                         f"not '.' or '..', no '/'); got {value!r}")
    return value


class PauseSpec(Strict):
    """Periodic pauses of a long job (e.g. let the phone cool down).

    Attributes:
        every: pause after every this many iterations; or
        every_epochs: pause after every this many epochs (needs ``epochs``).
        duration: length of each pause; the device idles. Pauses count in the
            makespan and energy, not in the job's active time.
    """

    every: int | None = Field(default=None, ge=1)
    every_epochs: int | None = Field(default=None, ge=1)
    duration: Seconds = Field(gt=0)

    @model_validator(mode="after")
    def _one_period(self) -> PauseSpec:
        if (self.every is None) == (self.every_epochs is None):
            raise ValueError("give exactly one of 'every' (iterations) or 'every_epochs'")
        return self


class WorkloadSpec(Strict):
    """One workload (a job): a zoo model or a trace file.

    Attributes:
        name: job name (defaults to the model or trace file name).
        model: a model-zoo name (``socsim list models``).
        trace: path to a trace CSV/Parquet (relative to the experiment file).
        mode: inference or training (zoo models).
        batch: batch size.
        precision: overrides the precision of every kernel.
        input_size: input resolution (zoo models), pixels.
        num_classes: classifier classes (zoo models).
        width: width multiplier (zoo models that have one).
        algorithm: mixed-precision training algorithm (``workloads/algorithms``).
        stem: ResNet/VGG stem (``cifar`` or ``imagenet``; by input size if unset).
        options: further keyword parameters of the model builder.
        iterations: iterations (batches / frames) run back to back.
        start: release time of the first iteration.
        device: the device the job belongs to (multi-device systems).
        max_in_flight: iterations in flight at once; above 1 they are pipelined
            (a new frame enters while earlier ones are still being packed, sent
            or computed on a server), which raises throughput.
        batches: training steps to run (instead of ``iterations``).
        epochs: passes over the dataset (instead of ``iterations``; needs
            ``dataset_size``): ``epochs * ceil(dataset_size / batch)`` iterations.
        dataset_size: samples in the training set (CIFAR-10: 50000).
        pause: periodic pauses (sleep every N epochs).
        fast_forward: repeat memoised iterations while the device's DVFS and
            thermal state is unchanged instead of simulating every kernel (long
            training runs; see ``docs/engine.md``) when the job is alone on its
            device; a pipelined (``max_in_flight > 1``) or multi-device job, alone
            in the system and without pauses, holds whole periods of its steady
            pipeline; a job sharing its device (one frame in flight, one device)
            holds its steady frames one at a time.
    """

    name: str | None = None
    model: str | None = None
    trace: str | None = None
    mode: Literal["inference", "training"] = "inference"
    batch: int = Field(default=1, ge=1)
    precision: str | None = None
    input_size: int | None = Field(default=None, ge=1)
    num_classes: int | None = Field(default=None, ge=1)
    width: float | None = Field(default=None, gt=0)
    algorithm: str | None = None
    stem: str | None = Field(default=None, description="zoo: 'imagenet' | 'cifar' | 'auto'")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="further keyword parameters of the zoo model")
    iterations: int = Field(default=1, ge=1)
    start: Seconds = Field(default=0.0, ge=0)
    device: str | None = None
    max_in_flight: int = Field(default=1, ge=1)
    batches: int | None = Field(default=None, ge=1)
    epochs: int | None = Field(default=None, ge=1)
    dataset_size: int | None = Field(default=None, ge=1)
    pause: PauseSpec | None = None
    fast_forward: bool = False

    @model_validator(mode="after")
    def _horizon(self) -> WorkloadSpec:
        given = [k for k in ("batches", "epochs") if getattr(self, k) is not None]
        if "iterations" in self.model_fields_set:
            given.insert(0, "iterations")
        if len(given) > 1:
            raise ValueError(f"give one of iterations, batches or epochs; got "
                             f"{' and '.join(given)}")
        if self.epochs is not None and self.dataset_size is None:
            raise ValueError("epochs need 'dataset_size' (samples per epoch)")
        if self.pause is not None and self.pause.every_epochs is not None and (
                self.epochs is None and self.dataset_size is None):
            raise ValueError("pause.every_epochs needs 'dataset_size'")
        return self

    def iterations_per_epoch(self) -> int | None:
        """Batches per pass over the dataset (None without ``dataset_size``)."""
        if self.dataset_size is None:
            return None
        return -(-self.dataset_size // self.batch)

    def total_iterations(self) -> int:
        """Iterations to run: ``batches``, ``epochs`` x batches per epoch, or ``iterations``."""
        if self.batches is not None:
            return self.batches
        if self.epochs is not None:
            return self.epochs * self.iterations_per_epoch()
        return self.iterations

    def pause_every(self) -> int:
        """Iterations between pauses (0: no pauses)."""
        if self.pause is None:
            return 0
        if self.pause.every is not None:
            return self.pause.every
        return self.pause.every_epochs * self.iterations_per_epoch()

    @model_validator(mode="after")
    def _one_source(self) -> WorkloadSpec:
        if (self.model is None) == (self.trace is None):
            raise ValueError("give exactly one of 'model' or 'trace'")
        if self.precision is not None and self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")
        return self


class GovernorSpec(Strict):
    """A DVFS governor choice (``socsim list governors``)."""

    governor: str | None = None
    frequency: Hertz | None = Field(default=None, gt=0,
                                    description="userspace: fixed frequency (raised to a "
                                                "processor's min_frequency)")
    period: Seconds | None = Field(default=None, gt=0, description="schedutil: sampling period")
    headroom: float | None = Field(default=None, ge=1, description="schedutil: headroom")

    def params(self) -> dict[str, float]:
        return {k: v for k, v in (("frequency", self.frequency), ("period", self.period),
                                  ("headroom", self.headroom)) if v is not None}


class DvfsSpec(GovernorSpec):
    """Governor for all frequency domains, with per-domain overrides."""

    domains: dict[str, GovernorSpec] = Field(default_factory=dict)


class ThermalOptions(Strict):
    """Run-time thermal options (the network itself is in the SoC file)."""

    governor: bool = Field(default=True, description="trip points cap frequencies")
    initial: Celsius | None = Field(default=None, description="start temperature of all nodes")
    ambient: Celsius | None = None


class OutputOptions(Strict):
    """What each run writes besides its metrics."""

    timeline: bool = Field(default=True, description="Chrome/Perfetto trace JSON")
    timeseries: bool = True
    kernels: bool = Field(default=True, description="per-kernel records (kernels.parquet)")
    sample_period: Seconds = Field(default=0.01, gt=0, description="time-series sampling")


class ExperimentSpec(Strict):
    """A whole experiment (before sweep expansion)."""

    # Names the results folder (results/<name>/): one path component, never "." or "..".
    name: Annotated[str, AfterValidator(folder_name)]
    description: str = ""
    soc: str
    devices: dict[str, DeviceEntry] = Field(default_factory=dict)
    links: list[LinkSpec] = Field(default_factory=list)
    # at least one job: a run of nothing would "succeed" with empty results
    workload: WorkloadSpec | Annotated[list[WorkloadSpec], Field(min_length=1)]
    policy: dict[str, Any]
    dvfs: DvfsSpec = DvfsSpec()
    thermal: ThermalOptions = ThermalOptions()
    outputs: OutputOptions = OutputOptions()
    # the sweep's forms are the app's business (simulator.experiment.sweep validates
    # them, once, with exact YAML paths); a resolved run has none
    sweep: dict[str, Any] | None = None
    repeats: int = Field(default=1, ge=1)
    seed: int = Field(default=0, ge=0)
    time_limit: Seconds | None = Field(default=None, gt=0,
                                       description="stop the simulated run at this time")
    plots: list[PlotSpec] = Field(default_factory=list)
    plot_style: PlotStyle | None = None

    @field_validator("policy")
    @classmethod
    def _policy_named(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "name" not in value:
            raise ValueError("policy needs a 'name'")
        return value

    @field_validator("plots")
    @classmethod
    def _plot_names_unique(cls, value: list[PlotSpec]) -> list[PlotSpec]:
        names = [plot.file_stem(i) for i, plot in enumerate(value)]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"plot names must be unique; {', '.join(duplicated)} repeated")
        return value

    def workloads(self) -> list[WorkloadSpec]:
        return self.workload if isinstance(self.workload, list) else [self.workload]
