"""User-facing errors: one line naming the file and the YAML path (or row/column)."""

from __future__ import annotations

from collections.abc import Iterable


class ConfigError(Exception):
    """Bad input. The CLI prints ``str(error)`` as one line and exits with status 2.

    Args:
        message: what is wrong and what was expected.
        file: the file the value came from, if any.
        path: where in the file: a YAML path (``clusters.gold.opps[3]``) or a
            table location (``row 12, column deps``).
    """

    def __init__(self, message: str, file: str | None = None, path: str | None = None):
        self.message = " ".join(str(message).split())
        self.file = str(file) if file is not None else None
        self.path = path or None
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ": ".join(part for part in (self.file, self.path) if part)
        return f"{where}: {self.message}" if where else self.message

    def within(self, file: str | None = None, prefix: str | None = None) -> ConfigError:
        """Return this error re-anchored in ``file`` below the YAML path ``prefix``."""
        path = join_path(prefix, self.path) if prefix else self.path
        return ConfigError(self.message, file=file or self.file, path=path)


class OutOfMemory(Exception):
    """A run needs more memory than a processor (or the device) has.

    Raised while a run is set up (a policy finding that its plan does not fit a
    processor's ``memory_budget``) or while it runs. It is a result, not a
    crash: the runner records the run with status ``oom`` and this message,
    like a framework reporting out-of-memory on a phone.

    Args:
        message: what did not fit where, with the sizes.
    """


def join_path(*parts: object) -> str:
    """Join YAML path parts: ``('a', 'b', 3, 'c')`` -> ``'a.b[3].c'``."""
    out = ""
    for part in parts:
        if part is None or part == "":
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = str(part)
            out = f"{out}.{text}" if out and not text.startswith("[") else out + text
    return out


def yaml_path(loc: Iterable[object]) -> str:
    """Render a pydantic error location as a YAML path."""
    return join_path(*[p for p in loc if not (isinstance(p, str) and p.startswith("function-"))])
