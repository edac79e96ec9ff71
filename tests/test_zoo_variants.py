"""Framework variants of zoo models and Inception-v3's CIFAR stem (issue 15, item 4).

Every expected count below is worked out by hand from the source definition, with the
arithmetic written out, independently of the builders:
- MNN's demo models: alibaba/MNN tools/train/source/models/Lenet.cpp, MobilenetV1.cpp,
  MobilenetV2.cpp (+ .hpp for the 1001-class default);
- Inception-v3's CIFAR stem: weiaicunzai/pytorch-cifar100 models/inceptionv3.py.
"""

from __future__ import annotations

import pytest

from workloads.generate import generate_trace
from workloads.zoo import MODELS, model_info

# --- MNN LeNet (Lenet.cpp): 1x28x28 -> conv 5x5 1->20 (VALID) 20x24x24 -> pool 20x12x12
# -> conv 5x5 20->50 50x8x8 -> pool 50x4x4 = 800 -> ip1 500 -> ip2 10
LENET_MNN_PARAMS = (20 * 1 * 25 + 20) + (50 * 20 * 25 + 50) + (800 * 500 + 500) + (500 * 10 + 10)
LENET_MNN_MACS = 20 * 24 * 24 * 25 + 50 * 8 * 8 * 20 * 25 + 800 * 500 + 500 * 10

# --- MNN MobileNetV1 (MobilenetV1.cpp) at 224x224, 1001 classes. Every conv has no bias; every
# BN has 2 trainable parameters per channel (scale, bias; the running statistics are not).
# conv1: 3x3/2 3->32 at 112x112. Blocks (in, out, output side): depthwise 3x3 + pointwise.
_V1 = [(32, 64, 112), (64, 128, 56), (128, 128, 56), (128, 256, 28), (256, 256, 28),
       (256, 512, 14)] + [(512, 512, 14)] * 5 + [(512, 1024, 7), (1024, 1024, 7)]
V1_MNN_PARAMS = (3 * 32 * 9 + 2 * 32) + sum(
    c_in * 9 + 2 * c_in + c_in * c_out + 2 * c_out for c_in, c_out, _ in _V1) \
    + 1024 * 1001 + 1001
V1_MNN_MACS = 112 * 112 * 32 * 27 + sum(
    side * side * (c_in * 9 + c_in * c_out) for c_in, c_out, side in _V1) + 1024 * 1001

# --- MNN MobileNetV2 (MobilenetV2.cpp): torchvision's MobileNetV2 (3,504,872 parameters and
# 300,774,272 MACs at 224x224 with 1000 classes: torchvision's documented 3.5 M / 0.30 G) with
# 1001 classes: one more row of the 1280-input classifier (1280 weights + 1 bias, 1280 MACs).
V2_TORCHVISION_PARAMS, V2_TORCHVISION_MACS = 3_504_872, 300_774_272
V2_MNN_PARAMS = V2_TORCHVISION_PARAMS + 1280 + 1
V2_MNN_MACS = V2_TORCHVISION_MACS + 1280

# --- Inception-v3 CIFAR stem at 32x32 (pytorch-cifar100): 1a 3x3 3->32 pad 1, 2a 3x3 32->32
# pad 1, 2b 3x3 32->64 pad 1 (all 32x32 out), 3b 1x1 64->80 (32x32), 4a 3x3 80->192 unpadded
# (30x30); no max-pool. Each conv + BN (2 per channel), no conv bias.
CIFAR_STEM_MACS = (32 * 32 * 32 * 3 * 9 + 32 * 32 * 32 * 32 * 9 + 32 * 32 * 64 * 32 * 9
                   + 32 * 32 * 80 * 64 + 30 * 30 * 192 * 80 * 9)
STEM_PARAMS = (32 * 27 + 64) + (32 * 288 + 64) + (64 * 288 + 128) + (80 * 64 + 160) \
    + (192 * 720 + 384)
# Output side of every inception-block layer at 32x32 input (30 -> 14 -> 6, the sizes in
# pytorch-cifar100's comments) and at 299x299 (35 -> 17 -> 8).


def _cifar_side(layer: str) -> int:
    block = layer.split(".")[0]
    if block.startswith("Mixed_5"):
        return 30
    if block == "Mixed_6a":  # the stride-2 convs and the pool reduce, the others keep 30
        return 14 if layer.split(".")[1] in ("b3x3", "b3x3dbl_3", "pool", "concat") else 30
    if block.startswith("Mixed_6"):
        return 14
    if block == "Mixed_7a":
        return 6 if layer.split(".")[1] in ("b3x3_2", "b7x7x3_4", "pool", "concat") else 14
    return 6


def test_lenet_mnn_counts():
    graph = MODELS.get("lenet_mnn")()
    assert (graph.params, graph.macs) == (LENET_MNN_PARAMS, LENET_MNN_MACS) == (431_080,
                                                                               2_293_000)
    assert graph.config == {"input_size": 28, "num_classes": 10, "in_channels": 1}
    # no activation after the convs (MNN's demo), ReLU only after ip1
    assert [layer.op for layer in graph.layers].count("relu") == 1
    assert graph.shape("pool2") == (50, 4, 4)


def test_mobilenet_v1_mnn_counts():
    graph = MODELS.get("mobilenet_v1_mnn")()
    assert (graph.params, graph.macs) == (V1_MNN_PARAMS, V1_MNN_MACS)
    assert graph.config == {"input_size": 224, "num_classes": 1001}


def test_mobilenet_v2_mnn_counts():
    torchvision = MODELS.get("mobilenet_v2")()
    assert (torchvision.params, torchvision.macs) == (V2_TORCHVISION_PARAMS, V2_TORCHVISION_MACS)
    graph = MODELS.get("mobilenet_v2_mnn")()
    assert (graph.params, graph.macs) == (V2_MNN_PARAMS, V2_MNN_MACS)
    assert graph.config["num_classes"] == 1001


def test_inception_v3_cifar_stem():
    cifar = MODELS.get("inception_v3")(input_size=32)
    assert cifar.config == {"input_size": 32, "num_classes": 10, "stem": "cifar"}
    assert cifar.shape("Mixed_5b.concat") == (256, 30, 30)
    assert cifar.shape("Mixed_6a.concat") == (768, 14, 14)
    assert cifar.shape("Mixed_7c.concat") == (2048, 6, 6)
    assert "maxpool1" not in [layer.name for layer in cifar.layers]
    stem = [layer for layer in cifar.layers if layer.name.startswith("Conv2d_")]
    assert sum(layer.macs for layer in stem) == CIFAR_STEM_MACS == 158_855_168
    assert sum(layer.params for layer in stem) == STEM_PARAMS
    # The blocks are ImageNet's at other sizes: a layer's MACs per output position do not
    # depend on the input size, so scale each ImageNet layer by the hand-derived CIFAR side.
    imagenet = MODELS.get("inception_v3")(num_classes=10)
    expected = CIFAR_STEM_MACS + 2048 * 10
    for layer in imagenet.layers:
        if layer.macs and layer.name.startswith("Mixed_"):
            _, h, w = layer.out_shape
            expected += layer.macs // (h * w) * _cifar_side(layer.name) ** 2
    assert cifar.macs == expected
    # same blocks and classifier, so the same parameters as the ImageNet model with 10 classes
    assert cifar.params == imagenet.params


def test_inception_v3_keeps_its_imagenet_defaults():
    assert model_info("inception_v3").defaults == {"input_size": 299, "num_classes": 1000,
                                                   "stem": "imagenet"}
    # 75 -> 1a 3x3/2: 37 -> 2a: 35 -> 2b (pad 1): 35 -> pool 3/2: 17 -> 4a: 15 -> pool: 7
    small = MODELS.get("inception_v3")(input_size=75)
    assert small.config["stem"] == "imagenet" and small.shape("maxpool2")[1:] == (7, 7)


@pytest.mark.parametrize("name, kwargs", [
    ("lenet_mnn", {}), ("mobilenet_v1_mnn", {"input_size": 64}),
    ("mobilenet_v2_mnn", {"input_size": 64}), ("inception_v3", {"input_size": 32}),
])
def test_variants_generate_training_traces(name, kwargs):
    inference = generate_trace(name, batch=2, **kwargs)
    training = generate_trace(name, mode="training", batch=2, **kwargs)
    assert set(training.table["pass"]) > {"fwd"}
    # forward + two backward products of every conv/FC, at least twice the forward work
    assert training.total_flops > 2 * inference.total_flops
    assert (training.table["model"] == name).all()


@pytest.mark.parametrize("name", ["lenet_mnn", "mobilenet_v1_mnn", "mobilenet_v2_mnn"])
def test_mnn_variants_name_their_source(name):
    doc = MODELS.get(name).__doc__
    assert "alibaba/MNN" in doc and "tools/train/source/models/" in doc


# --- BVLC Caffe forms (BVLC/caffe models/bvlc_alexnet/deploy.prototxt,
# models/bvlc_googlenet/deploy.prototxt). AlexNet at 227x227: conv1 11x11/4 3->96 (55x55),
# conv2 5x5 96->256 in 2 groups (48 inputs a filter, 27x27), conv3 3x3 256->384, conv4 and
# conv5 3x3 in 2 groups (192 inputs a filter) at 13x13, fc 9216->4096->4096->1000; biases.
ALEXNET_CAFFE_CONVS = [(96, 3 * 121, 55), (256, 48 * 25, 27), (384, 256 * 9, 13),
                       (384, 192 * 9, 13), (256, 192 * 9, 13)]
ALEXNET_CAFFE_FCS = [(9216, 4096), (4096, 4096), (4096, 1000)]
ALEXNET_CAFFE_PARAMS = sum(c * taps + c for c, taps, _ in ALEXNET_CAFFE_CONVS) + sum(
    i * o + o for i, o in ALEXNET_CAFFE_FCS)
ALEXNET_CAFFE_MACS = sum(c * taps * side * side for c, taps, side in ALEXNET_CAFFE_CONVS) + sum(
    i * o for i, o in ALEXNET_CAFFE_FCS)
# GoogLeNet: conv1 7x7/2 3->64 (112), pool (56), conv2 reduce 1x1 64->64, conv2 3x3 64->192
# (56), pool (28); inception (in, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj, side);
# pool 7x7 avg, fc 1024->1000; every conv has a bias.
GOOGLENET_CAFFE_INCEPTIONS = [
    (192, 64, 96, 128, 16, 32, 32, 28), (256, 128, 128, 192, 32, 96, 64, 28),
    (480, 192, 96, 208, 16, 48, 64, 14), (512, 160, 112, 224, 24, 64, 64, 14),
    (512, 128, 128, 256, 24, 64, 64, 14), (512, 112, 144, 288, 32, 64, 64, 14),
    (528, 256, 160, 320, 32, 128, 128, 14), (832, 256, 160, 320, 32, 128, 128, 7),
    (832, 384, 192, 384, 48, 128, 128, 7)]


def _googlenet_caffe_counts() -> tuple[int, int]:
    convs = [(64, 3 * 49, 112), (64, 64, 56), (192, 64 * 9, 56)]
    for c_in, c1, r3, c3, r5, c5, proj, side in GOOGLENET_CAFFE_INCEPTIONS:
        convs += [(c1, c_in, side), (r3, c_in, side), (c3, r3 * 9, side), (r5, c_in, side),
                  (c5, r5 * 25, side), (proj, c_in, side)]
    params = sum(c * taps + c for c, taps, _ in convs) + 1024 * 1000 + 1000
    macs = sum(c * taps * side * side for c, taps, side in convs) + 1024 * 1000
    return params, macs


def test_bvlc_caffe_forms_of_alexnet_and_googlenet():
    alexnet = MODELS.get("alexnet_caffe")()
    assert (alexnet.params, alexnet.macs) == (ALEXNET_CAFFE_PARAMS, ALEXNET_CAFFE_MACS) == (
        60_965_224, 724_406_816)
    assert [layer.groups for layer in alexnet.layers if layer.op == "conv"] == [1, 2, 1, 2, 2]
    assert [layer.name for layer in alexnet.layers if layer.op == "lrn"] == ["norm1", "norm2"]
    assert alexnet.shape("pool5") == (256, 6, 6)
    googlenet = MODELS.get("googlenet_caffe")()
    assert (googlenet.params, googlenet.macs) == _googlenet_caffe_counts()
    assert googlenet.shape("inception_5b/output") == (1024, 7, 7)
    assert sum(layer.op == "lrn" for layer in googlenet.layers) == 2
    assert not any(layer.op == "batchnorm" for layer in googlenet.layers)
    trace = generate_trace("alexnet_caffe")
    lrn = trace.table[trace.table["op"] == "lrn"]
    assert list(lrn["flops"]) == [25.0 * 96 * 55 * 55, 25.0 * 256 * 27 * 27]
