"""A disk cache of validation checks' simulated values, keyed on everything they read.

A check is deterministic: its value depends on the code (the simulator, the
plugins, the study that registers it), the SoC files, the calibration data and
the numeric libraries, nothing else. The cache key of a check is its name and a
*fingerprint* of all of those: the bytes of every file under the packages
``simulator``, ``policies``, ``workloads``, ``validation`` and the top-level
package (or module file) of each check, of every SoC folder
(:func:`simulator.library.soc_dirs`) and of the calibration data root (as
``validation.data`` finds it: ``$SOCSIM_DATA_DIR``, else ``../shared/data``
next to the checkout), plus the Python and library versions. Any change to any
of them is a new fingerprint, so a cached value is never stale; an unchanged
tree re-runs the scoreboard from the cache.

Only outcomes are cached (a value, or "data unavailable" with its message);
a check that raised is run again next time. The folder is
``$SOCSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/socsim``, else ``~/.cache/socsim``;
delete it (or pass ``socsim validate --no-cache``) to start afresh. Each
fingerprint's values live in one JSON file under ``checks/``; the newest eight
are kept (other branches and worktrees of the same machine), older ones are
removed when a new one is written. Only the bytes and the paths inside the
checkout enter the fingerprint, not where the checkout is.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import sys
from collections.abc import Iterable
from pathlib import Path

from .library import PROJECT_ROOT, soc_dirs

_PACKAGES = ("simulator", "policies", "workloads", "validation")
_LIBRARIES = ("numpy", "scipy", "pandas", "simpy", "pydantic")
_SKIP_DIRS = {"__pycache__", ".git", ".pytest_cache"}
# Fingerprints whose values are kept (one JSON file each, ~20 kB)
_KEEP = 8


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed meanwhile by another process
        return 0.0


def cache_dir() -> Path:
    """The cache folder (not created here)."""
    explicit = os.environ.get("SOCSIM_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "socsim"


def _data_root() -> Path:
    # The calibration data root as validation.data resolves it (the core may not
    # import the studies): hashed whole, so any file a study reads is covered.
    return Path(os.environ.get("SOCSIM_DATA_DIR") or PROJECT_ROOT.parent / "shared" / "data")


def _roots(modules: Iterable[str]) -> list[Path]:
    """Folders (or files) whose bytes the checks depend on."""
    roots: set[Path] = set()
    for name in {*_PACKAGES, *(m.split(".")[0] for m in modules)}:
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        if spec.submodule_search_locations:
            roots.update(Path(p).resolve() for p in spec.submodule_search_locations)
        elif spec.origin:
            roots.add(Path(spec.origin).resolve())
    roots.update(p.resolve() for p in soc_dirs())
    roots.add(_data_root().resolve())
    return sorted(roots)


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        out.extend(Path(folder) / n for n in sorted(names) if not n.endswith((".pyc", ".pyo")))
    return out


def _label(root: Path) -> str:
    """A root's name in the fingerprint: its path inside the checkout, else its
    own name (the data root, an installed plugin), never its absolute path."""
    try:
        return root.relative_to(PROJECT_ROOT.resolve()).as_posix()
    except ValueError:
        return root.name


def fingerprint(modules: Iterable[str] = ()) -> str:
    """A hash of every input of the checks defined in ``modules`` (see the module)."""
    digest = hashlib.sha256()
    digest.update(f"python {sys.version} {platform.machine()}\n".encode())
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        digest.update(f"{name} {getattr(module, '__version__', '?')}\n".encode())
    for root in _roots(modules):
        # where the tree lives is no input: two checkouts of the same bytes (git
        # worktrees, a copy) share their cache
        digest.update(f"root {_label(root)}\n".encode())
        for path in _files(root):
            digest.update(f"{path.relative_to(root) if path != root else path.name}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


class CheckCache:
    """Cached check outcomes for one fingerprint.

    Args:
        folder: the cache folder (:func:`cache_dir`).
        key: the fingerprint of the current inputs (:func:`fingerprint`).
    """

    def __init__(self, folder: Path, key: str):
        self.folder = folder / "checks"
        self.key = key
        self.path = self.folder / f"{key}.json"
        try:
            self._entries: dict = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self._entries = {}
        self._dirty = False

    def get(self, name: str) -> tuple[str, float | str] | None:
        """``(kind, payload)`` of a cached outcome: ``("value", float)`` or
        ``("unavailable", message)``; None if not cached."""
        entry = self._entries.get(name)
        return None if entry is None else (entry[0], entry[1])

    def put(self, name: str, kind: str, payload: float | str) -> None:
        self._entries[name] = [kind, payload]
        self._dirty = True

    def save(self) -> None:
        """Write the entries (atomically) and drop older fingerprints' files; a cache
        that cannot be written is skipped silently (it is only a cache)."""
        if not self._dirty:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(json.dumps(self._entries, sort_keys=True))
            partial.replace(self.path)
            # the newest few fingerprints stay: trees at other commits (branches,
            # worktrees) validated on one machine must not evict each other
            others = sorted((p for p in self.folder.glob("*.json") if p != self.path),
                            key=_mtime, reverse=True)
            for other in others[_KEEP - 1:]:
                other.unlink(missing_ok=True)
        except OSError:
            return
        self._dirty = False
