"""GoogLeNet / Inception-v1 (Szegedy et al., 2015), torchvision form without aux heads.

Caffe forms (``*_caffe``): the BVLC Caffe model zoo's, what a RenderScript or other
mobile runtime of 2016-2017 ran (``BVLC/caffe`` ``models/bvlc_*/deploy.prototxt``);
dropout omitted (no kernels at inference), no auxiliary classifiers.
"""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int

# Stages of inception modules: (name, (1x1, 3x3 reduce, 3x3, "5x5" reduce, "5x5",
# pool projection)); each stage is followed by a ceil-mode max-pool of this size
# (2x2/2 before stage 5 as in torchvision; none after the last).
_STAGES = (
    ((("3a", (64, 96, 128, 16, 32, 32)), ("3b", (128, 128, 192, 32, 96, 64))), 3),
    ((("4a", (192, 96, 208, 16, 48, 64)), ("4b", (160, 112, 224, 24, 64, 64)),
      ("4c", (128, 128, 256, 24, 64, 64)), ("4d", (112, 144, 288, 32, 64, 64)),
      ("4e", (256, 160, 320, 32, 128, 128))), 2),
    ((("5a", (256, 160, 320, 32, 128, 128)), ("5b", (384, 192, 384, 48, 128, 128))), 0),
)


def _inception(g: Graph, x: str, spec: tuple[int, ...], name: str) -> str:
    c1, r3, c3, r5, c5, pool = spec
    b1 = g.conv_bn_relu(x, c1, 1, name=f"{name}.b1")
    b2 = g.conv_bn_relu(g.conv_bn_relu(x, r3, 1, name=f"{name}.b2a"), c3, 3, name=f"{name}.b2b")
    # torchvision uses 3x3 here instead of the paper's 5x5 (kept for weight
    # compatibility); we follow it so counts match the reference table.
    b3 = g.conv_bn_relu(g.conv_bn_relu(x, r5, 1, name=f"{name}.b3a"), c5, 3, name=f"{name}.b3b")
    b4 = g.maxpool(x, 3, 1, padding=1, ceil_mode=True, name=f"{name}.b4.pool")
    b4 = g.conv_bn_relu(b4, pool, 1, name=f"{name}.b4")
    return g.concat(b1, b2, b3, b4, name=f"{name}.concat")


@MODELS.register("googlenet")
def googlenet(input_size: int = 224, num_classes: int = 1000) -> Graph:
    """GoogLeNet: 9 inception modules, 6.62 M parameters, 1.50 GMACs at 224x224.

    torchvision layout with batch norm after every conv and without the two
    auxiliary classifiers (they add work only in training and are usually
    dropped on device).

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
    """
    input_size = positive_int("input_size", input_size, "googlenet")
    num_classes = positive_int("num_classes", num_classes, "googlenet")
    g = Graph("googlenet", (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes})
    x = g.conv_bn_relu(g.input, 64, 7, 2, name="conv1")
    x = g.maxpool(x, 3, 2, ceil_mode=True, name="pool1")
    x = g.conv_bn_relu(x, 64, 1, name="conv2")
    x = g.conv_bn_relu(x, 192, 3, name="conv3")
    x = g.maxpool(x, 3, 2, ceil_mode=True, name="pool2")
    for stage, (modules, pool) in enumerate(_STAGES, start=3):
        for label, spec in modules:
            x = _inception(g, x, spec, name=f"inception{label}")
        if pool:
            x = g.maxpool(x, pool, 2, ceil_mode=True, name=f"pool{stage}")
    x = g.global_pool(x, name="avgpool")
    g.softmax(g.fc(x, num_classes, name="fc"), name="softmax")
    return g


def _inception_caffe(g: Graph, x: str, spec: tuple[int, ...], name: str) -> str:
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
    for stage, (modules, _pool) in enumerate(_STAGES, start=3):
        for label, spec in modules:
            x = _inception_caffe(g, x, spec, name=f"inception_{label}")
        if stage < 5:
            x = g.maxpool(x, 3, 2, ceil_mode=True, name=f"pool{stage}/3x3_s2")
    # Caffe's 7x7/1 average pool over the 7x7 map: a global pool (any input size builds)
    x = g.global_pool(x, name="pool5/7x7_s1")
    g.softmax(g.fc(x, num_classes, name="loss3/classifier"), name="prob")
    return g
