"""The wheel: a non-editable install finds every rule through entry points.

The install is the Action's (conftest's `runner`, one a session), not one of its own.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from action_runner import Runner


def _rule_ids_in_source() -> list[str]:
    ids = []
    for module in sorted((ROOT / "rules").glob("*.py")):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "id" and isinstance(node.value, ast.Constant):
                ids.append(node.value.value)
    return sorted(ids)


@pytest.mark.slow
def test_installed_package_finds_every_rule(runner: Runner, tmp_path: Path) -> None:
    """The Action's install step is a real `pip install` of the committed tree (a wheel built and
    installed into a virtual environment of its own): the one install the suite shares."""
    env_dir = runner.runner_temp / "gpulint-action-venv"
    python = env_dir / "bin" / "python"
    proc = subprocess.run([str(env_dir / "bin" / "gpulint"), "rules"], capture_output=True, text=True,
                          cwd=tmp_path, check=True)
    listed = sorted(line.split()[0] for line in proc.stdout.splitlines()[1:])  # under the header
    assert listed == _rule_ids_in_source()
    # The rules come from the installed package, not from this checkout, and not editable.
    where = subprocess.run([str(python), "-c", "import gpulint.rules, sys; print(gpulint.rules.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert str(env_dir) in where and "site-packages" in where
    # Package data travels with the wheel.
    proc = subprocess.run([str(python), "-c", "from importlib.resources import files; "
                           "print(files('gpulint').joinpath('schemas/report.schema.json').is_file())"],
                          capture_output=True, text=True, cwd=tmp_path, check=True)
    assert proc.stdout.strip() == "True"
