"""A bounded YAML reader: text checks, nesting depth, alias expansion, number range.

Configuration files come from users and from the web, so the reader refuses,
with a one-line :class:`~simulator.errors.ConfigError`, anything that would
otherwise crash or exhaust the machine later:

* files over :data:`MAX_BYTES`, binary files, UTF-16/32 or invalid UTF-8;
* nesting deeper than :data:`MAX_DEPTH` (PyYAML's composer recurses per level);
* more than :data:`MAX_NODES` values once aliases are expanded ("billion
  laughs": a few lines whose aliases expand to 10^9 values when a schema
  validator, ``json.dumps`` or ``copy.deepcopy`` walks them), and recursive aliases;
* non-finite numbers (``.inf``, ``1e400``) and integers beyond 64 bits, which
  overflow numpy and ``int()`` conversions downstream.

Duplicate mapping keys are errors too (a silent overwrite otherwise).
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from ..errors import ConfigError, join_path

MAX_BYTES = 8 * 1024 * 1024  # the largest bundled YAML is ~17 KB
MAX_DEPTH = 64  # the deepest bundled YAML nests ~8 levels
MAX_NODES = 1_000_000  # values after alias expansion
MAX_INT = 2**63 - 1  # the int64 range numpy and the result tables use

_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32",
         b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


class BoundError(yaml.MarkedYAMLError):
    """A YAML document beyond the reader's bounds (well-formed, but refused)."""


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader with a depth limit, an expanded-size limit and unique keys."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):  # noqa: D102 - PyYAML API
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise BoundError(
                    None, None, f"nesting deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):  # noqa: D102 - PyYAML API
        node = super().compose_document()
        _expanded_size(node, {})
        return node


def _expanded_size(node: yaml.Node, sizes: dict[int, int | None]) -> int:
    """Values under ``node`` with every alias expanded (memoised, so linear in the file)."""
    key = id(node)
    if key in sizes:
        if sizes[key] is None:
            raise BoundError(None, None, "recursive alias", node.start_mark)
        return sizes[key]
    sizes[key] = None  # in progress: meeting it again means a cycle
    total = 1
    if isinstance(node, yaml.SequenceNode):
        total += sum(_expanded_size(child, sizes) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        total += sum(_expanded_size(k, sizes) + _expanded_size(v, sizes) for k, v in node.value)
    if total > MAX_NODES:
        raise BoundError(
            None, None, f"more than {MAX_NODES:,} values once aliases are expanded",
            node.start_mark)
    sizes[key] = total
    return total


def _construct_mapping(loader: BoundedLoader, node: yaml.MappingNode, deep: bool = False):
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


BoundedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def decode(data: bytes, file: str | None = None) -> str:
    """The text of a YAML file: UTF-8 (an optional BOM), not binary, not over size."""
    if len(data) > MAX_BYTES:
        raise ConfigError(f"file too large for a configuration file ({len(data):,} bytes; "
                          f"the limit is {MAX_BYTES:,})", file=file)
    for bom, encoding in _BOMS.items():
        if data.startswith(bom):
            raise ConfigError(f"the file is {encoding} text; save it as UTF-8", file=file)
    if b"\x00" in data:
        raise ConfigError("a binary file, not YAML text", file=file)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise ConfigError(f"not UTF-8 text (byte 0x{data[err.start]:02x}); save it as "
                          f"UTF-8", file=file, path=f"line {line}") from None


def load_text(text: str, file: str | None = None, path: str | None = None,
              malformed_as_text: bool = False) -> Any:
    """Parse YAML text within the bounds; errors name the line (or the YAML path of a number).

    Args:
        text: the YAML document.
        file, path: where the text came from, for error messages.
        malformed_as_text: return ``text`` itself when it is not YAML (a ``--set``
            value such as ``a: b: c``); documents beyond the bounds are still errors.
    """
    if len(text) > MAX_BYTES:
        raise ConfigError(f"YAML text too long ({len(text):,} characters)", file=file,
                          path=path)
    try:
        data = yaml.load(text, Loader=BoundedLoader)  # noqa: S506 (safe loader subclass)
    except yaml.YAMLError as err:
        if malformed_as_text and not isinstance(err, BoundError):
            return text
        mark = getattr(err, "problem_mark", None)
        where = path or (f"line {mark.line + 1}, column {mark.column + 1}" if mark else None)
        problem = getattr(err, "problem", None) or str(err)
        message = problem if isinstance(err, BoundError) else f"malformed YAML: {problem}"
        raise ConfigError(message, file=file, path=where) from None
    check_numbers(data, file, path)
    return data


def check_numbers(data: Any, file: str | None = None, prefix: str | None = None) -> None:
    """Reject non-finite floats and integers beyond 64 bits anywhere in ``data``.

    Raises:
        ConfigError: naming the YAML path of the first bad number.
    """
    stack: list[tuple[Any, str | None]] = [(data, prefix)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"the number {value!r} is not finite", file=file, path=where)
        if isinstance(value, int) and abs(value) > MAX_INT:
            raise ConfigError(f"the number {value} is out of range (at most {MAX_INT})",
                              file=file, path=where)
        if isinstance(value, dict):
            stack.extend((v, join_path(where, str(k))) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, join_path(where, i)) for i, v in enumerate(value))
