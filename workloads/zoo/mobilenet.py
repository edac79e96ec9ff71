"""MobileNetV1 (Howard et al., 2017) and MobileNetV2 (Sandler et al., 2018)."""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, make_divisible, positive_float, positive_int

# MobileNetV1 depthwise-separable blocks: (pointwise output channels, stride).
_V1_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
              (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))
# MobileNetV2 inverted residual stages: (expansion t, channels c, repeats n, stride s).
_V2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
              (6, 160, 3, 2), (6, 320, 1, 1))


def _check(name: str, input_size, num_classes, width) -> tuple[int, int, float]:
    return (positive_int("input_size", input_size, name),
            positive_int("num_classes", num_classes, name),
            positive_float("width", width, name))


def _dw_bn_relu(g: Graph, x: str, stride: int, name: str, relu: bool = True) -> str:
    x = g.bn(g.dwconv(x, 3, stride, name=f"{name}.conv"), name=f"{name}.bn")
    return g.relu(x, name=f"{name}.relu") if relu else x


@MODELS.register("mobilenet_v1")
def mobilenet_v1(input_size: int = 224, num_classes: int = 1000, width: float = 1.0) -> Graph:
    """MobileNetV1: 13 depthwise-separable blocks, 4.2 M parameters, 0.57 GMACs at 224x224.

    Channels are ``int(c * width)`` as in the paper's width multiplier alpha.

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
        width: width multiplier alpha (1.0, 0.75, 0.5, 0.25 in the paper).
    """
    return _build_v1("mobilenet_v1", input_size, num_classes, width,
                     lambda c: max(1, int(c * width)))


@MODELS.register("mobilenet_v1_mnn")
def mobilenet_v1_mnn(input_size: int = 224, num_classes: int = 1001) -> Graph:
    """MNN's demo MobileNetV1: the paper's 13 blocks, 1001 classes, 4.23 M parameters at 224x224.

    As MNN defines it in ``tools/train/source/models/MobilenetV1.cpp`` (and
    ``MobilenetV1.hpp``, alibaba/MNN): conv 3x3/2 3->32 (no bias, SAME) + BN
    + ReLU6, then blocks of [depthwise 3x3 + BN + ReLU6 + pointwise 1x1 + BN +
    ReLU6] for (channels, repeats) (64,1) (128,2) (256,2) (512,6) (1024,2),
    the first block of a group with more than one repeat at stride 2; global
    average pool, dropout 0.1, Linear 1024 -> ``numClasses`` (default 1001).
    MNN rounds channels with ``makeDivisible`` but sizes the classifier for
    1024 inputs whatever the width, so only width 1.0 builds there: no
    ``width`` parameter here.

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
    """
    return _build_v1("mobilenet_v1_mnn", input_size, num_classes, 1.0,
                     lambda c: make_divisible(c))


def _build_v1(name: str, input_size, num_classes, width, channels_of) -> Graph:
    input_size, num_classes, width = _check(name, input_size, num_classes, width)
    config = {"input_size": input_size, "num_classes": num_classes}
    if name == "mobilenet_v1":
        config["width"] = width
    g = Graph(name, (3, input_size, input_size), config)
    x = g.conv_bn_relu(g.input, channels_of(32), 3, 2, name="conv1")
    for index, (channels, stride) in enumerate(_V1_BLOCKS, start=1):
        x = _dw_bn_relu(g, x, stride, f"block{index}.dw")
        x = g.conv_bn_relu(x, channels_of(channels), 1, name=f"block{index}.pw")
    x = g.global_pool(x, name="avgpool")
    g.softmax(g.fc(x, num_classes, name="fc"), name="softmax")
    return g


@MODELS.register("mobilenet_v2")
def mobilenet_v2(input_size: int = 224, num_classes: int = 1000, width: float = 1.0) -> Graph:
    """MobileNetV2: 17 inverted residual blocks, 3.50 M parameters, 0.30 GMACs at 224x224.

    torchvision layout (ReLU6 counted as ReLU); channels rounded to multiples
    of 8 after the width multiplier, the last conv never narrower than 1280.

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
        width: width multiplier (0.35 ... 1.4 in the paper).
    """
    return _build_v2("mobilenet_v2", input_size, num_classes, width)


@MODELS.register("mobilenet_v2_mnn")
def mobilenet_v2_mnn(input_size: int = 224, num_classes: int = 1001,
                     width: float = 1.0) -> Graph:
    """MNN's demo MobileNetV2: torchvision layout, 1001 classes, 3.51 M parameters at 224x224.

    As MNN defines it in ``tools/train/source/models/MobilenetV2.cpp`` (and
    ``MobilenetV2.hpp``, alibaba/MNN): ``ConvBnRelu`` = conv without bias,
    SAME padding (the same output sizes as torchvision's padding for these
    kernels and strides), batch norm, ReLU6; the standard (t, c, n, s)
    table; project conv + BN without activation; residual where stride 1 and
    channels match; 1x1 conv to 1280, global average pool, dropout 0.1,
    Linear with bias. ``numClasses`` defaults to 1001 (TensorFlow's, label 0
    = background) and the demo (``demo/MobilenetV2Utils.cpp``) trains at
    224x224. Differs from ``mobilenet_v2`` only by the class count (and the
    dropout, which carries no layer here).

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
        width: width multiplier (``widthMult``; channels rounded to multiples of 8).
    """
    return _build_v2("mobilenet_v2_mnn", input_size, num_classes, width)


def _build_v2(name: str, input_size, num_classes, width) -> Graph:
    input_size, num_classes, width = _check(name, input_size, num_classes, width)
    g = Graph(name, (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes, "width": width})
    x = g.conv_bn_relu(g.input, make_divisible(32 * width), 3, 2, name="features.0")
    index = 1
    for expansion, channels, repeats, first_stride in _V2_STAGES:
        out = make_divisible(channels * width)
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            name = f"features.{index}"
            c_in = g.shape(x)[0]
            y = x
            if expansion != 1:
                y = g.conv_bn_relu(y, c_in * expansion, 1, name=f"{name}.expand")
            y = _dw_bn_relu(g, y, stride, f"{name}.dw")
            y = g.conv_bn_relu(y, out, 1, relu=False, name=f"{name}.project")
            # Residual only where the block keeps the shape.
            x = g.add(x, y, name=f"{name}.add") if stride == 1 and c_in == out else y
            index += 1
    x = g.conv_bn_relu(x, make_divisible(1280 * max(1.0, width)), 1, name=f"features.{index}")
    x = g.global_pool(x, name="avgpool")
    g.softmax(g.fc(x, num_classes, name="classifier"), name="softmax")
    return g
