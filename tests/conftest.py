"""Shared test helpers: run the CLI in-process and read its JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpulint.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# `shared/` sits beside the repository (/work/main -> /work/shared); from a
# worktree nested one level deeper it is found further up. GPULINT_SHARED overrides.
SHARED = Path(os.environ["GPULINT_SHARED"]) if os.environ.get("GPULINT_SHARED") else next(
    (p / "shared" for p in ROOT.parents if (p / "shared").is_dir()), ROOT.parent / "shared")
CORPUS = SHARED / "corpus"

# A Pod setting NVIDIA_VISIBLE_DEVICES (its env entry at 10:7): fill in `name` and `value`.
ENV_POD = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    image: registry.example.com/app:1
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      value: {value}
"""
# A Pod that sets NVIDIA_VISIBLE_DEVICES=all (GPU003 at 10:7), shared by the CLI-level tests.
BAD_POD = ENV_POD.format(name="bad", value="all")
# The canonical clean manifest: the ACK document's own example Pod (POLICY.md §1).
ACK_EXAMPLE_POD = """apiVersion: v1
kind: Pod
metadata:
  name: tensorflow-mnist
spec:
  containers:
  - name: tensorflow-mnist
    image: registry.cn-beijing.aliyuncs.com/acs/tensorflow-mnist-sample:v1.5
    command: ["python", "tensorflow-sample-code/tfjob/docker/mnist/main.py", "--max_steps=100000"]
    resources:
      limits:
        nvidia.com/gpu: 1
    workingDir: /root
  restartPolicy: Always
"""


def run_cli(*args: str, input: str | bytes | None = None) -> tuple[int, str, str]:
    """Run gpulint in-process; returns (exit code, stdout, stderr)."""
    runner = CliRunner()
    result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
    stderr = result.stderr if result.stderr_bytes is not None else ""
    return result.exit_code, result.stdout, stderr


def scan_json(*args: str, input: str | bytes | None = None) -> tuple[int, dict]:
    code, out, err = run_cli("scan", "--format", "json", *args, input=input)
    assert code in (0, 1), f"exit {code}: {err}"
    return code, json.loads(out)


def active(report: dict) -> list[tuple[str, int, int]]:
    """(rule, line, column) of the findings that are not suppressed, sorted."""
    return sorted((f["rule"], f["line"], f["column"]) for f in report["findings"] if not f["suppressed"])


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present (it lives beside the repository, not in it)")
    return CORPUS


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    os.environ.pop("FORCE_COLOR", None)
