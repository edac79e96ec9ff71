"""AlexNet (Krizhevsky et al., 2012), single-tower torchvision form.

Caffe forms (``*_caffe``): the BVLC Caffe model zoo's, what a RenderScript or other
mobile runtime of 2016-2017 ran (``BVLC/caffe`` ``models/bvlc_*/deploy.prototxt``);
dropout omitted (no kernels at inference), no auxiliary classifiers.
"""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int

# (out_channels, kernel, stride, padding, max-pool after)
_FEATURES = ((64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False),
             (256, 3, 1, 1, False), (256, 3, 1, 1, True))


@MODELS.register("alexnet")
def alexnet(input_size: int = 224, num_classes: int = 1000) -> Graph:
    """AlexNet: 5 conv + 3 FC, 61.1 M parameters, 0.71 GMACs at 224x224.

    As torchvision builds it (64-192-384-256-256 channels, no LRN, one
    tower); the classifier always sees a 6x6 map (adaptive pooling), so any
    input size >= 63 works. Dropout is omitted (no kernels at inference;
    negligible in training).

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
    """
    input_size = positive_int("input_size", input_size, "alexnet")
    num_classes = positive_int("num_classes", num_classes, "alexnet")
    g = Graph("alexnet", (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes})
    x = g.input
    for i, (channels, kernel, stride, padding, pool) in enumerate(_FEATURES, start=1):
        x = g.conv(x, channels, kernel, stride, padding, bias=True, name=f"conv{i}")
        x = g.relu(x, name=f"relu{i}")
        if pool:
            x = g.maxpool(x, 3, 2, name=f"pool{i}")
    x = g.adaptive_avgpool(x, 6, name="avgpool")
    x = g.relu(g.fc(x, 4096, name="fc6"), name="relu6")
    x = g.relu(g.fc(x, 4096, name="fc7"), name="relu7")
    g.softmax(g.fc(x, num_classes, name="fc8"), name="softmax")
    return g


# conv (out_channels, kernel, stride, padding, groups, LRN after, max-pool after)
_ALEXNET = ((96, 11, 4, 0, 1, True, True), (256, 5, 1, 2, 2, True, True),
            (384, 3, 1, 1, 1, False, False), (384, 3, 1, 1, 2, False, False),
            (256, 3, 1, 1, 2, False, True))


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
