"""The import graph of `src/plang`: no cycle between modules, no import against the layer
order (DESIGN.md: imports point downward). Every import counts, function-local ones too,
except those under `if TYPE_CHECKING:`."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "plang"

#: top-level part of plang -> its layer; a module may import its own layer or lower ones
LAYERS = {
    "dtypes": 0, "native_build": 0, "cache_root": 0, "version": 0, "pyast": 0,
    "ir": 1, "errors": 1, "backend": 1, "pypto_core": 1,
    "target": 2,
    "passes": 3, "language": 3,
    "codegen": 4,
    "runtime": 5,
    "jit": 6, "distributed": 6,
    "debug": 7, "__init__": 7,
    "operators": 8,
    "iron": 9,
}
#: (importer part, imported part): why the layering allows it
ALLOWED_UPWARD = {
    ("codegen", "runtime"): "a kernel library links the runtime's pipe and profiling symbols "
                            "(the kernel ABI the runtime calls)",
}
#: (importer module, imported part): a single compatibility module allowed to import upward
ALLOWED_UPWARD_MODULES = {
    ("plang.ir.pass_manager", "passes"): "the reference's import path of PassManager; nothing in "
                                         "plang imports this module",
    ("plang.backend.soc", "target"): "the reference's SoC model, read from the simulated chip's "
                                     "platform geometry",
    ("plang.ir.compiled_program", "runtime"): "the reference's import path of CompiledProgram; "
                                              "nothing in plang imports this module",
    ("plang.language.distributed", "distributed"): "the reference's import path of pld "
                                                   "(pypto.language.distributed); nothing in plang "
                                                   "imports this module",
    ("plang.runtime.distributed_runner", "distributed"): "the reference's import path of "
                                                          "DistributedWorker; nothing in plang "
                                                          "imports this module",
    ("plang.ir.distributed_compiled_program", "distributed"): "the reference's import path of "
                                                              "DistributedConfig and "
                                                              "DistributedCompiledProgram; nothing in "
                                                              "plang imports this module",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    out = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the plang modules it imports."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges: set[str] = set()
        for node in _imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = package.split(".")
                if node.level:
                    base = base[:len(base) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in files else stem for a in node.names]
            edges |= {t for t in targets if t in files and t != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
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

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_imports_follow_the_layer_order():
    wrong = []
    for module, targets in import_graph().items():
        src = _part(module)
        for t in targets:
            dst = _part(t)
            if LAYERS[dst] > LAYERS[src] and (src, dst) not in ALLOWED_UPWARD \
                    and (module, dst) not in ALLOWED_UPWARD_MODULES:
                wrong.append(f"{module} -> {t}")
    assert wrong == []


def test_every_part_has_a_layer():
    assert {_part(m) for m in import_graph()} <= set(LAYERS)


def test_the_checker_sees_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
