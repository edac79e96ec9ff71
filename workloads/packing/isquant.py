"""ISQuant: linear quantisation with a per-tensor scale from the tensor's own range.

For a tensor ``x`` and ``b`` bits, with ``lo = min(x)``, ``hi = max(x)``:
``s = log2((2^b - 1) / (hi - lo))`` and ``q = round((x - lo) * 2^s)``, so ``q``
spans the integers ``0 .. 2^b - 1``. The receiver restores
``x' = lo + q * 2^-s``; the error is at most half a step, ``(hi - lo) / (2^b - 1) / 2``.
"""

from __future__ import annotations

import numpy as np


def storage_dtype(bits: int) -> np.dtype:
    """The smallest unsigned integer type holding ``bits`` bits."""
    if not 1 <= bits <= 32:
        raise ValueError(f"bits must be in 1..32; got {bits}")
    return np.dtype(np.uint8 if bits <= 8 else np.uint16 if bits <= 16 else np.uint32)


def isquant(x: np.ndarray, bits: int, lo: float | None = None, hi: float | None = None
            ) -> tuple[np.ndarray, float, float]:
    """Quantise ``x`` to ``bits`` bits.

    Args:
        x: the tensor (any shape; flattened).
        bits: bitwidth ``b``.
        lo, hi: the range to use (default: the tensor's min and max); values
            outside are clipped.

    Returns:
        ``(q, lo, scale)``: unsigned integers in ``0 .. 2^b - 1`` (smallest
        dtype that holds them), the offset and ``2^s`` (levels per unit).
    """
    flat = np.asarray(x, dtype=np.float32).ravel()
    lo = float(flat.min()) if lo is None else float(lo)
    hi = float(flat.max()) if hi is None else float(hi)
    levels = 2 ** bits - 1
    span = hi - lo
    scale = levels / span if span > 0 else 1.0  # = 2^s
    q = np.rint((np.clip(flat, lo, hi) - lo) * scale)
    return q.astype(storage_dtype(bits)), lo, scale


def dequantize(q: np.ndarray, lo: float, scale: float) -> np.ndarray:
    """Restore FP32 values from ISQuant integers."""
    return (q.astype(np.float32) / np.float32(scale) + np.float32(lo)).astype(np.float32)
