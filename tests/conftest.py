"""Shared test helpers: run the CLI in-process and read its JSON."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

if TYPE_CHECKING:
    from action_runner import Runner

# Tests never touch the user's result cache, and scan for real: a test of the cache turns it on
# (deleting GPULINT_NO_CACHE) in a folder of its own.
os.environ["XDG_CACHE_HOME"] = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"gpulint-test-cache-{os.getpid()}")
os.environ["GPULINT_NO_CACHE"] = "1"

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


def scanned(finding: dict) -> dict:
    """Where a JSON finding sits in the text gpulint read: for rendered input its `rendered` position
    (`path`/`line` are the file a user edits, the first `mapped` location), else the finding itself."""
    return finding["rendered"] or finding


def active(report: dict) -> list[tuple[str, int, int]]:
    """(rule, line, column) of the findings that are not suppressed, sorted."""
    return sorted((f["rule"], f["line"], f["column"]) for f in report["findings"] if not f["suppressed"])


# The header klog (kubectl) puts before a message: severity and date, time to the
# microsecond, process id, source line. gpulint strips it from one-line messages
# (`err="..."`) but not from multi-line ones (`err=<` ... `>`), so a failed
# `kubectl kustomize` (the corpus's remote-resource kustomization) is reported
# with a different time and pid on every run: a product bug, see
# test_jobs.py::test_the_corpus_and_a_generated_corpus_give_the_same_report.
KLOG_HEADER = re.compile(r"\b[EWIF]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [\w.]+:\d+\] ")


def mask_klog_headers(text: str) -> str:
    """`text` with every klog header replaced by a fixed one."""
    return KLOG_HEADER.sub("E0000 00:00:00.000000 0 klog.go:0] ", text)


def helm_charts(root: Path) -> list[Path]:
    """The Helm chart directories under `root` (those holding a Chart.yaml), sorted.

    Discovery makes a chart one input: every file inside it, given on the command
    line or found by walking, scans the chart (rendered with helm, or reported
    as GPU000 at its Chart.yaml when helm is missing), never the file alone.
    """
    charts = sorted(p.parent for p in root.rglob("Chart.yaml") if p.is_file())
    # gpulint scans the outermost chart of a subchart under `charts/`; the corpus
    # has no nested charts, so the chart of a file is simply its enclosing one.
    nested = [c for c in charts if any(o != c and o in c.parents for o in charts)]
    assert not nested, f"nested charts: update helm_charts/inputs_of for them: {nested}"
    return charts


def chart_of(path: Path, charts: list[Path]) -> Path | None:
    """The chart among `charts` that `path` lies in, if any."""
    return next((c for c in charts if c in path.parents), None)


def inputs_of(files: list[Path], charts: list[Path]) -> list[Path]:
    """What discovery makes of explicitly given `files`: loose files stay inputs,
    the files of a chart become that chart (once). Sorted as strings."""
    return sorted({chart_of(f, charts) or f for f in files}, key=str)


def labelled_at(finding: dict, corpus: Path) -> tuple[str, int]:
    """Where a LABELS.tsv row (path relative to `corpus`, line) for `finding` sits.

    Labels point at files a human edits. A finding on rendered output (a Helm
    chart or a kustomization, reported at `<dir> (rendered)`) is matched at the
    line it maps to: its Helm template line or its Kustomize origin. Any other
    finding sits at its own path and line.
    """
    for mapped in finding.get("mapped") or ():
        if mapped["role"] in ("template", "origin"):
            return Path(mapped["path"]).relative_to(corpus).as_posix(), mapped["line"]
    return Path(finding["path"]).relative_to(corpus).as_posix(), finding["line"]


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


@pytest.fixture(scope="session")
def committed_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This working tree committed once per session in a repository of its own: the clone
    pre-commit installs the hook from (pinned by that commit) and the Action's checkout."""
    from repo_copy import copy_as_repo

    return copy_as_repo(tmp_path_factory.mktemp("checkout") / "gpulint")


@pytest.fixture(scope="session")
def runner(tmp_path_factory: pytest.TempPathFactory, committed_checkout: Path) -> Runner:
    """The action checkout with gpulint installed by its own install step (for real, once a session)."""
    base = tmp_path_factory.mktemp("action")
    action_path = committed_checkout
    runner_temp = base / "runner-temp"
    runner_temp.mkdir()
    # What the action's cache step restores on GitHub: a warm pip cache (this machine's own).
    import subprocess
    import sys

    pip_cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True)
    if pip_cache.returncode == 0 and os.path.isdir(pip_cache.stdout.strip()):
        (runner_temp / "gpulint-pip-cache").symlink_to(pip_cache.stdout.strip())
    from action_runner import Runner

    the_runner = Runner(action_path, runner_temp)
    installed = the_runner.run(base, only=["install"])
    (step,) = installed.steps
    assert step.status == 0, step.log
    assert "Installing gpulint" in step.log
    from gpulint import __version__

    assert f"gpulint {__version__}" in step.log
    assert step.outputs["gpulint"] == str(runner_temp / "gpulint-action-venv" / "bin" / "gpulint")
    return the_runner


def rendered_from(path: str) -> tuple[str, str] | None:
    """(chart or kustomization, values) of a JSON finding's `path` on rendered output, read back from
    its name (`charts/app (rendered)`, `charts/app (rendered with ci/x.yaml)`); None for other paths.
    Reporters are given this as Finding.rendered; the tests check them against the name."""
    if path.endswith(" (rendered)"):
        return path[: -len(" (rendered)")], ""
    at = path.rfind(" (rendered with ")
    if at > 0 and path.endswith(")"):
        return path[:at], path[at + len(" (rendered with "):-1]
    return None


# The real renderers (tooling.find_tool skips, or fails with GPULINT_REQUIRE_TOOLS=1, when missing), and
# the repository root as the working directory: shared by the chart, kustomize and render tests.
@pytest.fixture
def helm() -> str:
    from tooling import find_tool   # tooling imports this module

    return find_tool("helm")


@pytest.fixture
def kustomize() -> str:
    from tooling import find_tool

    return find_tool("kustomize", "kubectl")


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    return ROOT
