"""Runs the composite GitHub Action's steps in bash as the runner would (see test_action.py).

Shared by the Action's tests and test_packaging.py through conftest's session-scoped
`runner` fixture: the action's install step runs once a session.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from gpulint.load.yamlload import Document, load_documents

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
            event: dict | None = None, actor: str = "octocat", event_name: str = "push") -> ActionRun:
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
            context = {"inputs": values, "steps": steps_outputs, "event": event or {}, "event_name": event_name}
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
            if expr == "runner.os":
                return "Linux"
            if expr == "github.action_ref":   # the ref the workflow's `uses:` names
                return "v0.1.0"
            parts = expr.split(".")
            if parts[0] == "inputs" and len(parts) == 2:
                return context["inputs"][parts[1]]
            if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
                return context["steps"].get(parts[1], {}).get(parts[3], "")
            if expr == "github.event_name":
                return context["event_name"]
            if expr == "github.event.pull_request.base.sha":   # '' outside pull requests
                return str(context.get("event", {}).get("pull_request", {}).get("base", {}).get("sha", ""))
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
