"""CNN-ISPM: the real codec (ISQuant, bit shuffle, LZ4), the size model against it, and
packing as kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.packing.bitshuffle import bitshuffle, bitunshuffle
from workloads.packing.codec import LOSSLESS, measure_dumps, pack, unpack
from workloads.packing.isquant import isquant
from workloads.packing.kernels import pack_rows, unpack_rows
from workloads.packing.model import TensorStats, packed_bytes, synthetic_activation


@pytest.fixture
def relu_activation():
    """A sparse ReLU activation like a mid-network one: 128 x 14 x 14, ~65 % zeros."""
    stats = TensorStats(128 * 196, sparsity=0.65, relu=True, spread=1.0)
    return stats, synthetic_activation(stats, 128, np.random.default_rng(7))


@given(st.integers(1, 16), st.integers(1, 300), st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_bitshuffle_round_trips(bits, count, seed):
    values = np.random.default_rng(seed).integers(0, 2**bits, count, dtype=np.uint64)
    packed = bitshuffle(values, bits)
    assert len(packed) == bits * ((count + 7) // 8)
    assert np.array_equal(bitunshuffle(packed, bits, count), values)


def test_isquant_stays_within_half_a_step_and_lossless_is_exact(relu_activation):
    _, x = relu_activation
    for bits in (3, 4, 8):
        q, lo, scale = isquant(x, bits)
        assert q.max() == 2**bits - 1 and q.min() == 0 and q.dtype == np.uint8
        restored = unpack(pack(x, bits))
        step = (x.max() - x.min()) / (2**bits - 1)
        assert np.abs(restored - x).max() <= step / 2 * (1 + 1e-5)
    assert np.array_equal(unpack(pack(x, LOSSLESS)), x)


def test_lower_bitwidths_pack_smaller(relu_activation):
    _, x = relu_activation
    sizes = [pack(x, bits).nbytes for bits in (3, 4, 6, 8, LOSSLESS)]
    assert sizes == sorted(sizes)
    assert pack(x, LOSSLESS).ratio > 1.2  # the zeros compress even without quantising


@pytest.mark.parametrize("sparsity", [0.5, 0.8])
@pytest.mark.parametrize("bits", [4, 8, LOSSLESS])
def test_the_size_model_matches_the_real_codec(sparsity, bits):
    """Unbiased over tensors drawn from the model's distribution; one tensor's size
    varies with its random channel means (its range) by about +-13 %."""
    stats = TensorStats(256 * 196, sparsity=sparsity, relu=True, spread=1.0)
    real = [pack(synthetic_activation(stats, 256, np.random.default_rng(seed)), bits).nbytes
            for seed in range(3)]
    model = packed_bytes(stats, bits)
    assert model == pytest.approx(np.mean(real), rel=0.08)
    assert all(model == pytest.approx(size, rel=0.15) for size in real)


def test_the_real_codec_measures_activation_dumps(tmp_path, relu_activation):
    _, x = relu_activation
    np.save(tmp_path / "layer3.relu.npy", x.reshape(128, 14, 14))
    table = measure_dumps([tmp_path / "layer3.relu.npy"], [4, LOSSLESS], repeats=1)
    assert list(table["tensor"]) == ["layer3.relu"] * 2
    assert table["packed_bytes"].iloc[0] == pack(x, 4).nbytes
    assert (table["total_s"] > 0).all() and table["sparsity"].iloc[0] == pytest.approx(
        np.mean(x == 0))


def test_packing_kernels_carry_each_stage_s_work():
    rows = pack_rows("layer", 1000, 4, packed=120.0)
    assert [r["op"] for r in rows] == ["quantize", "bitshuffle", "compress"]
    assert rows[0]["bytes_in"] == 4000 and rows[1]["bytes_out"] == 500
    assert rows[-1]["bytes_out"] == 120.0
    lossless = pack_rows("layer", 1000, LOSSLESS, packed=3000.0)
    assert [r["op"] for r in lossless] == ["bitshuffle", "compress"]
    back = unpack_rows("layer", 1000, 4, packed=120.0)
    assert [r["op"] for r in back] == ["decompress", "bitshuffle", "dequantize"]
    assert back[-1]["bytes_out"] == 4000


# -- drawn activations packed with the real codec (workloads/packing/activations.py) ---

def test_drawn_activations_have_their_statistics_and_are_seeded():
    from workloads.packing.activations import LayerStats, _seed, draw, packed_size

    stats = LayerStats(sparsity=0.7, correlation=1.0, scale_spread=0.25)
    x, lo, hi = draw(stats, 128, 14, np.random.default_rng(3))
    assert x.shape == (128, 14, 14) and lo == 0.0 and hi == x.max()
    assert np.mean(x == 0) == pytest.approx(0.7, abs=0.06)
    again, _, _ = draw(stats, 128, 14, np.random.default_rng(3))
    assert np.array_equal(x, again)
    # a whole small tensor is packed as drawn: the profile's size is the codec's
    drawn, _, _ = draw(stats, 128, 14, np.random.default_rng(_seed(stats, 128, 14, 0)))
    assert packed_size(stats, 128 * 196, 128, 4) == pack(drawn, 4).nbytes


def test_spatially_clustered_zeros_pack_smaller_than_scattered_ones():
    """The mechanism behind lossless packing's 30 %: zeros that sit together in a feature
    map leave whole zero bytes in every bit plane."""
    from workloads.packing.activations import LayerStats, packed_size

    scattered = packed_size(LayerStats(0.6, correlation=0.0), 256 * 196, 256, LOSSLESS)
    clustered = packed_size(LayerStats(0.6, correlation=2.0), 256 * 196, 256, LOSSLESS)
    assert clustered < 0.9 * scattered


def test_deep_sparse_layers_reach_dyno_s_packing_ratios():
    """VGG19's sparse, heavy-tailed deep ReLU outputs pack ~60x (DynO); the old
    Gaussian, model-based sizes reached 24x."""
    from validation.dyno.fit_packing import vgg19_best_ratio

    assert vgg19_best_ratio() > 40
