"""Horizontal optimisation (DSP-aware operator split) and the vanilla library's split.

Both turn one operator into parts that run side by side on the units of a
multi-core DSP, one part per unit (placements of one unit, each with
``1 / parts`` of the shared memories' bandwidth), followed by a barrier: the
next operator's parts wait for all of them.

* **Vanilla** (an operator-centric library): each operator's output is cut
  into bands of rows (columns when it has one row, output channels when it has
  one position), as a parallel-for over the outer loop would; every unit reads
  all the weights, and nothing is done to fit them in its L2.
* **DOS** (Xenos' DSP-aware operator split): feature maps larger than the
  shared on-chip memory are first sliced into bands processed one after
  another; each slice is split by output channels (kernels to the units'
  private L2, the feature map stays in shared memory, no boundary rows),
  leftover channels by rows, by rows outright when there are fewer channels
  than units; then each unit's kernels are split so they fit its L2 (output
  channels, else input channels with partial sums), the pieces running one
  after another on the unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.policy import Placement

from ..rewrite import Rewriter
from .partition import by_band, extent, fit_parameters, narrowed, split

POSITION_LOCAL = ("softmax", "layernorm")
# the steps of a recurrent layer depend on each other: only its outputs split
RECURRENT = ("lstm",)


@dataclass(frozen=True)
class SplitConfig:
    """How one processor's units are used.

    Attributes:
        units: units of the processor (parts per operator).
        horizontal: DSP-aware split (True, costed with the processor's ``xenos``
            library) or the vanilla library's (False, ``operator-centric``).
        budget: bytes of each unit's private memory for weights.
        shared: bytes of on-chip shared memory (feature maps above it are sliced).
    """

    units: int
    horizontal: bool
    budget: float
    shared: float

    @property
    def library(self) -> str:
        """The kernel library the parts are costed with (``ProcessorSpec.libraries``)."""
        return "xenos" if self.horizontal else "operator-centric"


def config_for(spec, soc, units: int | None, horizontal: bool,
               l2_fraction: float) -> SplitConfig:
    """The split configuration of processor ``spec`` of device ``soc``."""
    private = [c.size for c in spec.caches if c.per_unit]
    shared = [soc.memory[m].size for m in spec.shared_memories if m != "dram"]
    return SplitConfig(units=min(spec.units, units or spec.units), horizontal=horizontal,
                       budget=(private[-1] if private else 0.0) * l2_fraction,
                       shared=max(shared) if shared else math.inf)


def _axis(record: dict, units: int, horizontal: bool) -> str:
    rows, cols = extent(record, "inH"), extent(record, "inW")
    if record["op"] in RECURRENT:
        return "outC"
    if not horizontal or record["op"] in POSITION_LOCAL:
        return "inH" if rows > 1 else "inW" if cols > 1 else "outC"
    if extent(record, "outC") >= units or max(rows, cols) < units:
        return "outC"
    return "inH" if rows >= cols else "inW"


def plan_parts(record: dict, cfg: SplitConfig) -> list[list[tuple[list[dict], bool]]]:
    """The parts of one operator.

    Returns:
        per slice (run one after another), per unit, ``(pieces, partial)``: the
        pieces run in order on the unit; ``partial`` when they are input-channel
        partial sums accumulated in place.
    """
    slices = [dict(record)]
    if cfg.horizontal and record["bytes_in"] + record["bytes_out"] > cfg.shared:
        count = math.ceil((record["bytes_in"] + record["bytes_out"]) / cfg.shared)
        slices = [narrowed(s, record, "inH") for s in by_band(record, count, "inH")]
    out = []
    total_out = max(record["bytes_out"], 1.0)
    for piece in slices:
        axis = _axis(piece, cfg.units, cfg.horizontal)
        parts = [narrowed(part, piece, axis) for part in split(piece, cfg.units, axis)]
        chains = []
        for part in parts:
            if cfg.horizontal and part["weight_bytes"] > cfg.budget:
                channels = max(1, round(extent(record, "outC") * part["bytes_out"] / total_out))
                chains.append(fit_parameters(part, cfg.budget, channels))
            else:
                chains.append(([part], False))
        out.append(chains)
    return out


def emit_operator(rw: Rewriter, record: dict, deps, processor: str, cfg: SplitConfig
                  ) -> list[int]:
    """Emit one operator's parts on ``processor``; returns the ids ending it."""
    previous = list(deps)
    name = record["name"]
    for s, chains in enumerate(plan_parts(record, cfg)):
        share = 1.0 / len(chains)
        tails = []
        for u, (pieces, partial) in enumerate(chains):
            last = previous
            for j, piece in enumerate(pieces):
                if partial and j:
                    # partial sums: read the running total back and add to it
                    piece = dict(piece, bytes_in=piece["bytes_in"] + piece["bytes_out"])
                label = f"{name}[s{s}.u{u}.{j}]" if len(pieces) > 1 else f"{name}[s{s}.u{u}]"
                kid = rw.emit(piece, Placement(processor, 1, library=cfg.library,
                                               memory_share=share), last, name=label)
                last = [kid]
            tails.extend(last)
        previous = tails
    return previous


def operator_time(cost_model, record: dict, processor: str, cfg: SplitConfig,
                  frequency: float) -> float:
    """Estimated seconds of one operator split by :func:`plan_parts` (slices one
    after another, each as long as its slowest unit), at ``frequency`` (Hz)."""
    total = 0.0
    for chains in plan_parts(record, cfg):
        share = 1.0 / len(chains)
        total += max(sum(cost_model.kernel_cost(processor, 1, piece, cfg.library, share)
                         .duration(frequency) for piece in pieces)
                     for pieces, _ in chains)
    return total
