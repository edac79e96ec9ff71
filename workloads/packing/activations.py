"""Synthetic activation tensors with the statistics of real post-ReLU CNN feature maps,
packed with the real CNN-ISPM codec.

A tensor of ``C`` channels of ``H x W`` (the transferred tensor of a cut) is drawn from
per-layer statistics that published activation studies report:

* **sparsity rising with depth** -- the fraction of exact zeros a ReLU leaves:
  conv-layer inputs are 44 % zeros on average over AlexNet/GoogLeNet/VGG
  (Albericio et al., "Cnvlutin", ISCA'16, as cited by Shi & Chu, arXiv 1704.07724),
  and deep layers reach 90 % and more (Shi & Chu: the sparse convolution pays from 0.9);
  the per-model levels are in ``workloads/splits/profiles.yaml``;
* **dead channels** -- for one input a share of a layer's channels is zero everywhere,
  more so in higher conv and fully-connected layers (Hu et al., "Network Trimming",
  arXiv 1607.03250: many units of VGG-16 output zeros regardless of the input);
  ``dead_share`` of a tensor's zeros come from whole dead channels (fitted);
* **spatial correlation** -- zero and non-zero activations cluster in a feature map
  (Shomron et al., "Thanks for Nothing" (ZAP), arXiv 1909.07636, predict zeros from
  their neighbours): the pre-activation of a live channel is a Gaussian random field
  smoothed over ``correlation`` pixels (fitted);
* **value distribution** -- pre-activations are bell-shaped with heavier-than-Gaussian
  tails, well fitted by a Laplace law (Banner et al., "Post-training 4-bit quantization
  of convolutional networks", NeurIPS'19, U: recalled): the field is mapped to a
  unit-variance Laplace marginal; each channel has its own offset (``spread``, its
  standard deviation in units of the within-channel one; E) and its own scale
  (log-normal, ``scale_spread``; E: BN-folded channel gains differ by a few-fold);
* **layer types** -- a conv feature map (``H x W > 1``) has the spatial field; a
  fully-connected output (``1 x 1``) has independent units; the model input is a dense,
  signed, spatially smooth image (normalised pixels).

:func:`packed_size` draws such a tensor (seeded, so the same statistics give the same
bytes) and runs the real ISQuant + bit shuffle + LZ4 chain (:mod:`.codec`) on it. A
large tensor is packed on a seeded subset of whole channels (at least
:data:`SAMPLE_ELEMENTS` elements) with the ISQuant range of the whole tensor, and the
payload scaled to the whole tensor: LZ4 blocks of whole channels add up.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from functools import lru_cache

import lz4.block
import numpy as np

from .bitshuffle import bitshuffle
from .codec import HEADER_BYTES, LOSSLESS
from .isquant import isquant

SAMPLE_ELEMENTS = 1 << 16  # elements actually packed per tensor (whole channels)
_SQRT_HALF = math.sqrt(0.5)  # Laplace scale of unit variance
_NODES = 16


@dataclass(frozen=True)
class LayerStats:
    """Statistics of one transferred tensor.

    Attributes:
        sparsity: fraction of exact zeros, in [0, 1) (0 for a dense input).
        relu: a ReLU output (else a dense signed tensor: the model input).
        dead_share: share of the zeros that come from channels zero everywhere.
        correlation: spatial correlation length of the pre-activation (pixels; 0: none).
        spread: standard deviation of the per-channel offset (within-channel units).
        scale_spread: standard deviation of the log of the per-channel scale.
    """

    sparsity: float = 0.5
    relu: bool = True
    dead_share: float = 0.0
    correlation: float = 1.0
    spread: float = 1.0
    scale_spread: float = 0.5

    def rounded(self) -> LayerStats:
        """The same statistics on a grid, so that the tensors of a deep model share draws."""
        return LayerStats(round(min(max(self.sparsity, 0.0), 0.99), 2), self.relu,
                          round(self.dead_share, 3), round(self.correlation, 2),
                          round(self.spread, 2), round(self.scale_spread, 2))


def _laplace_cdf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.where(x < 0, 0.5 * np.exp(x / _SQRT_HALF), 1 - 0.5 * np.exp(-x / _SQRT_HALF))


def _offset(live_sparsity: float, spread: float) -> float:
    """Mean channel offset ``mu`` giving ``live_sparsity`` zeros in live channels."""
    from scipy.optimize import brentq  # lazy: scipy costs ~0.5 s to import

    x, w = np.polynomial.hermite_e.hermegauss(_NODES)
    w = w / w.sum()
    return brentq(lambda m: float((w * _laplace_cdf(-(m + spread * x))).sum())
                  - live_sparsity, -40.0, 40.0)


def _to_laplace(g: np.ndarray) -> np.ndarray:
    """Map standard-normal values to a unit-variance Laplace marginal."""
    from scipy.special import log_ndtr

    # P(G > |g|) in logs, so that the far tail stays exact
    tail = log_ndtr(-np.abs(g))
    return np.sign(g) * (-_SQRT_HALF * (tail + math.log(2.0)))


def _field(rng: np.random.Generator, channels: int, side: int, correlation: float
           ) -> np.ndarray:
    """Unit-variance Gaussian fields, ``(channels, side, side)``, smoothed over
    ``correlation`` pixels."""
    g = rng.standard_normal((channels, side, side))
    if correlation > 0 and side > 1:
        from scipy.ndimage import gaussian_filter

        g = gaussian_filter(g, sigma=(0, correlation, correlation), mode="wrap")
        g /= g.std(axis=(1, 2), keepdims=True) + 1e-12
    return g


def draw(stats: LayerStats, channels: int, side: int, rng: np.random.Generator,
         subset: int | None = None) -> tuple[np.ndarray, float, float]:
    """A tensor from ``stats``: ``(subset or channels, side, side)`` FP32, and the
    minimum and maximum of the whole ``channels``-channel tensor it was taken from."""
    n_sub = channels if subset is None else min(subset, channels)
    if not stats.relu:  # the model input: dense, signed, smooth
        x = _field(rng, channels, side, max(stats.correlation, 2.0))[:n_sub]
        offsets = stats.spread * rng.standard_normal(channels)
        x = (x + offsets[:n_sub, None, None]).astype(np.float32)
        return x, float(x.min()), float(x.max())
    sparsity = min(max(stats.sparsity, 0.0), 0.99)
    dead = min(stats.dead_share * sparsity, sparsity)
    live_sparsity = (sparsity - dead) / (1 - dead) if dead < 1 else 0.0
    mu = _offset(live_sparsity, stats.spread)
    alive = rng.random(channels) >= dead
    offsets = mu + stats.spread * rng.standard_normal(channels)
    scales = np.exp(stats.scale_spread * rng.standard_normal(channels)).astype(np.float32)
    x = _field(rng, n_sub, side, stats.correlation)
    x = _to_laplace(x) + offsets[:n_sub, None, None]
    x = (np.maximum(x, 0.0) * (scales[:n_sub] * alive[:n_sub])[:, None, None]).astype(
        np.float32)
    hi = float(x.max())
    if n_sub < channels:  # the rest's maximum: the largest of side^2 standard normals
        from scipy.special import ndtri  # per channel, drawn exactly by inverting its CDF

        rest = channels - n_sub
        tail = -np.expm1(np.log(rng.random(rest)) / (side * side))  # P(G > max)
        tops = _to_laplace(-ndtri(tail)) + offsets[n_sub:]
        tops = np.maximum(tops, 0.0) * scales[n_sub:] * alive[n_sub:]
        hi = max(hi, float(tops.max()))
    return x, 0.0, hi


def _seed(stats: LayerStats, channels: int, side: int, seed: int) -> int:
    return zlib.crc32(repr((stats, channels, side, seed)).encode())


@lru_cache(maxsize=32)
def _drawn(stats: LayerStats, channels: int, side: int, seed: int
           ) -> tuple[np.ndarray, float, float]:
    """The seeded draw of a tensor (shared by its bitwidths)."""
    rng = np.random.default_rng(_seed(stats, channels, side, seed))
    subset = max(1, math.ceil(SAMPLE_ELEMENTS / (side * side)))
    x, lo, hi = draw(stats, channels, side, rng, subset)
    x.setflags(write=False)
    return x, lo, hi


@lru_cache(maxsize=16384)
def _payload_per_element(stats: LayerStats, channels: int, side: int, bits: int,
                         seed: int) -> float:
    x, lo, hi = _drawn(stats, channels, side, seed)
    if bits == LOSSLESS:
        values = x.ravel().view(np.uint32)
    else:
        values, _, _ = isquant(x, bits, lo=lo, hi=hi)
    data = lz4.block.compress(bitshuffle(values, bits), store_size=False)
    return len(data) / x.size


def tensor_shape(elements: int, channels: int) -> tuple[int, int]:
    """``(channels, side)`` of a square feature map with ``elements`` in all."""
    channels = max(1, min(int(channels), int(elements)))
    side = max(1, round(math.sqrt(elements / channels)))
    return channels, side


def packed_size(stats: LayerStats, elements: int, channels: int, bits: int,
                seed: int = 0) -> float:
    """Bytes of a tensor drawn from ``stats`` packed at ``bits`` (:data:`LOSSLESS`: FP32)
    by the real codec, header included.

    Args:
        stats: the tensor's statistics.
        elements: its elements (batch included).
        channels: its channels (``elements / channels`` pixels per channel, square).
        bits: ISQuant bitwidth (1..16) or 32 for lossless packing.
        seed: draw number (the same arguments always give the same bytes).
    """
    if elements <= 0:
        return float(HEADER_BYTES)
    if not (1 <= bits <= 16 or bits == LOSSLESS):
        raise ValueError(f"bits must be 1..16 or {LOSSLESS}; got {bits}")
    c, side = tensor_shape(elements, channels)
    per = _payload_per_element(stats.rounded(), c, side, bits, seed)
    return elements * per + HEADER_BYTES
