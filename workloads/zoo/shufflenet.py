"""ShuffleNet V2 (Ma et al., ECCV 2018), torchvision form."""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int

# Output channels of conv1, the three stages and conv5, per width (torchvision).
_CHANNELS = {0.5: (24, 48, 96, 192, 1024), 1.0: (24, 116, 232, 464, 1024),
             1.5: (24, 176, 352, 704, 1024), 2.0: (24, 244, 488, 976, 2048)}
_REPEATS = (4, 8, 4)


def _branch(g: Graph, x: str, out: int, stride: int, name: str) -> str:
    """1x1 conv-BN-ReLU, 3x3 depthwise-BN (stride), 1x1 conv-BN-ReLU."""
    y = g.conv_bn_relu(x, out, 1, name=f"{name}.pw1")
    y = g.bn(g.dwconv(y, 3, stride, name=f"{name}.dw.conv"), name=f"{name}.dw.bn")
    return g.conv_bn_relu(y, out, 1, name=f"{name}.pw2")


def _unit(g: Graph, x: str, out: int, stride: int, name: str) -> str:
    """An inverted-residual unit: channel split (stride 1) or two branches
    (stride 2), concatenation and channel shuffle with 2 groups."""
    half = out // 2
    if stride == 1:
        c = g.shape(x)[0]
        keep = g.slice(x, c // 2, name=f"{name}.split0")
        other = g.slice(x, c - c // 2, name=f"{name}.split1")
        y = g.concat(keep, _branch(g, other, half, 1, f"{name}.branch2"),
                     name=f"{name}.concat")
    else:
        left = g.bn(g.dwconv(x, 3, 2, name=f"{name}.branch1.dw.conv"),
                    name=f"{name}.branch1.dw.bn")
        left = g.conv_bn_relu(left, half, 1, name=f"{name}.branch1.pw")
        y = g.concat(left, _branch(g, x, half, 2, f"{name}.branch2"), name=f"{name}.concat")
    return g.shuffle(y, 2, name=f"{name}.shuffle")


@MODELS.register("shufflenet_v2")
def shufflenet_v2(input_size: int = 224, num_classes: int = 1000, width: float = 1.0) -> Graph:
    """ShuffleNet V2: 16 units in 3 stages; 1.0x: 2.28 M parameters, 0.15 GMACs at 224x224.

    torchvision layout (``shufflenet_v2_x1_0`` and siblings): 3x3/2 stem conv
    and 3x3/2 max-pool, stages of 4/8/4 units, 1x1 conv5, global pooling, FC.

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
        width: 0.5, 1.0, 1.5 or 2.0 (the published channel configurations).
    """
    input_size = positive_int("input_size", input_size, "shufflenet_v2")
    num_classes = positive_int("num_classes", num_classes, "shufflenet_v2")
    if width not in _CHANNELS:
        from simulator.errors import ConfigError

        raise ConfigError(f"The 'width' parameter of model 'shufflenet_v2' must be one of "
                          f"{', '.join(map(str, _CHANNELS))}. Got {width!r} instead.")
    channels = _CHANNELS[width]
    g = Graph("shufflenet_v2", (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes, "width": width})
    x = g.conv_bn_relu(g.input, channels[0], 3, 2, name="conv1")
    x = g.maxpool(x, 3, 2, padding=1, name="maxpool")
    for stage, (repeats, out) in enumerate(zip(_REPEATS, channels[1:4]), start=2):
        for index in range(repeats):
            x = _unit(g, x, out, 2 if index == 0 else 1, f"stage{stage}.{index}")
    x = g.conv_bn_relu(x, channels[4], 1, name="conv5")
    x = g.global_pool(x, name="avgpool")
    g.softmax(g.fc(x, num_classes, name="fc"), name="softmax")
    return g
