"""The layout is the architecture: stages import downwards only, and nothing imports in a cycle.

Every import counts, including those inside functions and under TYPE_CHECKING:
a lazy import is a dependency all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Packages of gpulint from the top of the scan to its bottom. A package may import
# those after it, never one before it (the engine strings the stages together; the
# stages use shared knowledge, which uses the model, which uses loading). Fixes sit
# under the engine, which attaches them to findings, and over everything they read.
LAYERS = [
    "gpulint.__main__",
    "gpulint.cli",
    "gpulint.admission",
    "gpulint.scan",
    "gpulint.fix",
    "gpulint.inputs",
    "gpulint.suppress",
    "gpulint.report",
    "gpulint.render",
    "gpulint.results",
    "gpulint.rules",
    "gpulint.config",
    "gpulint.knowledge",
    "gpulint.api",
    "gpulint.model",
    "gpulint.load",
    "gpulint",
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / "gpulint").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    for path in sorted((ROOT / "rules").glob("*.py")):
        stem = path.stem
        out["gpulint.rules" if stem == "__init__" else f"gpulint.rules.{stem}"] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _layer(module: str) -> int:
    for position, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return position
    raise AssertionError(f"{module} belongs to no layer: add its package to LAYERS")


def test_every_module_belongs_to_a_layer() -> None:
    for module in _graph():
        _layer(module)


def test_imports_go_down_the_layers() -> None:
    wrong = []
    for module, targets in _graph().items():
        for target in targets:
            if target == "gpulint":   # the package itself holds only __version__
                continue
            if _layer(target) < _layer(module):
                wrong.append(f"{module} -> {target}")
    assert wrong == [], "imports that go up a layer:\n" + "\n".join(sorted(wrong))


def test_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            # A package's __init__ re-exporting its own submodules is not a cycle.
            if target.startswith(node + "."):
                continue
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
