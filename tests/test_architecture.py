"""The shape of the code: dependencies point one way, strategies stand alone, modules stay small.

Read from source, nothing imported. Imports under ``if TYPE_CHECKING:`` do not count (they
never run); imports inside functions do.
"""

from __future__ import annotations

import ast

from tests.support.imports import ROOT, cycles, graph

#: Layers of the core, bottom up: a package may import its own layer and the ones below.
LAYERS = {
    "explorer.errors": 0,
    "explorer.limits": 0,
    "explorer.untrusted": 0,
    "explorer.cancel": 0,
    "explorer.jobs": 0,
    "explorer.lru": 0,
    "explorer.models": 1,
    "explorer.text": 2,
    "explorer.documents": 3,
    "explorer.embedding": 4,
    "explorer.strategies": 5,
    "explorer.render": 6,
    "explorer.retrieval": 6,
    "explorer.evaluation": 7,
    "explorer.export": 8,
    "explorer.cli": 9,
}
#: Modules of ``explorer/strategies`` that are not strategies (contract, registry, shared helpers).
STRATEGY_SUPPORT = {
    "__init__",
    "base",
    "registry",
    "config",
    "context",
    "params",
    "splitting",
    "scanning",
    "separators",
    "packing",
    "markdown_packing",
    "block_split",
    "block_units",
    "lead_ins",
    "curve",
    "adapt",
    "profile",
    "invariants",
}


def _layer(module: str) -> int | None:
    for prefix, rank in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


def test_no_import_cycles():
    assert cycles(graph("explorer", "pages")) == []


def test_core_layers_point_down():
    wrong = []
    for module, deps in graph("explorer").items():
        mine = _layer(module)
        for dep in deps:
            theirs = _layer(dep)
            if mine is not None and theirs is not None and theirs > mine:
                wrong.append(f"{module} -> {dep}")
    assert wrong == []


def test_every_core_package_is_in_a_layer():
    packages = {p.parent.name for p in (ROOT / "explorer").glob("*/__init__.py")}
    assert {f"explorer.{p}" for p in packages} - set(LAYERS) == set()


def test_no_strategy_imports_another():
    g = graph("explorer")
    strategies = {
        m for m in g if m.startswith("explorer.strategies.") and m.rpartition(".")[2] not in STRATEGY_SUPPORT
    }
    assert strategies, "no strategy modules found"
    crossing = sorted(f"{m} -> {d}" for m in strategies for d in g[m] if d in strategies)
    assert crossing == []


def test_the_core_never_imports_streamlit():
    users = []
    for path in (ROOT / "explorer").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n.split(".")[0] == "streamlit" for n in names):
                users.append(str(path.relative_to(ROOT)))
    assert users == []


def test_every_core_package_says_what_it_owns_and_may_import():
    for init in (ROOT / "explorer").glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "import" in doc and len(doc) > 200, f"{init.relative_to(ROOT)} needs its paragraph"


MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
PAGE_LINES = 200


def _sources(*tops: str):
    for top in tops:
        yield from sorted((ROOT / top).rglob("*.py"))


def test_no_module_over_400_lines():
    big = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in _sources("explorer", "pages")
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert big == []


def test_no_function_over_60_lines():
    """Counted from ``def`` to the last line, docstring included (a data table is not a function)."""
    long = []
    for path in _sources("explorer", "pages"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} {n}")
    assert long == []


def test_pages_are_thin():
    """Every page file (the ones ``st.navigation`` shows) stays under ~200 lines."""
    fat = [
        f"{p.name}: {n}"
        for p in (ROOT / "pages").glob("[!_]*.py")
        if (n := len(p.read_text().splitlines())) > PAGE_LINES
    ]
    assert fat == []
