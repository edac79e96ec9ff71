"""LeNet-5 (LeCun et al., 1998), the classic 32x32 variant."""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int


@MODELS.register("lenet5")
def lenet5(input_size: int = 32, num_classes: int = 10, in_channels: int = 1) -> Graph:
    """LeNet-5: 2 conv (5x5) + 2 max-pool + 3 FC, ~62 K parameters at 32x32.

    The classic form (C3 fully connected to S2, max-pooling, ReLU): at 32x32
    it has 61.7 K parameters and 416.5 K MACs.

    Args:
        input_size: square input side, pixels.
        num_classes: classifier outputs.
        in_channels: input channels (1 for MNIST/FEMNIST, 3 for CIFAR).
    """
    input_size = positive_int("input_size", input_size, "lenet5")
    num_classes = positive_int("num_classes", num_classes, "lenet5")
    in_channels = positive_int("in_channels", in_channels, "lenet5")
    g = Graph("lenet5", (in_channels, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes,
               "in_channels": in_channels})
    x = g.relu(g.conv(g.input, 6, 5, padding=0, bias=True, name="conv1"), name="relu1")
    x = g.maxpool(x, 2, name="pool1")
    x = g.relu(g.conv(x, 16, 5, padding=0, bias=True, name="conv2"), name="relu2")
    x = g.maxpool(x, 2, name="pool2")
    x = g.relu(g.fc(x, 120, name="fc1"), name="relu3")
    x = g.relu(g.fc(x, 84, name="fc2"), name="relu4")
    g.softmax(g.fc(x, num_classes, name="fc3"), name="softmax")
    return g


@MODELS.register("lenet_mnn")
def lenet_mnn(input_size: int = 28, num_classes: int = 10, in_channels: int = 1) -> Graph:
    """MNN's demo LeNet (Caffe layout): 2 conv (5x5, 20/50, no ReLU) + 2 FC, 431 K parameters.

    As MNN defines it in ``tools/train/source/models/Lenet.cpp`` (alibaba/MNN;
    ``Mnist.cpp`` and ``demo/mnistTrain.cpp`` are the same network): conv 5x5
    1->20 and 20->50 with bias, unpadded (``NN::ConvOption`` defaults to VALID),
    each followed by a 2x2/2 max-pool and *no* activation; ``ip1`` Linear
    800->500 + ReLU, dropout 0.5, ``ip2`` Linear 500->10, softmax. MNIST
    input 1x28x28 (``demo/MnistUtils.cpp``). At 28x28: 431,080 parameters and
    2.293 M MACs. Dropout and MNN's NC4HW4->NCHW conversion before ``ip1``
    carry no layer here (framework costs belong to the trace generator).

    Args:
        input_size: square input side, pixels (28 in MNN's demo).
        num_classes: classifier outputs.
        in_channels: input channels.
    """
    input_size = positive_int("input_size", input_size, "lenet_mnn")
    num_classes = positive_int("num_classes", num_classes, "lenet_mnn")
    in_channels = positive_int("in_channels", in_channels, "lenet_mnn")
    g = Graph("lenet_mnn", (in_channels, input_size, input_size),
              {"input_size": input_size, "num_classes": num_classes,
               "in_channels": in_channels})
    x = g.conv(g.input, 20, 5, padding=0, bias=True, name="conv1")
    x = g.maxpool(x, 2, name="pool1")
    x = g.conv(x, 50, 5, padding=0, bias=True, name="conv2")
    x = g.maxpool(x, 2, name="pool2")
    x = g.relu(g.fc(x, 500, name="ip1"), name="relu1")
    g.softmax(g.fc(x, num_classes, name="ip2"), name="softmax")
    return g
