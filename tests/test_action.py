"""The composite GitHub Action, run step by step in bash as the runner would.

action.yml is read with gpulint's own YAML loader; `${{ ... }}` expressions are
substituted here (only those the action may use: inputs, github.action_path,
runner.temp and earlier steps' outputs — anything else fails the test); each
`run:` is executed with GitHub's bash invocation (`bash --noprofile --norc -eo
pipefail`) and GitHub's environment files. The install step runs for real once
a session (conftest's `runner`: a virtual environment and `pip install` of a committed copy of this tree, as
the action's checkout would be); later runs in the same runner temp reuse it,
which is also what a second use of the action in one job does.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import sarif_check
from action_runner import Runner, load_action
from conftest import BAD_POD, FIXTURES, ROOT, run_cli, scan_json
from repo_copy import git

from gpulint import __version__
from gpulint.load.yamlload import Document, load_documents

BAD = BAD_POD
GOOD = BAD.replace("value: all", "value: void")


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
    # A pull request cannot disarm it: on pull requests, the base commit's configuration.
    assert action["inputs"]["trusted-configuration"]["default"] == "auto"
    assert action["inputs"]["upload-sarif"]["default"] == "auto"
    assert action["inputs"]["helm-dependency-build"]["default"] == "false"      # opt-in
    assert set(action["outputs"]) == {"sarif-file", "exit-code", "uploaded", "findings", "errors"}
    assert action["runs"]["using"] == "composite"
    for step in action["runs"]["steps"]:
        if "uses" in step:
            # The only other actions: GitHub's own upload and cache, each pinned by a commit SHA
            # (a tag can be moved; see docs/ci.md for where the SHAs come from).
            action_name, _, ref = step["uses"].partition("@")
            assert re.fullmatch(r"[0-9a-f]{40}", ref), step["uses"]
            assert action_name in ("github/codeql-action/upload-sarif", "actions/cache"), step["uses"]
            if action_name == "github/codeql-action/upload-sarif":
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
        ("Restore pip's cache", 0, False), ("Install gpulint", 0, False),
        ("Build Helm chart dependencies", 0, False), ("Scan", 0, False),
        ("Upload SARIF to code scanning", 0, False), ("Fail on findings", 1, False)], run.log
    assert run.steps[0].uses.startswith("actions/cache@")
    assert run.steps[0].with_["path"] == str(runner.runner_temp / "gpulint-pip-cache")
    assert "already installed" in run.step("Install gpulint").log
    assert "helm-dependency-build is off" in run.step("Build Helm chart dependencies").log
    upload = run.step("Upload SARIF to code scanning")
    assert upload.with_ == {"sarif_file": "gpulint.sarif", "category": "k8s-manifests"}
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text(), root=workspace)
    result_run = doc["runs"][0]
    assert result_run["automationDetails"] == {"id": "k8s-manifests/"}
    assert result_run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": workspace.resolve().as_uri() + "/"}}
    monkeypatch.chdir(workspace)
    _, report = scan_json("fixtures")
    active = [f for f in report["findings"] if not f["suppressed"]]
    errors = [f for f in active if f["severity"] == "error"]
    assert 0 < len(errors) < len(active)
    assert run.outputs == {"sarif-file": "gpulint.sarif", "exit-code": "1", "uploaded": "true",
                           "findings": str(len(active)), "errors": str(len(errors))}
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
    assert f"| [GPU003](https://github.com/gpulint/gpulint/blob/v{__version__}/docs/rules/GPU003.md) |" in summary
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
    assert run.status == 0 and len(run.steps) == 6, run.log
    assert run.outputs == {"sarif-file": "gpulint.sarif", "exit-code": "0", "uploaded": "true",
                           "findings": "0", "errors": "0"}
    doc = sarif_check.loads((workspace / "gpulint.sarif").read_text())
    assert doc["runs"][0]["results"] == []
    assert doc["runs"][0]["automationDetails"] == {"id": "gpulint/"}
    assert run.step("Scan").summary.startswith("### gpulint: no findings")


def test_the_trees_own_configuration_is_read_only_when_asked(runner: Runner, tmp_path: Path) -> None:
    """A pull request's `.gpulint.yaml` that switches the check off is not read with true."""
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": BAD, ".gpulint.yaml": "ignore: [GPU003]\n"})
    run = runner.run(workspace, {"trusted-configuration": "true"}, only=["install", "scan"])
    assert run.outputs["exit-code"] == "1", run.log
    run = runner.run(workspace, {"trusted-configuration": "false"}, only=["install", "scan"])
    assert run.outputs["exit-code"] == "0", run.log


# The base commit accepts the finding of k8s/accepted.yaml (a path, relative to the configuration's
# folder); the pull request adds a second bad pod and a configuration that switches the check off.
BASE_CONFIG = """exemptions:
  - path: k8s/accepted.yaml
    rules: [GPU003]
    reason: burn-in test on cordoned nodes
"""
PR_CONFIG = "fail-on: never\nignore: [ALL]\n"


def pull_request(tmp_path: Path, base_files: dict[str, str], head_files: dict[str, str]) -> tuple[Path, dict]:
    """A checkout of a pull request's head commit and its event (the base commit one behind)."""
    workspace = make_workspace(tmp_path / "repo", base_files)
    git("add", "-A", cwd=workspace)
    git("commit", "-qm", "base", cwd=workspace)
    base = git("rev-parse", "HEAD", cwd=workspace).strip()
    for name, text in head_files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    git("add", "-A", cwd=workspace)
    git("commit", "-qm", "head", "--allow-empty", cwd=workspace)
    return workspace, {"pull_request": {"base": {"sha": base}, "head": {"repo": {"fork": True}}}}


def scanned(run) -> list[tuple[str, str]]:
    """(rule, file) of each active (not suppressed) finding in the run's SARIF."""
    doc = sarif_check.loads(Path(run.outputs["sarif-file"]).read_text())
    return sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
                  for r in doc["runs"][0]["results"] if not r.get("suppressions"))


@pytest.mark.slow
@pytest.mark.parametrize("event_name", ["pull_request", "pull_request_target"])
def test_auto_reads_the_base_commits_configuration_on_pull_requests(runner: Runner, tmp_path: Path,
                                                                     event_name: str) -> None:
    workspace, event = pull_request(
        tmp_path, {".gpulint.yaml": BASE_CONFIG, "k8s/accepted.yaml": BAD},
        {".gpulint.yaml": PR_CONFIG, "k8s/new.yaml": BAD})
    sarif = str(tmp_path / "out.sarif")
    run = runner.run(workspace, {"sarif-file": sarif}, event=event, event_name=event_name,
                     only=["install", "scan"])
    # The base's exemption applies (its path resolved in the checkout), the pull request's bypass does not.
    assert run.outputs["exit-code"] == "1", run.log
    assert "the base commit's .gpulint.yaml" in run.log
    assert scanned(run) == [("GPU003", "k8s/new.yaml")]
    # The checkout is left as it was.
    assert git("status", "--porcelain", "--untracked-files=no", cwd=workspace) == ""


@pytest.mark.slow
def test_auto_with_no_base_configuration_uses_the_defaults(runner: Runner, tmp_path: Path) -> None:
    workspace, event = pull_request(tmp_path, {"k8s/accepted.yaml": BAD}, {".gpulint.yaml": PR_CONFIG})
    sarif = str(tmp_path / "out.sarif")
    run = runner.run(workspace, {"sarif-file": sarif}, event=event, event_name="pull_request",
                     only=["install", "scan"])
    assert run.outputs["exit-code"] == "1", run.log
    assert "the base commit has no configuration" in run.log
    assert scanned(run) == [("GPU003", "k8s/accepted.yaml")]


@pytest.mark.slow
def test_auto_finds_the_base_configuration_as_gpulint_does(runner: Runner, tmp_path: Path) -> None:
    """Nearest to the first path: a pyproject.toml [tool.gpulint] table in the scanned folder; its
    `exclude` is relative to that folder."""
    pyproject = '[project]\nname = "x"\n\n[tool.gpulint]\nexclude = ["skipped.yaml"]\n'
    workspace, event = pull_request(
        tmp_path, {".gpulint.yaml": "fail-on: never\n", "k8s/pyproject.toml": pyproject,
                   "k8s/skipped.yaml": BAD, "k8s/new.yaml": GOOD},
        {"k8s/new.yaml": BAD, "k8s/pyproject.toml": pyproject.replace('"skipped.yaml"', '"*.yaml"')})
    sarif = str(tmp_path / "out.sarif")
    run = runner.run(workspace, {"sarif-file": sarif, "paths": "k8s"}, event=event, event_name="pull_request",
                     only=["install", "scan"])
    assert run.outputs["exit-code"] == "1", run.log
    assert "the base commit's k8s/pyproject.toml" in run.log
    assert scanned(run) == [("GPU003", "k8s/new.yaml")]


@pytest.mark.slow
def test_auto_refuses_a_configuration_folder_the_pull_request_points_elsewhere(runner: Runner,
                                                                              tmp_path: Path) -> None:
    workspace, event = pull_request(
        tmp_path, {"k8s/.gpulint.yaml": BASE_CONFIG.replace("k8s/", ""), "k8s/accepted.yaml": BAD}, {})
    (tmp_path / "elsewhere").mkdir()
    shutil.rmtree(workspace / "k8s")
    (workspace / "k8s").symlink_to(tmp_path / "elsewhere")
    run = runner.run(workspace, {"paths": "k8s"}, event=event, event_name="pull_request", only=["install", "scan"])
    assert run.outputs["exit-code"] == "2", run.log
    assert "the base commit's k8s/.gpulint.yaml" in run.log
    assert "k8s, where the base commit's configuration is, is no folder of the repository" in run.log


@pytest.mark.slow
def test_auto_fetches_the_base_commit_of_a_shallow_checkout(runner: Runner, tmp_path: Path) -> None:
    origin, event = pull_request(
        tmp_path, {".gpulint.yaml": BASE_CONFIG, "k8s/accepted.yaml": BAD}, {".gpulint.yaml": PR_CONFIG})
    workspace = tmp_path / "clone"
    git("clone", "-q", "--depth=1", f"file://{origin}", str(workspace), cwd=tmp_path)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=origin)
    with pytest.raises(Exception):
        git("cat-file", "-e", event["pull_request"]["base"]["sha"] + "^{commit}", cwd=workspace)
    sarif = str(tmp_path / "out.sarif")
    run = runner.run(workspace, {"sarif-file": sarif}, event=event, event_name="pull_request",
                     only=["install", "scan"])
    assert "Fetching the base commit" in run.log
    assert run.outputs["exit-code"] == "0", run.log
    assert scanned(run) == []


def _baseline_of(tmp_path: Path, files: dict[str, str]) -> str:
    """The baseline `gpulint scan --write-baseline k8s/baseline.json k8s` writes for `files` (in k8s/)."""
    scratch = tmp_path / f"scratch-{len(files)}"
    for name, text in files.items():
        (scratch / "k8s" / name).parent.mkdir(parents=True, exist_ok=True)
        (scratch / "k8s" / name).write_text(text)
    baseline = scratch / "k8s" / "baseline.json"
    code, _, err = run_cli("scan", "--write-baseline", str(baseline), str(scratch / "k8s"))
    assert code == 0, err
    return baseline.read_text()


@pytest.mark.slow
def test_auto_reads_the_baseline_the_base_configuration_names_from_the_base_commit(runner: Runner,
                                                                                   tmp_path: Path) -> None:
    """A pull request that records its own finding in the baseline does not suppress it with that."""
    accepted = _baseline_of(tmp_path, {"accepted.yaml": BAD})
    both = _baseline_of(tmp_path, {"accepted.yaml": BAD, "new.yaml": BAD})
    assert "new.yaml" in both and "new.yaml" not in accepted
    workspace, event = pull_request(
        tmp_path, {".gpulint.yaml": "baseline: k8s/baseline.json\n", "k8s/accepted.yaml": BAD,
                   "k8s/baseline.json": accepted},
        {"k8s/new.yaml": BAD, "k8s/baseline.json": both})
    sarif = str(tmp_path / "out.sarif")
    run = runner.run(workspace, {"sarif-file": sarif}, event=event, event_name="pull_request",
                     only=["install", "scan"])
    assert "the base commit's baseline k8s/baseline.json" in run.log, run.log
    assert run.outputs["exit-code"] == "1", run.log
    assert scanned(run) == [("GPU003", "k8s/new.yaml")]
    assert git("status", "--porcelain", "--untracked-files=no", cwd=workspace) == ""
    # On a push the tree is the repository's own, baseline included.
    run = runner.run(workspace, {"sarif-file": sarif}, event={}, event_name="push", only=["install", "scan"])
    assert run.outputs["exit-code"] == "0", run.log


@pytest.mark.slow
def test_auto_with_a_baseline_the_base_commit_lacks_applies_none(runner: Runner, tmp_path: Path) -> None:
    workspace, event = pull_request(
        tmp_path, {".gpulint.yaml": "baseline: k8s/baseline.json\n", "k8s/accepted.yaml": BAD},
        {"k8s/baseline.json": _baseline_of(tmp_path, {"accepted.yaml": BAD})})
    sarif = str(tmp_path / "out.sarif")
    run = runner.run(workspace, {"sarif-file": sarif}, event=event, event_name="pull_request",
                     only=["install", "scan"])
    assert "the base commit has no k8s/baseline.json: no baseline applies" in run.log, run.log
    assert run.outputs["exit-code"] == "1", run.log
    assert scanned(run) == [("GPU003", "k8s/accepted.yaml")]


@pytest.mark.slow
def test_auto_on_other_events_reads_the_trees_configuration(runner: Runner, tmp_path: Path) -> None:
    workspace, event = pull_request(
        tmp_path, {".gpulint.yaml": BASE_CONFIG, "k8s/accepted.yaml": BAD}, {".gpulint.yaml": PR_CONFIG})
    for name in ("push", "schedule", "workflow_dispatch"):
        run = runner.run(workspace, event={}, event_name=name, only=["install", "scan"])
        assert run.outputs["exit-code"] == "0", run.log    # the tree's fail-on: never
        assert f"a {name} run: the tree's own configuration" in run.log


@pytest.mark.slow
def test_config_input_wins_over_the_base_commits(runner: Runner, tmp_path: Path) -> None:
    workspace, event = pull_request(
        tmp_path, {".gpulint.yaml": BASE_CONFIG, "k8s/accepted.yaml": BAD}, {".gpulint.yaml": PR_CONFIG})
    trusted = tmp_path / "trusted" / ".gpulint.yaml"
    trusted.parent.mkdir()
    trusted.write_text("ignore: [GPU003]\n")
    run = runner.run(workspace, {"config": str(trusted)}, event=event, event_name="pull_request",
                     only=["install", "scan"])
    assert run.outputs["exit-code"] == "0", run.log
    assert "base commit" not in run.log


@pytest.mark.slow
def test_auto_without_a_base_commit_is_an_error(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    run = runner.run(workspace, event={"pull_request": {"base": {"sha": "$(touch pwned)"}}},
                     event_name="pull_request", only=["install", "scan"])
    assert run.outputs["exit-code"] == "2", run.log
    assert "names no base commit" in run.log
    assert not (workspace / "pwned").exists()


@pytest.mark.slow
def test_fail_on_never_keeps_the_findings_in_sarif(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": BAD})
    run = runner.run(workspace, {"fail-on": "never", "sarif-file": "reports/scan/gpulint.sarif"})
    assert run.status == 0, run.log
    assert run.outputs == {"sarif-file": "reports/scan/gpulint.sarif", "exit-code": "0", "uploaded": "true",
                           "findings": "1", "errors": "1"}
    doc = sarif_check.loads((workspace / "reports" / "scan" / "gpulint.sarif").read_text())
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["GPU003"]


@pytest.mark.slow
def test_several_paths_text_log_and_no_sarif(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"a/pod.yaml": BAD, "b/pod.yaml": BAD, "c/pod.yaml": BAD})
    run = runner.run(workspace, {"paths": "a\n  b/pod.yaml ", "format": "text", "sarif-file": ""})
    assert [s.status for s in run.steps] == [0, 0, 0, 0, 0, 1], run.log
    assert run.outputs == {"sarif-file": "", "exit-code": "1", "uploaded": "false", "findings": "2",
                           "errors": "2"}
    assert run.step("Upload SARIF to code scanning").skipped
    assert not list(workspace.glob("*.sarif"))
    scan_log = run.step("Scan").log
    assert "a/pod.yaml:10:7: GPU003 [error]" in scan_log and "b/pod.yaml:10:7: GPU003" in scan_log
    assert "c/pod.yaml" not in scan_log


@pytest.mark.slow
def test_missing_path_is_an_error_with_sarif_written(runner: Runner, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    run = runner.run(workspace, {"paths": "k8s missing-dir", "format": "none"})
    assert [s.status for s in run.steps] == [0, 0, 0, 0, 0, 2], run.log
    assert run.outputs["exit-code"] == "2"
    assert run.outputs["findings"] == run.outputs["errors"] == ""       # the scan did not run to the end
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
    # As GitHub documents for upload-sarif: actions: read lets it read the run on private repositories.
    assert workflow["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    (job,) = workflow["jobs"].values()
    steps = job["steps"]
    gpulint_step = next(s for s in steps if str(s.get("uses", "")).startswith("gpulint/gpulint@"))
    ref = gpulint_step["uses"].partition("@")[2]
    assert "." in ref or re.fullmatch(r"[0-9a-f]{40}", ref), "pinned by a release tag or a commit, not a branch"
    inputs = load_action(ROOT / "action.yml")["inputs"]
    assert set(gpulint_step["with"]) <= set(inputs)
    assert gpulint_step["with"].get("upload-sarif", inputs["upload-sarif"]["default"]) in ("auto", "true")
    assert steps.index(next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))) \
        < steps.index(gpulint_step)


# --- gpulint scan --config-root, which the action passes with the base commit's configuration ---------


def test_config_root_is_where_a_copied_configurations_paths_point(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = make_workspace(tmp_path / "repo", {"k8s/accepted.yaml": BAD})
    copied = tmp_path / "temp" / ".gpulint.yaml"
    copied.parent.mkdir()
    copied.write_text(BASE_CONFIG)
    monkeypatch.chdir(checkout)
    # Beside the copy, `k8s/accepted.yaml` names nothing: the finding is active.
    code, _, _ = run_cli("scan", "--isolated", "--config", str(copied), "k8s")
    assert code == 1
    code, _, _ = run_cli("scan", "--isolated", "--config", str(copied), "--config-root", str(checkout), "k8s")
    assert code == 0


def test_config_root_holds_the_files_it_names_to_its_repository(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkout is a pull request's: a baseline symlinked out of it is refused, not read."""
    checkout = make_workspace(tmp_path / "repo", {"k8s/pod.yaml": GOOD})
    (tmp_path / "secret.json").write_text("{}")
    (checkout / "baseline.json").symlink_to(tmp_path / "secret.json")
    copied = tmp_path / "temp" / ".gpulint.yaml"
    copied.parent.mkdir()
    copied.write_text("baseline: baseline.json\n")
    monkeypatch.chdir(checkout)
    code, _, err = run_cli("scan", "--config", str(copied), "--config-root", str(checkout), "k8s")
    assert code == 2
    assert "`baseline`: baseline.json is outside the repository; --config-root names a checkout" in err, err
    code, _, err = run_cli("scan", "--config-root", str(checkout), "k8s")
    assert code == 2 and f"--config-root {checkout}: needs --config" in err, err
    code, _, err = run_cli("scan", "--config", str(copied), "--config-root", str(tmp_path / "nowhere"), "k8s")
    assert code == 2 and "no such directory" in err, err


def test_baseline_root_is_where_a_copied_baselines_paths_point(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = make_workspace(tmp_path / "repo", {"k8s/accepted.yaml": BAD})
    copied = tmp_path / "temp" / "baseline.json"
    copied.parent.mkdir()
    copied.write_text(_baseline_of(tmp_path, {"accepted.yaml": BAD}))
    monkeypatch.chdir(checkout)
    # Beside the copy, `accepted.yaml` names nothing: the finding is active.
    code, _, _ = run_cli("scan", "--baseline", str(copied), "k8s")
    assert code == 1
    code, _, _ = run_cli("scan", "--baseline", str(copied), "--baseline-root", str(checkout / "k8s"), "k8s")
    assert code == 0
    code, _, err = run_cli("scan", "--baseline-root", str(checkout / "k8s"), "k8s")
    assert code == 2 and "needs --baseline" in err, err
