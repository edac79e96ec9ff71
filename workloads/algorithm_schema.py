"""The schema of a mixed-precision training algorithm file (``workloads/algorithms/*.yaml``).

The four elements of Mandheling's description (translation, backprop, weights,
optimizer) and the data types; :mod:`workloads.mixed_precision` loads files
against it and translates traces. The format is documented in
``docs/workloads.md``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from simulator.ops import OP_KINDS, PASSES, PRECISIONS, check_op
from simulator.trace import BYTES_PER_ELEMENT

MAIN = "$op"  # marks the step that performs the original kernel's work

ROLES = ("weights", "activations", "gradients", "weight_update")
# Storage types a step may read or write; "scalar" is one 4-byte value.
STORAGE_BYTES = {"fp32": 4, "fp16": 2, "int8": 1, "int16": 2, "int32": 4}
SCALAR_BYTES = 4
_PASS_ROLE = {"fwd": "activations", "other": "activations", "bwd_data": "gradients",
              "bwd_weight": "gradients", "update": "weight_update"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class DataType(_Strict):
    """One of W / A / G / WU.

    Attributes:
        paper: the type as the paper states it (``INT8-16``, ``FP24``).
        trace: the trace precision that stands for it.
        note: why ``trace`` differs from ``paper``, if it does.
    """

    paper: str
    trace: Literal["fp32", "fp16", "int8"]
    note: str = ""


class DataTypes(_Strict):
    weights: DataType
    activations: DataType
    gradients: DataType
    weight_update: DataType


class Step(_Strict):
    """One kernel a rule emits.

    Attributes:
        op: ``$op`` (the original op: the main step) or an op kind.
        precision: trace precision, a role (``activations``...), or ``auto``
            (the role of the kernel's pass).
        input, output, weights: storage types of what the step reads, writes and
            reads as weights (a precision, a role, ``int32``, ``int16``;
            ``output`` may be ``scalar``); default: the step's precision.
        per: auxiliary steps only: which element count of the original kernel
            they process (``output``, ``input`` or ``weights``).
        flops_per_element: auxiliary steps only: operations per element.
        flops_scale: main step only: multiplier on the original flops.
        suffix: name suffix of an auxiliary kernel (default: its op).
    """

    op: str
    precision: str = "auto"
    input: str | None = None
    output: str | None = None
    weights: str | None = None
    per: Literal["output", "input", "weights"] = "output"
    flops_per_element: float = Field(0.0, ge=0)
    flops_scale: float = Field(1.0, ge=0)
    suffix: str | None = None

    @field_validator("op")
    @classmethod
    def _known_op(cls, value: str) -> str:
        return check_op(value, MAIN)

    @field_validator("precision")
    @classmethod
    def _known_precision(cls, value: str) -> str:
        if value not in (*PRECISIONS, *ROLES, "auto"):
            raise ValueError(f"precision must be one of {', '.join((*PRECISIONS, *ROLES))} "
                             f"or auto; got {value!r}")
        return value

    @field_validator("input", "output", "weights")
    @classmethod
    def _known_storage(cls, value: str | None) -> str | None:
        if value is not None and value not in (*STORAGE_BYTES, *ROLES, "scalar"):
            raise ValueError(f"type must be one of {', '.join((*STORAGE_BYTES, *ROLES))} or "
                             f"scalar; got {value!r}")
        return value

    @model_validator(mode="after")
    def _main_or_auxiliary(self) -> Step:
        if self.op == MAIN:
            wrong = {"per", "flops_per_element"} & self.model_fields_set
            if wrong:
                raise ValueError(f"the {MAIN} step keeps the original work; "
                                 f"{', '.join(sorted(wrong))} apply to other steps")
        elif "flops_scale" in self.model_fields_set:
            raise ValueError(f"flops_scale applies only to the {MAIN} step")
        return self

    @property
    def is_main(self) -> bool:
        return self.op == MAIN


class Match(_Strict):
    """Which kernels a rule applies to (an omitted key matches everything)."""

    op: list[str] | None = None
    pass_: list[Literal[PASSES]] | None = Field(None, alias="pass")  # type: ignore[valid-type]

    @field_validator("op")
    @classmethod
    def _known_ops(cls, value: list[str] | None) -> list[str] | None:
        unknown = [op for op in value or () if op not in OP_KINDS]
        if unknown:
            raise ValueError(f"unknown op kind(s) {', '.join(unknown)}")
        return value

    def matches(self, op: str, pass_: str) -> bool:
        return ((self.op is None or op in self.op)
                and (self.pass_ is None or pass_ in self.pass_))


class Rule(_Strict):
    """Translate matching kernels into ``emit`` (exactly one ``$op`` step)."""

    match: Match = Match()
    emit: list[Step] = Field(min_length=1)
    note: str = ""

    @model_validator(mode="after")
    def _one_main_step(self) -> Rule:
        mains = sum(step.is_main for step in self.emit)
        if mains != 1:
            raise ValueError(f"emit needs exactly one {MAIN!r} step (the original work); "
                             f"got {mains}")
        return self


def _check_passes(rules: list[Rule], allowed: tuple[str, ...], section: str) -> list[Rule]:
    for rule in rules:
        stray = [p for p in rule.match.pass_ or () if p not in allowed]
        if stray:
            raise ValueError(f"{section} rules see only {', '.join(allowed)} kernels; "
                             f"pass {', '.join(stray)} can never match here")
    return rules


class Translation(_Strict):
    """Element 1: forward rules, and steps applied once to the model input."""

    input: list[Step] = []
    rules: list[Rule] = []

    @field_validator("rules")
    @classmethod
    def _forward_passes(cls, rules: list[Rule]) -> list[Rule]:
        return _check_passes(rules, ("fwd", "other"), "translation")

    @field_validator("input")
    @classmethod
    def _input_steps(cls, steps: list[Step]) -> list[Step]:
        for step in steps:
            if step.is_main or step.per != "input":
                raise ValueError("input steps convert the model input: use an op kind "
                                 "and per: input")
        return steps


class Backprop(_Strict):
    """Element 2: rules for ``bwd_data`` and ``bwd_weight`` kernels."""

    rules: list[Rule] = []

    @field_validator("rules")
    @classmethod
    def _backward_passes(cls, rules: list[Rule]) -> list[Rule]:
        return _check_passes(rules, ("bwd_data", "bwd_weight"), "backprop")


class Weights(_Strict):
    """Element 3: weight information (documentation for reports; no cost)."""

    initializer: str
    scale: str = ""
    master_copy: bool = False
    update_rule: str = ""


class Optimizer(_Strict):
    """Element 4: optimiser and loss; ``update`` translates each ``sgd_update``."""

    name: str
    loss: str
    momentum: float = Field(0.0, ge=0)
    update: list[Step] = [Step(op=MAIN, precision="weight_update")]

    @field_validator("update")
    @classmethod
    def _one_main(cls, steps: list[Step]) -> list[Step]:
        if sum(step.is_main for step in steps) != 1:
            raise ValueError(f"update needs exactly one {MAIN!r} step")
        return steps


class Algorithm(_Strict):
    """A mixed-precision training algorithm (see the module docstring)."""

    name: str
    title: str
    reference: str
    mandheling_supported: bool
    data_types: DataTypes
    translation: Translation
    backprop: Backprop
    weights: Weights
    optimizer: Optimizer
    description: str = ""

    def steps_for(self, op: str, pass_: str) -> list[Step]:
        """The steps that replace one kernel (first matching rule wins)."""
        if pass_ == "update":
            return list(self.optimizer.update)
        rules = self.backprop.rules if pass_.startswith("bwd") else self.translation.rules
        for rule in rules:
            if rule.match.matches(op, pass_):
                return list(rule.emit)
        return [Step(op=MAIN)]

    def precision(self, name: str, pass_: str) -> str:
        """Resolve a step precision (role, ``auto`` or precision) to a trace precision."""
        if name == "auto":
            name = _PASS_ROLE[pass_]
        return getattr(self.data_types, name).trace if name in ROLES else name

    def storage_bytes(self, name: str | None, precision: str) -> int:
        """Bytes per element of a storage type (``None``: the step's precision)."""
        if name is None:
            return BYTES_PER_ELEMENT[precision]
        if name in ROLES:
            return BYTES_PER_ELEMENT[getattr(self.data_types, name).trace]
        return STORAGE_BYTES[name]
