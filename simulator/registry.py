"""Register-by-name, make-by-name, with "did you mean" on a miss.

Built-in policies, governors, workload generators and importers register
themselves exactly the way an outside plugin would: by calling
``Registry.register`` (usually as a decorator) at import time.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A named collection of plugin factories of one kind.

    Args:
        kind: what is registered ("policy", "governor", ...), used in messages.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering ``obj`` under ``name``; names must be unique."""

        def decorator(obj: T) -> T:
            if name in self._entries and self._entries[name] is not obj:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = obj
            return obj

        return decorator

    def get(self, name: str, path: str | None = None) -> T:
        """Return the entry ``name``; a miss raises ConfigError with suggestions."""
        try:
            return self._entries[name]
        except KeyError:
            close = difflib.get_close_matches(str(name), self._entries, n=3)
            hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
            known = ", ".join(sorted(self._entries))
            raise ConfigError(f"unknown {self.kind} {name!r}.{hint} Known: {known}.",
                              path=path) from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
