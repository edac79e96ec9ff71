"""The zoo models added for Xenos' benchmarks: documented sizes and valid traces."""

from __future__ import annotations

import pytest

from workloads.generate import generate_trace
from workloads.zoo import model_info

# (GMACs, M parameters) at the default input; published counts where they exist
# (torchvision ShuffleNet V2 1.0x: 0.15 G / 2.28 M; ResNet-101: 7.8 G / 44.5 M; BERT-Large
# encoder: 302 M; BERT-Small L=4/H=512 encoder: 12.6 M)
SIZES = {
    "shufflenet_v2": (0.146, 2.28),
    "resnet101": (7.80, 44.55),
    "centernet": (13.09, 14.22),
    "lstm": (0.0336, 1.05),
    "bert_s": (1.68, 12.61),
    "bert_l": (39.46, 302.3),
}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_sizes_are_as_documented(name):
    info = model_info(name)
    gmacs, mparams = SIZES[name]
    assert info.macs / 1e9 == pytest.approx(gmacs, rel=0.01)
    assert info.params / 1e6 == pytest.approx(mparams, rel=0.01)


@pytest.mark.parametrize("name", ["shufflenet_v2", "centernet", "lstm", "bert_s"])
def test_inference_and_training_traces_are_valid(name):
    kwargs = {"input_size": 64} if name in ("shufflenet_v2", "centernet") else {}
    trace = generate_trace(name, **kwargs)
    assert trace.total_flops > 0
    assert generate_trace(name, mode="training", **kwargs).total_flops > 2 * trace.total_flops


def test_centernet_upsamples_to_a_quarter_of_the_input():
    trace = generate_trace("centernet", input_size=128)
    heads = trace.table[trace.table["name"].str.startswith("hm.out")]
    assert heads["out_h"].iloc[0] == 32 and heads["out_channels"].iloc[0] == 80


def test_bert_attention_is_quadratic_in_the_tokens():
    short, long = (model_info("bert_s").macs, generate_trace("bert_s", input_size=256).total_flops)
    assert long / 2 > 2 * short  # twice the tokens: more than twice the work
