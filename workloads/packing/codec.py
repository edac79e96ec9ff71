"""The real CNN-ISPM chain: ISQuant, bit shuffle and LZ4, on arrays or ``.npy`` dumps.

:func:`pack` runs the three stages on a tensor and measures each with a
wall clock; :func:`unpack` inverts them. ``bits=LOSSLESS`` (32) skips ISQuant
and shuffles the FP32 bit patterns themselves (lossless packing).
:func:`measure` and :func:`measure_dumps` tabulate sizes and times over
bitwidths, e.g. to build a split profile from activations dumped by a
framework, or to check :mod:`.model`::

    python -m workloads.packing.codec layer3.npy --bits 3 4 6 8 32

Times are this machine's, single-threaded; the simulator costs packing on the
simulated device through :mod:`.kernels` instead.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path

import lz4.block
import numpy as np
import pandas as pd

from .bitshuffle import bitshuffle, bitunshuffle
from .isquant import dequantize, isquant

LOSSLESS = 32
HEADER_BYTES = 16  # count, bits, ISQuant offset and scale


@dataclass(frozen=True)
class Packed:
    """A packed tensor.

    Attributes:
        data: the LZ4 block.
        bits: ISQuant bitwidth, or :data:`LOSSLESS`.
        count: elements.
        lo: ISQuant offset.
        scale: ISQuant levels per unit (``2^s``).
        shape: the tensor's shape.
        times: seconds per stage (``quantize``, ``bitshuffle``, ``lz4``).
    """

    data: bytes
    bits: int
    count: int
    lo: float
    scale: float
    shape: tuple[int, ...]
    times: dict[str, float] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        """Bytes sent: payload plus header."""
        return len(self.data) + HEADER_BYTES

    @property
    def raw_bytes(self) -> int:
        """Bytes of the FP32 tensor."""
        return self.count * 4

    @property
    def ratio(self) -> float:
        """FP32 size over packed size."""
        return self.raw_bytes / self.nbytes


def pack(x: np.ndarray, bits: int = LOSSLESS) -> Packed:
    """Pack ``x`` with ISQuant at ``bits`` (or losslessly), bit shuffle and LZ4."""
    array = np.asarray(x, dtype=np.float32)
    times = {}
    start = time.perf_counter()
    if bits == LOSSLESS:
        values, lo, scale = array.ravel().view(np.uint32), 0.0, 1.0
    else:
        values, lo, scale = isquant(array, bits)
    times["quantize"] = time.perf_counter() - start
    start = time.perf_counter()
    shuffled = bitshuffle(values, bits)
    times["bitshuffle"] = time.perf_counter() - start
    start = time.perf_counter()
    data = lz4.block.compress(shuffled, store_size=False)
    times["lz4"] = time.perf_counter() - start
    return Packed(data, bits, array.size, lo, scale, array.shape, times)


def unpack(packed: Packed) -> np.ndarray:
    """Restore the tensor (exactly for lossless packing, to half a step otherwise)."""
    planes = packed.bits * ((packed.count + 7) // 8)
    shuffled = lz4.block.decompress(packed.data, uncompressed_size=planes)
    values = bitunshuffle(shuffled, packed.bits, packed.count)
    if packed.bits == LOSSLESS:
        flat = values.astype(np.uint32).view(np.float32)
    else:
        flat = dequantize(values, packed.lo, packed.scale)
    return flat.reshape(packed.shape)


def measure(x: np.ndarray, bits: list[int], repeats: int = 3) -> pd.DataFrame:
    """Sizes and stage times of packing ``x`` at each bitwidth (fastest of ``repeats``).

    Returns:
        one row per bitwidth: ``bits, elements, sparsity, raw_bytes, packed_bytes,
        ratio, quantize_s, bitshuffle_s, lz4_s, total_s``.
    """
    array = np.asarray(x, dtype=np.float32)
    rows = []
    for b in bits:
        runs = [pack(array, b) for _ in range(max(1, repeats))]
        best = {stage: min(run.times[stage] for run in runs) for stage in runs[0].times}
        first = runs[0]
        rows.append({"bits": b, "elements": first.count,
                     "sparsity": float(np.mean(array == 0)), "raw_bytes": first.raw_bytes,
                     "packed_bytes": first.nbytes, "ratio": first.ratio,
                     **{f"{stage}_s": t for stage, t in best.items()},
                     "total_s": sum(best.values())})
    return pd.DataFrame(rows)


def measure_dumps(paths: list[Path], bits: list[int], repeats: int = 3) -> pd.DataFrame:
    """:func:`measure` over activation dumps; a ``tensor`` column names each file's stem."""
    frames = [measure(np.load(path), bits, repeats).assign(tensor=Path(path).stem)
              for path in paths]
    table = pd.concat(frames, ignore_index=True)
    return table[["tensor", *[c for c in table.columns if c != "tensor"]]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dumps", nargs="+", type=Path, help=".npy activation dumps")
    parser.add_argument("--bits", nargs="+", type=int, default=[4, 8, LOSSLESS])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(measure_dumps(args.dumps, args.bits, args.repeats).to_string(index=False))


if __name__ == "__main__":
    main()
