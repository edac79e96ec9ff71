"""Where to put the exits: exit costs, exit quality and FlexDNN's insertion plan.

A frame leaving at exit ``j`` runs the backbone up to ``j``'s attach point and
every inserted exit branch up to ``j``; a frame no exit recognises runs the
whole backbone and every inserted branch. So each exit costs something for
every frame that passes through it and saves the rest of the backbone for the
frames that leave there. FlexDNN scores exit ``j`` by its quality::

    Q_j = G_j / C_j
    G_j = (frames leaving at j) * (backbone cost after j)     # computation avoided
    C_j = (frames reaching j)  * (cost of j's branch)         # computation spent

and builds the insertion plan greedily: start with an exit at every candidate,
then repeatedly remove the exit of lowest quality as long as the total
computation decreases; stop when removing one would increase it.

When a model offers several exit designs per position (``heads`` of the
``early_exit`` model), the design of each position is chosen first
(:func:`choose_designs`): the one of highest quality alone at its position,
i.e. the best ratio of computation avoided to computation spent; the
insertion plan then runs on the chosen exits. (The dissertation searches
exit architectures per position; the text available to us stops before its
details, so this is our reading: same objective, the exit quality.)
:func:`stage_ends` gives the fixed positions of a BranchyNet-style baseline.

Costs are in any additive unit; the FlexDNN policy uses each kernel's
simulated time on its processor (so the plan accounts for what the SoC does
with small and large layers, not just FLOPs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simulator.trace import Trace

from .model import exit_of

FINAL = -1  # "exit" index of frames that run the whole backbone


@dataclass(frozen=True)
class ExitStructure:
    """Rows of an early-exit trace, by role.

    Attributes:
        backbone: backbone rows in execution order.
        attach: exit -> position in ``backbone`` of the row its branch reads.
        heads: exit -> rows of its branch.
    """

    backbone: tuple[int, ...]
    attach: dict[int, int]
    heads: dict[int, tuple[int, ...]]

    @property
    def exits(self) -> list[int]:
        return sorted(self.heads)

    def skip(self, inserted: Sequence[int], taken: int) -> frozenset[int]:
        """Rows that do not run for a frame leaving at ``taken`` (``FINAL``: none leaves)."""
        out = [row for j, rows in self.heads.items()
               if j not in inserted or (taken != FINAL and j > taken) for row in rows]
        if taken != FINAL:
            out.extend(self.backbone[self.attach[taken] + 1:])
        return frozenset(out)


def exit_structure(trace: Trace) -> ExitStructure:
    """Split an ``early_exit`` trace into backbone and exit branches."""
    table = trace.table
    names = table["name"].tolist()
    heads: dict[int, list[int]] = {}
    backbone: list[int] = []
    for row, name in enumerate(names):
        j = exit_of(name)
        if j is None:
            backbone.append(row)
        else:
            heads.setdefault(j, []).append(row)
    position = {row: i for i, row in enumerate(backbone)}
    attach = {}
    for j, rows in heads.items():
        outside = [p for p in trace.preds[rows[0]] if p in position]
        if not outside:
            raise ValueError(f"exit {j} does not read a backbone layer")
        attach[j] = max(position[p] for p in outside)
    return ExitStructure(tuple(backbone), attach, {j: tuple(r) for j, r in heads.items()})


@dataclass(frozen=True)
class ExitCosts:
    """Per-frame costs of the pieces of an early-exit model.

    Attributes:
        prefix: exit -> backbone cost up to its attach point.
        head: exit -> cost of its branch.
        total: cost of the whole backbone (final classifier included).
    """

    prefix: dict[int, float]
    head: dict[int, float]
    total: float

    def depth(self, j: int) -> float:
        """Share of the backbone's cost done before exit ``j``."""
        return self.prefix[j] / self.total if self.total > 0 else 0.0


def exit_costs(structure: ExitStructure, row_cost: Sequence[float]) -> ExitCosts:
    """Costs from a per-row cost (seconds or FLOPs of every kernel)."""
    cumulative = np.cumsum([row_cost[row] for row in structure.backbone])
    return ExitCosts(prefix={j: float(cumulative[p]) for j, p in structure.attach.items()},
                     head={j: float(sum(row_cost[r] for r in rows))
                           for j, rows in structure.heads.items()},
                     total=float(cumulative[-1]) if len(cumulative) else 0.0)


def exits_taken(difficulty: np.ndarray, inserted: Sequence[int], cutoff: dict[int, float]
                ) -> np.ndarray:
    """Exit each frame leaves at: the first inserted exit whose cutoff covers it.

    Args:
        difficulty: per-frame difficulties.
        inserted: the exits in the plan.
        cutoff: exit -> largest difficulty that leaves there (capability + relax).
    """
    taken = np.full(len(difficulty), FINAL)
    open_ = np.ones(len(difficulty), dtype=bool)
    for j in sorted(inserted):
        leave = open_ & (difficulty <= cutoff[j])
        taken[leave] = j
        open_ &= ~leave
    return taken


def frame_costs(costs: ExitCosts, inserted: Sequence[int], taken: np.ndarray) -> np.ndarray:
    """Per-frame cost of the plan ``inserted`` for frames leaving at ``taken``."""
    order = sorted(inserted)
    heads = np.cumsum([costs.head[j] for j in order])
    out = np.full(len(taken), costs.total + (heads[-1] if order else 0.0))
    for k, j in enumerate(order):
        out[taken == j] = costs.prefix[j] + heads[k]
    return out


def qualities(costs: ExitCosts, inserted: Sequence[int], taken: np.ndarray
              ) -> dict[int, float]:
    """FlexDNN's exit quality ``Q_j = G_j / C_j`` of each inserted exit."""
    order = sorted(inserted)
    out = {}
    for j in order:
        reaching = np.sum((taken == FINAL) | (taken >= j))
        leaving = np.sum(taken == j)
        gain = leaving * (costs.total - costs.prefix[j])
        spent = reaching * costs.head[j]
        out[j] = gain / spent if spent > 0 else float("inf")
    return out


@dataclass(frozen=True)
class InsertionPlan:
    """The result of the greedy.

    Attributes:
        exits: the exits kept.
        cost: mean cost per frame with them.
        history: ``(removed exit, mean cost per frame after removing it)`` per step,
            the last being the rejected removal (cost would rise).
    """

    exits: tuple[int, ...]
    cost: float
    history: tuple[tuple[int, float], ...]


def insertion_plan(costs: ExitCosts, cutoff: dict[int, float], difficulty: np.ndarray,
                   candidates: Sequence[int] | None = None) -> InsertionPlan:
    """FlexDNN's greedy insertion plan (see the module docstring).

    Args:
        costs: per-frame costs of backbone prefixes and branches.
        cutoff: exit -> largest difficulty leaving there.
        difficulty: profiling frames' difficulties.
        candidates: exits to start from (all of ``costs.head`` by default).
    """
    inserted = sorted(costs.head if candidates is None else candidates)

    def mean_cost(exits: list[int]) -> float:
        return float(frame_costs(costs, exits, exits_taken(difficulty, exits, cutoff)).mean())

    current = mean_cost(inserted)
    history = []
    while inserted:
        quality = qualities(costs, inserted, exits_taken(difficulty, inserted, cutoff))
        worst = min(inserted, key=lambda j: (quality[j], j))
        trial = [j for j in inserted if j != worst]
        cost = mean_cost(trial)
        history.append((worst, cost))
        if cost >= current:
            break
        inserted, current = trial, cost
    return InsertionPlan(tuple(inserted), current, tuple(history))


def positions(structure: ExitStructure) -> list[list[int]]:
    """Exits grouped by the backbone row they read (one group per position, in order)."""
    groups: dict[int, list[int]] = {}
    for j in structure.exits:
        groups.setdefault(structure.attach[j], []).append(j)
    return [groups[p] for p in sorted(groups)]


def choose_designs(costs: ExitCosts, cutoff: dict[int, float], difficulty: np.ndarray,
                   groups: Sequence[Sequence[int]]) -> list[int]:
    """Per position, the exit design of highest quality alone there (see the module).

    Ties go to the cheaper branch, then to the earlier design.
    """
    chosen = []
    for group in groups:
        def solo(j: int) -> tuple[float, float, int]:
            taken = exits_taken(difficulty, [j], cutoff)
            return (qualities(costs, [j], taken)[j], -costs.head[j], -j)
        chosen.append(max(group, key=solo))
    return chosen


def stage_ends(structure: ExitStructure, out_h: Sequence[float],
               groups: Sequence[Sequence[int]]) -> list[int]:
    """Positions (indices into ``groups``) that end a resolution stage of the backbone.

    A position ends a stage when the next position's feature map is smaller; the
    last position (just before the final classifier) is not an exit.
    """
    size = [out_h[structure.backbone[structure.attach[g[0]]]] for g in groups]
    return [i for i in range(len(groups) - 1) if size[i + 1] < size[i]]
