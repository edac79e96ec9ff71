"""The operator vocabulary of kernel traces.

Every kernel names one op kind from :data:`OP_KINDS`. The kind decides which
row of a processor's efficiency table applies and how many times a kernel
re-reads its inputs (its data reuse), which the cache model needs. Passes say
which part of a training step a kernel belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass

PASSES = ("fwd", "bwd_data", "bwd_weight", "update", "other")
PRECISIONS = ("fp32", "fp16", "int8")


@dataclass(frozen=True)
class OpKind:
    """An operator kind.

    Attributes:
        name: the name used in traces (``conv``).
        category: ``compute`` (MAC-dominated: conv, fc, matmul), ``elementwise``
            (one pass over the data), ``reduction``, or ``data_movement``
            (copies, layout changes).
        window_reuse: whether inputs are re-read once per kernel-window tap
            (convolutions and pooling), which raises cache traffic when the
            working set does not fit.
        description: one line for ``socsim list ops``.
        parent: a kind whose efficiency keys apply when a table has none for
            this one (``group_conv`` falls back to ``conv``), before the category.
    """

    name: str
    category: str
    window_reuse: bool = False
    description: str = ""
    parent: str | None = None


_KINDS = [
    OpKind("conv", "compute", True, "2-D convolution (groups column for grouped conv)"),
    # Its own kind because frameworks run it with other kernels than a dense
    # convolution (TFLite: the single-threaded reference kernel); tables without
    # a group_conv entry cost it as a conv.
    OpKind("group_conv", "compute", True,
           "grouped 2-D convolution (1 < groups < channels; conv keys if none of its own)",
           parent="conv"),
    OpKind("dwconv", "compute", True, "depthwise 2-D convolution"),
    OpKind("deconv", "compute", True, "transposed convolution"),
    OpKind("fc", "compute", False, "fully connected layer"),
    OpKind("matmul", "compute", False, "matrix multiplication (attention, LSTM gates)"),
    OpKind("lstm", "compute", False, "LSTM cell step (gate matmuls + elementwise)"),
    OpKind("maxpool", "reduction", True, "max pooling"),
    OpKind("avgpool", "reduction", True, "average pooling"),
    OpKind("global_pool", "reduction", False, "global average pooling / mean"),
    OpKind("reduce_max", "reduction", False, "maximum over a tensor (rescaling)"),
    OpKind("reduce_sum", "reduction", False,
           "sum or mean over axes (batch statistics, bias and depthwise weight gradients)"),
    OpKind("batchnorm", "elementwise", False, "batch normalisation"),
    OpKind("layernorm", "elementwise", False, "layer normalisation"),
    OpKind("lrn", "elementwise", False, "local response normalisation"),
    OpKind("relu", "elementwise", False, "ReLU / ReLU6 / leaky ReLU"),
    OpKind("sigmoid", "elementwise", False, "sigmoid / hard sigmoid"),
    OpKind("tanh", "elementwise", False, "tanh"),
    OpKind("gelu", "elementwise", False, "GELU / swish"),
    OpKind("add", "elementwise", False, "element-wise addition (residuals)"),
    OpKind("mul", "elementwise", False, "element-wise multiplication"),
    OpKind("softmax", "elementwise", False, "softmax"),
    OpKind("loss", "elementwise", False, "loss (softmax cross-entropy) and its gradient"),
    OpKind("shift", "elementwise", False, "integer shift (fixed-point rescaling)"),
    OpKind("rescale", "elementwise", False, "requantise INT32 -> INT8 with a scale"),
    OpKind("quantize", "elementwise", False, "FP32 -> INT8"),
    OpKind("dequantize", "elementwise", False, "INT8 -> FP32"),
    OpKind("round", "elementwise", False, "stochastic or nearest rounding"),
    OpKind("sqrt", "elementwise", False, "square root (optimisers, norms)"),
    OpKind("sgd_update", "elementwise", False, "optimiser weight update"),
    OpKind("embedding", "data_movement", False, "embedding lookup"),
    OpKind("concat", "data_movement", False, "concatenation"),
    OpKind("slice", "data_movement", False, "slice / split"),
    OpKind("transpose", "data_movement", False, "transpose / permute"),
    OpKind("reshape", "data_movement", False, "reshape / flatten"),
    OpKind("pad", "data_movement", False, "padding"),
    OpKind("weight_rotate", "data_movement", False, "180-degree kernel rotation (conv backward)"),
    OpKind("copy", "data_movement", False, "plain copy, fill or scatter"),
    OpKind("layout", "data_movement", False,
           "tensor layout conversion (NCHW <-> NC4HW4, weight repacking)"),
    OpKind("im2col", "data_movement", False,
           "unfold convolution windows into a matrix (GEMM-based gradients)"),
    OpKind("bitshuffle", "data_movement", False,
           "bit-matrix transpose: equal-significance bits of all elements together"),
    OpKind("compress", "data_movement", False, "lossless compression (LZ4); flops = bytes in"),
    OpKind("decompress", "data_movement", False, "lossless decompression; flops = bytes out"),
]

OP_KINDS: dict[str, OpKind] = {kind.name: kind for kind in _KINDS}
CATEGORIES = ("compute", "elementwise", "reduction", "data_movement")


def check_op(value: str, *extra: str) -> str:
    """``value`` if it is an op kind (or one of ``extra``, e.g. a placeholder);
    ValueError naming the choices otherwise (for schema validators)."""
    if value not in OP_KINDS and value not in extra:
        allowed = " or ".join([*(repr(e) for e in extra), "an op kind"])
        raise ValueError(f"op must be {allowed}; got {value!r}")
    return value


def op_kind(name: str) -> OpKind:
    """Look up an op kind by name (raises ``KeyError`` on a miss)."""
    return OP_KINDS[name]
