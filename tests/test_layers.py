"""The package's layers, checked on its import graph (read from the source, nothing imported).

Every import of a fastndcg module counts, at the top of a module or inside a function (a lazy
import); imports for type checkers only do not. The rules are ARCHITECTURE.md's.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "fastndcg"
BACKEND_PACKAGES = ("numba", "numpy", "cuda")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The fastndcg modules ``module`` imports (a package's parents that run on the way too)."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                parts = parts if is_package else parts[:-1]
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # a submodule, else a name of the module ``base``
                name = f"{base}.{alias.name}"
                names.add(name if name in _modules() else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found = {name for name in names if name in _modules()}
    for name in names:
        # the packages an import runs on the way, but the root (the public face) and those the
        # importer is inside of (already running)
        name = name.rsplit(".", 1)[0]
        while name.count(".") >= 1 and not (module + ".").startswith(name + "."):
            if name in _modules():
                found.add(name)
            name = name.rsplit(".", 1)[0]
    found.discard(module)
    return found


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


@cache
def graph() -> dict[str, set[str]]:
    """Module -> the fastndcg modules it imports (top level and lazy)."""
    edges = {}
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(), str(path))
        edges[name] = _imported(tree, name, path.name == "__init__.py")
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges.get(node, ()):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_import_circle_lazy_imports_included():
    assert _cycles(graph()) == []


def test_the_contract_imports_nothing_of_either_side():
    for module, imported in graph().items():
        if _under(module, "fastndcg._contract"):
            outside = {m for m in imported if not _under(m, "fastndcg._contract")}
            assert outside <= {"fastndcg._errors"}, (module, outside)


def test_the_core_knows_the_registry_and_no_backend():
    for module, imported in graph().items():
        if _under(module, "fastndcg._core"):
            backends = {m for m in imported if _under(m, "fastndcg._backends")}
            assert backends <= {"fastndcg._backends"}, (module, backends)


def test_only_the_backends_import_a_backend_package():
    for module, imported in graph().items():
        if _under(module, "fastndcg._backends"):
            continue
        for name in BACKEND_PACKAGES:
            inside = {m for m in imported if _under(m, f"fastndcg._backends.{name}")}
            assert not inside, (module, inside)


def test_the_backends_import_nothing_above_them():
    above = ("fastndcg._core", "fastndcg._io", "fastndcg._compare", "fastndcg._presets")
    for module, imported in graph().items():
        if _under(module, "fastndcg._backends"):
            upward = {m for m in imported if any(_under(m, p) for p in above)}
            assert not upward, (module, upward)


def test_the_graph_sees_imports():
    # the rules above would pass on an empty graph: check it holds edges of every kind
    edges = graph()
    assert "fastndcg._contract.records" in edges["fastndcg._contract.protocol"]  # from-import
    assert "fastndcg._contract" in edges["fastndcg._core.plan"]  # a package's __init__
    assert "fastndcg._backends.cuda.memory" in edges["fastndcg._backends"]  # lazy, in a function
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
