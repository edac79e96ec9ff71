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
