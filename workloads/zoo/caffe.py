"""AlexNet and GoogLeNet as the BVLC Caffe model zoo defines them (``_caffe`` variants).

Caffe's forms differ from torchvision's (``alexnet``, ``googlenet``) in what a
RenderScript or other mobile runtime of 2016-2017 ran: AlexNet with 96-256-384-
384-256 channels, two towers (``group: 2`` in conv2, conv4, conv5) and LRN after
conv1 and conv2 on a 227x227 input; GoogLeNet with real 5x5 convolutions in the
inception modules, LRN after pool1 and conv2, biases and no batch norm
(``BVLC/caffe`` ``models/bvlc_alexnet/deploy.prototxt``,
``models/bvlc_googlenet/deploy.prototxt``). Dropout layers are omitted (no
kernels at inference); GoogLeNet's auxiliary classifiers are not in the deploy
file.
"""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int

# conv (out_channels, kernel, stride, padding, groups, LRN after, max-pool after)
_ALEXNET = ((96, 11, 4, 0, 1, True, True), (256, 5, 1, 2, 2, True, True),
            (384, 3, 1, 1, 1, False, False), (384, 3, 1, 1, 2, False, False),
            (256, 3, 1, 1, 2, False, True))
# Inception modules (name, (1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection)),
# grouped by the 3x3/2 max-pool that follows each stage (none after 5b).
_GOOGLENET = (
    (("3a", (64, 96, 128, 16, 32, 32)), ("3b", (128, 128, 192, 32, 96, 64))),
    (("4a", (192, 96, 208, 16, 48, 64)), ("4b", (160, 112, 224, 24, 64, 64)),
     ("4c", (128, 128, 256, 24, 64, 64)), ("4d", (112, 144, 288, 32, 64, 64)),
     ("4e", (256, 160, 320, 32, 128, 128))),
    (("5a", (256, 160, 320, 32, 128, 128)), ("5b", (384, 192, 384, 48, 128, 128))),
)


@MODELS.register("alexnet_caffe")
def alexnet_caffe(input_size: int = 227, num_classes: int = 1000) -> Graph:
    """BVLC AlexNet: 5 conv (3 of them two-tower) + 2 LRN + 3 FC, 60.97 M parameters,
    0.72 GMACs at 227x227.

    Args:
        input_size: square input side, pixels (227 in the deploy file; fc6
            reads whatever pool5 gives, 6x6 at 227; inputs from 63 build).
        num_classes: classifier outputs.
    """
    input_size = positive_int("input_size", input_size, "alexnet_caffe")
    num_classes = positive_int("num_classes", num_classes, "alexnet_caffe")
    g = Graph("alexnet_caffe", (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes})
    x = g.input
    for i, (channels, kernel, stride, pad, groups, lrn, pool) in enumerate(_ALEXNET, start=1):
        x = g.conv(x, channels, kernel, stride, pad, groups, bias=True, name=f"conv{i}")
        x = g.relu(x, name=f"relu{i}")
        if lrn:
            x = g.lrn(x, name=f"norm{i}")
        if pool:
            x = g.maxpool(x, 3, 2, ceil_mode=True, name=f"pool{i}")
    x = g.relu(g.fc(x, 4096, name="fc6"), name="relu6")
    x = g.relu(g.fc(x, 4096, name="fc7"), name="relu7")
    g.softmax(g.fc(x, num_classes, name="fc8"), name="prob")
    return g


def _inception(g: Graph, x: str, spec: tuple[int, ...], name: str) -> str:
    c1, r3, c3, r5, c5, proj = spec

    def conv(src: str, channels: int, kernel: int, label: str) -> str:
        return g.relu(g.conv(src, channels, kernel, bias=True, name=f"{name}/{label}"),
                      name=f"{name}/relu_{label}")

    b1 = conv(x, c1, 1, "1x1")
    b2 = conv(conv(x, r3, 1, "3x3_reduce"), c3, 3, "3x3")
    b3 = conv(conv(x, r5, 1, "5x5_reduce"), c5, 5, "5x5")
    b4 = conv(g.maxpool(x, 3, 1, padding=1, ceil_mode=True, name=f"{name}/pool"), proj, 1,
              "pool_proj")
    return g.concat(b1, b2, b3, b4, name=f"{name}/output")


@MODELS.register("googlenet_caffe")
def googlenet_caffe(input_size: int = 224, num_classes: int = 1000) -> Graph:
    """BVLC GoogLeNet: 57 conv + 2 LRN + 9 inception modules + FC, 7.0 M parameters,
    1.6 GMACs at 224x224.

    Args:
        input_size: square input side, pixels (224 as published; the final
            average pool covers the whole last map).
        num_classes: classifier outputs.
    """
    input_size = positive_int("input_size", input_size, "googlenet_caffe")
    num_classes = positive_int("num_classes", num_classes, "googlenet_caffe")
    g = Graph("googlenet_caffe", (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes})
    x = g.relu(g.conv(g.input, 64, 7, 2, 3, bias=True, name="conv1/7x7_s2"),
               name="conv1/relu_7x7")
    x = g.lrn(g.maxpool(x, 3, 2, ceil_mode=True, name="pool1/3x3_s2"), name="pool1/norm1")
    x = g.relu(g.conv(x, 64, 1, bias=True, name="conv2/3x3_reduce"),
               name="conv2/relu_3x3_reduce")
    x = g.relu(g.conv(x, 192, 3, bias=True, name="conv2/3x3"), name="conv2/relu_3x3")
    x = g.maxpool(g.lrn(x, name="conv2/norm2"), 3, 2, ceil_mode=True, name="pool2/3x3_s2")
    for stage, modules in enumerate(_GOOGLENET, start=3):
        for label, spec in modules:
            x = _inception(g, x, spec, name=f"inception_{label}")
        if stage < 5:
            x = g.maxpool(x, 3, 2, ceil_mode=True, name=f"pool{stage}/3x3_s2")
    # Caffe's 7x7/1 average pool over the 7x7 map: a global pool (any input size builds)
    x = g.global_pool(x, name="pool5/7x7_s1")
    g.softmax(g.fc(x, num_classes, name="loss3/classifier"), name="prob")
    return g
