"""Dotted paths into an experiment mapping: ``--set`` values and sweep points."""

from __future__ import annotations

import copy
from typing import Any

from ..errors import ConfigError
from ..spec.yamlsafe import load_text
from .sweep import RESERVED_SWEEP_KEYS

# Mappings whose keys are themselves dotted paths (``sweep: {workload.batch: [...]}``).
_DOTTED_KEY_PARENTS = ("sweep", "sweep.zip", "sweep.random.params")
# ``--set`` keys that configure the experiment rather than a run; not result columns.
_NOT_COLUMNS = ("sweep", "plots", "plot_style", "repeats", "seed")


def parse_value(text: str, path: str | None = None) -> Any:
    """Parse a ``--set`` value with YAML rules (``3`` -> int, ``[1,2]`` -> list).

    Text that is not YAML stays a string; YAML beyond the reader's bounds (depth,
    alias expansion, non-finite numbers) is a ConfigError at ``path``.
    """
    return load_text(text, path=path, malformed_as_text=True)


def parse_set(items: list[str] | None) -> dict[str, Any]:
    """Parse ``--set key.path=value`` arguments into ``{dotted path: value}``.

    Raises:
        ConfigError: an item without ``=`` or with an empty path.
    """
    out: dict[str, Any] = {}
    for item in items or []:
        dotted, sep, value = item.partition("=")
        dotted = dotted.strip()
        if not sep or not dotted or any(not p for p in dotted.split(".")):
            raise ConfigError(f"expected key.path=value; got {item!r}", path="--set")
        out[dotted] = parse_value(value, path=f"--set {dotted}")
    return out


def set_path(mapping: dict, dotted: str, value: Any) -> None:
    """Set ``mapping[a][b][c] = value`` for ``dotted == 'a.b.c'`` (creating mappings).

    A list element is addressed by its index (``workload.0.batch``). Below
    ``sweep``, ``sweep.zip`` and ``sweep.random.params`` the rest of the path
    is one key (``sweep.workload.batch`` sets the sweep axis ``workload.batch``).
    """
    parts = dotted.split(".")
    node: Any = mapping
    i = 0
    while i < len(parts) - 1:
        here = ".".join(parts[:i])
        if here in _DOTTED_KEY_PARENTS and isinstance(node, dict):
            rest = parts[i:]
            if not (here == "sweep" and rest[0] in RESERVED_SWEEP_KEYS) and not (
                    here == "sweep.random" and rest[0] == "params"):
                node[".".join(rest)] = value
                return
        part = parts[i]
        if isinstance(node, list):
            node = node[_list_index(part, dotted, len(node))]
            i += 1
            continue
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        elif not isinstance(nxt, (dict, list)):
            raise ConfigError(f"cannot set {dotted!r}: {'.'.join(parts[:i + 1])!r} is "
                              f"not a mapping", path=dotted)
        node = nxt
        i += 1
    last = parts[-1]
    if isinstance(node, list):
        node[_list_index(last, dotted, len(node))] = value
    else:
        node[last] = value


def _list_index(part: str, dotted: str, length: int) -> int:
    try:
        index = int(part)
    except ValueError:
        raise ConfigError(f"cannot set {dotted!r}: {part!r} is not a list index",
                          path=dotted) from None
    if not -length <= index < length:
        raise ConfigError(f"cannot set {dotted!r}: index {index} is out of range "
                          f"(the list has {length} items)", path=dotted)
    return index


def apply_overrides(raw: dict, overrides: dict[str, Any]) -> dict:
    """Return a copy of ``raw`` with dotted-path overrides applied.

    An override of a swept path pins it: that axis is removed from the sweep.
    """
    out = copy.deepcopy(raw)
    for dotted, value in overrides.items():
        _unsweep(out, dotted)
        # A copy: a later override below this path (``policy`` then ``policy.client``)
        # must not change the sweep's value itself, which other points share.
        set_path(out, dotted, copy.deepcopy(value))
    return out


def _unsweep(raw: dict, dotted: str) -> None:
    sweep = raw.get("sweep")
    if not isinstance(sweep, dict) or dotted.split(".")[0] == "sweep":
        return
    sweep.pop(dotted, None)
    for section, holder in (("zip", sweep), ("params", (sweep.get("random") or {}))):
        inner = holder.get(section) if isinstance(holder, dict) else None
        if isinstance(inner, dict) and dotted in inner:
            del inner[dotted]
            if not inner:
                del holder[section]
    if isinstance(sweep.get("random"), dict) and "params" not in sweep["random"]:
        del sweep["random"]
    if not sweep:
        raw["sweep"] = None


def result_columns(overrides: dict[str, Any]) -> dict[str, Any]:
    """The ``--set`` values that become result columns (not sweep/plots/plot_style/repeats/seed)."""
    return {k: v for k, v in overrides.items() if k.split(".")[0] not in _NOT_COLUMNS}
