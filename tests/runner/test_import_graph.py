"""The package reads bottom-up: no import circles, and one direction through the runner's core.

Every `import` statement of `conformance/` counts, at module level and inside functions alike (a deferred import
is still a dependency; it only hides a circle). Imports under `if TYPE_CHECKING:` are left out of the circle
test (they never run), but not out of the core's direction: a type from above is a dependency from above too.

The core, bottom to top: options (plain data and their parsing) → target → engine (recording) → judging →
report → certification (one run, front-end neutral) → the front ends (cli, plugin, api). No module of the core reaches one above it, directly or through
any chain of imports.
"""
from __future__ import annotations

import ast
from pathlib import Path

import conformance

PACKAGE = Path(conformance.__file__).resolve().parent
CORE = ("conformance.options", "conformance.target", "conformance.engine", "conformance.judging",
        "conformance.report", "conformance.certification", ("conformance.cli", "conformance.plugin", "conformance.api"))


def module_name(path: Path) -> str:
    parts = ("conformance",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool, typing_only: bool = False):
    """(imported module, under TYPE_CHECKING) for every import statement below `tree`."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), module, is_package, True)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), module, is_package, typing_only)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, typing_only
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                # `from pkg import name`: the submodule when `name` is one, else the package itself
                yield (f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base), typing_only
        else:
            yield from _imports(node, module, is_package, typing_only)


def graph(*, with_typing: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, typing_only in _imports(tree, module, path.name == "__init__.py"):
            if target in MODULES and target != module and (with_typing or not typing_only):
                edges[module].add(target)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def reachable(edges: dict[str, set[str]], start: str) -> dict[str, str]:
    """Every module `start` reaches, each with the module it was reached from (to print the chain)."""
    came_from: dict[str, str] = {}
    todo = [start]
    while todo:
        v = todo.pop()
        for w in edges[v]:
            if w not in came_from and w != start:
                came_from[w] = v
                todo.append(w)
    return came_from


def chain(came_from: dict[str, str], start: str, end: str) -> str:
    path = [end]
    while path[-1] != start:
        path.append(came_from[path[-1]])
    return " → ".join(reversed(path))


def test_the_package_has_no_import_circle():
    found = circles(graph(with_typing=False))
    assert not found, "import circles (each a set of modules importing each other):\n" + "\n".join(
        " ⇄ ".join(c) for c in found)


def test_the_core_imports_only_downwards():
    edges = graph(with_typing=True)
    layers = [layer if isinstance(layer, tuple) else (layer,) for layer in CORE]
    wrong = []
    for depth, layer in enumerate(layers):
        above = {m for upper in layers[depth + 1:] for m in upper}
        for module in layer:
            came_from = reachable(edges, module)
            wrong += [chain(came_from, module, m) for m in sorted(above & set(came_from))]
    assert not wrong, "core modules reaching one above them:\n" + "\n".join(wrong)


def test_the_test_sees_a_circle_and_an_upward_import():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert circles(edges) == [["a", "b", "c"]]
    assert chain(reachable(edges, "a"), "a", "c") == "a → b → c"
    every = graph(with_typing=True)
    assert "conformance.target" in every["conformance.engine"]     # the reader finds real imports
    assert all(m in MODULES for layer in CORE for m in (layer if isinstance(layer, tuple) else (layer,)))
