"""The model registry and the parameter checks every model builder shares.

A model builder is a function with explicit keyword parameters (no
``**kwargs``) that returns a :class:`~workloads.graph.Graph`; the first line
of its docstring is the one-line description shown by ``socsim list models``.
"""

from __future__ import annotations

from collections.abc import Callable

from simulator.errors import ConfigError
from simulator.registry import MODELS  # noqa: F401  (re-exported: the zoo registers into it)
from workloads.graph import Graph

ModelBuilder = Callable[..., Graph]

# The registry lives in the core (``socsim.models`` entry points fill it), so that
# the experiment checks and ``socsim list models`` find models without importing this.

STEMS = ("auto", "imagenet", "cifar")
# Inputs at most this large select the CIFAR variant when stem='auto'.
CIFAR_MAX_INPUT = 32


def positive_int(name: str, value: object, model: str) -> int:
    """Return ``value`` as an int >= 1 or raise ConfigError naming the parameter."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"The {name!r} parameter of model {model!r} must be an integer "
                          f">= 1. Got {value!r} instead.")
    return value


def positive_float(name: str, value: object, model: str) -> float:
    """Return ``value`` as a float > 0 or raise ConfigError naming the parameter."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"The {name!r} parameter of model {model!r} must be a number "
                          f"> 0. Got {value!r} instead.")
    return float(value)


def resolve_dataset(model: str, stem: str, input_size: int | None,
                    num_classes: int | None) -> tuple[str, int, int]:
    """Resolve ``stem='auto'`` and dataset-dependent defaults.

    ``auto`` picks ``cifar`` when ``input_size <= 32`` and ``imagenet``
    otherwise (also when ``input_size`` is left unset). The CIFAR variant
    defaults to 32x32 inputs and 10 classes, the ImageNet one to 224x224 and
    1000 classes.

    Returns:
        ``(stem, input_size, num_classes)``.
    """
    if stem not in STEMS:
        raise ConfigError(f"The 'stem' parameter of model {model!r} must be one of "
                          f"{', '.join(STEMS)}. Got {stem!r} instead.")
    if input_size is not None:
        input_size = positive_int("input_size", input_size, model)
    if stem == "auto":
        small = input_size is not None and input_size <= CIFAR_MAX_INPUT
        stem = "cifar" if small else "imagenet"
    if input_size is None:
        input_size = 32 if stem == "cifar" else 224
    if num_classes is None:
        num_classes = 10 if stem == "cifar" else 1000
    return stem, input_size, positive_int("num_classes", num_classes, model)


def scaled(channels: int, width: float) -> int:
    """Channels times a width multiplier, rounded, at least 1."""
    return max(1, int(round(channels * width)))


def make_divisible(value: float, divisor: int = 8) -> int:
    """Round channels to a multiple of ``divisor`` without losing more than 10 %.

    The rule of the MobileNet reference implementations (TF/torchvision
    ``_make_divisible``), so width-scaled models match published counts.
    """
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded
