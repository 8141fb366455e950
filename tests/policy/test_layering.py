"""The layout tells product from tooling, and the imports keep to it.

What runs on AWS (``layers/``, then ``functions/``, then ``cdk/``, each layer above the last) and
what operators install (``coupon_client/``) import nothing of what only helps develop them
(``local/``, ``bench/``, ``tests/``), and no module imports from a layer above its own. The
project's modules import one another without a circle, counting every import: one at the top, one
a function makes when it runs, and one only the type checker reads.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = ("layers/coupon_core/python/", "layers/lua_redis/python/", "cdk/", "")
TOOLING = {"local", "bench", "tests"}
# Each folder of the product, and the project's top-level packages it may not import.
NOT_FROM = {
    "layers/": {"functions", "coupon_cdk", "app", "coupon_client"} | TOOLING,
    "functions/": {"coupon_cdk", "app", "coupon_client"} | TOOLING,
    "cdk/": {"coupon_client"} | TOOLING,
    "coupon_client/": {"functions", "coupon_core", "lua_redis", "coupon_cdk", "app"} | TOOLING,
}


def _files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in listed.splitlines() if (ROOT / line).exists()]


def _module(file: str) -> str:
    for root in SOURCE_ROOTS:
        if file.startswith(root):
            return file.removeprefix(root).removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    raise AssertionError(file)


def _imports(file: str, *, top_level_only: bool) -> set[str]:
    tree = ast.parse((ROOT / file).read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_no_module_imports_from_a_layer_above_its_own_or_from_tooling():
    found = [
        f"{file} imports {name}"
        for folder in sorted(NOT_FROM)
        for file in _files()
        if file.startswith(folder)
        for name in sorted(_imports(file, top_level_only=False))
        if name.split(".")[0] in NOT_FROM[folder]
    ]
    assert not found, "\n".join(found)


def test_the_local_stack_imports_the_testkit_and_never_the_reverse():
    """local/__init__.py's arrows: the stack uses the testkit's tools (a fault proxy in front of a
    broker of its own, the Kafka settings), and the testkit drives servers it is given."""
    backwards = [
        f"{file} imports {name}"
        for file in _files()
        if file.startswith("local/testkit/")
        for name in sorted(_imports(file, top_level_only=False))
        if name.startswith("local.stack")
    ]
    assert not backwards, "\n".join(backwards)


def test_the_projects_modules_import_one_another_without_a_circle():
    product = [file for file in _files() if file.split("/")[0] in ("layers", "functions", "cdk", "coupon_client")]
    modules = {_module(file): file for file in product}
    edges = {module: _edges(module, file, set(modules)) for module, file in modules.items()}
    circle = _a_circle(edges)
    assert circle is None, " -> ".join(circle or [])


def _edges(module: str, file: str, modules: set[str]) -> set[str]:
    """The project's modules ``module`` imports anywhere in its file: ``from package import sub``
    names ``package.sub`` when that is a module; a module's own packages are its parents, which
    Python imports first, not an edge of its own."""
    found = set()
    for node in ast.walk(ast.parse((ROOT / file).read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            subs = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            found |= subs or {node.module}
    parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    return {name for name in found if name in modules and name != module and name not in parents}


def _a_circle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph, or None (depth-first, three colours)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_circle_finder_finds_one():
    assert _a_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _a_circle({"a": {"b"}, "b": set()}) is None


# The handlers of the functions that count answers but do not issue: none of them carries the
# intake's service (what they import, at any depth, every import counted as the layering does).
NOT_ISSUING = ("functions.worker.app", "functions.worker.dlq", "functions.rebuild.build", "functions.rebuild.app",
               "functions.coupons.app", "functions.relay.app")  # fmt: skip
INTAKES_SERVICE = "coupon_core.domain.issuing"


def _closure(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
            todo += [*edges.get(module, ()), *(parent for parent in parents if parent in edges)]
    return seen


def test_only_the_intake_carries_its_service():
    product = [file for file in _files() if file.split("/")[0] in ("layers", "functions")]
    modules = {_module(file): file for file in product}
    edges = {module: _edges(module, file, set(modules)) for module, file in modules.items()}
    assert INTAKES_SERVICE in _closure("functions.intake.app", edges)  # the check finds what it looks for
    carrying = [handler for handler in NOT_ISSUING if INTAKES_SERVICE in _closure(handler, edges)]
    assert not carrying, f"{carrying} import {INTAKES_SERVICE}, the intake's service"
