"""The wheel: a non-editable install finds every rule through entry points."""

from __future__ import annotations

import ast
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import ROOT


def _rule_ids_in_source() -> list[str]:
    ids = []
    for module in sorted((ROOT / "rules").glob("*.py")):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "id" and isinstance(node.value, ast.Constant):
                ids.append(node.value.value)
    return sorted(ids)


@pytest.mark.slow
def test_wheel_install_finds_every_rule(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = dist.glob("gpulint-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True,
                   capture_output=True, cwd=tmp_path)
    proc = subprocess.run([str(env_dir / "bin" / "gpulint"), "rules"], capture_output=True, text=True,
                          cwd=tmp_path, check=True)
    listed = sorted(line.split()[0] for line in proc.stdout.splitlines()[1:])  # under the header
    assert listed == _rule_ids_in_source()
    # The rules come from the installed wheel, not from this checkout.
    where = subprocess.run([str(python), "-c", "import gpulint.rules, sys; print(gpulint.rules.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert str(env_dir) in where
    # Package data travels with the wheel.
    proc = subprocess.run([str(python), "-c", "from importlib.resources import files; "
                           "print(files('gpulint').joinpath('schemas/report.schema.json').is_file())"],
                          capture_output=True, text=True, cwd=tmp_path, check=True)
    assert proc.stdout.strip() == "True"
