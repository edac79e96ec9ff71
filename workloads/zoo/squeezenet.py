"""SqueezeNet 1.0 and 1.1 (Iandola et al., 2016), torchvision form."""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int

# Fire modules as (squeeze, expand 1x1, expand 3x3); "M" is a 3x3/2 ceil-mode max-pool.
_FIRES = {
    "squeezenet1_0": ("M", (16, 64, 64), (16, 64, 64), (32, 128, 128), "M", (32, 128, 128),
                      (48, 192, 192), (48, 192, 192), (64, 256, 256), "M", (64, 256, 256)),
    "squeezenet1_1": ("M", (16, 64, 64), (16, 64, 64), "M", (32, 128, 128), (32, 128, 128),
                      "M", (48, 192, 192), (48, 192, 192), (64, 256, 256), (64, 256, 256)),
}
# Stem conv per version: (out_channels, kernel).
_STEM = {"squeezenet1_0": (96, 7), "squeezenet1_1": (64, 3)}


def _fire(g: Graph, x: str, squeeze: int, e1: int, e3: int, name: str) -> str:
    s = g.relu(g.conv(x, squeeze, 1, bias=True, name=f"{name}.squeeze"),
               name=f"{name}.squeeze.relu")
    a = g.relu(g.conv(s, e1, 1, bias=True, name=f"{name}.expand1x1"),
               name=f"{name}.expand1x1.relu")
    b = g.relu(g.conv(s, e3, 3, bias=True, name=f"{name}.expand3x3"),
               name=f"{name}.expand3x3.relu")
    return g.concat(a, b, name=f"{name}.concat")


def build_squeezenet(name: str, input_size: int = 224, num_classes: int = 1000) -> Graph:
    """Build SqueezeNet ``squeezenet1_0`` or ``squeezenet1_1``.

    Stem conv (no padding) and ceil-mode max-pools as in torchvision; the
    classifier is a 1x1 conv to ``num_classes`` + ReLU + global average pool.

    Args:
        name: ``squeezenet1_0`` or ``squeezenet1_1``.
        input_size: square input side, pixels.
        num_classes: classifier outputs.
    """
    input_size = positive_int("input_size", input_size, name)
    num_classes = positive_int("num_classes", num_classes, name)
    g = Graph(name, (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes})
    channels, kernel = _STEM[name]
    x = g.relu(g.conv(g.input, channels, kernel, 2, padding=0, bias=True, name="conv1"),
               name="conv1.relu")
    fire = 2
    for index, item in enumerate(_FIRES[name]):
        if item == "M":
            x = g.maxpool(x, 3, 2, ceil_mode=True, name=f"pool{index}")
        else:
            x = _fire(g, x, *item, name=f"fire{fire}")
            fire += 1
    x = g.relu(g.conv(x, num_classes, 1, bias=True, name="conv10"), name="conv10.relu")
    g.softmax(g.global_pool(x, name="avgpool"), name="softmax")
    return g


@MODELS.register("squeezenet1_0")
def squeezenet1_0(input_size: int = 224, num_classes: int = 1000) -> Graph:
    """SqueezeNet 1.0: 8 fire modules, 1.25 M parameters, 0.82 GMACs at 224x224.

    Arguments as in :func:`build_squeezenet`.
    """
    return build_squeezenet("squeezenet1_0", input_size, num_classes)


@MODELS.register("squeezenet1_1")
def squeezenet1_1(input_size: int = 224, num_classes: int = 1000) -> Graph:
    """SqueezeNet 1.1: 3x3 stem, earlier pooling, 1.24 M parameters, 0.35 GMACs.

    Arguments as in :func:`build_squeezenet`.
    """
    return build_squeezenet("squeezenet1_1", input_size, num_classes)
