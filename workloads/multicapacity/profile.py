"""Multi-capacity model profiles: each app's descendants as data.

A NestDNN multi-capacity model (Fang et al., MobiCom'18) nests ``K``
descendant models: descendant ``k`` keeps a fraction ``capacity_k`` of the
largest descendant's filters in every layer, smaller descendants share their
filters with larger ones. A profile file (``workloads/multicapacity/*.yaml``)
describes, per app, the architecture (a zoo model, its options and the width
multiplier of the largest descendant) and per descendant its capacity and
accuracy. Everything else is derived:

* the kernel trace of descendant ``k`` is the zoo model at width
  ``width * capacity_k`` (filter pruning keeps the layer structure);
* FLOPs per frame and memory (FP32 weight bytes) come from that trace;
* latency at full compute comes from simulating the trace on a SoC
  (:func:`workloads.multicapacity.latency.profile_latencies`), never typed in.

Accuracy cannot be simulated. A descendant either gives it (a measured
profile) or it follows the documented curve ``A(r) = top - max_drop * (1 -
r)^exponent`` of its capacity ``r`` relative to the largest: the loss grows
with the share of filters pruned, ``max_drop`` being what pruning everything
would cost; concave for ``exponent > 1``, so smaller descendants lose more
accuracy per filter removed. Any derived number can be replaced by a measured
one (``accuracy``, ``latency``, ``memory``, ``flops`` per descendant).

**The baseline** an app is compared with is not a descendant: it is the
status quo, a separately trained, off-the-shelf compressed model per app
(NestDNN's baseline), one point of that app's own accuracy-vs-size curve of
independently compressed models. A profile gives that curve per app under
``baseline:`` (measured models with ``capacity`` and ``accuracy``, or the
same documented curve with its own ``max_drop``); by default the baseline
models have the descendants' capacities (the same architecture at the same
width, hence the same trace, FLOPs, memory and latency) and the accuracy
curve of the descendants with ``max_drop`` scaled by the profile's
``baseline_drop_ratio`` (the dissertation reports that descendants are more
accurate than independently compressed models of equal size, but not by how
much in the text available to us; the bundled profile takes the ratio from
public nested-vs-independent measurements, ``validation/nestdnn/drop_ratio.py``). The baseline model
of an app is the knee of *its own* curve (:meth:`AppProfile.baseline_knee`).
An app with measured descendant accuracies, no accuracy curve and no
``baseline:`` falls back to its knee descendant.

**Goals** (NestDNN's ``A_min(v)``, ``L_max(v)``): ``min_accuracy`` defaults
to the app's most accurate descendant; ``max_latency`` is a time, or
``fastest`` (the default of the bundled profile): the app's fastest
descendant alone on the processor, so each goal is the best the app's own
model can do and every app's latency is measured against its own scale.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from simulator.errors import ConfigError
from simulator.spec.base import Bytes, Seconds, Strict
from simulator.spec.yamlio import read_yaml, validate
from simulator.trace import Trace

PROFILE_DIR = Path(__file__).resolve().parent


class DescendantSpec(Strict):
    """One descendant in a profile file.

    Attributes:
        capacity: fraction of the largest descendant's filters kept, in (0, 1].
        accuracy: measured top-1 accuracy (fraction); derived when absent.
        latency: measured latency at full compute; simulated when absent.
        memory: measured model memory; FP32 weights of the trace when absent.
        flops: measured operations per frame; from the trace when absent.
    """

    capacity: float = Field(gt=0, le=1)
    accuracy: float | None = Field(default=None, gt=0, le=1)
    latency: Seconds | None = Field(default=None, gt=0)
    memory: Bytes | None = Field(default=None, gt=0)
    flops: float | None = Field(default=None, gt=0)


class PaperSizes(Strict):
    """Sizes the paper reports for the app (the numbers the capacities were fitted to).

    Attributes:
        multi_capacity: size of the multi-capacity model (= its largest descendant).
        independent: summed size of the descendants as independent models.
        upgrade_in: average page-in of an upgrade, multi-capacity model.
        independent_upgrade_in: average page-in of an upgrade, independent models.
        independent_upgrade_out: average page-out of an upgrade, independent models.
    """

    multi_capacity: Bytes = Field(gt=0)
    independent: Bytes = Field(gt=0)
    upgrade_in: Bytes = Field(ge=0)
    independent_upgrade_in: Bytes = Field(ge=0)
    independent_upgrade_out: Bytes = Field(ge=0)


class BaselineSpec(Strict):
    """An app's baseline: its curve of independently compressed models.

    Attributes:
        models: the models, smallest first (``capacity``: filter fraction of the
            app's largest descendant; measured ``accuracy``, ``latency``,
            ``memory``, ``flops`` optional). Default: the descendants' capacities.
        top_accuracy: accuracy of the uncompressed model (default: the app's).
        max_drop: the curve's scale (default: the app's ``max_drop`` times the
            profile's ``baseline_drop_ratio``).
    """

    models: list[DescendantSpec] | None = Field(default=None, min_length=1)
    top_accuracy: float | None = Field(default=None, gt=0, le=1)
    max_drop: float | None = Field(default=None, ge=0, lt=1)

    @model_validator(mode="after")
    def _shape(self) -> BaselineSpec:
        if self.models is not None:
            caps = [d.capacity for d in self.models]
            if caps != sorted(caps) or len(set(caps)) != len(caps):
                raise ValueError("baseline model capacities must strictly increase")
        return self


class AppSpec(Strict):
    """One app of a profile file.

    Attributes:
        description: task and dataset.
        model: zoo model of the architecture.
        options: its builder keywords (input size, classes, stem).
        width: width multiplier of the largest descendant.
        descendants: smallest first, the last with capacity 1.
        top_accuracy: accuracy of the largest descendant (for derived accuracies).
        max_drop: accuracy a descendant of capacity 0 would lose (the curve's scale).
        min_accuracy: the app's accuracy goal (default: the largest's accuracy).
        max_latency: the app's latency goal (default: the profile's).
        paper: the paper's size figures, when the capacities were fitted to them.
        baseline: the app's independently compressed models (see the module docstring).
    """

    description: str = ""
    model: str
    options: dict[str, Any] = Field(default_factory=dict)
    width: float = Field(default=1.0, gt=0)
    descendants: list[DescendantSpec] = Field(min_length=1)
    top_accuracy: float | None = Field(default=None, gt=0, le=1)
    max_drop: float | None = Field(default=None, ge=0, lt=1)
    min_accuracy: float | None = Field(default=None, gt=0, le=1)
    max_latency: Seconds | None = Field(default=None, gt=0)
    paper: PaperSizes | None = None
    baseline: BaselineSpec | None = None

    @model_validator(mode="after")
    def _shape(self) -> AppSpec:
        caps = [d.capacity for d in self.descendants]
        if caps != sorted(caps) or len(set(caps)) != len(caps):
            raise ValueError("descendant capacities must strictly increase")
        if caps[-1] != 1.0:
            raise ValueError("the largest descendant must have capacity 1")
        if any(d.accuracy is None for d in self.descendants) and (
                self.top_accuracy is None or self.max_drop is None):
            raise ValueError("descendants without an accuracy need top_accuracy and max_drop")
        return self


class ProfileFile(Strict):
    """A profile file: apps and the shared accuracy-curve exponent and goals.

    Attributes:
        accuracy_exponent: exponent of the accuracy curves.
        max_latency: latency goal of every app without its own: a time, or
            ``fastest`` (each app's fastest descendant alone on the processor).
        baseline_drop_ratio: ``max_drop`` of an app's baseline curve over its
            descendants' (where the app gives no baseline ``max_drop``).
    """

    name: str
    description: str = ""
    source: str = ""
    accuracy_exponent: float = Field(default=2.0, ge=1)
    max_latency: Seconds | Literal["fastest"] = Field(default=1 / 30)
    baseline_drop_ratio: float = Field(default=1.0, ge=0)
    apps: dict[str, AppSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _goal(self) -> ProfileFile:
        if self.max_latency != "fastest" and not self.max_latency > 0:
            raise ValueError("max_latency must be a positive time or 'fastest'")
        return self


@dataclass(frozen=True)
class Descendant:
    """A descendant ready for scheduling.

    Attributes:
        index: position, 0 = the seed (smallest).
        capacity: filter fraction relative to the largest descendant.
        width: the zoo width multiplier of its trace.
        accuracy: top-1 accuracy (fraction).
        flops: operations per frame.
        memory: model memory (bytes).
        latency: seconds per frame with the whole compute (None until profiled).
    """

    index: int
    capacity: float
    width: float
    accuracy: float
    flops: float
    memory: float
    latency: float | None = None


@dataclass(frozen=True)
class AppProfile:
    """One app's multi-capacity model.

    Attributes:
        name: the app (``VC``).
        description: task and dataset.
        model: zoo model of the architecture.
        options: its builder keywords.
        descendants: smallest first.
        min_accuracy: accuracy goal (fraction).
        max_latency: latency goal (s); None: the fastest descendant's latency
            (known once latencies are filled in).
        baseline_models: the app's independently compressed models, smallest
            first (the baseline is their knee, :meth:`baseline_knee`).
    """

    name: str
    description: str
    model: str
    options: dict
    descendants: tuple[Descendant, ...]
    min_accuracy: float
    max_latency: float | None
    baseline_models: tuple[Descendant, ...] = ()

    def trace(self, index: int) -> Trace:
        """Inference kernel trace (batch 1, FP32) of descendant ``index``."""
        return descendant_trace(self.model, tuple(sorted(self.options.items())),
                                self.descendants[index].width)

    @property
    def largest(self) -> Descendant:
        return self.descendants[-1]

    def with_latencies(self, latencies: list[float],
                       baseline_latencies: list[float] | None = None) -> AppProfile:
        """This profile with simulated latencies filled in where none was measured.

        A ``fastest`` latency goal becomes the fastest descendant's latency.
        """
        new = tuple(d if d.latency is not None else replace(d, latency=lat)
                    for d, lat in zip(self.descendants, latencies))
        base = tuple(d if d.latency is not None else replace(d, latency=lat)
                     for d, lat in zip(self.baseline_models, baseline_latencies or
                                       [None] * len(self.baseline_models)))
        goal = self.max_latency if self.max_latency is not None else min(
            d.latency for d in new)
        return replace(self, descendants=new, baseline_models=base, max_latency=goal)

    def knee(self) -> int:
        """Index of the knee of the descendants' accuracy-vs-memory curve."""
        return knee_of(self.descendants)

    def baseline_knee(self) -> int:
        """Index of the baseline model: the knee of the baseline models' own curve."""
        return knee_of(self.baseline_models or self.descendants)

    def as_baseline(self) -> AppProfile:
        """This app with its baseline models in place of the descendants (what the
        status quo runs); the accuracy goal stays the multi-capacity model's."""
        if not self.baseline_models:
            return self
        return replace(self, descendants=self.baseline_models)

    def baseline_accuracy(self) -> float:
        """Accuracy of the app's baseline model (what gains are measured against)."""
        models = self.baseline_models or self.descendants
        return models[self.baseline_knee()].accuracy


def knee_of(models: tuple[Descendant, ...]) -> int:
    """Index of the knee of an accuracy-vs-memory curve ("Kneedle").

    Both axes are scaled to [0, 1] between the smallest and the largest model;
    the knee is the model farthest above the chord joining them, i.e. where more
    memory stops paying off.
    """
    sizes = [d.memory for d in models]
    accs = [d.accuracy for d in models]
    if len(sizes) == 1 or accs[-1] == accs[0]:
        return len(sizes) - 1
    span_s, span_a = sizes[-1] - sizes[0], accs[-1] - accs[0]
    gaps = [(a - accs[0]) / span_a - (s - sizes[0]) / span_s for s, a in zip(sizes, accs)]
    return max(range(len(gaps)), key=lambda i: (gaps[i], -i))


@lru_cache(maxsize=256)
def descendant_trace(model: str, options: tuple, width: float) -> Trace:
    """The inference trace of ``model`` at ``width`` (memoised: a pure function)."""
    from workloads.generate import generate_trace

    return generate_trace(model, mode="inference", batch=1, width=width, **dict(options))


def derived_accuracy(capacities: list[float], top: float, max_drop: float,
                     exponent: float) -> list[float]:
    """The documented concave accuracy curve (see the module docstring)."""
    return [top - max_drop * (1.0 - r) ** exponent for r in capacities]


def profile_path(name: str | Path) -> Path:
    """A bundled profile by name (``nestdnn``) or a path to a profile YAML."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            raise ConfigError("profile file not found", file=str(path))
        return path
    bundled = PROFILE_DIR / f"{name}.yaml"
    if not bundled.is_file():
        known = ", ".join(sorted(p.stem for p in PROFILE_DIR.glob("*.yaml")))
        raise ConfigError(f"unknown multi-capacity profile {str(name)!r}; bundled: {known}")
    return bundled


def read_profile_file(name: str | Path) -> ProfileFile:
    """Read and validate a profile file. Memoised per version of the file (its
    modification time and size): every app of a run and every run of a sweep in
    one process reads the same file, ~30 ms of YAML each time; the model is
    immutable (:class:`~simulator.spec.base.Strict`), so sharing it is safe."""
    path = profile_path(name)
    stat = path.stat()
    return _read_profile(str(path), str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=16)
def _read_profile(shown: str, _resolved: str, _mtime_ns: int, _size: int) -> ProfileFile:
    """:func:`read_profile_file`'s work, for one version of one file (``shown``, as
    errors name it; the other arguments are the memo's key)."""
    return validate(ProfileFile, read_yaml(Path(shown)), file=shown)


def load_profiles(name: str | Path = "nestdnn") -> dict[str, AppProfile]:
    """The apps of a profile file with accuracies, FLOPs and memory derived (no latency).

    Args:
        name: bundled profile name or path to a profile YAML.

    Returns:
        app name -> profile, in file order.
    """
    spec = read_profile_file(name)
    try:
        return {app: build_profile(app, entry, spec) for app, entry in spec.apps.items()}
    except ConfigError as err:
        raise err.within(file=str(profile_path(name))) from None


def build_profile(name: str, app: AppSpec, spec: ProfileFile) -> AppProfile:
    """One app's profile from its file entry (traces generated for FLOPs and memory)."""
    capacities = [d.capacity for d in app.descendants]
    derived = (derived_accuracy(capacities, app.top_accuracy, app.max_drop,
                                spec.accuracy_exponent)
               if app.top_accuracy is not None and app.max_drop is not None
               else [None] * len(capacities))
    options = tuple(sorted(app.options.items()))
    descendants = _models(app, app.descendants, derived, options)
    top = descendants[-1].accuracy
    goal = app.max_latency if app.max_latency is not None else spec.max_latency
    return AppProfile(name=name, description=app.description, model=app.model,
                      options=dict(app.options), descendants=descendants,
                      min_accuracy=app.min_accuracy if app.min_accuracy is not None else top,
                      max_latency=None if goal == "fastest" else float(goal),
                      baseline_models=_baseline(name, app, spec, options))


def _models(app: AppSpec, entries: list[DescendantSpec], derived: list, options: tuple
            ) -> tuple[Descendant, ...]:
    """Descendants (or baseline models) with FLOPs and memory from their traces."""
    out = []
    for index, (entry, acc) in enumerate(zip(entries, derived)):
        width = app.width * entry.capacity
        table = descendant_trace(app.model, options, width).table
        out.append(Descendant(
            index=index, capacity=entry.capacity, width=width,
            accuracy=entry.accuracy if entry.accuracy is not None else acc,
            flops=entry.flops if entry.flops is not None else float(table["flops"].sum()),
            memory=entry.memory if entry.memory is not None
            else float(table["weight_bytes"].sum()),
            latency=entry.latency))
    return tuple(out)


def _baseline(name: str, app: AppSpec, spec: ProfileFile, options: tuple
              ) -> tuple[Descendant, ...]:
    """The app's independently compressed models (see the module docstring)."""
    base = app.baseline or BaselineSpec()
    entries = base.models if base.models is not None else [
        DescendantSpec(capacity=d.capacity) for d in app.descendants]
    top = base.top_accuracy if base.top_accuracy is not None else app.top_accuracy
    drop = base.max_drop if base.max_drop is not None else (
        app.max_drop * spec.baseline_drop_ratio if app.max_drop is not None else None)
    if app.baseline is None and (top is None or drop is None):
        return ()  # measured descendants and no baseline curve: the descendants' knee
    if any(e.accuracy is None for e in entries):
        if top is None or drop is None:
            raise ConfigError("baseline models without an accuracy need top_accuracy and "
                              "max_drop", path=f"apps.{name}.baseline")
        if drop >= 1:
            raise ConfigError(f"the baseline curve's max_drop must be < 1; got {drop:g} "
                              "(max_drop x baseline_drop_ratio)", path=f"apps.{name}.baseline")
    derived = derived_accuracy([e.capacity for e in entries], top, drop,
                               spec.accuracy_exponent) if top is not None and \
        drop is not None else [None] * len(entries)
    return _models(app, entries, derived, options)
