"""A model's split profile: candidate cuts, transferred bytes and accuracy per bitwidth.

Everything here is device-independent (DynO's "data sizes and accuracy per
<s, c>"). Sizes come from the real CNN-ISPM chain (:mod:`workloads.packing.codec`)
run on tensors drawn (seeded) from per-layer activation statistics
(:mod:`workloads.packing.activations`, levels in ``profiles.yaml``), or from
activation dumps: a folder with ``<layer>.npy`` per tensor (named by the
producing kernel's layer, ``input.npy`` for the model input) is packed with the
same chain and the measured sizes are used for those tensors.

``python -m workloads.splits.profile resnet152 > profile.csv`` prints a model's
default profile; its first three columns are an accuracy table to edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from simulator.errors import ConfigError
from simulator.trace import Trace
from workloads.packing.activations import LayerStats, packed_size
from workloads.packing.codec import LOSSLESS, pack

from .accuracy import RuleAccuracy, TableAccuracy, model_defaults
from .cuts import CutTensor, SplitPoint, candidate_splits

RAW = 0  # "bits" of an unpacked FP32 transfer (Neurosurgeon)


@dataclass
class SplitProfile:
    """Candidates of one model with their transferred bytes and accuracy drops.

    Args:
        trace: the model's inference trace.
        model: zoo name, for the defaults of ``profiles.yaml`` (None: generic defaults).
        relu_only: keep only ReLU-only cuts (plus the two extremes).
        accuracy_table: a measured drop table (CSV) replacing the rule.
        activations: a folder of ``<layer>.npy`` dumps (real-codec mode).
    """

    trace: Trace
    model: str | None = None
    relu_only: bool = True
    accuracy_table: Path | None = None
    activations: Path | None = None
    candidates: list[SplitPoint] = field(init=False)

    def __post_init__(self):
        self.candidates = candidate_splits(self.trace, self.relu_only)
        rule, self.stats = model_defaults(self.model)
        self.accuracy = (TableAccuracy(Path(self.accuracy_table)) if self.accuracy_table
                         else RuleAccuracy(rule))
        if self.activations is not None and not Path(self.activations).is_dir():
            raise ConfigError(f"activation dump folder not found: {self.activations}")
        self._sizes: dict[tuple[int, int], float] = {}

    def tensor_stats(self, tensor: CutTensor) -> LayerStats:
        """Statistics ``tensor`` is drawn from (a ReLU output at its depth, or the
        dense model input)."""
        s = self.stats
        if tensor.relu:
            return LayerStats(s.sparsity(tensor.depth), True, s.dead_share, s.correlation,
                              s.spread, s.scale_spread)
        return LayerStats(0.0, False, 0.0, s.correlation, s.spread, 0.0)

    def tensor_bytes(self, tensor: CutTensor, bits: int) -> float:
        """Bytes ``tensor`` takes on the wire packed at ``bits`` (:data:`RAW`: unpacked)."""
        if bits == RAW:
            return tensor.nbytes
        key = (tensor.producer, bits)
        size = self._sizes.get(key)
        if size is None:
            dump = (Path(self.activations) / f"{tensor.layer}.npy"
                    if self.activations is not None else None)
            if dump is not None and dump.is_file():
                size = float(pack(np.load(dump), bits).nbytes)
            else:
                size = packed_size(self.tensor_stats(tensor), tensor.elements,
                                   tensor.channels, bits)
            self._sizes[key] = size
        return size

    def nbytes(self, split: SplitPoint, bits: int) -> float:
        """Bytes crossing ``split`` at ``bits`` (all its tensors)."""
        return sum(self.tensor_bytes(t, bits) for t in split.tensors)

    def drop(self, split: SplitPoint, bits: int) -> float:
        """Accuracy lost (pp) at ``bits`` (nothing when unpacked or lossless)."""
        if bits in (RAW, LOSSLESS):
            return 0.0
        return self.accuracy.drop(split, bits)

    def lowest_bits(self, split: SplitPoint, allowance: float, bits: list[int]) -> int:
        """The lowest of ``bits`` whose drop stays below ``allowance`` pp (lossless if none)."""
        ok = [b for b in sorted(bits) if self.drop(split, b) < allowance]
        return ok[0] if ok else LOSSLESS

    def table(self, bits: list[int]) -> pd.DataFrame:
        """The profile as a table: one row per candidate and bitwidth, with the columns
        of a measured accuracy table (``split_layer, bits, drop_pp``) first, so that
        it can be edited and given back as ``accuracy_table``."""
        rows = [{"split_layer": split.layer, "bits": b, "drop_pp": self.drop(split, b),
                 "split": split.index, "tensors": len(split.tensors),
                 "raw_bytes": split.nbytes, "packed_bytes": self.nbytes(split, b)}
                for split in self.candidates if split.tensors for b in bits]
        return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    """Print a zoo model's default split profile as CSV (edit the first three columns
    to make a measured accuracy table)."""
    import argparse
    import sys

    from workloads.generate import generate_trace

    parser = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--bits", nargs="+", type=int, default=[3, 4, 5, 6, 7, 8])
    args = parser.parse_args(argv)
    profile = SplitProfile(generate_trace(args.model), args.model)
    profile.table(args.bits).to_csv(sys.stdout, index=False)


if __name__ == "__main__":
    main()
