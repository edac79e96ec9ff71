"""Inception-v3 (Szegedy et al., 2016), torchvision form without the auxiliary head."""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, resolve_dataset


def _cbr(g: Graph, x: str, channels: int, kernel, name: str, stride: int = 1,
         padding=0) -> str:
    # torchvision's BasicConv2d: conv without bias + BN + ReLU, explicit padding.
    return g.conv_bn_relu(x, channels, kernel, stride, padding, name=name)


def _block_a(g: Graph, x: str, pool_features: int, name: str) -> str:
    b1 = _cbr(g, x, 64, 1, f"{name}.b1x1")
    b5 = _cbr(g, _cbr(g, x, 48, 1, f"{name}.b5x5_1"), 64, 5, f"{name}.b5x5_2", padding=2)
    b3 = _cbr(g, x, 64, 1, f"{name}.b3x3dbl_1")
    b3 = _cbr(g, b3, 96, 3, f"{name}.b3x3dbl_2", padding=1)
    b3 = _cbr(g, b3, 96, 3, f"{name}.b3x3dbl_3", padding=1)
    bp = g.avgpool(x, 3, 1, padding=1, name=f"{name}.pool")
    bp = _cbr(g, bp, pool_features, 1, f"{name}.bpool")
    return g.concat(b1, b5, b3, bp, name=f"{name}.concat")


def _block_b(g: Graph, x: str, name: str) -> str:
    b3 = _cbr(g, x, 384, 3, f"{name}.b3x3", stride=2)
    bd = _cbr(g, x, 64, 1, f"{name}.b3x3dbl_1")
    bd = _cbr(g, bd, 96, 3, f"{name}.b3x3dbl_2", padding=1)
    bd = _cbr(g, bd, 96, 3, f"{name}.b3x3dbl_3", stride=2)
    bp = g.maxpool(x, 3, 2, name=f"{name}.pool")
    return g.concat(b3, bd, bp, name=f"{name}.concat")


def _block_c(g: Graph, x: str, c7: int, name: str) -> str:
    b1 = _cbr(g, x, 192, 1, f"{name}.b1x1")
    b7 = _cbr(g, x, c7, 1, f"{name}.b7x7_1")
    b7 = _cbr(g, b7, c7, (1, 7), f"{name}.b7x7_2", padding=(0, 3))
    b7 = _cbr(g, b7, 192, (7, 1), f"{name}.b7x7_3", padding=(3, 0))
    bd = _cbr(g, x, c7, 1, f"{name}.b7x7dbl_1")
    for i, (out, kernel, pad) in enumerate(((c7, (7, 1), (3, 0)), (c7, (1, 7), (0, 3)),
                                            (c7, (7, 1), (3, 0)), (192, (1, 7), (0, 3))),
                                           start=2):
        bd = _cbr(g, bd, out, kernel, f"{name}.b7x7dbl_{i}", padding=pad)
    bp = g.avgpool(x, 3, 1, padding=1, name=f"{name}.pool")
    bp = _cbr(g, bp, 192, 1, f"{name}.bpool")
    return g.concat(b1, b7, bd, bp, name=f"{name}.concat")


def _block_d(g: Graph, x: str, name: str) -> str:
    b3 = _cbr(g, _cbr(g, x, 192, 1, f"{name}.b3x3_1"), 320, 3, f"{name}.b3x3_2", stride=2)
    b7 = _cbr(g, x, 192, 1, f"{name}.b7x7x3_1")
    b7 = _cbr(g, b7, 192, (1, 7), f"{name}.b7x7x3_2", padding=(0, 3))
    b7 = _cbr(g, b7, 192, (7, 1), f"{name}.b7x7x3_3", padding=(3, 0))
    b7 = _cbr(g, b7, 192, 3, f"{name}.b7x7x3_4", stride=2)
    bp = g.maxpool(x, 3, 2, name=f"{name}.pool")
    return g.concat(b3, b7, bp, name=f"{name}.concat")


def _block_e(g: Graph, x: str, name: str) -> str:
    b1 = _cbr(g, x, 320, 1, f"{name}.b1x1")
    b3 = _cbr(g, x, 384, 1, f"{name}.b3x3_1")
    b3a = _cbr(g, b3, 384, (1, 3), f"{name}.b3x3_2a", padding=(0, 1))
    b3b = _cbr(g, b3, 384, (3, 1), f"{name}.b3x3_2b", padding=(1, 0))
    bd = _cbr(g, x, 448, 1, f"{name}.b3x3dbl_1")
    bd = _cbr(g, bd, 384, 3, f"{name}.b3x3dbl_2", padding=1)
    bda = _cbr(g, bd, 384, (1, 3), f"{name}.b3x3dbl_3a", padding=(0, 1))
    bdb = _cbr(g, bd, 384, (3, 1), f"{name}.b3x3dbl_3b", padding=(1, 0))
    bp = g.avgpool(x, 3, 1, padding=1, name=f"{name}.pool")
    bp = _cbr(g, bp, 192, 1, f"{name}.bpool")
    # torchvision concatenates the split branches inside the block; one concat
    # of all six tensors moves the same bytes.
    return g.concat(b1, b3a, b3b, bda, bdb, bp, name=f"{name}.concat")


@MODELS.register("inception_v3")
def inception_v3(input_size: int | None = None, num_classes: int | None = None,
                 stem: str = "auto") -> Graph:
    """Inception-v3: factorised inception blocks, 23.8 M parameters, 5.71 GMACs at 299x299.

    torchvision layout without the auxiliary classifier (the reference MAC
    and parameter counts exclude it too). The ImageNet stem needs
    input_size >= 75.

    The CIFAR stem (``stem='cifar'``, chosen by ``auto`` for inputs <= 32)
    is the one of the public CIFAR-100 implementation weiaicunzai/pytorch-cifar100
    (``models/inceptionv3.py``): the stem's three 3x3 convs keep stride 1 with
    padding 1, ``Conv2d_4a`` stays unpadded, and both stem max-pools are
    dropped, so 32x32 inputs reach the Mixed_5 blocks at 30x30, Mixed_6 at
    14x14 and Mixed_7 at 6x6. The inception blocks stay torchvision's (that
    implementation also changes two pooling branches; those changes are not
    taken). Defaults: 32x32 and 10 classes (CIFAR-10); 299x299 and 1000
    classes for the ImageNet stem.

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
        stem: ``auto``, ``imagenet`` or ``cifar``.
    """
    if input_size is None and stem in ("auto", "imagenet"):
        input_size = 299  # Inception-v3's ImageNet size (resolve_dataset's default is 224)
    stem, input_size, num_classes = resolve_dataset("inception_v3", stem, input_size,
                                                    num_classes)
    g = Graph("inception_v3", (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes, "stem": stem})
    if stem == "cifar":
        x = _cbr(g, g.input, 32, 3, "Conv2d_1a", padding=1)
        x = _cbr(g, x, 32, 3, "Conv2d_2a", padding=1)
        x = _cbr(g, x, 64, 3, "Conv2d_2b", padding=1)
        x = _cbr(g, x, 80, 1, "Conv2d_3b")
        x = _cbr(g, x, 192, 3, "Conv2d_4a")
    else:
        x = _cbr(g, g.input, 32, 3, "Conv2d_1a", stride=2)
        x = _cbr(g, x, 32, 3, "Conv2d_2a")
        x = _cbr(g, x, 64, 3, "Conv2d_2b", padding=1)
        x = g.maxpool(x, 3, 2, name="maxpool1")
        x = _cbr(g, x, 80, 1, "Conv2d_3b")
        x = _cbr(g, x, 192, 3, "Conv2d_4a")
        x = g.maxpool(x, 3, 2, name="maxpool2")
    for label, pool_features in (("5b", 32), ("5c", 64), ("5d", 64)):
        x = _block_a(g, x, pool_features, f"Mixed_{label}")
    x = _block_b(g, x, "Mixed_6a")
    for label, c7 in (("6b", 128), ("6c", 160), ("6d", 160), ("6e", 192)):
        x = _block_c(g, x, c7, f"Mixed_{label}")
    x = _block_d(g, x, "Mixed_7a")
    x = _block_e(g, x, "Mixed_7b")
    x = _block_e(g, x, "Mixed_7c")
    x = g.global_pool(x, name="avgpool")
    g.softmax(g.fc(x, num_classes, name="fc"), name="softmax")
    return g
