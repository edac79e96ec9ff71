"""Lower layer graphs to kernel traces, for inference or one training step.

``generate_trace("resnet18", mode="training", batch=64)`` builds the zoo
graph and lowers it:

* **inference**: one ``fwd`` kernel per layer (element-wise ops such as ReLU,
  batch norm and residual adds are kernels of their own);
* **training**: the forward pass; one ``loss`` kernel (softmax cross-entropy
  and its gradient) in place of the final softmax; the backward pass in
  reverse layer order -- error gradients (``bwd_data``, not for layers that
  read only the model input), weight gradients (``bwd_weight``) for layers
  with weights, a gradient sum where a tensor feeds several layers, a
  ``slice`` that splits the gradient of a concat; and one ``sgd_update``
  kernel per layer with weights (``update``).

Costs (per sample unless noted; elements = output elements):

=================  ===============================================================
kernel             flops
=================  ===============================================================
conv/dwconv/fc     2 x MACs, in each of fwd, bwd_data and bwd_weight
pool               one per window tap (fwd and bwd)
global_pool        one per input element (fwd and bwd)
relu / add         one per element (add: per extra input)
batchnorm          2 per element at inference, 4 in training (batch statistics);
                   backward: 3 (bwd_weight: dgamma, dbeta) + 4 (bwd_data)
softmax / loss     3 / 5 per element
sgd_update         2 per parameter (per step, not per sample)
=================  ===============================================================

Bytes use the element size of the precision (fp32 4, fp16 2, int8 1):
``bytes_in`` = activations and gradients read, ``bytes_out`` = written,
``weight_bytes`` = parameters read. Shape columns always describe the
layer's forward geometry (an FC reads ``in_channels`` = flattened features
at 1x1; ``kernel``/``stride``/``groups`` are 0 where they do not apply).
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from pathlib import Path

import pandas as pd

from simulator.errors import ConfigError
from simulator.ops import PRECISIONS
from simulator.registry import WORKLOADS
from simulator.trace import BYTES_PER_ELEMENT, Trace, trace_from_table
from workloads.graph import COMPUTE_OPS, Graph, Layer
from workloads.mixed_precision import ALGORITHMS, Algorithm, apply_algorithm
from workloads.named_files import named_file
from workloads.zoo import MODELS

MODES = ("inference", "training")

# Operations per output element of element-wise kernels. Softmax: exp, sum,
# divide; the loss adds log, the cross-entropy sum and the gradient p - y.
_PER_ELEMENT = {"relu": 1, "batchnorm": 2, "softmax": 3, "loss": 5,
                # layer norm: mean, variance, normalise, scale, shift; GELU (tanh form)
                "layernorm": 5, "gelu": 8,
                # LRN across channels as Caffe computes it: square, the sliding window sum
                # (add the entering map, subtract the leaving one), scale = k + alpha/n * sum,
                # then x * pow(scale, -beta): 5 operations and one powf, counted as 20
                # (E: a single-precision pow is a log2 and an exp2, each a range reduction
                # and a polynomial of about 8 terms)
                "lrn": 25}
# Training-mode batch norm also reduces the batch mean and variance.
_BN_TRAIN_FWD = 4
_BN_BWD_WEIGHT = 3  # dgamma = sum(dy * xhat), dbeta = sum(dy)
_BN_BWD_DATA = 4  # dx = gamma / sigma * (dy - mean(dy) - xhat * mean(dy * xhat))
_SGD_FLOPS_PER_PARAM = 2  # w -= lr * g
# The error gradient of a convolution is a transposed convolution.
_BWD_DATA_OP = {"conv": "deconv", "dwconv": "dwconv", "deconv": "conv", "fc": "fc",
                "matmul": "matmul", "lstm": "lstm"}


@WORKLOADS.register("zoo")
def generate_trace(model: str, mode: str = "inference", batch: int = 1,
                   precision: str = "fp32", input_size: int | None = None,
                   num_classes: int | None = None, width: float | None = None,
                   algorithm: str | Path | Algorithm | None = None, **model_params) -> Trace:
    """Generate the kernel trace of a zoo model.

    Args:
        model: registry name (``resnet18``; see ``workloads.zoo.MODELS``).
        mode: ``inference`` (forward pass) or ``training`` (one SGD step).
        batch: samples per step.
        precision: ``fp32`` | ``fp16`` | ``int8`` for every kernel. With an
            ``algorithm`` leave it at ``fp32``: the algorithm translates the
            FP32 kernels and sets each kernel's precision from its data types.
        input_size, num_classes, width: model parameters, passed on when set.
        algorithm: mixed-precision training algorithm (name such as ``niti``,
            a YAML path, or a loaded :class:`Algorithm`).
        **model_params: further keyword parameters of the model builder
            (``stem='cifar'``, ``batch_norm=True``, ...).

    Returns:
        The validated trace; its ``model`` column holds ``model``.

    Raises:
        ConfigError: unknown model (with suggestions), unknown or bad parameters.
    """
    builder = MODELS.get(model)
    given = {"input_size": input_size, "num_classes": num_classes, "width": width}
    params = {key: value for key, value in given.items() if value is not None}
    params.update(model_params)
    accepted = list(inspect.signature(builder).parameters)
    unknown = [key for key in params if key not in accepted]
    if unknown:
        raise ConfigError(f"model {model!r} has no parameter(s) {', '.join(unknown)}; "
                          f"it takes {', '.join(accepted)}")
    if algorithm is not None and precision != "fp32":
        raise ConfigError(f"precision {precision!r} cannot be combined with algorithm "
                          f"{_label(algorithm)!r}: the algorithm sets each kernel's "
                          "precision (leave precision at fp32)")
    version = _algorithm_version(algorithm)
    # repr tells 1 from 1.0 and True at any depth, which equality does not
    keyed = tuple((key, repr(value), value) for key, value in sorted(params.items()))
    try:
        hash(keyed)
    except TypeError:  # a list among the parameters
        version = None
    if version is None:  # nothing to key on: generated every time
        return _generate(builder, params, mode, batch, precision, algorithm)
    return _memoised(builder, keyed, mode, batch, precision, algorithm, version).copy()


def _generate(builder, params: dict, mode: str, batch: int, precision: str,
              algorithm: str | Path | Algorithm | None) -> Trace:
    trace = lower_graph(builder(**params), mode=mode, batch=batch, precision=precision)
    if algorithm is not None:
        trace = apply_algorithm(trace, algorithm)
    return trace


# Generated traces, kept per process: a sweep's repeats, and its runs that differ
# only in policy or SoC, ask for the same trace, and lowering and validating it was
# most of a short run (ResNet-18 inference: 15 of 18 ms). The builders are pure
# functions of their arguments, so the key is the builder and the arguments (and
# the algorithm file's version); callers get copies, so nothing they do to a trace
# reaches the memo. 32 traces of at most a few thousand kernels: tens of MB.
_MEMO_TRACES = 32


@lru_cache(maxsize=_MEMO_TRACES, typed=True)
def _memoised(builder, keyed: tuple, mode: str, batch: int, precision: str,
              algorithm: str | Path | None, _version: tuple) -> Trace:
    """:func:`_generate` for one key (``keyed``: the parameters as ``(name, repr,
    value)``; ``_version``: the algorithm file's, for the key only)."""
    return _generate(builder, {key: value for key, _, value in keyed}, mode, batch,
                     precision, algorithm)


def _algorithm_version(algorithm: str | Path | Algorithm | None) -> tuple | None:
    """``()`` without an algorithm; the file's path, mtime and size for a named or
    YAML one (an edited file is read again); None when there is no file to key on
    (a loaded :class:`Algorithm`, or a name or path that does not resolve: the
    un-memoised path then raises its usual error)."""
    if algorithm is None:
        return ()
    if isinstance(algorithm, Algorithm):
        return None
    try:
        path = named_file(algorithm, ALGORITHMS, "algorithm")
        stat = path.stat()
    except (ConfigError, OSError):
        return None
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


def _label(algorithm: str | Path | Algorithm) -> str:
    return algorithm.name if isinstance(algorithm, Algorithm) else str(algorithm)


def lower_graph(graph: Graph, mode: str = "inference", batch: int = 1,
                precision: str = "fp32") -> Trace:
    """Lower a layer graph to a trace (see the module docstring for the kernels).

    Args:
        graph: the model; its last layer is the output.
        mode: ``inference`` or ``training``.
        batch: samples per step.
        precision: ``fp32`` | ``fp16`` | ``int8``.
    """
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f"batch must be an integer >= 1; got {batch!r}")
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}; "
                          f"got {precision!r}")
    lowering = _Lowering(graph, batch, precision)
    lowering.forward(training=mode == "training")
    if mode == "training":
        lowering.backward()
    source = f"{graph.name} {mode} batch={batch} {precision} {graph.config}"
    return trace_from_table(pd.DataFrame(lowering.rows), source=source)


def forward_flops(layer: Layer, training: bool = False) -> float:
    """Operations of one layer's forward kernel, per sample."""
    if layer.op in COMPUTE_OPS:
        return 2.0 * layer.macs
    if layer.op in ("maxpool", "avgpool"):
        return float(layer.out_elements * layer.kernel[0] * layer.kernel[1])
    if layer.op == "global_pool":
        return float(layer.in_elements)
    if layer.op == "add":
        return float((len(layer.inputs) - 1) * layer.out_elements)
    if layer.op in ("concat", "slice", "transpose"):
        return 0.0  # pure data movement
    if layer.op == "batchnorm" and training:
        return float(_BN_TRAIN_FWD * layer.out_elements)
    return float(_PER_ELEMENT.get(layer.op, 1) * layer.out_elements)


def _shape_columns(layer: Layer, batch: int) -> dict[str, int]:
    """The trace's shape columns for a layer (its forward geometry)."""
    c_in, h_in, w_in = layer.in_shape
    kernel, stride = max(layer.kernel), layer.stride
    groups = layer.groups if layer.op in ("conv", "dwconv") else 0
    if layer.op == "fc":
        # A flattened input at 1x1, as importers describe FC layers.
        c_in, h_in, w_in = c_in * h_in * w_in, 1, 1
        kernel = stride = groups = 1
    c_out, h_out, w_out = layer.out_shape
    return {"batch": batch, "in_channels": c_in, "out_channels": c_out, "in_h": h_in,
            "in_w": w_in, "out_h": h_out, "out_w": w_out, "kernel": kernel,
            "stride": stride, "groups": groups}


class _Lowering:
    """Accumulates the kernel rows of one graph; ids are row numbers."""

    def __init__(self, graph: Graph, batch: int, precision: str):
        self.graph = graph
        self.batch = batch
        self.precision = precision
        self.element_bytes = BYTES_PER_ELEMENT[precision]
        self.rows: list[dict] = []
        self.fwd: dict[str, int] = {}
        self.loss: int | None = None
        self.loss_replaces_output = False

    def emit(self, layer: Layer, op: str, pass_: str, flops: float, read: float = 0,
             write: float = 0, weights: float = 0, deps=(), name: str | None = None) -> int:
        """Append one kernel; ``read``/``write``/``weights`` are elements per step."""
        kid = len(self.rows)
        self.rows.append({
            "id": kid, "name": name or f"{layer.name}.{pass_}", "op": op, "pass": pass_,
            "precision": self.precision, "flops": float(flops),
            "bytes_in": float(read * self.element_bytes),
            "bytes_out": float(write * self.element_bytes),
            "weight_bytes": float(weights * self.element_bytes),
            "deps": tuple(sorted(set(deps))), **_shape_columns(layer, self.batch),
            "layer": layer.name, "model": self.graph.name,
        })
        return kid

    # ---------------------------------------------------------------- forward
    def forward(self, training: bool) -> None:
        b = self.batch
        output = self.graph[self.graph.output]
        for layer in self.graph.layers[1:]:
            deps = [self.fwd[x] for x in layer.inputs if x in self.fwd]
            if training and layer is output and layer.op == "softmax":
                # Softmax + cross-entropy + dL/dlogits as one kernel (fused in
                # every framework); it is where the backward pass starts.
                self.loss = self.emit(layer, "loss", "fwd",
                                      _PER_ELEMENT["loss"] * layer.out_elements * b,
                                      read=layer.in_elements * b, write=layer.out_elements * b,
                                      deps=deps, name="loss")
                self.loss_replaces_output = True
                continue
            self.fwd[layer.name] = self.emit(
                layer, layer.op, "fwd", forward_flops(layer, training) * b,
                read=layer.in_elements * b, write=layer.out_elements * b,
                weights=layer.params, deps=deps)
        if training and self.loss is None:
            self.loss = self.emit(output, "loss", "fwd",
                                  _PER_ELEMENT["loss"] * output.out_elements * b,
                                  read=output.out_elements * b, write=output.out_elements * b,
                                  deps=[self.fwd[output.name]], name="loss")

    # --------------------------------------------------------------- backward
    def backward(self) -> None:
        """Emit gradients in reverse layer order, then one update per weighted layer."""
        graph, b = self.graph, self.batch
        consumers = graph.consumers()
        # Kernels after which dL/d(inputs of layer) is available.
        provides: dict[str, tuple[int, ...]] = {}
        updates: list[tuple[Layer, tuple[int, ...]]] = []
        for layer in reversed(graph.layers[1:]):
            if layer.name == graph.output:
                if self.loss_replaces_output:
                    provides[layer.name] = (self.loss,)
                    continue
                gout: tuple[int, ...] = (self.loss,)
            else:
                sources = [provides[c] for c in consumers[layer.name] if c in provides]
                if not sources:
                    continue  # nothing downstream needs a gradient
                if len(sources) > 1:
                    # A tensor read by several layers: its gradient is the sum.
                    n = len(sources)
                    gout = (self.emit(layer, "add", "bwd_data", (n - 1) * layer.out_elements * b,
                                      read=n * layer.out_elements * b,
                                      write=layer.out_elements * b,
                                      deps=[k for s in sources for k in s],
                                      name=f"{layer.name}.grad_sum"),)
                else:
                    gout = sources[0]
            needs_dx = any(x != graph.input for x in layer.inputs)
            provides[layer.name], weight_kernels = self._layer_backward(layer, gout, needs_dx)
            if weight_kernels:
                updates.append((layer, weight_kernels))
        for layer, deps in updates:
            # Waits for bwd_data too: the update must not overwrite weights
            # that the error gradient still reads.
            self.emit(layer, "sgd_update", "update", _SGD_FLOPS_PER_PARAM * layer.params,
                      read=layer.params, write=layer.params, weights=layer.params, deps=deps)

    def _layer_backward(self, layer: Layer, gout: tuple[int, ...],
                        needs_dx: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Emit one layer's gradient kernels.

        Returns:
            (kernels providing the gradient of the layer's inputs,
             kernels the weight update must wait for; empty without weights).
        """
        b, op = self.batch, layer.op
        n_in, n_out = layer.in_elements * b, layer.out_elements * b
        deps = (*gout, self.fwd[layer.name]) if layer.name in self.fwd else gout
        if op == "add":
            return gout, ()  # the gradient passes through unchanged to every input
        if op == "concat":
            return (self.emit(layer, "slice", "bwd_data", 0.0, read=n_out, write=n_out,
                              deps=deps),), ()
        if op in COMPUTE_OPS:
            flops = 2.0 * layer.macs * b
            dx = (self.emit(layer, _BWD_DATA_OP[op], "bwd_data", flops, read=n_out,
                            write=n_in, weights=layer.params, deps=deps),) if needs_dx else ()
            dw = self.emit(layer, op, "bwd_weight", flops, read=n_in + n_out,
                           write=layer.params, deps=deps)
            return dx, (dw, *dx)
        if op == "batchnorm":
            # dx needs the two sums the weight-gradient kernel computes.
            dw = self.emit(layer, op, "bwd_weight", _BN_BWD_WEIGHT * n_out, read=n_in + n_out,
                           write=layer.params, deps=deps)
            dx = self.emit(layer, op, "bwd_data", _BN_BWD_DATA * n_out, read=n_in + n_out,
                           write=n_in, weights=layer.params, deps=(*deps, dw))
            return (dx,), (dw, dx)
        if not needs_dx:
            return (), ()
        # Element-wise and pooling: the gradient costs about the forward op and
        # reads the saved forward tensor.
        return (self.emit(layer, op, "bwd_data", forward_flops(layer) * b, read=n_in + n_out,
                          write=n_in, deps=deps),), ()
