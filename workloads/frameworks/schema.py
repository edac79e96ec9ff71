"""The schema of a training-framework file (``workloads/frameworks/*.yaml``).

A framework file says how one framework executes the kernels of a training
step that the generator describes abstractly: which separate operators it
runs for a batch norm in training mode, an optimiser update, a convolution's
weight gradient, and so on. Each rule matches kernels by op and pass and lists
the kernels that replace them; sizes are named (:data:`SIZES`) and resolved
per kernel from the trace's shape columns. Every rule cites the framework
source it was read from. :mod:`workloads.frameworks` loads and applies them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulator.ops import PASSES, check_op

MAIN = "$op"  # the step that performs the original kernel's work

# Element counts a step can read, write or compute over, per kernel (batch included):
SIZES = {
    "input": "the kernel's input activation (S_in)",
    "output": "its output activation (S_out)",
    "weights": "one parameter tensor of the layer (a rule with per_tensor: true runs "
               "once per tensor: weight, bias, or batch-norm scale and shift)",
    "columns": "the im2col matrix of a convolution: in_channels/groups * kernel^2 * "
               "out_h * out_w * batch",
    "input_taps": "kernel^2 * S_in (one input-sized buffer per kernel tap)",
    "output_taps": "kernel^2 * S_out (one output-sized pass per kernel tap)",
    "channels": "out_channels * 1 (per-channel statistics; negligible next to the rest)",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FrameworkStep(_Strict):
    """One kernel a rule emits.

    Attributes:
        op: ``$op`` (the original kernel, unchanged) or an op kind.
        reads: tensors read, each named by its size (``[output, output]``: two
            output-sized tensors).
        writes: tensors written, the same way.
        flops: the size the step computes over (one element each time
            ``flops_per_element``); empty: no arithmetic (data movement).
        flops_per_element: operations per element of ``flops``.
        suffix: name suffix of the kernel (default: its op).
    """

    op: str
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    flops: str | None = None
    flops_per_element: float = Field(1.0, ge=0)
    suffix: str | None = None

    @field_validator("op")
    @classmethod
    def _known_op(cls, value: str) -> str:
        return check_op(value, MAIN)

    @field_validator("reads", "writes")
    @classmethod
    def _known_sizes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for size in value:
            _check_size(size)
        return value

    @field_validator("flops")
    @classmethod
    def _known_flops(cls, value: str | None) -> str | None:
        return None if value is None else _check_size(value)

    @property
    def is_main(self) -> bool:
        return self.op == MAIN


def _check_size(size: str) -> str:
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}; got {size!r}")
    return size


class Match(_Strict):
    """Which kernels a rule applies to: op kinds and, optionally, passes."""

    op: tuple[str, ...]
    passes: tuple[str, ...] = PASSES

    @field_validator("op")
    @classmethod
    def _ops(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(check_op(op) for op in value)

    @field_validator("passes")
    @classmethod
    def _passes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pass_ in value:
            if pass_ not in PASSES:
                raise ValueError(f"pass must be one of {', '.join(PASSES)}; got {pass_!r}")
        return value


class Rule(_Strict):
    """Kernels matching ``match`` become ``emit``'s steps, chained in order.

    Attributes:
        note: what the framework does, in a line.
        source: where in the framework's code this was read.
        match: the kernels it applies to.
        emit: the steps (may omit ``$op``: the steps then do the work).
        per_tensor: run the steps once per parameter tensor of the layer
            (``weights`` is then that tensor's size): frameworks keep a layer's
            weight and bias, or a batch norm's scale and shift, as separate
            variables, each updated by its own operators.
        with_bias: extra steps for a layer with a bias (its gradient reduction).
    """

    note: str
    source: str
    match: Match
    emit: tuple[FrameworkStep, ...] = Field(min_length=1)
    per_tensor: bool = False
    with_bias: tuple[FrameworkStep, ...] = ()


class Framework(_Strict):
    """A training framework's execution of a step.

    Attributes:
        name: registry name (the file's stem).
        title: one line.
        source: the code base read (repository, version).
        estimated: what in this file is an estimate rather than read from code.
        rules: the first rule matching a kernel applies; others pass through.
    """

    name: str
    title: str
    source: str
    estimated: str = ""
    rules: tuple[Rule, ...] = ()

    def rule_for(self, op: str, pass_: str) -> Rule | None:
        for rule in self.rules:
            if op in rule.match.op and pass_ in rule.match.passes:
                return rule
        return None
