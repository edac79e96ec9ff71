"""Early-exit models: a backbone with candidate exit branches (FlexDNN).

FlexDNN (Fang et al., SEC'20) turns a regular CNN into an input-adaptive one by
attaching early exits: small classifier branches after some backbone layers.
An easy frame leaves at the first exit confident enough about it; a hard one
goes on. The ``early_exit`` zoo model is the backbone (any zoo VGG or ResNet)
with a candidate exit after every candidate layer (every conv block of a VGG,
every residual block of a ResNet); which exits a run actually uses is the
policy's insertion plan (``policies/flexdnn``).

An exit branch is a 3x3 stride-2 convolution to ``head_channels`` channels
with ReLU, global average pooling, an FC to the classes and a softmax: cheap
next to the backbone, but not free, which is what makes choosing where to put
exits matter. Layers of exit ``j`` are named ``exit{j}.*``; exit ``j`` reads
the output of the ``j``-th candidate layer (0-based, in execution order).
"""

from __future__ import annotations

import re

from workloads.graph import Graph
from workloads.zoo.base import MODELS

# Layers after which a candidate exit is attached, by backbone family.
_CANDIDATE = {
    "vgg": re.compile(r"^block\d+\.conv\d+\.relu$"),
    "resnet": re.compile(r"^layer\d+\.\d+\.relu$"),
}
EXIT_PREFIX = re.compile(r"^exit(\d+)\.")


def candidate_layers(graph: Graph) -> list[str]:
    """Backbone layers that can take an exit, in execution order."""
    family = next((f for f in _CANDIDATE if graph.name.startswith(f)), None)
    if family is None:
        from simulator.errors import ConfigError

        raise ConfigError(f"early_exit supports VGG and ResNet backbones; got {graph.name!r}")
    pattern = _CANDIDATE[family]
    return [layer.name for layer in graph.layers if pattern.match(layer.name)]


def exit_of(layer: str) -> int | None:
    """Exit index of a layer (or kernel) name, None for backbone layers."""
    match = EXIT_PREFIX.match(layer)
    return int(match.group(1)) if match else None


@MODELS.register("early_exit")
def early_exit(base: str = "vgg16", head_channels: int = 32, input_size: int | None = None,
               num_classes: int | None = None, width: float = 1.0,
               stem: str = "auto") -> Graph:
    """A backbone CNN with a candidate early exit after every block (FlexDNN).

    Args:
        base: zoo VGG or ResNet backbone (``vgg16``, ``resnet50``, ...).
        head_channels: channels of each exit's 3x3 stride-2 convolution.
        input_size: input resolution, pixels (the backbone's default if None).
        num_classes: classes of the backbone and of every exit.
        width: the backbone's width multiplier.
        stem: the backbone's stem (``auto``, ``imagenet``, ``cifar``).
    """
    from workloads.zoo.base import positive_int

    head_channels = positive_int("head_channels", head_channels, "early_exit")
    backbone = MODELS.get(base)(input_size=input_size, num_classes=num_classes, width=width,
                                stem=stem)
    classes = backbone[backbone.output].out_shape[0]
    candidates = set(candidate_layers(backbone))
    graph = Graph("early_exit", backbone.layers[0].out_shape,
                  {**backbone.config, "base": base, "head_channels": head_channels})
    exit_index = 0
    for layer in backbone.layers[1:]:
        graph._add(layer)  # layers are immutable: the backbone's are reused as they are
        if layer.name in candidates:
            prefix = f"exit{exit_index}"
            x = graph.relu(graph.conv(layer.name, head_channels, 3, 2, bias=True,
                                      name=f"{prefix}.conv"), name=f"{prefix}.relu")
            x = graph.global_pool(x, name=f"{prefix}.pool")
            graph.softmax(graph.fc(x, classes, name=f"{prefix}.fc"), name=f"{prefix}.softmax")
            exit_index += 1
    # The backbone's own classifier comes after its last candidate layer, so its
    # softmax stays the graph's output (the final exit).
    return graph
