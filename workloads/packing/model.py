"""Size model of CNN-ISPM: packed bytes of a tensor from its statistics.

A tensor is described by its element count, its sparsity (fraction of exact
zeros: ReLU outputs) and how much that sparsity varies between channels.
Values follow a mixture: channel ``c`` holds ``ReLU(N(mu + spread * u_c, 1))``
with ``u_c ~ N(0, 1)`` (``mu`` set by the sparsity); a dense, signed tensor
(a model input) is ``N(spread * u_c, 1)``. Real activation maps look like this:
some channels are almost silent for an input, others dense, and the zeros of a
channel sit together in memory (CHW layout).

The packed size follows the three stages:

1. ISQuant to ``b`` bits over the tensor's range ``[min, max]`` (``max`` = the
   median of the largest of ``N`` draws) -- or the FP32 bit patterns for
   lossless packing;
2. bit shuffle: ``b`` planes of ``N / 8`` bytes;
3. LZ4 on each plane. Bytes of a plane are taken as independent given the
   channel; LZ4 then stores non-zero bytes as literals and replaces runs of
   zero bytes of 4 or more (its minimum match) with a 3-byte sequence (token
   + offset), so a plane whose bytes are zero with probability ``q`` costs
   per byte ``(1 - q) + q (1 - q) E[cost of a zero run]``. A plane that
   repeats an earlier one except for a fraction ``d`` of its bits (FP32
   exponent bits that only mark "non-zero") costs the same with ``q =
   (1 - d)^8``: LZ4 matches it against the earlier plane. The cheaper reading
   is taken.

Bit probabilities come from a fixed sample of the value distribution pushed
through the real ISQuant rounding, so the model and :mod:`.codec` share the
arithmetic. On synthetic tensors drawn from the same distribution (``spread =
1``, 50-80 % zeros, 3-8 bits and lossless) the model's mean error is within
+-4 % of the real codec, and one tensor differs by up to ~13 % (its random
channel means set its range); ``tests/test_dyno_packing.py``. For i.i.d.
zeros (``spread = 0``) at high sparsity it is pessimistic (LZ4 also matches
short repeated patterns of a very sparse plane).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .codec import HEADER_BYTES, LOSSLESS

_NODES = 12  # Gauss-Hermite nodes over the channel offsets
_SAMPLE = 4096  # values per channel class for the bit statistics
_MIN_MATCH = 4  # LZ4's minimum match length (bytes)
_SEQUENCE = 3  # bytes per LZ4 match: token + 2-byte offset


@dataclass(frozen=True)
class TensorStats:
    """What the size model needs to know about a tensor.

    Attributes:
        elements: number of elements.
        sparsity: fraction of exact zeros, in [0, 1) (ReLU outputs; 0 for dense).
        relu: non-negative ReLU output (else a dense signed tensor, e.g. an input image).
        spread: standard deviation of the per-channel mean, in units of the
            within-channel standard deviation (0: i.i.d. elements).
    """

    elements: int
    sparsity: float = 0.0
    relu: bool = True
    spread: float = 1.0


def lz4_cost_per_byte(q: np.ndarray) -> np.ndarray:
    """Expected LZ4 output bytes per input byte when bytes are zero (or match) with
    probability ``q``, independently."""
    q = np.clip(np.asarray(q, dtype=float), 0.0, 1.0 - 1e-12)
    lengths = np.arange(1, _MIN_MATCH)
    short = ((1 - q)[..., None] * q[..., None] ** (lengths - 1) * lengths).sum(-1)
    run_cost = short + q ** (_MIN_MATCH - 1) * _SEQUENCE
    return (1 - q) + q * (1 - q) * run_cost


@lru_cache(maxsize=1)
def _base_sample() -> np.ndarray:
    sample = np.random.default_rng(20220401).standard_normal(_SAMPLE)
    sample.setflags(write=False)
    return sample


@lru_cache(maxsize=1)
def _nodes() -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.hermite_e.hermegauss(_NODES)
    x.setflags(write=False)
    w = w / w.sum()
    w.setflags(write=False)
    return x, w


def _plane_cost(bits: np.ndarray) -> np.ndarray:
    """LZ4 bytes per plane byte, summed over the planes, of ``(..., planes, n)`` 0/1 arrays."""
    m = bits.astype(np.float32)
    n = m.shape[-1]
    ones = m.mean(axis=-1, dtype=np.float64)
    # fraction of elements where plane k differs from plane j, for earlier planes j < k:
    # p_k + p_j - 2 E[b_k b_j]. (einsum without BLAS: a multithreaded BLAS call this
    # small stalls for seconds on a loaded machine.)
    both = np.einsum("...kn,...jn->...kj", m, m, optimize=False) / n
    differ = ones[..., :, None] + ones[..., None, :] - 2 * both
    planes = m.shape[-2]
    differ[..., np.triu_indices(planes)[0], np.triu_indices(planes)[1]] = 1.0
    alone = lz4_cost_per_byte((1 - ones) ** 8)
    copied = lz4_cost_per_byte((1 - differ.min(axis=-1)) ** 8)
    return np.minimum(alone, copied).sum(axis=-1)


@lru_cache(maxsize=4096)
def _bytes_per_element(sparsity: float, relu: bool, spread: float, bits: int,
                       log2_elements: int) -> float:
    """Packed bytes per element, without the header (cached on rounded inputs)."""
    # lazy: scipy.optimize and scipy.special cost ~0.7 s to import, and most runs
    # that import this module (every policy's) never pack a tensor
    from scipy.optimize import brentq
    from scipy.special import ndtr

    x, w = _nodes()
    elements = 2.0 ** log2_elements
    if relu:
        mu = brentq(lambda m: float((w * ndtr(-(m + spread * x))).sum()) - sparsity,
                    -20.0, 20.0)
    else:
        mu = 0.0
    # median of the maximum of N draws: P(X > h) = ln 2 / N
    hi = brentq(lambda h: float((w * ndtr((mu + spread * x) - h)).sum())
                - np.log(2) / elements, -20.0, 60.0)
    lo = 0.0 if relu else -hi
    values = _base_sample()[None, :] + (mu + spread * x)[:, None]  # (nodes, sample)
    if relu:
        values = np.maximum(values, 0.0)
    values = values.astype(np.float32)
    if bits == LOSSLESS:
        ints = values.view(np.uint32)
    else:
        levels = 2 ** bits - 1
        ints = np.rint((np.clip(values, lo, hi) - lo) * (levels / (hi - lo))).astype(np.uint32)
    matrix = (ints[:, None, :] >> np.arange(bits, dtype=np.uint32)[None, :, None]) & 1
    return float((w * _plane_cost(matrix)).sum() / 8)


def packed_bytes(stats: TensorStats, bits: int) -> float:
    """Expected bytes of ``stats``'s tensor packed at ``bits`` (:data:`LOSSLESS`: FP32).

    Args:
        stats: the tensor.
        bits: ISQuant bitwidth (1..16) or 32 for lossless packing.
    """
    if stats.elements <= 0:
        return float(HEADER_BYTES)
    if not (1 <= bits <= 16 or bits == LOSSLESS):
        raise ValueError(f"bits must be 1..16 or {LOSSLESS}; got {bits}")
    # Rounded so that the many tensors of a deep model share cached statistics.
    sparsity = round(min(max(stats.sparsity, 0.0), 0.99), 2) if stats.relu else 0.0
    per_element = _bytes_per_element(sparsity, stats.relu, round(stats.spread, 2), bits,
                                     max(0, round(np.log2(stats.elements))))
    return stats.elements * per_element + HEADER_BYTES


def synthetic_activation(stats: TensorStats, channels: int, rng: np.random.Generator
                         ) -> np.ndarray:
    """A random tensor from the model's distribution, ``(channels, elements / channels)``.

    Used to check the model against the real codec (:mod:`.codec`).
    """
    from scipy.optimize import brentq  # lazy, as in _bytes_per_element
    from scipy.special import ndtr

    x, w = _nodes()
    if stats.relu:
        mu = brentq(lambda m: float((w * ndtr(-(m + stats.spread * x))).sum())
                    - stats.sparsity, -20.0, 20.0)
    else:
        mu = 0.0
    per = stats.elements // channels
    means = mu + stats.spread * rng.standard_normal(channels)
    values = rng.standard_normal((channels, per)) + means[:, None]
    return (np.maximum(values, 0.0) if stats.relu else values).astype(np.float32)
