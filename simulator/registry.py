"""Register-by-name, find-by-name, with "did you mean" on a miss: how plugins are found.

Every plugin kind -- policies, governors, models, workload generators,
importers, validation checks -- is a :class:`Registry`, and every registry is
filled the same way: a plugin module calls ``REGISTRY.register(name)``
(usually as a decorator) when it is imported, and the registry imports the
plugin modules itself, the first time it is asked for a name, from the
entry-point group it was made with (``socsim.policies``, ``socsim.models``,
...). The built-ins are declared in ``setup.cfg`` exactly as an outside
package declares its own::

    # an outside package's setup.cfg
    [options.entry_points]
    socsim.policies =
        my-policy = my_package.my_policy

so the core never imports a plugin by name, and ``socsim run`` / ``socsim
list`` see an installed third-party policy, model or importer. A module that
fails to import is a :class:`~simulator.errors.ConfigError` naming its entry
point.

The registries of kinds whose interface lives outside the core are defined
here: :data:`MODELS` (name -> ``builder(**options) -> workloads.graph.Graph``),
:data:`WORKLOADS` (name -> ``generate(model, mode=, batch=, precision=,
**options) -> Trace``; ``zoo`` is the model zoo's) and :data:`IMPORTERS`
(name -> ``importer(input_path, output_path, **options) -> list[Path]``, with
a ``description``) and :data:`COMMANDS` (name -> :class:`Command`: a ``socsim``
sub-command a study package contributes, e.g. ``socsim calibrate``). Policies, governors and checks have theirs next to their
interfaces (:data:`simulator.policy.POLICIES`,
:data:`simulator.engine.dvfs.GOVERNORS`, :data:`simulator.checks.CHECKS`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A named collection of plugin factories of one kind.

    Args:
        kind: what is registered ("policy", "governor", ...), used in messages.
        group: the entry-point group whose modules register into it (None: only
            what is registered explicitly, e.g. in tests).
    """

    def __init__(self, kind: str, group: str | None = None):
        self.kind = kind
        self.group = group
        self._entries: dict[str, T] = {}
        self._discovered = group is None

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering ``obj`` under ``name``; names must be unique."""

        def decorator(obj: T) -> T:
            if name in self._entries and self._entries[name] is not obj:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = obj
            return obj

        return decorator

    def discover(self) -> None:
        """Import the modules of this registry's entry-point group (once)."""
        if self._discovered:
            return
        self._discovered = True  # set first: a plugin module may look names up
        for point in sorted(entry_points(group=self.group), key=lambda p: p.name):
            try:
                point.load()
            except Exception as exc:  # a broken plugin is named, not a traceback
                raise ConfigError(f"{self.kind} plugin {point.name!r} ({point.value}, entry "
                                  f"point group {self.group}) failed to load: "
                                  f"{type(exc).__name__}: {exc}") from exc

    def get(self, name: str, path: str | None = None) -> T:
        """Return the entry ``name``; a miss raises ConfigError with suggestions."""
        if not self._known(name):
            self.discover()  # an outside plugin may provide it
        try:
            return self._entries[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name (a mapping)
            close = difflib.get_close_matches(str(name), self._entries, n=3)
            hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
            known = ", ".join(sorted(self._entries))
            raise ConfigError(f"unknown {self.kind} {name!r}.{hint} Known: {known}.",
                              path=path) from None

    def _known(self, name: object) -> bool:
        try:
            return name in self._entries
        except TypeError:  # an unhashable name (a mapping from YAML) is never known
            return False

    def names(self) -> list[str]:
        """Every registered name, sorted (plugins discovered first)."""
        self.discover()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self.discover()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


MODELS: Registry[Callable[..., Any]] = Registry("model", "socsim.models")
WORKLOADS: Registry[Callable[..., Any]] = Registry("workload generator", "socsim.workloads")
IMPORTERS: Registry[Callable[..., Any]] = Registry("importer", "socsim.importers")


@dataclass(frozen=True)
class Command:
    """A ``socsim`` sub-command from a plugin.

    Attributes:
        help: one line for ``socsim --help``.
        description: the command's ``--help`` text.
        add_arguments: ``(argparse parser) -> None``.
        run: ``(parsed args) -> exit status``; bad input raises ConfigError.
    """

    help: str
    description: str
    add_arguments: Callable[[Any], None]
    run: Callable[[Any], int]


COMMANDS: Registry[Command] = Registry("command", "socsim.commands")
