"""Bit shuffling: transpose the bit matrix of a tensor.

``N`` values of ``b`` bits form an ``N x b`` bit matrix. Shuffling stores it
column by column: bit plane 0 (the least significant bit of every element),
then plane 1, ..., each plane packed 8 elements per byte. In a sparse or
narrow-range tensor the high planes are almost all zeros, which LZ4 then
removes. Only the ``b`` meaningful planes are stored (ISQuant values of 4 bits
take 4 planes, not the 8 of their ``uint8`` storage).
"""

from __future__ import annotations

import numpy as np


def bitshuffle(values: np.ndarray, bits: int) -> bytes:
    """Pack the ``bits`` low bit planes of unsigned ``values``, plane 0 first.

    Args:
        values: unsigned integers (any shape; flattened).
        bits: planes to keep.

    Returns:
        ``bits * ceil(N / 8)`` bytes.
    """
    flat = np.ascontiguousarray(values).ravel()
    wide = flat.astype(np.uint64) if flat.dtype.itemsize > 4 else flat.astype(np.uint32)
    planes = [np.packbits(((wide >> k) & 1).astype(np.uint8)) for k in range(bits)]
    return b"".join(plane.tobytes() for plane in planes)


def bitunshuffle(data: bytes, bits: int, count: int) -> np.ndarray:
    """Invert :func:`bitshuffle`: ``count`` unsigned values of ``bits`` bits (uint64)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    per_plane = (count + 7) // 8
    out = np.zeros(count, dtype=np.uint64)
    for k in range(bits):
        plane = np.unpackbits(raw[k * per_plane:(k + 1) * per_plane])[:count]
        out |= plane.astype(np.uint64) << np.uint64(k)
    return out
