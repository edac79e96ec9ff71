"""The registered split-inference policies: dyno, neurosurgeon, device-only,
server-only and static-split (parameters in each class; concepts in :mod:`.base`)."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import AfterValidator, Field

from simulator.params import PositiveFloat, UnitInterval
from simulator.policy import POLICIES
from workloads.packing.codec import LOSSLESS
from workloads.splits.profile import RAW, SplitProfile

from .base import DEFAULT_BITS, Cores, JobState, Reinvoke, SplitInference
from .scheduler import Constraint, Target, choose, parse_objectives


def _bitwidth(bits: int) -> int:
    if not (1 <= bits <= 16 or bits == LOSSLESS):
        raise ValueError(f"bitwidths are 1..16 or {LOSSLESS} (lossless); got {bits!r}")
    return bits


Bitwidth = Annotated[int, AfterValidator(_bitwidth)]
Bitwidths = Annotated[list[Bitwidth], Field(min_length=1)]
Tie = Annotated[float, Field(ge=0, lt=1)]


def _jpeg_size(split, bits_per_pixel: float) -> float:
    """Bytes of the model input as a JPEG (``bits_per_pixel`` per pixel)."""
    pixels = split.tensors[0].elements / max(split.tensors[0].channels, 1)
    return pixels * bits_per_pixel / 8


@POLICIES.register("dyno")
class DynO(SplitInference):
    """DynO: split point and transfer bitwidth chosen at run time.

    Args:
        constraints: ordered hard constraints (:mod:`.scheduler`); default: accuracy
            drop below 1 pp.
        targets: ordered soft targets; default: minimum server cost, then maximum
            throughput.
        bits: candidate bitwidths (32 = lossless packing).
        reinvoke: re-run the scheduler when a monitored estimate moved by more than
            this fraction since the last decision.
        tie: relative tolerance under which two values of a target are equal.
        input: how split 0 (server-only) sends the model input: ``packed`` (CNN-ISPM
            at each of ``bits``, DynO's enhanced server-only) or ``jpeg`` (the
            camera's JPEG, as the server-only baseline of DynO's energy experiment;
            decoded on the server, no accuracy cost assumed).
        jpeg_bits_per_pixel: JPEG size per pixel (bits) with ``input: jpeg``.
        client, client_cores, packer, server, unpacker: placements (:mod:`.base`).
        accuracy_table: CSV of measured accuracy drops replacing the defaults.
        activations: folder of ``<layer>.npy`` dumps to pack with the real codec.
    """

    name = "dyno"
    adaptive = True

    def __init__(self, constraints: list[Constraint] | None = None,
                 targets: list[Target] | None = None,
                 bits: Bitwidths = DEFAULT_BITS, reinvoke: Reinvoke = 0.05, tie: Tie = 0.01,
                 input: Literal["packed", "jpeg"] = "packed",
                 jpeg_bits_per_pixel: PositiveFloat = 2.0,
                 client: str = "gpu", client_cores: Cores = None,
                 packer: str | None = None, server: str = "server:gpu",
                 unpacker: str | None = None, accuracy_table: str | None = None,
                 activations: str | None = None):
        self.constraints = ([{"metric": "accuracy_drop", "max": 1.0}]
                            if constraints is None else constraints)
        self.targets = ([{"metric": "server_cost", "goal": "min"},
                         {"metric": "throughput", "goal": "max"}]
                        if targets is None else targets)
        self._constraints, self._targets = parse_objectives(self.constraints, self.targets)
        self.bits = sorted(set(bits))
        self.tie = tie
        self.input = input
        self.jpeg_bits_per_pixel = float(jpeg_bits_per_pixel)
        self._configure(client, client_cores, packer, server, unpacker, accuracy_table,
                        activations, reinvoke)

    def candidates(self, profile: SplitProfile) -> list:
        n = len(profile.trace)
        jpeg = self.input == "jpeg"
        return [(split, None if split.index == n or (jpeg and split.index == 0) else b)
                for split in profile.candidates
                for b in ([None] if split.index == n or (jpeg and split.index == 0)
                          else self.bits)]

    def _jpeg_bytes(self, split) -> float | None:
        if self.input != "jpeg" or split.index != 0:
            return None
        return _jpeg_size(split, self.jpeg_bits_per_pixel)

    def _references(self, state: JobState) -> dict[str, int]:
        n = len(state.profile.trace)
        device_only = next(k for k, (s, _) in enumerate(state.configs) if s.index == n)
        at_zero = [k for k, (s, b) in enumerate(state.configs) if s.index == 0]

        def drop(k):
            split, bits = state.configs[k]
            return 0.0 if bits is None else state.profile.drop(split, bits)
        server_only = min(at_zero, key=lambda k: (drop(k) >= 1.0, state.configs[k][1] or 0))
        return {"device-only": device_only, "server-only": server_only}

    def decide(self, state: JobState, estimates: dict[str, np.ndarray] | None) -> int:
        choice, self._feasible = choose(estimates, self._constraints, self._targets,
                                        self._references(state), self.tie)
        return choice

    def metrics(self, result, iterations) -> dict[str, float]:
        """The base metrics, whether the last decision met every constraint
        (``constraints_met``) and the first absolute latency bound (``latency_bound_s``)."""
        out = super().metrics(result, iterations)
        out["constraints_met"] = float(getattr(self, "_feasible", True))
        bound = next((c.max for c in self._constraints
                      if c.metric == "latency" and c.max is not None and c.relative_to is None),
                     None)
        if bound is not None:
            out["latency_bound_s"] = bound
        return out


@POLICIES.register("neurosurgeon")
class Neurosurgeon(SplitInference):
    """Neurosurgeon (Kang et al., ASPLOS'17): the split minimising latency, over every
    layer boundary, with unquantised transfers; re-decided when the estimates move.

    Args:
        reinvoke: re-decide when an estimate moved by more than this fraction.
        client, client_cores, packer, server, unpacker: placements (the packer and
            unpacker stay idle: nothing is packed).
    """

    name = "neurosurgeon"
    adaptive = True
    relu_only = False

    def __init__(self, reinvoke: Reinvoke = 0.05, client: str = "gpu",
                 client_cores: Cores = None, packer: str | None = None,
                 server: str = "server:gpu", unpacker: str | None = None):
        self._configure(client, client_cores, packer, server, unpacker, None, None, reinvoke)

    def candidates(self, profile: SplitProfile) -> list:
        n = len(profile.trace)
        return [(split, None if split.index == n else RAW) for split in profile.candidates]

    def decide(self, state: JobState, estimates: dict[str, np.ndarray] | None) -> int:
        return int(np.argmin(estimates["latency"]))


class _Static(SplitInference):
    """A fixed configuration chosen from the profile alone."""

    def decide(self, state: JobState, estimates) -> int:
        return 0


@POLICIES.register("device-only")
class DeviceOnly(_Static):
    """The whole model on the client.

    Args:
        client, client_cores, packer, server, unpacker: placements (only ``client`` used).
    """

    name = "device-only"

    def __init__(self, client: str = "gpu", client_cores: Cores = None,
                 packer: str | None = None, server: str = "server:gpu",
                 unpacker: str | None = None):
        self._configure(client, client_cores, packer, server, unpacker, None, None)

    def candidates(self, profile: SplitProfile) -> list:
        return [(profile.candidates[-1], None)]


@POLICIES.register("server-only")
class ServerOnly(_Static):
    """The whole model on the server; the input is sent packed (DynO's enhanced
    baseline), raw, or as a JPEG.

    Args:
        input: ``packed`` (CNN-ISPM at the lowest bitwidth within the accuracy
            allowance), ``raw`` (FP32) or ``jpeg``.
        accuracy_allowance: drop (pp) the packed input may cost.
        bits: candidate bitwidths for the packed input.
        jpeg_bits_per_pixel: JPEG size per pixel (bits); 2 bits/pixel is a
            quality-90 JPEG of a natural image (E).
        client, client_cores, packer, server, unpacker: placements.
        accuracy_table: CSV of measured accuracy drops.
    """

    name = "server-only"

    def __init__(self, input: Literal["packed", "raw", "jpeg"] = "packed",
                 accuracy_allowance: PositiveFloat = 1.0, bits: Bitwidths = DEFAULT_BITS,
                 jpeg_bits_per_pixel: PositiveFloat = 2.0,
                 client: str = "gpu", client_cores: Cores = None,
                 packer: str | None = None, server: str = "server:gpu",
                 unpacker: str | None = None, accuracy_table: str | None = None):
        self.input = input
        self.accuracy_allowance = float(accuracy_allowance)
        self.bits = sorted(set(bits))
        self.jpeg_bits_per_pixel = float(jpeg_bits_per_pixel)
        self._configure(client, client_cores, packer, server, unpacker, accuracy_table, None)

    def candidates(self, profile: SplitProfile) -> list:
        split = profile.candidates[0]
        if self.input == "packed":
            return [(split, profile.lowest_bits(split, self.accuracy_allowance, self.bits))]
        return [(split, RAW if self.input == "raw" else None)]

    def _jpeg_bytes(self, split) -> float | None:
        if self.input != "jpeg":
            return None
        return _jpeg_size(split, self.jpeg_bits_per_pixel)


@POLICIES.register("static-split")
class StaticSplit(_Static):
    """A fixed split (e.g. to break the runtime down per split point).

    Args:
        position: where to cut, as a fraction of the model's kernels in [0, 1]:
            the candidate split nearest to it.
        bits: bitwidth of the transfer: an int (32 = lossless) or ``auto`` (the
            lowest of 3..8 within ``accuracy_allowance``); ``raw`` sends FP32 unpacked.
        accuracy_allowance: drop (pp) allowed with ``bits: auto``.
        relu_only: cut only where ReLU outputs cross (DynO's candidates).
        client, client_cores, packer, server, unpacker: placements.
        accuracy_table: CSV of measured accuracy drops.
    """

    name = "static-split"

    def __init__(self, position: UnitInterval = 0.5,
                 bits: Bitwidth | Literal["auto", "raw"] = "auto",
                 accuracy_allowance: PositiveFloat = 1.0, relu_only: bool = True,
                 client: str = "gpu", client_cores: Cores = None,
                 packer: str | None = None, server: str = "server:gpu",
                 unpacker: str | None = None, accuracy_table: str | None = None):
        self.position = float(position)
        self.bits = bits
        self.accuracy_allowance = float(accuracy_allowance)
        self.relu_only = bool(relu_only)
        self._configure(client, client_cores, packer, server, unpacker, accuracy_table, None)

    def candidates(self, profile: SplitProfile) -> list:
        split = min(profile.candidates, key=lambda s: (abs(s.fraction - self.position),
                                                       s.index))
        if split.index == len(profile.trace):
            return [(split, None)]
        if self.bits == "raw":
            return [(split, RAW)]
        bits = (profile.lowest_bits(split, self.accuracy_allowance, list(range(3, 9)))
                if self.bits == "auto" else self.bits)
        return [(split, bits)]
