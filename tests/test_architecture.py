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


# --- one road for every finding, one list of input kinds --------------------------------------

EMITTER = "gpulint.results.emit"
INPUT_KINDS = "gpulint.results.inputkind"


def _input_kind_names() -> set[str]:
    from gpulint.results.inputkind import InputKind

    return {kind.value for kind in InputKind}


def _findings_built(source: str) -> list[int]:
    """Lines of `source` that call `Finding(...)`."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "Finding"]


def _kind_names_used(source: str) -> list[str]:
    """Collections of two or more input kind names, and `.kind` compared with one, in `source`."""
    names = _input_kind_names()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            kinds = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names]
            if len(kinds) >= 2:
                found.append(f"{node.lineno}: {kinds}")
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "kind":
            kinds = [c.value for c in node.comparators if isinstance(c, ast.Constant) and c.value in names]
            if kinds:
                found.append(f"{node.lineno}: .kind compared with {kinds}")
    return found


def test_findings_are_built_by_the_emitter_only() -> None:
    """`Finding(...)` appears in results/emit.py only: every finding gets its severity, source,
    render and suppressions the same way."""
    built = [f"{module}:{line}" for module, path in _modules().items() if module != EMITTER
             for line in _findings_built(path.read_text(encoding="utf-8"))]
    assert built == [], "Finding built outside results/emit.py (use its Emitter):\n" + "\n".join(built)


def test_input_kinds_are_the_enum_not_names() -> None:
    """No collection of input kind names (`("chart", "kustomization")`) and no comparison of a
    `.kind` with one outside results/inputkind.py: ask the InputKind instead."""
    found = [f"{module}:{where}" for module, path in _modules().items() if module != INPUT_KINDS
             for where in _kind_names_used(path.read_text(encoding="utf-8"))]
    assert found == [], "input kinds written as names:\n" + "\n".join(found)


def test_the_checks_see_what_they_forbid() -> None:
    """The two checks above catch what they are for, and pass what they are not about."""
    sample = ("from gpulint.results import findings\n"
              "RENDERED = ('chart', 'kustomization')\n"
              "FILES = ('dockerfile', 'containerfile')\n"
              "def f(item, workload, s):\n"
              "    if item.kind == 'stdin' or workload.kind == 'DaemonSet':\n"
              "        return findings.Finding('GPU000', 'x', None, 'm', 'f', s)\n")
    assert _findings_built(sample) == [6]
    assert _kind_names_used(sample) == ["2: ['chart', 'kustomization']", "5: .kind compared with ['stdin']"]


def test_no_rule_id_is_special_cased_outside_its_rule() -> None:
    """No module of gpulint names a rule by its id (`"GPU000"`): what a rule does is declared on
    its Rule (hooks, kept_when_selecting_others, exempt_roles), in its own module under rules/."""
    from gpulint.api import RULE_ID_RE

    named = [f"{module}:{node.lineno}: {node.value}" for module, path in _modules().items()
             if not module.startswith("gpulint.rules")
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_ID_RE.match(node.value)]
    assert named == [], "rule ids written outside rules/:\n" + "\n".join(named)


# Private interpreter internals and code generated ahead of time trade maintainability for
# milliseconds: `_sre` programs and compiled code objects differ between CPython versions, and a
# generated module must be made again at every change of what it mirrors. (Decided at stop 24,
# when ahead-of-time compiled dataclass methods and regular-expression programs were proposed
# for start-up: find start-up time elsewhere.)
_PRIVATE_INTERNALS = {"_sre", "sre_compile", "sre_parse", "re._compiler", "re._parser", "marshal"}


def test_no_private_interpreter_internals_nor_generated_modules() -> None:
    offenders = []
    for path in sorted((ROOT / "gpulint").rglob("*.py")) + sorted((ROOT / "rules").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(ROOT)} imports {name}" for name in names if name in _PRIVATE_INTERNALS]
        tree = ast.parse(text)
        head = " ".join([ast.get_docstring(tree) or ""] + [line for line in text.splitlines()[:30]
                                                          if line.lstrip().startswith("#")]).lower()
        if "generated by" in head or "do not edit" in head:
            offenders.append(f"{path.relative_to(ROOT)} is generated code")
    assert offenders == [], offenders
