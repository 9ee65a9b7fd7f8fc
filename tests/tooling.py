"""External renderers for tests, and the `# map:` markers of the chart/kustomize fixtures.

Tests that need helm or kustomize skip with the reason when the tool is absent,
so a newcomer without them still gets a green run. CI (`.ci/run`) installs them
and sets GPULINT_REQUIRE_TOOLS=1: a missing tool then fails those tests instead.

A marker `# map: GPU003 <root>/<container> <kind>` on a fixture line says a
finding of that rule, on that container of the chart or overlay `<root>` (`*`
for any), is mapped to this line; kind is `template`, `include` (the include
of a helper), `values` or `origin` (Kustomize). Mapped locations are expected
in the order template, include, values, origin.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from expectations import default_column

CI_BIN = ROOT / ".ci" / "bin"
_MARK_RE = re.compile(r"#\s*map:\s*(GPU\d{3})\s+(\S+)/(\S+)\s+(template|include|values|origin)\b")
_KIND_ORDER = {"template": 0, "include": 1, "values": 2, "origin": 3}
_ROLE = {"template": "template", "include": "template", "values": "values", "origin": "origin"}


def find_tool(*names: str) -> str:
    """The first of `names` on PATH (or in .ci/bin), else skip (or fail in CI)."""
    for name in names:
        found = shutil.which(name) or (str(CI_BIN / name) if (CI_BIN / name).is_file() else None)
        if found:
            return found
    reason = f"{' or '.join(names)} not found on PATH or in .ci/bin (`.ci/run` installs helm; see README)"
    if os.environ.get("GPULINT_REQUIRE_TOOLS") == "1":
        pytest.fail(f"GPULINT_REQUIRE_TOOLS=1 but {reason}")
    pytest.skip(reason)


def map_markers(directory: Path) -> dict[tuple[str, str, str], list[tuple[str, str, int, int]]]:
    """(rule, root, container) -> expected [(role, path relative to ROOT, line, column)]."""
    found: dict[tuple[str, str, str], list[tuple[int, str, str, int, int]]] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for match in _MARK_RE.finditer(line):
                rule, root, container, kind = match.groups()
                rel = path.relative_to(ROOT).as_posix()
                found.setdefault((rule, root, container), []).append(
                    (_KIND_ORDER[kind], _ROLE[kind], rel, number, default_column(line)))
    return {key: [item[1:] for item in sorted(items, key=lambda i: i[0])] for key, items in found.items()}


def expected_for(markers: dict, rule: str, root: str, container: str) -> list[tuple[str, str, int, int]]:
    return markers.get((rule, root, container)) or markers.get((rule, "*", container)) or []


def mapped_of(finding: dict) -> list[tuple[str, str, int, int]]:
    return [(m["role"], m["path"], m["line"], m["column"]) for m in finding["mapped"]]


def rendered_root(finding: dict) -> str:
    """`fixtures/kustomize/overlays/dev (rendered)` -> `dev`."""
    path = (finding["rendered"] or finding)["path"]
    assert path.endswith(" (rendered)"), path
    return Path(path[: -len(" (rendered)")]).name


def sleeper(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A renderer that starts a child and never finishes; each child's pid is written down
    (one line per run)."""
    pids = tmp_path / f"{name}.pids"
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! >> {pids}\nwait\n")
    script.chmod(0o755)
    return script, pids


def process_gone(pid: int) -> bool:
    """Whether process `pid` has ended (gone, or a zombie waiting for its parent)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")
