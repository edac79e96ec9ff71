"""What an ONNX graph says about its tensors after shape inference: shapes, element
sizes, constants, the model's precision (for :mod:`workloads.importers.onnx_model`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.errors import ConfigError
from simulator.trace import BYTES_PER_ELEMENT

_PRECISION_OF_DTYPE = {"float32": "fp32", "float64": "fp32", "float16": "fp16",
                       "bfloat16": "fp16", "int8": "int8", "uint8": "int8"}

@dataclass
class Graph:
    """Tensor facts after shape inference: shapes, element sizes, constants."""

    shapes: dict[str, tuple[int, ...]]
    itemsize: dict[str, int]
    constants: set[str]
    default_itemsize: int

    def numel(self, name: str) -> int | None:
        shape = self.shapes.get(name)
        return None if shape is None else math.prod(shape)

    def nbytes(self, name: str) -> int | None:
        numel = self.numel(name)
        return None if numel is None else numel * self.itemsize.get(name,
                                                                    self.default_itemsize)


def attr(node, name: str, default=None):
    import onnx

    for attribute in node.attribute:
        if attribute.name == name:
            return onnx.helper.get_attribute_value(attribute)
    return default


def check_nodes(model) -> None:
    """Check every node of an op type ONNX defines (at the model's opset) against its
    schema: input and output counts, attribute types. Shape inference skips such
    nodes without a word, and the importer then indexes inputs that are not there.
    Op types ONNX does not define (custom domains, newer ops) are left to the
    importer, which copies them with a warning.

    Raises:
        ConfigError: the first invalid node, by name (path ``node NAME``).
    """
    import onnx

    opsets = {entry.domain or "": entry.version for entry in model.opset_import}
    context = onnx.checker.C.CheckerContext()
    context.ir_version = model.ir_version
    context.opset_imports = opsets
    for index, node in enumerate(model.graph.node):
        domain = node.domain or ""
        try:
            onnx.defs.get_schema(node.op_type, opsets.get(domain, 1), domain)
        except onnx.defs.SchemaError:
            continue  # not an ONNX op at this opset
        try:
            onnx.checker.check_node(node, context)
        except onnx.checker.ValidationError as exc:
            message = " ".join(str(exc).split("==>")[0].split())
            raise ConfigError(f"invalid {node.op_type} node: {message}",
                              path=f"node {node.name or f'{node.op_type}_{index}'}") from None


def fix_input_dims(model, batch: int | None, dims: dict[str, int]) -> list[str]:
    """Give symbolic graph-input dims a size in place: axis 0 -> ``batch`` (default 1),
    named dims -> ``dims``; returns warnings. A fixed size below 1 is a ConfigError."""
    notes: list[str] = []
    sizes = {"batch": batch, **{f"dims[{k!r}]": v for k, v in dims.items()}}
    for option, value in sizes.items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 1):
            raise ConfigError(f"option {option} must be a positive integer; got {value!r}")
    constants = {init.name for init in model.graph.initializer}
    fixed_batch = False
    for value in model.graph.input:
        if value.name in constants or not value.type.HasField("tensor_type"):
            continue
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                if dim.dim_value < 1:  # an empty tensor: no work to simulate
                    raise ConfigError(f"input {value.name!r} has size {dim.dim_value} at axis "
                                      f"{axis}; sizes must be positive")
                continue
            param = dim.dim_param or "?"
            if param in dims:
                dim.dim_value = dims[param]
            elif axis == 0:
                dim.dim_value = 1 if batch is None else batch
                fixed_batch = True
                if batch is None:
                    notes.append(f"input {value.name!r}: dynamic batch dim {param!r} "
                                 "taken as 1 (set option batch)")
            else:
                raise ConfigError(f"input {value.name!r} has symbolic dim {param!r} at axis "
                                  f"{axis}; give its size with option dims={{{param!r}: N}}")
    if batch is not None and not fixed_batch:
        notes.append(f"option batch={batch} ignored: no graph input has a dynamic batch dim")
    return notes


def numpy_dtype(elem_type: int):
    """The numpy dtype of an ONNX element type, or None (undefined or exotic)."""
    import onnx

    try:
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type) if elem_type else None
    except (KeyError, ValueError, TypeError):
        return None


def graph_facts(model, precision: str) -> Graph:
    """Shapes and element sizes of every tensor the graph knows, and its constants."""
    shapes: dict[str, tuple[int, ...]] = {}
    itemsize: dict[str, int] = {}

    def note(name: str, elem_type: int, dims) -> None:
        kind = numpy_dtype(elem_type)
        if kind is not None:
            itemsize[name] = kind.itemsize
        if dims is not None:
            shapes[name] = tuple(int(d) for d in dims)

    graph = model.graph
    for value in [*graph.input, *graph.value_info, *graph.output]:
        tensor = value.type.tensor_type
        known = tensor.HasField("shape") and all(d.HasField("dim_value")
                                                 for d in tensor.shape.dim)
        note(value.name, tensor.elem_type,
             [d.dim_value for d in tensor.shape.dim] if known else None)
    constants = set()
    for init in graph.initializer:
        note(init.name, init.data_type, init.dims)
        constants.add(init.name)
    for node in graph.node:
        if node.op_type == "Constant" and attr(node, "value") is not None:
            tensor = attr(node, "value")
            note(node.output[0], tensor.data_type, tensor.dims)
            constants.add(node.output[0])
    return Graph(shapes, itemsize, constants, BYTES_PER_ELEMENT[precision])


def infer_precision(model) -> str:
    """The precision holding most initializer bytes (weights), fp32 when none."""
    totals: dict[str, int] = {}
    for init in model.graph.initializer:
        kind = numpy_dtype(init.data_type)
        precision = _PRECISION_OF_DTYPE.get(kind.name) if kind is not None else None
        if precision:
            totals[precision] = totals.get(precision, 0) + math.prod(init.dims) * kind.itemsize
    return max(sorted(totals), key=totals.get) if totals else "fp32"
