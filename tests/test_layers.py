"""The package's shape: imports point down the layers, never in a circle, and no module grows
into a room too large to read.

Layers, bottom to top: errors/resources, law (pure), git, history, moves, doors, cli.
Every import counts, including those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gitstate"

LAYERS = {"errors": 0, "resources": 0, "law": 1, "git": 2, "history": 3,
          "moves": 4, "doors": 5, "hooks": 5, "schema": 5, "cli": 6, "runtime": 6, "mcp": 6,
          "web": 6, "__main__": 7}
MAX_LINES = 420


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The gitstate modules that `name` imports (a package's submodule when one is named)."""
    out = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("gitstate")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_package else name.split(".")[:-1]
                pkg = pkg[:len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            if not base.startswith("gitstate"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in modules else base)
    return out - {name}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else 0


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {m for m in _imports(name, path, modules) if m in modules}
            for name, path in modules.items()}


def test_every_module_has_a_layer():
    assert [m for m in _modules() if _layer(m) is None] == []


def test_imports_point_down_the_layers():
    assert _upward(_graph()) == []


def test_law_touches_neither_git_nor_files_nor_click():
    heavy = ("subprocess", "click", "pydantic", "git", "sqlite3", "pathlib")
    offenders = []
    for name, path in _modules().items():
        if not name.startswith("gitstate.law"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{name}: {n}" for n in names if n.split(".")[0] in heavy]
    assert offenders == []


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other round (Tarjan's strongly connected
    components of more than one module, or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return [f"{name} (layer {_layer(name)}) imports {target} (layer {_layer(target)})"
            for name, targets in graph.items() for target in sorted(targets)
            if _layer(target) > _layer(name)]


def test_no_import_circles():
    assert _circles(_graph()) == []


def test_the_checks_can_fail():
    """An upward import and a circle in a made-up package are both found."""
    graph = {"gitstate.law.a": {"gitstate.cli.b"}, "gitstate.cli.b": {"gitstate.cli.c"},
             "gitstate.cli.c": {"gitstate.cli.b"}}
    assert _upward(graph) == ["gitstate.law.a (layer 1) imports gitstate.cli.b (layer 6)"]
    assert _circles(graph) == [["gitstate.cli.b", "gitstate.cli.c"]]


def test_no_module_is_much_over_400_lines():
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_readme_names_every_module():
    """The module map (docs/development.md's table) has a row for each folder (or top-level
    module) that names every module in it."""
    import re
    text = (PACKAGE.parent / "docs" / "development.md").read_text(encoding="utf-8")
    table = text.split("\n| folder | what it holds | may touch |\n", 1)[1].split("\n\n", 1)[0]
    rows = [(re.findall(r"`([^`]+)`", cells[1]), set(re.findall(r"`([^`/]+\.py)`", line)))
            for line in table.splitlines()[1:] for cells in [line.split("|")]]
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        if path.name == "__init__.py":
            continue
        folder = f"{rel.parent.as_posix()}/"
        named = any((folder in heads or (folder == "gitstate/" and heads
                                         and heads[0].startswith("gitstate/")))
                    and (path.name in files or rel.as_posix() in heads)
                    for heads, files in rows)
        if not named:
            missing.append(rel.as_posix())
    assert missing == []


# A module's name is said once in the tree, except where a reason says why.
SHARED_NAMES = {
    "__init__": "a package's own module",
    "doctor": "each runtime package has the same parts (hooks, settings, doctor) as the "
              "registry names them; doors/doctor.py is the clone's own checks",
    "settings": "each runtime package has the same parts (hooks, settings, doctor)",
    "hooks": "each runtime package has the same parts; doors/hooks.py and gitstate/hooks.py "
             "are named by the shims installed in users' repositories (this version's and "
             "0.1's)",
}


def test_module_names_are_unique_unless_a_reason_says_why():
    seen: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        seen.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE.parent)))
    twice = {name: sorted(paths) for name, paths in seen.items()
             if len(paths) > 1 and name not in SHARED_NAMES}
    assert twice == {}
