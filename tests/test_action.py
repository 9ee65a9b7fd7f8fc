"""The composite GitHub Action, run step by step in bash as the runner would.

action.yml is read with gpulint's own YAML loader; `${{ ... }}` expressions are
substituted here (only those the action may use: inputs, github.action_path,
runner.temp and earlier steps' outputs — anything else fails the test); each
`run:` is executed with GitHub's bash invocation (`bash --noprofile --norc -eo
pipefail`) and GitHub's environment files. The install step runs for real once
(a virtual environment and `pip install` of a committed copy of this tree, as
the action's checkout would be); later runs in the same runner temp reuse it,
which is also what a second use of the action in one job does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sarif_check
from conftest import BAD_POD, FIXTURES, ROOT, scan_json
from repo_copy import copy_as_repo, git

from gpulint.load.yamlload import Document, load_documents

BAD = BAD_POD
GOOD = BAD.replace("value: all", "value: void")
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load_action(path: Path) -> dict:
    (doc,) = load_documents(path.read_text(encoding="utf-8"))
    assert isinstance(doc, Document)
    return doc.data


@dataclass
class StepRun:
    name: str
    status: int
    log: str
    outputs: dict[str, str]


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> int:
        """The action's result: the status of the step that stopped it, else 0."""
        return next((s.status for s in self.steps if s.status != 0), 0)

    @property
    def log(self) -> str:
        return "".join(s.log for s in self.steps)


class Runner:
    """Runs a composite action's steps like the GitHub runner does."""

    def __init__(self, action_path: Path, runner_temp: Path) -> None:
        self.action_path = action_path
        self.runner_temp = runner_temp
        self.action = load_action(action_path / "action.yml")

    def run(self, workspace: Path, inputs: dict[str, str] | None = None, only: list[str] | None = None) -> ActionRun:
        declared = self.action["inputs"]
        unknown = set(inputs or {}) - set(declared)
        assert not unknown, f"not inputs of the action: {unknown}"
        values = {name: str(spec.get("default", "")) for name, spec in declared.items()}
        values.update(inputs or {})
        steps_outputs: dict[str, dict[str, str]] = {}
        done: list[StepRun] = []
        for number, step in enumerate(self.action["runs"]["steps"]):
            if only is not None and step.get("id") not in only:
                continue
            assert set(step) <= {"name", "id", "shell", "env", "run"}, f"unsupported step keys: {set(step)}"
            assert step["shell"] == "bash"
            context = {"inputs": values, "steps": steps_outputs}
            env = self._base_env(workspace)
            env.update({k: self._substitute(str(v), context) for k, v in (step.get("env") or {}).items()})
            output_file = self.runner_temp / f"output-{number}"
            output_file.write_text("")
            env["GITHUB_OUTPUT"] = str(output_file)
            script = self.runner_temp / f"step-{number}.sh"
            script.write_text(self._substitute(step["run"], context))
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                  cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
            outputs = parse_outputs(output_file.read_text())
            if "id" in step:
                steps_outputs[step["id"]] = outputs
            done.append(StepRun(step.get("name", ""), proc.returncode, proc.stdout + proc.stderr, outputs))
            if proc.returncode != 0:
                break   # later steps are skipped (the action uses no `if:`)
        result = ActionRun(done)
        for name, spec in (self.action.get("outputs") or {}).items():
            result.outputs[name] = self._substitute(spec["value"], {"inputs": values, "steps": steps_outputs})
        return result

    def _base_env(self, workspace: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
        env.update({
            "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": str(self.action_path), "RUNNER_TEMP": str(self.runner_temp),
            "NO_COLOR": "1",
        })
        return env

    def _substitute(self, text: str, context: dict) -> str:
        def value(match: re.Match) -> str:
            expr = match.group(1)
            if expr == "github.action_path":
                return str(self.action_path)
            if expr == "runner.temp":
                return str(self.runner_temp)
            parts = expr.split(".")
            if parts[0] == "inputs" and len(parts) == 2:
                return context["inputs"][parts[1]]
            if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
                return context["steps"].get(parts[1], {}).get(parts[3], "")
            raise AssertionError(f"expression the test runner does not know: {expr}")
        return _EXPR.sub(value, text)


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT: `name=value` lines and `name<<DELIMITER` blocks."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            outputs[name] = "\n".join(block)
        elif line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """The action checkout with gpulint installed by its own install step (for real, once)."""
    base = tmp_path_factory.mktemp("action")
    action_path = copy_as_repo(base / "action-checkout")
    runner_temp = base / "runner-temp"
    runner_temp.mkdir()
    the_runner = Runner(action_path, runner_temp)
    installed = the_runner.run(base, only=["install"])
    (step,) = installed.steps
    assert step.status == 0, step.log
    assert "Installing gpulint" in step.log
    from gpulint import __version__

    assert f"gpulint {__version__}" in step.log
    assert step.outputs["gpulint"] == str(runner_temp / "gpulint-action-venv" / "bin" / "gpulint")
    return the_runner


def make_workspace(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


# --- the action's declaration ------------------------------------------------------------


def test_action_declares_inputs_outputs_and_bash_steps() -> None:
    action = load_action(ROOT / "action.yml")
    assert set(action["inputs"]) == {"paths", "format", "fail-on", "config", "sarif-file", "category"}
    assert set(action["outputs"]) == {"sarif-file", "exit-code"}
    assert action["runs"]["using"] == "composite"
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash"
        # Inputs reach scripts through env, never pasted into the script (injection).
        assert "${{" not in step["run"], step["name"]


# --- running it -----------------------------------------------------------------------------


@pytest.mark.slow
def test_fixtures_fail_the_step_and_still_write_sarif(runner: Runner, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = tmp_path / "repo"
    shutil.copytree(FIXTURES, workspace / "fixtures")
    git("init", "-q", cwd=workspace)
    run = runner.run(workspace, {"paths": "fixtures", "category": "k8s-manifests"})
    assert [s.status for s in run.steps] == [0, 0, 1], run.log
    assert "already installed" in run.steps[0].log
    assert run.outputs == {"sarif-file": "gpulint.sarif", "exit-code": "1"}
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text())
    result_run = doc["runs"][0]
    assert result_run["automationDetails"] == {"id": "k8s-manifests/"}
    assert result_run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": workspace.resolve().as_uri() + "/"}}
    monkeypatch.chdir(workspace)
    _, report = scan_json("fixtures")
    # A finding on rendered Helm/Kustomize output is located at its first mapped (repository) file.
    primary = [f["mapped"][0] if f["mapped"] else f for f in report["findings"]]
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                   r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in result_run["results"]) == \
        sorted((f["rule"], p["path"], p["line"]) for f, p in zip(report["findings"], primary))
    # format: github (the default) annotates the job log.
    scan_log = run.steps[1].log
    assert re.search(r"^::error file=fixtures/core/flow-style\.yaml,line=3,", scan_log, re.M)
    assert "findings at or above the fail-on level" in run.steps[2].log


@pytest.mark.slow
def test_clean_workspace_passes(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    run = runner.run(workspace)
    assert run.status == 0 and len(run.steps) == 3, run.log
    assert run.outputs == {"sarif-file": "gpulint.sarif", "exit-code": "0"}
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text())
    assert doc["runs"][0]["results"] == []
    assert doc["runs"][0]["automationDetails"] == {"id": "gpulint/"}


@pytest.mark.slow
def test_fail_on_never_keeps_the_findings_in_sarif(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": BAD})
    run = runner.run(workspace, {"fail-on": "never", "sarif-file": "reports/scan/gpulint.sarif"})
    assert run.status == 0, run.log
    assert run.outputs == {"sarif-file": "reports/scan/gpulint.sarif", "exit-code": "0"}
    doc = sarif_check.loads((workspace / "reports" / "scan" / "gpulint.sarif").read_text())
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["GPU003"]


@pytest.mark.slow
def test_several_paths_text_log_and_no_sarif(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"a/pod.yaml": BAD, "b/pod.yaml": BAD, "c/pod.yaml": BAD})
    run = runner.run(workspace, {"paths": "a\n  b/pod.yaml ", "format": "text", "sarif-file": ""})
    assert [s.status for s in run.steps] == [0, 0, 1], run.log
    assert run.outputs == {"sarif-file": "", "exit-code": "1"}
    assert not list(workspace.glob("*.sarif"))
    scan_log = run.steps[1].log
    assert "a/pod.yaml:10:7: GPU003 [error]" in scan_log and "b/pod.yaml:10:7: GPU003" in scan_log
    assert "c/pod.yaml" not in scan_log


@pytest.mark.slow
def test_missing_path_is_an_error_with_sarif_written(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    run = runner.run(workspace, {"paths": "k8s missing-dir", "format": "none"})
    assert [s.status for s in run.steps] == [0, 0, 2], run.log
    assert run.outputs["exit-code"] == "2"
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text())
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False


# --- the documented workflow ----------------------------------------------------------------


def test_readme_workflow_uploads_sarif_always() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    workflows = [b for b in blocks if "upload-sarif" in b]
    assert workflows, "README documents a workflow that uploads the SARIF"
    (doc,) = load_documents(workflows[0])
    assert isinstance(doc, Document)
    workflow = doc.data
    assert workflow["permissions"]["security-events"] == "write"
    (job,) = workflow["jobs"].values()
    steps = job["steps"]
    gpulint_step = next(s for s in steps if str(s.get("uses", "")).startswith("gpulint/gpulint@"))
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    assert steps.index(gpulint_step) < steps.index(upload)
    assert upload["if"] == "always()"
    assert upload["with"]["sarif_file"] == gpulint_step["with"]["sarif-file"]
    assert upload["with"]["category"] == gpulint_step["with"]["category"]
    assert set(gpulint_step["with"]) <= set(load_action(ROOT / "action.yml")["inputs"])
