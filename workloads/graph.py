"""Layer graphs: a model as a DAG of layers with shapes, parameters and MACs.

A :class:`Graph` is built by calling its layer helpers in execution order;
each helper takes the handle (name) of its input layer(s), computes the output
shape, parameter count and multiply-accumulates, and returns the new layer's
handle::

    g = Graph("tiny", input_shape=(3, 32, 32))
    x = g.conv(g.input, 16, kernel=3)          # 'same' padding by default
    x = g.relu(g.bn(x))
    x = g.fc(g.global_pool(x), 10)
    g.softmax(x)

Shapes are per sample, ``(channels, height, width)``; the batch is applied
when the graph is lowered to a kernel trace (:mod:`workloads.generate`).
Sequence models use ``(features, tokens, 1)``: :meth:`Graph.linear` applies
one weight matrix at every position, :meth:`Graph.matmul` multiplies two
activations (attention), :meth:`Graph.lstm` is one LSTM layer over the sequence.
Only the compute ops (:data:`COMPUTE_OPS`) carry MACs here; the lowering
assigns element-wise and pooling costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.errors import ConfigError

Shape = tuple[int, int, int]
"""Per-sample tensor shape ``(channels, height, width)``."""

COMPUTE_OPS = ("conv", "dwconv", "deconv", "fc", "matmul", "lstm")
WINDOW_OPS = ("conv", "dwconv", "deconv", "maxpool", "avgpool")


def _pair(value: int | tuple[int, int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


@dataclass(frozen=True)
class Layer:
    """One layer of a graph.

    Attributes:
        name: unique handle (``layer1.0.conv1``).
        op: op kind from :mod:`simulator.ops`, or ``input`` for the graph input.
        inputs: handles of the layers it reads, in order.
        in_shapes: their per-sample shapes.
        out_shape: per-sample output shape ``(C, H, W)``.
        kernel: window ``(kh, kw)``; ``(0, 0)`` for ops without a window.
        stride: window stride (0 without a window).
        padding: zero padding ``(ph, pw)`` on each side.
        groups: convolution groups (1 otherwise).
        params: learnable parameters (weights + biases + BN scale/shift), elements.
        macs: multiply-accumulates per sample (convolutions and FC only).
    """

    name: str
    op: str
    inputs: tuple[str, ...]
    in_shapes: tuple[Shape, ...]
    out_shape: Shape
    kernel: tuple[int, int] = (0, 0)
    stride: int = 0
    padding: tuple[int, int] = (0, 0)
    groups: int = 1
    params: int = 0
    macs: int = 0

    @property
    def in_shape(self) -> Shape:
        """The input shape; for a concat, the stacked shape of all inputs."""
        if not self.in_shapes:
            return self.out_shape
        return self.out_shape if self.op == "concat" else self.in_shapes[0]

    @property
    def in_elements(self) -> int:
        """Elements read per sample, all inputs together."""
        return sum(math.prod(s) for s in self.in_shapes)

    @property
    def out_elements(self) -> int:
        """Elements written per sample."""
        return math.prod(self.out_shape)


class Graph:
    """A model as a DAG of :class:`Layer`, built in execution (topological) order.

    Args:
        name: model name (``resnet18``).
        input_shape: per-sample input ``(C, H, W)``.
        config: the resolved builder parameters, recorded for reports.
    """

    def __init__(self, name: str, input_shape: Shape, config: dict | None = None):
        self.name = name
        self.config = dict(config or {})
        self._layers: dict[str, Layer] = {}
        self._counter = 0
        self.input = self._add(Layer("input", "input", (), (), tuple(input_shape)))

    # ----------------------------------------------------------------- queries
    @property
    def layers(self) -> list[Layer]:
        """All layers (input first) in execution order."""
        return list(self._layers.values())

    @property
    def output(self) -> str:
        """Handle of the last layer added (the model output)."""
        return next(reversed(self._layers))

    def __getitem__(self, name: str) -> Layer:
        return self._layers[name]

    def __len__(self) -> int:
        return len(self._layers)

    def shape(self, x: str) -> Shape:
        """Per-sample output shape of layer ``x``."""
        return self._layers[x].out_shape

    def consumers(self) -> dict[str, list[str]]:
        """Layer handle -> handles of the layers that read it (execution order)."""
        out: dict[str, list[str]] = {name: [] for name in self._layers}
        for layer in self._layers.values():
            for source in dict.fromkeys(layer.inputs):
                out[source].append(layer.name)
        return out

    @property
    def macs(self) -> int:
        """Multiply-accumulates per sample (convolutions and FC)."""
        return sum(layer.macs for layer in self._layers.values())

    @property
    def params(self) -> int:
        """Learnable parameters, elements."""
        return sum(layer.params for layer in self._layers.values())

    # ------------------------------------------------------------- internals
    def _name(self, name: str | None, op: str) -> str:
        if name is not None:
            return name
        self._counter += 1
        return f"{op}{self._counter}"

    def _add(self, layer: Layer) -> str:
        if layer.name in self._layers:
            # A builder bug, not user input: names are chosen by zoo code.
            raise ValueError(f"{self.name}: duplicate layer name {layer.name!r}")
        c, h, w = layer.out_shape
        if min(c, h, w) < 1:
            raise ConfigError(f"{self.name}: layer {layer.name} would have output shape "
                              f"{c}x{h}x{w}; the input is too small for this model")
        self._layers[layer.name] = layer
        return layer.name

    @staticmethod
    def _window_out(size: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
        span = size + 2 * p - k
        if span < 0:
            return 0
        out = (-(-span // s) if ceil_mode else span // s) + 1
        # As in PyTorch: in ceil mode the last window must start inside the input
        # (or its left padding), otherwise it is dropped.
        if ceil_mode and (out - 1) * s >= size + p:
            out -= 1
        return out

    def _window(self, x: str, kernel, stride: int, padding, ceil_mode: bool = False):
        kh, kw = _pair(kernel)
        ph, pw = _pair(padding)
        _, h, w = self.shape(x)
        return ((kh, kw), (ph, pw),
                self._window_out(h, kh, stride, ph, ceil_mode),
                self._window_out(w, kw, stride, pw, ceil_mode))

    # ----------------------------------------------------------- compute ops
    def conv(self, x: str, out_channels: int, kernel: int | tuple[int, int], stride: int = 1,
             padding: int | tuple[int, int] | None = None, groups: int = 1, bias: bool = False,
             name: str | None = None) -> str:
        """2-D convolution.

        Args:
            x: input layer handle.
            out_channels: output channels.
            kernel: window size, square or ``(kh, kw)``.
            stride: stride in both axes.
            padding: zero padding per side; ``None`` = ``kernel // 2`` ('same' at stride 1).
            groups: channel groups (must divide both channel counts).
            bias: whether the layer has a bias vector.
            name: handle; generated when omitted.
        """
        c_in = self.shape(x)[0]
        if c_in % groups or out_channels % groups:
            raise ValueError(f"groups {groups} must divide {c_in} and {out_channels}")
        kh, kw = _pair(kernel)
        if padding is None:
            padding = (kh // 2, kw // 2)
        (kh, kw), pad, oh, ow = self._window(x, (kh, kw), stride, padding)
        taps = (c_in // groups) * kh * kw
        return self._add(Layer(self._name(name, "conv"), "conv", (x,), (self.shape(x),),
                               (out_channels, oh, ow), (kh, kw), stride, pad, groups,
                               params=out_channels * taps + (out_channels if bias else 0),
                               macs=out_channels * oh * ow * taps))

    def dwconv(self, x: str, kernel: int | tuple[int, int], stride: int = 1,
               padding: int | tuple[int, int] | None = None, bias: bool = False,
               name: str | None = None) -> str:
        """Depthwise convolution (one filter per channel, depth multiplier 1)."""
        c = self.shape(x)[0]
        kh, kw = _pair(kernel)
        if padding is None:
            padding = (kh // 2, kw // 2)
        (kh, kw), pad, oh, ow = self._window(x, (kh, kw), stride, padding)
        return self._add(Layer(self._name(name, "dwconv"), "dwconv", (x,), (self.shape(x),),
                               (c, oh, ow), (kh, kw), stride, pad, groups=c,
                               params=c * kh * kw + (c if bias else 0),
                               macs=c * oh * ow * kh * kw))

    def fc(self, x: str, out_features: int, bias: bool = True, name: str | None = None) -> str:
        """Fully connected layer; a ``(C, H, W)`` input is flattened implicitly."""
        in_features = math.prod(self.shape(x))
        return self._add(Layer(self._name(name, "fc"), "fc", (x,), (self.shape(x),),
                               (out_features, 1, 1),
                               params=in_features * out_features + (out_features if bias else 0),
                               macs=in_features * out_features))

    def deconv(self, x: str, out_channels: int, kernel: int, stride: int = 2,
               padding: int | None = None, output_padding: int = 0, bias: bool = False,
               name: str | None = None) -> str:
        """Transposed convolution (up-sampling), PyTorch ``ConvTranspose2d``.

        Output side ``(in - 1) * stride - 2 * padding + kernel + output_padding``;
        every input pixel scatters a ``kernel x kernel x out_channels`` patch, so
        MACs are ``in_h * in_w * in_channels * out_channels * kernel^2``.

        Args:
            padding: per side; ``None`` = ``(kernel - stride) // 2`` (exact x``stride``
                up-sampling for even ``kernel - stride``).
        """
        c_in, h, w = self.shape(x)
        if padding is None:
            padding = max(0, (kernel - stride) // 2)
        oh = (h - 1) * stride - 2 * padding + kernel + output_padding
        ow = (w - 1) * stride - 2 * padding + kernel + output_padding
        return self._add(Layer(self._name(name, "deconv"), "deconv", (x,), (self.shape(x),),
                               (out_channels, oh, ow), (kernel, kernel), stride,
                               (padding, padding),
                               params=c_in * out_channels * kernel * kernel
                               + (out_channels if bias else 0),
                               macs=h * w * c_in * out_channels * kernel * kernel))

    def linear(self, x: str, out_features: int, bias: bool = True,
               name: str | None = None) -> str:
        """One weight matrix applied at every position of ``(features, tokens, 1)``
        (a transformer's projections; op ``matmul``)."""
        c_in, h, w = self.shape(x)
        return self._add(Layer(self._name(name, "linear"), "matmul", (x,), (self.shape(x),),
                               (out_features, h, w),
                               params=c_in * out_features + (out_features if bias else 0),
                               macs=h * w * c_in * out_features))

    def matmul(self, a: str, b: str, out_shape: Shape, macs: int,
               name: str | None = None) -> str:
        """Product of two activations (attention scores ``Q K^T``, context ``P V``).

        The layouts of batched products vary, so the caller states the output
        shape and the multiply-accumulates; no parameters.
        """
        return self._add(Layer(self._name(name, "matmul"), "matmul", (a, b),
                               (self.shape(a), self.shape(b)), tuple(out_shape),
                               macs=int(macs)))

    def lstm(self, x: str, hidden: int, name: str | None = None) -> str:
        """One LSTM layer over a sequence ``(features, steps, 1)`` -> ``(hidden, steps, 1)``.

        A single kernel runs the layer's steps one after another (a persistent
        LSTM kernel): per step the gates ``W x_t + U h_(t-1) + b`` (4 x ``hidden``)
        and the element-wise cell update. The weights are read once per layer.
        """
        features, steps, width = self.shape(x)
        steps *= width
        return self._add(Layer(self._name(name, "lstm"), "lstm", (x,), (self.shape(x),),
                               (hidden, steps, 1),
                               params=4 * hidden * (features + hidden) + 4 * hidden,
                               macs=steps * 4 * hidden * (features + hidden)))

    # -------------------------------------------------------------- pooling
    def maxpool(self, x: str, kernel: int, stride: int | None = None, padding: int = 0,
                ceil_mode: bool = False, name: str | None = None) -> str:
        """Max pooling; ``stride`` defaults to ``kernel``; ``ceil_mode`` as in PyTorch."""
        return self._pool("maxpool", x, kernel, stride, padding, ceil_mode, name)

    def avgpool(self, x: str, kernel: int, stride: int | None = None, padding: int = 0,
                ceil_mode: bool = False, name: str | None = None) -> str:
        """Average pooling; ``stride`` defaults to ``kernel``."""
        return self._pool("avgpool", x, kernel, stride, padding, ceil_mode, name)

    def _pool(self, op, x, kernel, stride, padding, ceil_mode, name) -> str:
        stride = kernel if stride is None else stride
        k, pad, oh, ow = self._window(x, kernel, stride, padding, ceil_mode)
        c = self.shape(x)[0]
        return self._add(Layer(self._name(name, op), op, (x,), (self.shape(x),), (c, oh, ow),
                               k, stride, pad))

    def adaptive_avgpool(self, x: str, size: int, name: str | None = None) -> str:
        """Average-pool to ``size x size`` (PyTorch ``AdaptiveAvgPool2d``).

        Returns ``x`` itself when it already has that size: the op is then an
        identity and frameworks emit no work for it.
        """
        c, h, w = self.shape(x)
        if (h, w) == (size, size):
            return x
        if size == 1:
            return self.global_pool(x, name=name)
        kh, kw = -(-h // size), -(-w // size)
        return self._add(Layer(self._name(name, "avgpool"), "avgpool", (x,), (self.shape(x),),
                               (c, size, size), (kh, kw), max(1, h // size)))

    def global_pool(self, x: str, name: str | None = None) -> str:
        """Global average pooling to ``(C, 1, 1)``."""
        c, h, w = self.shape(x)
        return self._add(Layer(self._name(name, "global_pool"), "global_pool", (x,),
                               (self.shape(x),), (c, 1, 1), (h, w), 1))

    # ---------------------------------------------------------- element-wise
    def bn(self, x: str, name: str | None = None) -> str:
        """Batch normalisation (learnable scale and shift: 2 parameters per channel)."""
        c = self.shape(x)[0]
        return self._elementwise("batchnorm", x, name, params=2 * c)

    def relu(self, x: str, name: str | None = None) -> str:
        """ReLU (also stands for ReLU6 and leaky ReLU)."""
        return self._elementwise("relu", x, name)

    def softmax(self, x: str, name: str | None = None) -> str:
        """Softmax over the channels (class scores)."""
        return self._elementwise("softmax", x, name)

    def lrn(self, x: str, name: str | None = None) -> str:
        """Local response normalisation across channels (Caffe's ``LRN``):
        ``x / (k + alpha/n * sum of x^2 over n neighbouring maps)^beta``."""
        return self._elementwise("lrn", x, name)

    def layernorm(self, x: str, name: str | None = None) -> str:
        """Layer normalisation over the features (scale and shift: 2 per feature)."""
        return self._elementwise("layernorm", x, name, params=2 * self.shape(x)[0])

    def gelu(self, x: str, name: str | None = None) -> str:
        """GELU activation."""
        return self._elementwise("gelu", x, name)

    def shuffle(self, x: str, groups: int, name: str | None = None) -> str:
        """Channel shuffle (ShuffleNet): a transpose of ``groups x C/groups`` channels."""
        if self.shape(x)[0] % groups:
            raise ValueError(f"groups {groups} must divide {self.shape(x)[0]} channels")
        return self._elementwise("transpose", x, name)

    def slice(self, x: str, size: int, axis: int = 0, name: str | None = None) -> str:
        """Take ``size`` entries of the input along ``axis`` (0: channels, a
        channel split; 1: positions, one time step of a sequence)."""
        shape = list(self.shape(x))
        if axis not in (0, 1) or not 0 < size <= shape[axis]:
            raise ValueError(f"cannot take {size} entries of axis {axis} of {tuple(shape)}")
        shape[axis] = size
        # reads only what it keeps
        return self._add(Layer(self._name(name, "slice"), "slice", (x,), (tuple(shape),),
                               tuple(shape)))

    def _elementwise(self, op: str, x: str, name: str | None, params: int = 0) -> str:
        return self._add(Layer(self._name(name, op), op, (x,), (self.shape(x),),
                               self.shape(x), params=params))

    def add(self, *xs: str, name: str | None = None) -> str:
        """Element-wise sum of equally shaped inputs (residual connections)."""
        shapes = tuple(self.shape(x) for x in xs)
        if len(xs) < 2 or len(set(shapes)) != 1:
            raise ValueError(f"add needs >= 2 equally shaped inputs; got {shapes}")
        return self._add(Layer(self._name(name, "add"), "add", tuple(xs), shapes, shapes[0]))

    def concat(self, *xs: str, name: str | None = None) -> str:
        """Concatenation along channels; spatial sizes must match."""
        shapes = tuple(self.shape(x) for x in xs)
        if len(xs) < 2 or len({s[1:] for s in shapes}) != 1:
            raise ValueError(f"concat needs >= 2 inputs of one spatial size; got {shapes}")
        out = (sum(s[0] for s in shapes), *shapes[0][1:])
        return self._add(Layer(self._name(name, "concat"), "concat", tuple(xs), shapes, out))

    # ------------------------------------------------------------ composites
    def conv_bn_relu(self, x: str, out_channels: int, kernel, stride: int = 1,
                     padding=None, groups: int = 1, relu: bool = True, name: str = "") -> str:
        """Convolution (no bias) + batch norm (+ ReLU), named ``name.conv``/``.bn``/``.relu``."""
        x = self.conv(x, out_channels, kernel, stride, padding, groups, name=f"{name}.conv")
        x = self.bn(x, name=f"{name}.bn")
        return self.relu(x, name=f"{name}.relu") if relu else x
