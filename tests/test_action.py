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
    summary: str = ""                      # what the step appended to $GITHUB_STEP_SUMMARY
    uses: str = ""                         # a step running another action: recorded, not run
    with_: dict[str, str] = field(default_factory=dict)
    skipped: bool = False                  # its `if:` was false


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

    @property
    def summary(self) -> str:
        return "".join(s.summary for s in self.steps)

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)


class Runner:
    """Runs a composite action's steps like the GitHub runner does."""

    def __init__(self, action_path: Path, runner_temp: Path) -> None:
        self.action_path = action_path
        self.runner_temp = runner_temp
        self.action = load_action(action_path / "action.yml")

    def run(self, workspace: Path, inputs: dict[str, str] | None = None, only: list[str] | None = None,
            event: dict | None = None, actor: str = "octocat") -> ActionRun:
        declared = self.action["inputs"]
        unknown = set(inputs or {}) - set(declared)
        assert not unknown, f"not inputs of the action: {unknown}"
        values = {name: str(spec.get("default", "")) for name, spec in declared.items()}
        values.update(inputs or {})
        steps_outputs: dict[str, dict[str, str]] = {}
        done: list[StepRun] = []
        failed = False
        for number, step in enumerate(self.action["runs"]["steps"]):
            if only is not None and step.get("id") not in only:
                continue
            assert set(step) <= {"name", "id", "shell", "env", "run", "if", "uses", "with"}, \
                f"unsupported step keys: {set(step)}"
            context = {"inputs": values, "steps": steps_outputs, "event": event or {}}
            condition = str(step.get("if", "success()"))
            if not self._condition(condition, context, failed):
                done.append(StepRun(step.get("name", ""), 0, "", {}, skipped=True, uses=step.get("uses", "")))
                continue
            if "uses" in step:  # another action (upload-sarif): what it would be given
                done.append(StepRun(step["name"], 0, "", {}, uses=step["uses"], with_={
                    k: self._substitute(str(v), context) for k, v in (step.get("with") or {}).items()}))
                continue
            assert step["shell"] == "bash"
            env = self._base_env(workspace)
            env["GITHUB_ACTOR"] = actor
            env.update({k: self._substitute(str(v), context) for k, v in (step.get("env") or {}).items()})
            output_file = self.runner_temp / f"output-{number}"
            output_file.write_text("")
            env["GITHUB_OUTPUT"] = str(output_file)
            summary_file = self.runner_temp / f"summary-{number}"
            summary_file.write_text("")
            env["GITHUB_STEP_SUMMARY"] = str(summary_file)
            script = self.runner_temp / f"step-{number}.sh"
            script.write_text(self._substitute(step["run"], context))
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                  cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
            outputs = parse_outputs(output_file.read_text())
            if "id" in step:
                steps_outputs[step["id"]] = outputs
            done.append(StepRun(step.get("name", ""), proc.returncode, proc.stdout + proc.stderr, outputs,
                                summary=summary_file.read_text()))
            failed = failed or proc.returncode != 0
        result = ActionRun(done)
        for name, spec in (self.action.get("outputs") or {}).items():
            result.outputs[name] = self._substitute(spec["value"], {"inputs": values, "steps": steps_outputs})
        return result

    def _condition(self, condition: str, context: dict, failed: bool) -> bool:
        """The `if:` forms the action uses: success() (implied), always() && steps.S.outputs.O == 'V'."""
        if condition == "success()":
            return not failed
        match = re.fullmatch(r"always\(\) && steps\.([\w-]+)\.outputs\.([\w-]+) == '([^']*)'", condition)
        assert match, f"condition the test runner does not know: {condition}"
        return context["steps"].get(match.group(1), {}).get(match.group(2), "") == match.group(3)

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
            if expr == "github.event.pull_request.head.repo.fork":   # '' outside pull requests
                value = context.get("event", {}).get("pull_request", {}).get("head", {}).get("repo", {}).get("fork")
                return "" if value is None else str(value).lower()
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
    assert set(action["inputs"]) == {"paths", "format", "fail-on", "config", "trusted-configuration", "sarif-file",
                                     "category", "upload-sarif", "helm-dependency-build"}
    assert action["inputs"]["trusted-configuration"]["default"] == "true"    # a pull request cannot disarm it
    assert action["inputs"]["upload-sarif"]["default"] == "auto"
    assert action["inputs"]["helm-dependency-build"]["default"] == "false"      # opt-in
    assert set(action["outputs"]) == {"sarif-file", "exit-code", "uploaded"}
    assert action["runs"]["using"] == "composite"
    for step in action["runs"]["steps"]:
        if "uses" in step:
            # The only other action: GitHub's own upload, at a fixed major version.
            assert step["uses"] == "github/codeql-action/upload-sarif@v3"
            assert step["if"] == "always() && steps.scan.outputs.upload == 'true'"
            continue
        assert step["shell"] == "bash"
        # Inputs reach scripts through env, never pasted into the script (injection).
        assert "${{" not in step["run"], step["name"]
    names = [step["name"] for step in action["runs"]["steps"]]
    # The upload comes before the step that fails the job on findings.
    assert names.index("Upload SARIF to code scanning") < names.index("Fail on findings")


# --- running it -----------------------------------------------------------------------------


@pytest.mark.slow
def test_fixtures_one_scan_sarif_annotations_summary_and_upload(runner: Runner, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: every shell step, with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY as the runner sets them."""
    workspace = tmp_path / "repo"
    shutil.copytree(FIXTURES, workspace / "fixtures")
    git("init", "-q", cwd=workspace)
    run = runner.run(workspace, {"paths": "fixtures", "category": "k8s-manifests"})
    assert [(s.name, s.status, s.skipped) for s in run.steps] == [
        ("Install gpulint", 0, False), ("Build Helm chart dependencies", 0, False), ("Scan", 0, False),
        ("Upload SARIF to code scanning", 0, False), ("Fail on findings", 1, False)], run.log
    assert "already installed" in run.steps[0].log
    assert "helm-dependency-build is off" in run.steps[1].log
    assert run.outputs == {"sarif-file": "gpulint.sarif", "exit-code": "1", "uploaded": "true"}
    upload = run.step("Upload SARIF to code scanning")
    assert upload.with_ == {"sarif_file": "gpulint.sarif", "category": "k8s-manifests"}
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text(), root=workspace)
    result_run = doc["runs"][0]
    assert result_run["automationDetails"] == {"id": "k8s-manifests/"}
    assert result_run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": workspace.resolve().as_uri() + "/"}}
    monkeypatch.chdir(workspace)
    _, report = scan_json("fixtures")
    active = [f for f in report["findings"] if not f["suppressed"]]
    assert len(result_run["results"]) == len(active)       # suppressed findings are no alerts
    # One scan: the annotations in the log, at most 10 errors and 10 warnings, then the word on the rest.
    scan_log = run.step("Scan").log
    assert len(re.findall(r"^::error ", scan_log, re.M)) == 10
    assert len(re.findall(r"^::warning ", scan_log, re.M)) == 10
    assert re.search(r"^::notice title=gpulint::\d+ more findings not annotated", scan_log, re.M)
    assert scan_log.count("Found ") == 1
    # ... and the job summary.
    summary = run.step("Scan").summary
    assert summary.startswith(f"### gpulint: {len(active)} findings")
    assert "| [GPU003](https://github.com/gpulint/gpulint/blob/main/docs/rules/GPU003.md) |" in summary
    assert "findings at or above the fail-on level" in run.steps[-1].log


@pytest.mark.slow
@pytest.mark.parametrize("upload, event, actor, expected", [
    ("auto", {"pull_request": {"head": {"repo": {"fork": True}}}}, "octocat", "false"),
    ("auto", {"pull_request": {"head": {"repo": {"fork": False}}}}, "octocat", "true"),
    ("auto", {}, "dependabot[bot]", "false"),
    ("false", {}, "octocat", "false"),
    ("true", {"pull_request": {"head": {"repo": {"fork": True}}}}, "octocat", "true"),
])
def test_upload_where_the_token_can_write(runner: Runner, tmp_path: Path, upload: str, event: dict, actor: str,
                                          expected: str) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    run = runner.run(workspace, {"upload-sarif": upload}, event=event, actor=actor)
    assert run.status == 0, run.log
    assert run.outputs["uploaded"] == expected
    assert run.step("Upload SARIF to code scanning").skipped is (expected == "false")


@pytest.mark.slow
def test_clean_workspace_passes(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    run = runner.run(workspace)
    assert run.status == 0 and len(run.steps) == 5, run.log
    assert run.outputs == {"sarif-file": "gpulint.sarif", "exit-code": "0", "uploaded": "true"}
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text())
    assert doc["runs"][0]["results"] == []
    assert doc["runs"][0]["automationDetails"] == {"id": "gpulint/"}
    assert run.step("Scan").summary.startswith("### gpulint: no findings")


def test_the_trees_own_configuration_is_read_only_when_asked(runner: Runner, tmp_path: Path) -> None:
    """A pull request's `.gpulint.yaml` that switches the check off is not read by default."""
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": BAD, ".gpulint.yaml": "ignore: [GPU003]\n"})
    run = runner.run(workspace, only=["install", "scan"])
    assert run.outputs["exit-code"] == "1", run.log
    run = runner.run(workspace, {"trusted-configuration": "false"}, only=["install", "scan"])
    assert run.outputs["exit-code"] == "0", run.log


@pytest.mark.slow
def test_fail_on_never_keeps_the_findings_in_sarif(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": BAD})
    run = runner.run(workspace, {"fail-on": "never", "sarif-file": "reports/scan/gpulint.sarif"})
    assert run.status == 0, run.log
    assert run.outputs == {"sarif-file": "reports/scan/gpulint.sarif", "exit-code": "0", "uploaded": "true"}
    doc = sarif_check.loads((workspace / "reports" / "scan" / "gpulint.sarif").read_text())
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["GPU003"]


@pytest.mark.slow
def test_several_paths_text_log_and_no_sarif(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"a/pod.yaml": BAD, "b/pod.yaml": BAD, "c/pod.yaml": BAD})
    run = runner.run(workspace, {"paths": "a\n  b/pod.yaml ", "format": "text", "sarif-file": ""})
    assert [s.status for s in run.steps] == [0, 0, 0, 0, 1], run.log
    assert run.outputs == {"sarif-file": "", "exit-code": "1", "uploaded": "false"}
    assert run.step("Upload SARIF to code scanning").skipped
    assert not list(workspace.glob("*.sarif"))
    scan_log = run.step("Scan").log
    assert "a/pod.yaml:10:7: GPU003 [error]" in scan_log and "b/pod.yaml:10:7: GPU003" in scan_log
    assert "c/pod.yaml" not in scan_log


@pytest.mark.slow
def test_missing_path_is_an_error_with_sarif_written(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    run = runner.run(workspace, {"paths": "k8s missing-dir", "format": "none"})
    assert [s.status for s in run.steps] == [0, 0, 0, 0, 2], run.log
    assert run.outputs["exit-code"] == "2"
    assert "::" not in run.step("Scan").log.replace("::error title=gpulint", "")   # format none: no report
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text())
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False


@pytest.mark.slow
def test_helm_dependency_build_is_opt_in_and_builds_declared_dependencies(runner: Runner, tmp_path: Path) -> None:
    from tooling import find_tool

    helm = find_tool("helm")
    chart = "apiVersion: v2\nname: {name}\nversion: 1.0.0\n"
    workspace = make_workspace(tmp_path / "repo", {
        "charts/app/Chart.yaml": chart.format(name="app") + (
            "dependencies:\n- name: lib\n  version: 1.0.0\n  repository: file://../lib\n"),
        "charts/app/templates/pod.yaml": BAD,
        "charts/lib/Chart.yaml": chart.format(name="lib"),
        "charts/lib/templates/pod.yaml": GOOD.replace("name: ", "name: lib-", 1),
    })
    path = f"{Path(helm).parent}:{os.environ['PATH']}"
    os.environ["PATH"], saved = path, os.environ["PATH"]
    try:
        off = runner.run(workspace, {"paths": "charts", "upload-sarif": "false"})
        assert not (workspace / "charts" / "app" / "charts").exists()
        on = runner.run(workspace, {"paths": "charts", "helm-dependency-build": "true", "upload-sarif": "false"})
    finally:
        os.environ["PATH"] = saved
    assert "helm-dependency-build is off" in off.step("Build Helm chart dependencies").log
    step = on.step("Build Helm chart dependencies")
    assert step.status == 0, step.log
    assert "helm dependency build charts/app" in step.log and "built the dependencies of 1 chart(s)" in step.log
    assert list((workspace / "charts" / "app" / "charts").glob("lib-1.0.0.tgz"))
    assert on.outputs["exit-code"] == "1"


# --- the documented workflow ----------------------------------------------------------------


def test_readme_workflow_uploads_sarif() -> None:
    """The documented workflow: the action uploads (upload-sarif: auto), with the permission it needs."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    workflows = [b for b in blocks if "gpulint/gpulint@" in b and "permissions:" in b]
    assert workflows, "README documents a workflow using the action"
    (doc,) = load_documents(workflows[0])
    assert isinstance(doc, Document)
    workflow = doc.data
    assert workflow["permissions"] == {"contents": "read", "security-events": "write"}
    (job,) = workflow["jobs"].values()
    steps = job["steps"]
    gpulint_step = next(s for s in steps if str(s.get("uses", "")).startswith("gpulint/gpulint@"))
    inputs = load_action(ROOT / "action.yml")["inputs"]
    assert set(gpulint_step["with"]) <= set(inputs)
    assert gpulint_step["with"].get("upload-sarif", inputs["upload-sarif"]["default"]) in ("auto", "true")
    assert steps.index(next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))) \
        < steps.index(gpulint_step)
