"""ResNet-18/34/50/101/152 (He et al., 2016), v1.5, ImageNet and CIFAR stems."""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_float, resolve_dataset, scaled

# Blocks per stage, and whether the stage uses bottleneck blocks (expansion 4).
_DEPTHS = {
    "resnet18": ((2, 2, 2, 2), False),
    "resnet34": ((3, 4, 6, 3), False),
    "resnet50": ((3, 4, 6, 3), True),
    "resnet101": ((3, 4, 23, 3), True),
    "resnet152": ((3, 8, 36, 3), True),
}
_STAGE_CHANNELS = (64, 128, 256, 512)


def _basic(g: Graph, x: str, planes: int, stride: int, name: str) -> str:
    out = g.conv_bn_relu(x, planes, 3, stride, name=f"{name}.conv1")
    out = g.conv_bn_relu(out, planes, 3, relu=False, name=f"{name}.conv2")
    return _join(g, x, out, planes, stride, name)


def _bottleneck(g: Graph, x: str, planes: int, stride: int, name: str) -> str:
    # v1.5: the stride sits on the 3x3 conv (torchvision), not on the first 1x1.
    out = g.conv_bn_relu(x, planes, 1, name=f"{name}.conv1")
    out = g.conv_bn_relu(out, planes, 3, stride, name=f"{name}.conv2")
    out = g.conv_bn_relu(out, planes * 4, 1, relu=False, name=f"{name}.conv3")
    return _join(g, x, out, planes * 4, stride, name)


def _join(g: Graph, x: str, out: str, channels: int, stride: int, name: str) -> str:
    """Residual add (with a 1x1 projection when the shape changes) + ReLU."""
    if stride != 1 or g.shape(x)[0] != channels:
        x = g.conv_bn_relu(x, channels, 1, stride, relu=False, name=f"{name}.downsample")
    return g.relu(g.add(out, x, name=f"{name}.add"), name=f"{name}.relu")


def build_resnet(name: str, input_size: int | None = None, num_classes: int | None = None,
                 stem: str = "auto", width: float = 1.0) -> Graph:
    """Build a ResNet.

    ImageNet stem: 7x7/2 conv + 3x3/2 max-pool (torchvision). CIFAR stem:
    one 3x3/1 conv and no max-pool, so the stages see 32x32 ... 4x4 maps.

    Args:
        name: ``resnet18``, ``resnet34``, ``resnet50``, ``resnet101`` or ``resnet152``.
        input_size: square input side, pixels (default 224, or 32 for CIFAR).
        num_classes: classifier outputs (default 1000, or 10 for CIFAR).
        stem: ``imagenet``, ``cifar``, or ``auto`` = ``cifar`` when input_size <= 32.
        width: channel multiplier (1.0 = the published model).
    """
    stem, input_size, num_classes = resolve_dataset(name, stem, input_size, num_classes)
    width = positive_float("width", width, name)
    g = Graph(name, (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes, "stem": stem,
               "width": width})
    x = build_resnet_features(g, name, stem, width)
    x = g.global_pool(x, name="avgpool")
    g.softmax(g.fc(x, num_classes, name="fc"), name="softmax")
    return g


def build_resnet_features(g: Graph, name: str, stem: str = "imagenet",
                          width: float = 1.0) -> str:
    """Add a ResNet's stem and four stages (no classifier) on ``g.input``.

    Args:
        g: the graph to extend (its input is the image).
        name: a key of the ResNet table (``resnet18`` ... ``resnet152``).
        stem: ``imagenet`` (7x7/2 conv + max-pool) or ``cifar`` (3x3/1 conv).
        width: channel multiplier.

    Returns:
        the handle of the last stage's output (stride 32 with the ImageNet stem).
    """
    depths, bottleneck = _DEPTHS[name]
    if stem == "cifar":
        x = g.conv_bn_relu(g.input, scaled(64, width), 3, name="stem")
    else:
        x = g.conv_bn_relu(g.input, scaled(64, width), 7, 2, name="stem")
        x = g.maxpool(x, 3, 2, padding=1, name="stem.pool")
    block = _bottleneck if bottleneck else _basic
    for stage, (blocks, channels) in enumerate(zip(depths, _STAGE_CHANNELS, strict=True), start=1):
        for index in range(blocks):
            stride = 2 if stage > 1 and index == 0 else 1
            x = block(g, x, scaled(channels, width), stride, f"layer{stage}.{index}")
    return x


@MODELS.register("resnet18")
def resnet18(input_size: int | None = None, num_classes: int | None = None, stem: str = "auto",
             width: float = 1.0) -> Graph:
    """ResNet-18: basic blocks [2,2,2,2]; 1.82 GMACs at 224x224, 0.555 G on CIFAR.

    Arguments as in :func:`build_resnet`.
    """
    return build_resnet("resnet18", input_size, num_classes, stem, width)


@MODELS.register("resnet34")
def resnet34(input_size: int | None = None, num_classes: int | None = None, stem: str = "auto",
             width: float = 1.0) -> Graph:
    """ResNet-34: basic blocks [3,4,6,3]; 3.67 GMACs at 224x224, 1.16 G on CIFAR.

    Arguments as in :func:`build_resnet`.
    """
    return build_resnet("resnet34", input_size, num_classes, stem, width)


@MODELS.register("resnet50")
def resnet50(input_size: int | None = None, num_classes: int | None = None, stem: str = "auto",
             width: float = 1.0) -> Graph:
    """ResNet-50 v1.5: bottlenecks [3,4,6,3]; 4.09 GMACs at 224x224, 1.30 G on CIFAR.

    Arguments as in :func:`build_resnet`.
    """
    return build_resnet("resnet50", input_size, num_classes, stem, width)


@MODELS.register("resnet101")
def resnet101(input_size: int | None = None, num_classes: int | None = None,
              stem: str = "auto", width: float = 1.0) -> Graph:
    """ResNet-101 v1.5: bottlenecks [3,4,23,3]; 7.8 GMACs at 224x224.

    Arguments as in :func:`build_resnet`.
    """
    return build_resnet("resnet101", input_size, num_classes, stem, width)


@MODELS.register("resnet152")
def resnet152(input_size: int | None = None, num_classes: int | None = None,
              stem: str = "auto", width: float = 1.0) -> Graph:
    """ResNet-152 v1.5: bottlenecks [3,8,36,3]; 11.5 GMACs at 224x224, 3.72 G on CIFAR.

    Arguments as in :func:`build_resnet`.
    """
    return build_resnet("resnet152", input_size, num_classes, stem, width)
