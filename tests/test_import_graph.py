"""The packages' imports point one way (wmrl_envs < wmrl_tasks < wmrl_agents) and the module graph has no cycles.

Read from the source with `ast`, so an import hidden inside a function or under ``TYPE_CHECKING`` counts
like one at the top: a cycle hidden is still a cycle, and a library that imports an agent inside a
function still cannot be installed or reasoned about without it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# Import name -> folder, lowest layer first: a module may import its own layer and the ones before it.
LAYERS = {"wmrl_envs": "wmrl_envs", "wmrl_tasks": "tasks", "wmrl_agents": "agents"}
# Program text the sandbox runs (baseline solutions), not modules of the package.
NOT_MODULES = (REPO_ROOT / "tasks" / "mledojo" / "pool" / "solutions",)


def _module_files() -> dict[str, Path]:
    """Every module of the three packages by its import name (``agents/grpo/loss.py`` -> ``wmrl_agents.grpo.loss``)."""
    modules: dict[str, Path] = {}
    for package, folder in LAYERS.items():
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            if any(path.is_relative_to(skip) for skip in NOT_MODULES) or "__pycache__" in path.parts:
                continue
            parts = path.relative_to(REPO_ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1])) if parts[-1] == "__init__" else ".".join((package, *parts))
            modules[name] = path
    return modules


def _imported_names(tree: ast.Module, module: str, is_package: bool) -> Iterator[str]:
    """Every dotted name a module imports, anywhere in its body, with relative imports made absolute."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import name` imports pkg.name when that is a module, else pkg itself (resolved by the caller).
            yield from (base if alias.name == "*" else f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (the deepest project module each imported name resolves to)."""
    modules = _module_files()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: set[str] = set()
        for imported in _imported_names(tree, name, path.name == "__init__.py"):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            # Importing one's own enclosing package is what Python does before running any submodule.
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        graph[name] = targets
    return graph


def _layer(module: str) -> int:
    return list(LAYERS).index(module.split(".")[0])


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Edges that import a higher layer: the library from a task family or agent, a task family from an agent."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if _layer(b) > _layer(a))


def cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """Each group of modules that import one another (Tarjan), with its edges, as (a shortest cycle, all edges)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(root: str) -> None:
        # Iterative Tarjan: the graph is a few hundred modules deep at most, but recursion limits are not the point.
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [
        (_shortest_cycle(graph, group), sorted(f"{a} -> {b}" for a in group for b in graph[a] & group))
        for group in groups
    ]


def _shortest_cycle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    start = min(group)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no cycle through {start} in its own strongly connected group")


def test_the_graph_sees_imports_inside_functions_and_relative_imports(tmp_path: Path) -> None:
    """Hidden imports are edges too, and ``from . import x`` resolves against the right package."""
    source = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..b import c\ndef f():\n    from . import d\n"
    )
    names = set(_imported_names(ast.parse(source), "p.q.m", is_package=False))
    assert {"p.b.c", "p.q.d"} <= names


def test_the_checks_name_the_cycle_and_the_upward_edge() -> None:
    """On a made-up graph: the cycle comes back as a path with its edges, an upward import as its edge."""
    graph = {
        "wmrl_envs.a": {"wmrl_envs.b"},
        "wmrl_envs.b": {"wmrl_envs.c", "wmrl_agents.x"},
        "wmrl_envs.c": {"wmrl_envs.a"},
        "wmrl_agents.x": {"wmrl_envs.a"},
    }
    assert layer_violations(graph) == ["wmrl_envs.b -> wmrl_agents.x"]
    [(path, edges)] = cycles(graph)
    assert path == ["wmrl_agents.x", "wmrl_envs.a", "wmrl_envs.b", "wmrl_agents.x"]
    assert len(edges) == 5


def test_the_library_imports_no_task_family_and_task_families_no_agent() -> None:
    """wmrl_envs < wmrl_tasks < wmrl_agents: the library installs and imports without the layers above it."""
    violations = layer_violations(import_graph())
    assert not violations, "imports against the layers (move the code down, or the import up):\n" + "\n".join(
        violations
    )


def test_the_module_graph_has_no_cycles() -> None:
    """No import cycle, counting imports inside functions and under TYPE_CHECKING."""
    found = cycles(import_graph())
    assert not found, "import cycles (split the shared part into a module both can import):\n" + "\n".join(
        " -> ".join(cycle) + "\n  edges among them: " + "; ".join(edges) for cycle, edges in found
    )


def test_every_import_of_a_project_module_names_one_that_exists() -> None:
    modules = _module_files()
    roots = tuple(LAYERS)
    importers = [*modules.values(), *sorted((REPO_ROOT / "tests").rglob("*.py"))]
    importers += sorted((REPO_ROOT / "benchmarks").rglob("*.py")) + sorted((REPO_ROOT / "examples").rglob("*.py"))
    missing = []
    for path in importers:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            named = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                named = [node.module]
            missing += [
                f"{path.relative_to(REPO_ROOT)}:{node.lineno} imports {name}"
                for name in named
                if name.split(".")[0] in roots and name not in modules
            ]
    assert not missing, "imports of project modules that do not exist (moved or renamed?):\n" + "\n".join(missing)
