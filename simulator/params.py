"""Plugin parameters, declared once: in the constructor's annotated signature.

A policy's constructor keywords are its parameters (listed, recorded and swept
by name). Their annotations are also their schema: :func:`validated` wraps a
constructor so that every call checks each argument it was given against its
annotation (pydantic, strict: ``"3"`` is not an int, an int is a float) and
raises a :class:`~simulator.errors.ConfigError` whose path is the parameter's
(``split_threshold``; ``make_policy`` prefixes ``policy.``)::

    def __init__(self, cores: Annotated[int, Field(ge=1)] | None = None,
                 mode: Literal["exact", "relaxed", "imprecise"] = "imprecise",
                 traffic_period: PositiveSeconds | None = None): ...

An argument reaches the constructor as written, except that quantities
(:data:`Seconds`, :data:`Bytes`...; parsed by :mod:`simulator.units`) arrive as
:class:`Quantity`: an SI float that remembers its text, so that
:func:`as_written` (and ``Policy.params()``) records ``"10 ms"`` as given.
Defaults are the author's and are not checked, but a quantity default
(``memory: Bytes = "400 MB"``) is parsed like a given value.
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, PlainValidator, TypeAdapter, ValidationError

from .errors import ConfigError, join_path
from .units import UnitError, parse_quantity

__all__ = ["Bytes", "check_keywords", "NonNegativeInt", "PositiveFloat", "PositiveInt", "PositiveSeconds",
           "Quantity", "Seconds", "UnitInterval", "as_written", "one_of", "quantity",
           "to_quantity", "validated"]


class Quantity(float):
    """An SI float (s, B...) that remembers how it was written (``"10 ms"``).

    Attributes:
        text: the value as written in the YAML.
    """

    def __new__(cls, value: float, text: object) -> Quantity:
        self = super().__new__(cls, value)
        self.text = text
        return self

    def __reduce__(self):
        return (Quantity, (float(self), self.text))


def to_quantity(value: object, dimension: str, gt: float | None = None) -> Quantity:
    """``value`` (``"10 ms"``) parsed by :func:`~simulator.units.parse_quantity` as a
    :class:`Quantity` of ``dimension``, optionally ``> gt`` (SI units).

    Raises:
        ValueError: not a quantity of that dimension, or not above ``gt``.
    """
    if isinstance(value, Quantity):
        return value
    try:
        si = parse_quantity(value, dimension)
    except UnitError as err:
        raise ValueError(str(err)) from None
    if gt is not None and not si > gt:
        raise ValueError(f"must be > {gt:g}; got {value!r}")
    return Quantity(si, value)


def quantity(dimension: str, gt: float | None = None) -> PlainValidator:
    """The validator of a parameter that is a quantity of ``dimension`` (see
    :func:`to_quantity`), for ``Annotated[Quantity, quantity("time")]``."""
    return PlainValidator(lambda value: to_quantity(value, dimension, gt))


PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
UnitInterval = Annotated[float, Field(ge=0, le=1)]  # a fraction in [0, 1]

Seconds = Annotated[Quantity, quantity("time")]
PositiveSeconds = Annotated[Quantity, quantity("time", gt=0.0)]
Bytes = Annotated[Quantity, quantity("bytes")]


def one_of(choices: tuple[str, ...]) -> Any:
    """The type of a parameter taking one of ``choices`` (``Literal[*choices]``),
    for choices a module already lists in a tuple."""
    return Literal[tuple(choices)]


def as_written(value: Any) -> Any:
    """``value`` with every :class:`Quantity` in it back to its text (records)."""
    if isinstance(value, Quantity):
        return value.text
    if isinstance(value, list):
        return [as_written(v) for v in value]
    if isinstance(value, dict):
        return {k: as_written(v) for k, v in value.items()}
    return value


def _has_quantity(value: Any) -> bool:
    if isinstance(value, Quantity):
        return True
    if isinstance(value, list):
        return any(_has_quantity(v) for v in value)
    if isinstance(value, dict):
        return any(_has_quantity(v) for v in value.values())
    return False


# strict: a string is not a number nor a number a string (YAML typos stay errors)
_CONFIG = ConfigDict(strict=True, arbitrary_types_allowed=True)


class _Schema:
    """The checks of one constructor: a pydantic adapter per annotated parameter."""

    def __init__(self, init: Callable):
        signature = inspect.signature(init)
        hints = typing.get_type_hints(init, include_extras=True)
        self.adapters: dict[str, TypeAdapter] = {}
        self.tags: dict[str, set[str]] = {}  # names of mapping types, per parameter
        self.defaults: dict[str, Any] = {}  # parsed quantity defaults
        for name, param in signature.parameters.items():
            if name == "self" or name not in hints or param.kind in (
                    param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            self.adapters[name] = adapter = TypeAdapter(hints[name], config=_CONFIG)
            self.tags[name] = _class_names(hints[name])
            if isinstance(param.default, str):
                try:
                    parsed = adapter.validate_python(param.default)
                except ValidationError:
                    continue
                if _has_quantity(parsed):
                    self.defaults[name] = parsed

    def check(self, name: str, value: Any) -> Any:
        """``value`` as the constructor gets it; a ConfigError at ``name`` if invalid."""
        adapter = self.adapters.get(name)
        if adapter is None:
            return value
        try:
            parsed = adapter.validate_python(value)
        except ValidationError as err:
            message, loc = _describe(err, self.tags[name])
            raise ConfigError(message, path=join_path(name, *loc)) from None
        return parsed if _has_quantity(parsed) else value


def validated(init: Callable) -> Callable:
    """Wrap constructor ``init`` so that every call validates its arguments
    against its annotations (see the module docstring)."""
    if getattr(init, "__validates_params__", False):
        return init
    signature = inspect.signature(init)
    schema: list[_Schema] = []  # built on first use: annotations may name later classes

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        if not schema:
            schema.append(_Schema(init))
        checks = schema[0]
        bound = signature.bind(self, *args, **kwargs)
        for name, value in list(bound.arguments.items())[1:]:
            bound.arguments[name] = checks.check(name, value)
        for name, default in checks.defaults.items():
            bound.arguments.setdefault(name, default)
        return init(*bound.args, **bound.kwargs)

    wrapper.__validates_params__ = True
    return wrapper


# -- messages -------------------------------------------------------------------
_TYPE_WORDS = {
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number", "string_type": "a string",
    "bool_type": "true or false", "bool_parsing": "true or false", "list_type": "a list",
    "dict_type": "a mapping", "none_required": "null",
}
_CHOICES = {*_TYPE_WORDS, "literal_error"}  # errors saying which kind of value it takes
_BOUNDS = {"greater_than": ("gt", ">"), "greater_than_equal": ("ge", ">="),
           "less_than": ("lt", "<"), "less_than_equal": ("le", "<=")}
# pydantic names the member of a union an error comes from in its location
# ('str', 'list[str]', "literal['a','b']", 'function-plain[parse()]'): not YAML keys
_TAG = re.compile(r"^(function-[a-z-]+\[.*\]|literal\[.*\]|(str|int|float|bool|none|list|"
                  r"dict|tuple|set|nullable|is-instance|constrained-[a-z]+)(\[.*\])?)$")


def _phrase(error: dict) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind in _TYPE_WORDS:
        return _TYPE_WORDS[kind]
    if kind in _BOUNDS:
        key, sign = _BOUNDS[kind]
        bound = ctx[key]
        return f"{sign} {bound:g}" if isinstance(bound, (int, float)) else f"{sign} {bound}"
    if kind == "literal_error":
        return str(ctx["expected"])
    if kind == "too_short":
        return "non-empty"
    return error["msg"].removeprefix("Input should be ").removeprefix("Value error, ")


def _class_names(hint: Any) -> set[str]:
    """Names of the classes (TypedDicts, models) in an annotation: pydantic puts
    them in error locations to say which member of a union failed."""
    names = set()
    if isinstance(hint, type) and hint.__module__ not in ("builtins", "typing"):
        names.add(hint.__name__)
    for arg in typing.get_args(hint):
        names |= _class_names(arg)
    return names


def _describe(err: ValidationError, tags: set[str] = frozenset()) -> tuple[str, list]:
    """One line from pydantic's errors, and its location: the deepest error, or the
    constraint a value of the right type broke, or else the types a union offered
    (``must be a string or a list; got 3``)."""
    errors = err.errors(include_url=False)
    for error in errors:
        error["where"] = [p for p in error["loc"]
                          if not (isinstance(p, str) and (_TAG.match(p) or p in tags))]
    deepest = max(len(e["where"]) for e in errors)
    # the input had the type of a union member but broke its constraint: say that
    specific = [e for e in errors if len(e["where"]) == deepest
                and (deepest or e["type"] not in _CHOICES)]
    if specific:
        error = specific[0]
        if error["type"] == "value_error":
            return str(error["ctx"]["error"]), error["where"]
        if error["type"] == "extra_forbidden":
            return f"unknown key {error['where'][-1]!r}", error["where"]
        if error["type"] == "missing":
            return "required key is missing", error["where"]
        return f"must be {_phrase(error)}; got {error['input']!r}", error["where"]
    phrases = list(dict.fromkeys(_phrase(e) for e in errors))
    return f"must be {' or '.join(phrases)}; got {errors[0]['input']!r}", []


def check_keywords(cls: type, given, owner: str, path: str) -> None:
    """Refuse a keyword ``cls(...)`` does not take, before calling it: one line at
    ``path.<key>`` naming ``owner`` ("policy 'single'", "governor 'performance'") and
    what it takes, instead of a TypeError.

    Raises:
        ConfigError: the first unknown keyword of ``given``.
    """
    accepted = [n for n, p in inspect.signature(cls.__init__).parameters.items()
                if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for key in given:
        if key not in accepted:
            raise ConfigError(f"{owner} takes no parameter {key!r}; it takes "
                              f"{', '.join(accepted) or 'no parameters'}",
                              path=join_path(path, key))

