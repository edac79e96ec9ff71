"""The model zoo: parameterised layer graphs registered by name.

Each entry of :data:`MODELS` is a builder with explicit keyword parameters
that returns a :class:`~workloads.graph.Graph`::

    from workloads.zoo import MODELS, model_info
    graph = MODELS.get("resnet18")(stem="cifar")
    print(model_info("resnet18").description)

Built-in families register exactly as an outside plugin would, by importing
:data:`MODELS` and decorating a builder with ``@MODELS.register(name)``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from . import (  # noqa: F401  (registers the models)
    alexnet,
    bert,
    centernet,
    googlenet,
    inception,
    lenet,
    lstm,
    mobilenet,
    resnet,
    shufflenet,
    squeezenet,
    vgg,
)
from .base import MODELS, ModelBuilder


@dataclass(frozen=True)
class ModelInfo:
    """What ``socsim list models`` shows about one model.

    Attributes:
        name: registry name.
        description: one line (the builder's docstring summary).
        parameters: keyword parameters with their signature defaults
            (``None``/``'auto'`` are resolved at build time, see ``defaults``).
        defaults: the resolved parameters of a default build.
        macs: multiply-accumulates per sample of the default build.
        params: learnable parameters (elements) of the default build.
    """

    name: str
    description: str
    parameters: dict[str, object]
    defaults: dict[str, object]
    macs: int
    params: int


def model_builder(name: str) -> ModelBuilder:
    """Return the builder of ``name`` (ConfigError with did-you-mean on a miss)."""
    return MODELS.get(name)


def model_info(name: str) -> ModelInfo:
    """Describe model ``name``: parameters, resolved defaults, MACs and parameters."""
    builder = MODELS.get(name)
    graph = builder()
    doc = inspect.getdoc(builder) or ""
    signature = inspect.signature(builder)
    return ModelInfo(name=name, description=doc.splitlines()[0] if doc else "",
                     parameters={p.name: p.default for p in signature.parameters.values()},
                     defaults=dict(graph.config), macs=graph.macs, params=graph.params)


__all__ = ["MODELS", "ModelInfo", "model_builder", "model_info"]
