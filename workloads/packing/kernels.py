"""Packing and unpacking as kernels, so that they run on a simulated processor.

The work of each CNN-ISPM stage, for ``N`` elements at ``b`` bits (storage
``s`` bytes per quantised element: 1 up to 8 bits, 2 up to 16):

==============  ===========  ============================  ================  ============
kernel          op           flops (operations)            bytes in          bytes out
==============  ===========  ============================  ================  ============
quantize        quantize     6 N (min, max, subtract,      4 N               s N
                             scale, round, convert)
bit shuffle     bitshuffle   N b / 8 (one per output byte)  s N (4 N lossless)  N b / 8
LZ4             compress     N b / 8 (one per input byte)  N b / 8           packed
LZ4 decode      decompress   N b / 8 (one per output byte) packed            N b / 8
bit unshuffle   bitshuffle   N b / 8                       N b / 8           s N (4 N)
dequantize      dequantize   2 N (scale, offset)           s N               4 N
==============  ===========  ============================  ================  ============

Lossless packing (``b = 32``) has no (de)quantize step. Bit shuffling, LZ4
and its decoding work on bytes, so those kernels are ``int8``; ISQuant is
``fp32``. How fast a processor runs each op is its efficiency for that op in
the SoC file (fitted on the Jetson to DynO's packing times).
"""

from __future__ import annotations

from .codec import LOSSLESS

QUANTIZE_OPS_PER_ELEMENT = 6.0
DEQUANTIZE_OPS_PER_ELEMENT = 2.0


def _storage(bits: int) -> float:
    return 4.0 if bits == LOSSLESS else 1.0 if bits <= 8 else 2.0


def _row(name: str, op: str, precision: str, flops: float, bytes_in: float,
         bytes_out: float, layer: str) -> dict:
    return {"name": name, "op": op, "pass": "other", "precision": precision,
            "flops": float(flops), "bytes_in": float(bytes_in), "bytes_out": float(bytes_out),
            "weight_bytes": 0.0, "layer": layer}


def pack_rows(layer: str, elements: int, bits: int, packed: float) -> list[dict]:
    """Kernels packing one tensor, in order (``id`` and ``deps`` left to the caller).

    Args:
        layer: the tensor's producing layer (kernels are named ``<layer>.pack.<step>``).
        elements: its elements.
        bits: ISQuant bitwidth or :data:`LOSSLESS`.
        packed: bytes after LZ4 (from the size model or the real codec).
    """
    n = float(elements)
    shuffled = n * bits / 8
    rows = []
    if bits != LOSSLESS:
        rows.append(_row(f"{layer}.pack.quantize", "quantize", "fp32",
                         QUANTIZE_OPS_PER_ELEMENT * n, 4 * n, _storage(bits) * n, layer))
    rows.append(_row(f"{layer}.pack.bitshuffle", "bitshuffle", "int8", shuffled,
                     _storage(bits) * n, shuffled, layer))
    rows.append(_row(f"{layer}.pack.compress", "compress", "int8", shuffled, shuffled,
                     packed, layer))
    return rows


def unpack_rows(layer: str, elements: int, bits: int, packed: float) -> list[dict]:
    """Kernels restoring one tensor on the receiver, in order (named ``<layer>.unpack.<step>``)."""
    n = float(elements)
    shuffled = n * bits / 8
    rows = [_row(f"{layer}.unpack.decompress", "decompress", "int8", shuffled, packed,
                 shuffled, layer),
            _row(f"{layer}.unpack.bitshuffle", "bitshuffle", "int8", shuffled, shuffled,
                 _storage(bits) * n, layer)]
    if bits != LOSSLESS:
        rows.append(_row(f"{layer}.unpack.dequantize", "dequantize", "fp32",
                         DEQUANTIZE_OPS_PER_ELEMENT * n, _storage(bits) * n, 4 * n, layer))
    return rows
