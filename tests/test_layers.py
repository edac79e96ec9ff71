"""The import rule, written down where it cannot rot.

The project is layered (docs/engine.md, "Layers"):

* the **core** -- ``simulator`` but its app modules: units, errors, ops, trace,
  registries, spec/, hardware/, network/, engine/, the policy interface -- imports
  nothing above it;
* the **app** -- ``simulator``'s cli, runner, experiment loading, executors,
  progress bars, results, plots, timeline, scoreboard, importer runner, and the ``simulator``
  package itself (the Python API) -- uses the core and finds plugins only
  through registries (:mod:`simulator.registry`), never by name;
* **plugins** -- ``policies``, ``workloads`` -- use the core (and workloads);
  policies never import studies;
* **studies** -- ``validation`` -- use everything.

The walk reads every module's imports with ``ast``, including imports inside
functions (which is where layering violations hide), and there must be no
import cycle between modules either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulator", "policies", "workloads", "validation")
# The app layer: the only part of ``simulator`` that may reach plugins (through
# registries) and that the core must not import.
APP = ("simulator.cli", "simulator.__main__", "simulator.runner", "simulator.experiment",
       "simulator.executors", "simulator.results", "simulator.plots", "simulator.timeline",
       "simulator.scoreboard", "simulator.importers", "simulator.worker",
       "simulator.progress")
# ``import simulator`` is the Python API (``simulator.run`` runs experiments): app layer,
# though its sub-packages are not
APP_PACKAGE = "simulator"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _typing_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (never executed)."""
    hidden = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return hidden


def imports_of(path: Path, root: Path, typing: bool = True) -> set[str]:
    """Absolute names of the project modules ``path`` imports (anywhere in it; with
    ``typing`` False, not those under ``if TYPE_CHECKING:``, which never run)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = set() if typing else _typing_only(tree)
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # ``from a.b import c``: c is module a.b.c or a name in a.b (resolved later)
            found.update(f"{stem}.{alias.name}" for alias in node.names)
    return {n for n in found if n.split(".")[0] in PACKAGES}


def import_graph(root: Path, typing: bool = True) -> dict[str, set[str]]:
    """Module -> project modules it imports (names resolved to existing modules;
    ``typing``: count imports made for type annotations only)."""
    modules = {module_name(p, root): p for pkg in PACKAGES if (root / pkg).is_dir()
               for p in sorted((root / pkg).rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    return {name: {m for m in map(resolve, imports_of(path, root, typing))
                   if m and m != name}
            for name, path in modules.items()}


def layer(module: str) -> str:
    top = module.split(".")[0]
    if top == "simulator":
        app = module == APP_PACKAGE or any(module == a or module.startswith(a + ".")
                                           for a in APP)
        return "app" if app else "core"
    return {"policies": "plugin", "workloads": "plugin", "validation": "study"}[top]


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that breaks the rule (see the module docstring)."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = layer(module), layer(target)
            if here == "core" and there != "core":
                found.append(f"{module} (core) imports {target} ({there})")
            elif here == "app" and there in ("plugin", "study"):
                found.append(f"{module} (app) imports {target} ({there}): find it "
                             "through a registry")
            elif here == "plugin" and there in ("study", "app"):
                found.append(f"{module} (plugin) imports {target} ({there})")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles (strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:  # Tarjan, iterative enough for this tree's depth
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _parents_of(graph, module):
    return {m for m, targets in graph.items() if module in targets}


def test_the_tree_keeps_the_import_rule():
    assert violations(import_graph(ROOT)) == []


def test_the_tree_has_no_import_cycle():
    # annotations may name each other both ways; what runs at import may not
    graph = import_graph(ROOT, typing=False)
    # a package's __init__ importing its own modules is how a package is built, not a cycle
    pruned = {m: {t for t in ts if not (t.startswith(m + ".") or m.startswith(t + "."))}
              for m, ts in graph.items()}
    assert cycles(pruned) == []


@pytest.fixture
def fake_tree(tmp_path):
    """A tiny tree with the project's package names."""
    def write(relative: str, text: str = "") -> None:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    for package in ("simulator", "simulator/engine", "policies", "workloads", "validation"):
        write(f"{package}/__init__.py")
    write("simulator/units.py", "import math\n")
    write("simulator/engine/run.py", "from ..units import parse\n")
    write("policies/fast.py", "from simulator.engine.run import go\n")
    write("validation/fit.py", "import policies.fast\nfrom simulator import units\n")
    return tmp_path, write


def test_a_clean_fake_tree_passes(fake_tree):
    root, _write = fake_tree
    graph = import_graph(root)
    assert graph["simulator.engine.run"] == {"simulator.units"}
    assert violations(graph) == [] and cycles(graph) == []


def test_a_planted_upward_import_inside_a_function_fails(fake_tree):
    root, write = fake_tree
    write("simulator/engine/run.py",
          "from ..units import parse\n\ndef go():\n    from policies import fast\n")
    assert violations(import_graph(root)) == [
        "simulator.engine.run (core) imports policies.fast (plugin)"]


def test_a_policy_importing_a_study_fails(fake_tree):
    root, write = fake_tree
    write("policies/slow.py", "def check():\n    import validation.fit\n")
    assert violations(import_graph(root)) == [
        "policies.slow (plugin) imports validation.fit (study)"]


def test_a_planted_cycle_fails(fake_tree):
    root, write = fake_tree
    write("simulator/units.py", "from .engine import run\n")
    assert cycles(import_graph(root, typing=False)) == [
        ["simulator.engine.run", "simulator.units"]]


def test_imports_for_annotations_only_make_no_cycle_but_still_break_layers(fake_tree):
    root, write = fake_tree
    write("simulator/units.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
          "    from .engine import run\n    from policies import fast\n")
    assert cycles(import_graph(root, typing=False)) == []
    assert violations(import_graph(root)) == [
        "simulator.units (core) imports policies.fast (plugin)"]
