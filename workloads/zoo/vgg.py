"""VGG-11/16/19 (Simonyan & Zisserman, 2015), ImageNet and CIFAR variants."""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_float, resolve_dataset, scaled

# Output channels per conv; "M" is a 2x2 max-pool (torchvision configs A, D, E).
_CONFIGS = {
    "vgg11": (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
    "vgg16": (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M"),
    "vgg19": (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
              512, 512, 512, 512, "M"),
}


def build_vgg(name: str, input_size: int | None = None, num_classes: int | None = None,
              stem: str = "auto", width: float = 1.0, batch_norm: bool | None = None) -> Graph:
    """Build a VGG from its configuration.

    ImageNet variant: the torchvision layout (conv with bias, no batch norm,
    4096-4096 FC head after a 7x7 adaptive pool). CIFAR variant: batch norm
    after every conv and a single 512->num_classes FC head.

    Args:
        name: ``vgg11``, ``vgg16`` or ``vgg19``.
        input_size: square input side, pixels (default 224, or 32 for CIFAR).
        num_classes: classifier outputs (default 1000, or 10 for CIFAR).
        stem: ``imagenet``, ``cifar``, or ``auto`` = ``cifar`` when input_size <= 32.
        width: channel multiplier (1.0 = the published model).
        batch_norm: batch norm after each conv; default (None): CIFAR only.
    """
    stem, input_size, num_classes = resolve_dataset(name, stem, input_size, num_classes)
    width = positive_float("width", width, name)
    if batch_norm is None:
        batch_norm = stem == "cifar"
    g = Graph(name, (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes, "stem": stem,
               "width": width, "batch_norm": bool(batch_norm)})
    x, block, index = g.input, 1, 1
    for item in _CONFIGS[name]:
        if item == "M":
            x = g.maxpool(x, 2, name=f"block{block}.pool")
            block, index = block + 1, 1
            continue
        prefix = f"block{block}.conv{index}"
        x = g.conv(x, scaled(item, width), 3, bias=True, name=prefix)
        if batch_norm:
            x = g.bn(x, name=f"{prefix}.bn")
        x = g.relu(x, name=f"{prefix}.relu")
        index += 1
    if stem == "cifar":
        # The common CIFAR head: the 512x1x1 map straight into one classifier.
        x = g.fc(x, num_classes, name="fc")
    else:
        x = g.adaptive_avgpool(x, 7, name="avgpool")
        x = g.relu(g.fc(x, scaled(4096, width), name="fc6"), name="fc6.relu")
        x = g.relu(g.fc(x, scaled(4096, width), name="fc7"), name="fc7.relu")
        x = g.fc(x, num_classes, name="fc8")
    g.softmax(x, name="softmax")
    return g


@MODELS.register("vgg11")
def vgg11(input_size: int | None = None, num_classes: int | None = None, stem: str = "auto",
          width: float = 1.0, batch_norm: bool | None = None) -> Graph:
    """VGG-11: 8 conv + 3 FC; 7.61 GMACs at 224x224, 0.153 G on CIFAR.

    Arguments as in :func:`build_vgg`.
    """
    return build_vgg("vgg11", input_size, num_classes, stem, width, batch_norm)


@MODELS.register("vgg16")
def vgg16(input_size: int | None = None, num_classes: int | None = None, stem: str = "auto",
          width: float = 1.0, batch_norm: bool | None = None) -> Graph:
    """VGG-16: 13 conv + 3 FC; 15.47 GMACs at 224x224, 0.313 G on CIFAR.

    Arguments as in :func:`build_vgg`.
    """
    return build_vgg("vgg16", input_size, num_classes, stem, width, batch_norm)


@MODELS.register("vgg19")
def vgg19(input_size: int | None = None, num_classes: int | None = None, stem: str = "auto",
          width: float = 1.0, batch_norm: bool | None = None) -> Graph:
    """VGG-19: 16 conv + 3 FC; 19.63 GMACs at 224x224, 0.398 G on CIFAR.

    Arguments as in :func:`build_vgg`.
    """
    return build_vgg("vgg19", input_size, num_classes, stem, width, batch_norm)
