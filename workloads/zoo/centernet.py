"""A CenterNet-style detector (Zhou et al., "Objects as Points", 2019).

ResNet-18 backbone (stride 32), three up-sampling stages (3x3 conv-BN-ReLU then
a 4x4/2 transposed conv-BN-ReLU, 256/128/64 channels) back to stride 4, and
three heads (3x3 conv-ReLU, 1x1 conv): the class heatmap, box size and centre
offset. CenterNet's ResNet variants use deformable 3x3 convolutions in the
up-sampling path; they are plain convolutions here (same MACs per output).
"""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int
from .resnet import build_resnet_features

_UP_CHANNELS = (256, 128, 64)
_HEAD_CHANNELS = 64


@MODELS.register("centernet")
def centernet(input_size: int = 512, num_classes: int = 80) -> Graph:
    """CenterNet with a ResNet-18 backbone: 14.2 M parameters, 13.1 GMACs at 512x512.

    Args:
        input_size: square input side, pixels (a multiple of 32).
        num_classes: heatmap classes (80 for COCO).
    """
    input_size = positive_int("input_size", input_size, "centernet")
    num_classes = positive_int("num_classes", num_classes, "centernet")
    g = Graph("centernet", (3, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes})
    x = build_resnet_features(g, "resnet18")
    for i, channels in enumerate(_UP_CHANNELS, start=1):
        x = g.conv_bn_relu(x, channels, 3, name=f"up{i}.conv")
        x = g.deconv(x, channels, 4, 2, padding=1, name=f"up{i}.deconv.conv")
        x = g.relu(g.bn(x, name=f"up{i}.deconv.bn"), name=f"up{i}.deconv.relu")
    heads = []
    for head, out in (("hm", num_classes), ("wh", 2), ("reg", 2)):
        y = g.relu(g.conv(x, _HEAD_CHANNELS, 3, bias=True, name=f"{head}.conv"),
                   name=f"{head}.relu")
        heads.append(g.conv(y, out, 1, bias=True, name=f"{head}.out"))
    g.concat(*heads, name="output")
    return g
