"""One test per fixture file: findings must match the `# expect:` markers exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, scan_json
from expectations import read

SCANNABLE = (".yaml", ".yml", ".json")


def _fixture_files() -> list[Path]:
    files = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.name.endswith(".expect"):
            continue
        if "charts" in path.relative_to(FIXTURES).parts or "kustomize" in path.relative_to(FIXTURES).parts:
            continue  # rendered through their own tests
        if path.name in ("kustomization.yaml", "kustomization.yml"):
            continue  # its directory is built (or not) by tests/test_render_safety.py
        if path.suffix in SCANNABLE or "dockerfile" in path.name.lower() or "containerfile" in path.name.lower():
            files.append(path)
    return files


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path) -> None:
    expected = read(path)
    _code, report = scan_json(*expected.args, str(path))
    found_active = sorted((f["rule"], f["line"], f["column"]) for f in report["findings"] if not f["suppressed"])
    found_suppressed = sorted((f["rule"], f["line"], f["column"]) for f in report["findings"] if f["suppressed"])
    assert found_active == expected.active, _explain(report)
    assert found_suppressed == expected.suppressed, _explain(report)


def _explain(report: dict) -> str:
    return "\n".join(f"{f['line']}:{f['column']} {f['rule']} {f['message']}" for f in report["findings"])
