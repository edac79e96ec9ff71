"""Early-exit models: a backbone with candidate exit branches (FlexDNN).

FlexDNN (Fang et al., SEC'20) turns a regular CNN into an input-adaptive one by
attaching early exits: small classifier branches after some backbone layers.
An easy frame leaves at the first exit confident enough about it; a hard one
goes on. The ``early_exit`` zoo model is the backbone (any zoo VGG, ResNet or
MobileNet) with candidate exits after every candidate layer (every conv block of
a VGG, every residual block of a ResNet, every depthwise-separable block of a
MobileNetV1, every inverted-residual block of a MobileNetV2); which exits a run
actually uses is the policy's insertion plan (``policies/flexdnn``).

An exit branch is a small classifier of one of a few *designs* (``heads``):

* ``pool``: global average pooling, an FC to the classes, softmax;
* ``conv32`` / ``conv64``: a 3x3 stride-2 convolution to 32 / 64 channels
  with ReLU first (``conv32`` is the single fixed head of earlier versions);
* ``conv2x64``: two 3x3 convolutions to 64 channels (stride 2, then 1).

Cheap next to the backbone, but not free, which is what makes choosing where
to put exits, and which design, matter. With one design every candidate
position has one exit and exit ``j`` reads the ``j``-th candidate layer; with
``D`` designs position ``p`` has exits ``p*D .. p*D + D - 1`` (in the order of
``heads``), of which a plan uses at most one. Layers of exit ``j`` are named
``exit{j}.*``.
"""

from __future__ import annotations

import inspect
import re

from simulator.errors import ConfigError
from workloads.graph import Graph
from workloads.zoo.base import MODELS

# Layers after which a candidate exit is attached, by backbone family.
_CANDIDATE = {
    "vgg": re.compile(r"^block\d+\.conv\d+\.relu$"),
    "resnet": re.compile(r"^layer\d+\.\d+\.relu$"),
    "mobilenet_v1": re.compile(r"^block\d+\.pw\.relu$"),
}
_V2_BLOCK = re.compile(r"^features\.(\d+)\.(add|project\.bn)$")
# Exit designs: (convolutions as (channels, stride), ...); pooling and FC follow.
HEADS = {"pool": (), "conv32": ((32, 2),), "conv64": ((64, 2),),
         "conv2x64": ((64, 2), (64, 1))}
EXIT_PREFIX = re.compile(r"^exit(\d+)\.")


def candidate_layers(graph: Graph) -> list[str]:
    """Backbone layers that can take an exit, in execution order."""
    if graph.name.startswith("mobilenet_v2"):
        # a block's output is its residual add, or its projection when it has none
        last: dict[int, str] = {}
        for layer in graph.layers:
            match = _V2_BLOCK.match(layer.name)
            if match:
                last[int(match.group(1))] = layer.name
        return [last[k] for k in sorted(last)]
    family = next((f for f in _CANDIDATE if graph.name.startswith(f)), None)
    if family is None:
        raise ConfigError("early_exit supports VGG, ResNet and MobileNet (v1, v2) backbones; "
                          f"got {graph.name!r}")
    pattern = _CANDIDATE[family]
    return [layer.name for layer in graph.layers if pattern.match(layer.name)]


def exit_of(layer: str) -> int | None:
    """Exit index of a layer (or kernel) name, None for backbone layers."""
    match = EXIT_PREFIX.match(layer)
    return int(match.group(1)) if match else None


@MODELS.register("early_exit")
def early_exit(base: str = "vgg16", head_channels: int = 32, input_size: int | None = None,
               num_classes: int | None = None, width: float = 1.0,
               stem: str = "auto", heads: list[str] | None = None) -> Graph:
    """A backbone CNN with candidate early exits after every block (FlexDNN).

    Args:
        base: zoo VGG, ResNet or MobileNet backbone (``vgg16``, ``resnet50``,
            ``mobilenet_v1``, ``mobilenet_v2``, ...).
        head_channels: channels of the exit convolution when ``heads`` is not given
            (one design per position, the 3x3 stride-2 ``conv`` head).
        input_size: input resolution, pixels (the backbone's default if None).
        num_classes: classes of the backbone and of every exit.
        width: the backbone's width multiplier.
        stem: the backbone's stem (``auto``, ``imagenet``, ``cifar``) for backbones
            that have one (VGG, ResNet); MobileNets take only ``auto``.
        heads: exit designs offered at every position (names of :data:`HEADS`); None:
            the single ``head_channels`` conv head.
    """
    from workloads.zoo.base import positive_int

    head_channels = positive_int("head_channels", head_channels, "early_exit")
    designs = _designs(heads, head_channels)
    builder = MODELS.get(base)
    kwargs = {"input_size": input_size, "num_classes": num_classes, "width": width}
    if "stem" in inspect.signature(builder).parameters:
        kwargs["stem"] = stem
    elif stem != "auto":
        raise ConfigError(f"early_exit: backbone {base!r} has no stem option; got stem "
                          f"{stem!r}", path="stem")
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    backbone = builder(**kwargs)
    classes = backbone[backbone.output].out_shape[0]
    candidates = set(candidate_layers(backbone))
    graph = Graph("early_exit", backbone.layers[0].out_shape,
                  {**backbone.config, "base": base, "head_channels": head_channels,
                   "heads": [name for name, _ in designs]})
    exit_index = 0
    for layer in backbone.layers[1:]:
        graph._add(layer)  # layers are immutable: the backbone's are reused as they are
        if layer.name in candidates:
            for _, convs in designs:
                prefix = f"exit{exit_index}"
                x = layer.name
                for i, (channels, stride) in enumerate(convs):
                    suffix = "" if i == 0 else str(i + 1)
                    x = graph.relu(graph.conv(x, channels, 3, stride, bias=True,
                                              name=f"{prefix}.conv{suffix}"),
                                   name=f"{prefix}.relu{suffix}")
                x = graph.global_pool(x, name=f"{prefix}.pool")
                graph.softmax(graph.fc(x, classes, name=f"{prefix}.fc"),
                              name=f"{prefix}.softmax")
                exit_index += 1
    # The backbone's own classifier comes after its last candidate layer, so its
    # softmax stays the graph's output (the final exit).
    return graph


def _designs(heads, head_channels: int) -> list[tuple[str, tuple]]:
    """The exit designs by name (see the module docstring)."""
    if heads is None:
        return [(f"conv{head_channels}", ((head_channels, 2),))]
    if isinstance(heads, str) or not heads:
        raise ConfigError("early_exit: heads must be a non-empty list of exit designs "
                          f"({', '.join(HEADS)}); got {heads!r}", path="heads")
    unknown = [h for h in heads if h not in HEADS]
    if unknown or len(set(heads)) != len(heads):
        raise ConfigError(f"early_exit: unknown or repeated exit design {(unknown or heads)!r}"
                          f"; designs: {', '.join(HEADS)}", path="heads")
    return [(name, HEADS[name]) for name in heads]
