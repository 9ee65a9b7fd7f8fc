"""The pre-commit hook: declared as pre-commit expects, and run for real by `git commit`.

The end-to-end tests install the hook the way a user does: a `.pre-commit-config.yaml`
naming this tree (committed once per session, `committed_checkout`) pinned by its
commit, `pre-commit install`, then `git commit`. pre-commit installs the hook's
environment once into a PRE_COMMIT_HOME the session shares; every later commit reuses it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BAD_POD, ROOT
from repo_copy import GIT_IDENTITY, _EMPTY_CONFIG, git
from tooling import find_tool

from gpulint.load.yamlload import Document, load_documents

BAD = BAD_POD
GOOD = BAD.replace("      value: all\n", "      value: void\n")

CHART = {
    "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    "charts/app/values.yaml": "image: nvcr.io/nvidia/pytorch:24.05-py3\nextraEnv: []\n",
    "charts/app/templates/_helpers.tpl": '{{- define "app.env" -}}\n- name: MODE\n  value: train\n{{- end }}\n',
    "charts/app/templates/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-app
spec:
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
        - name: trainer
          image: {{ .Values.image }}
          resources:
            limits:
              nvidia.com/gpu: 1
          env:
            {{- include "app.env" . | nindent 12 }}
            {{- with .Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
""",
}
KUSTOMIZE = {
    "k8s/base/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources:
            limits:
              nvidia.com/gpu: 1
          env:
            - name: MODE
              value: train
""",
    "k8s/base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
    "k8s/overlays/prod/kustomization.yaml":
        "resources:\n  - ../../base\npatches:\n  - path: env-patch.yaml\n"
        "    target:\n      kind: Deployment\n      name: trainer\n",
    # A JSON 6902 patch: no apiVersion, no kind; on its own it is "not Kubernetes".
    "k8s/overlays/prod/env-patch.yaml":
        "- op: add\n  path: /spec/template/spec/containers/0/env/-\n  value:\n    name: MODE\n    value: prod\n",
}


def _hooks() -> list:
    (doc,) = load_documents((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert isinstance(doc, Document)
    return doc.data


def _hook(hook_id: str) -> dict:
    (hook,) = [hook for hook in _hooks() if hook["id"] == hook_id]
    return hook


def test_hook_definition() -> None:
    assert [hook["id"] for hook in _hooks()] == ["gpulint", "gpulint-fix"]
    hook = _hook("gpulint")
    assert hook["name"]
    assert hook["entry"] == "gpulint scan --changed"
    assert hook["language"] == "python"
    # Every changed file: helpers, values, patches and generator inputs are what gpulint reads
    # too; --changed leaves out the files nothing reads.
    assert hook["types"] == ["file"] and "types_or" not in hook and "files" not in hook
    assert "exclude" not in hook and "exclude_types" not in hook
    assert hook["require_serial"] is True
    assert isinstance(hook["minimum_pre_commit_version"], str)
    # pre-commit runs `entry` with the file names appended: that must be a scan.
    assert hook.get("pass_filenames", True) is True


def test_hook_file_types_are_known_to_identify() -> None:
    from identify.identify import ALL_TAGS

    for hook in _hooks():
        assert set(hook.get("types", []) + hook.get("types_or", [])) <= ALL_TAGS


def test_fix_hook_definition() -> None:
    hook = _hook("gpulint-fix")
    assert hook["entry"] == "gpulint scan --fix --exit-zero"
    assert hook["language"] == "python" and hook["require_serial"] is True
    assert hook["types_or"] == ["yaml", "json"]   # Dockerfiles have no fixes
    assert hook.get("pass_filenames", True) is True


def readme_config(source: Path, rev: str, hooks: tuple[str, ...] = ()) -> str:
    """The README's `.pre-commit-config.yaml`, naming `source` at commit `rev` instead of the release,
    with `hooks` of the same repository after its `gpulint`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^```yaml\n(# \.pre-commit-config\.yaml\n.*?)^```", readme, re.S | re.M)
    block, repos = re.subn(r"(- repo: )\S+", rf"\g<1>{source}", block)
    block, revs = re.subn(r"(rev: )\S+", rf"\g<1>{rev}", block)
    assert repos == revs == 1, block
    return block + "".join(f"      - id: {hook}\n" for hook in hooks)


class Project:
    """A user's repository with the hook installed from `source` at its commit."""

    def __init__(self, path: Path, source: Path, home: Path, files: dict[str, str],
                 hooks: tuple[str, ...] = ()) -> None:
        self.path = path
        path.mkdir()
        self.env = {**os.environ, **GIT_IDENTITY, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1",
                    "GIT_CONFIG_GLOBAL": str(_EMPTY_CONFIG), "GIT_CONFIG_NOSYSTEM": "1"}
        self.env.pop("GITHUB_ACTIONS", None)
        rev = git("rev-parse", "HEAD", cwd=source).strip()
        git("init", "-q", cwd=path)
        self.write({**files, ".pre-commit-config.yaml": readme_config(source, rev, hooks)})
        git("add", "-A", cwd=path)
        git("commit", "-q", "-m", "start", cwd=path)     # before the hook is installed
        subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=path, env=self.env, check=True,
                       capture_output=True)

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            (self.path / name).parent.mkdir(parents=True, exist_ok=True)
            (self.path / name).write_text(text)

    def commit(self, files: dict[str, str]) -> subprocess.CompletedProcess:
        """Change `files` (only them), stage and commit them; what `git commit` did."""
        self.write(files)
        git("add", *files, cwd=self.path)
        staged = git("diff", "--cached", "--name-only", cwd=self.path).split()
        assert staged == sorted(files), staged
        return subprocess.run(["git", "commit", "-m", "change"], cwd=self.path, env=self.env,
                              capture_output=True, text=True, timeout=900)

    def head_message(self) -> str:
        return git("log", "-1", "--format=%s", cwd=self.path).strip()


@pytest.fixture(scope="session")
def precommit_home(tmp_path_factory: pytest.TempPathFactory, committed_checkout: Path) -> Path:
    """One pre-commit environment for the session: the first commit installs the hook into it."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path, committed_checkout: Path, precommit_home: Path) -> Project:
    find_tool("helm")
    find_tool("kustomize", "kubectl")
    return Project(tmp_path / "project", committed_checkout, precommit_home, {**CHART, **KUSTOMIZE})


def _blocked(done: subprocess.CompletedProcess, project: Project, location: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert project.head_message() == "start", "the commit went in"
    assert "gpulint" in output and "Failed" in output, output
    assert f"{location}: GPU003 [error] NVIDIA_VISIBLE_DEVICES=all" in output, output


@pytest.mark.slow
def test_commit_changing_only_a_helper_template_is_blocked(project: Project) -> None:
    done = project.commit({"charts/app/templates/_helpers.tpl":
                           '{{- define "app.env" -}}\n- name: MODE\n  value: train\n'
                           "- name: NVIDIA_VISIBLE_DEVICES\n  value: all\n{{- end }}\n"})
    _blocked(done, project, "charts/app/templates/_helpers.tpl:4:3")


@pytest.mark.slow
def test_commit_changing_only_a_values_file_is_blocked(project: Project) -> None:
    done = project.commit({"charts/app/values.yaml": "image: nvcr.io/nvidia/pytorch:24.05-py3\n"
                           "extraEnv:\n  - name: NVIDIA_VISIBLE_DEVICES\n    value: all\n"})
    output = done.stdout + done.stderr
    _blocked(done, project, "charts/app/templates/deployment.yaml:21:13")
    assert "values key extraEnv[0] at charts/app/values.yaml:3:5" in output, output


@pytest.mark.slow
def test_commit_changing_only_a_kustomize_patch_is_blocked(project: Project) -> None:
    done = project.commit({"k8s/overlays/prod/env-patch.yaml":
                           KUSTOMIZE["k8s/overlays/prod/env-patch.yaml"].replace("name: MODE", "name: NVIDIA_VISIBLE_DEVICES")
                           .replace("value: prod", "value: all")})
    _blocked(done, project, "k8s/overlays/prod/env-patch.yaml:4:5")


@pytest.mark.slow
def test_commit_of_clean_changes_and_unread_files_goes_in(project: Project) -> None:
    done = project.commit({"README.md": "# ops\n", "k8s/overlays/prod/env-patch.yaml":
                           KUSTOMIZE["k8s/overlays/prod/env-patch.yaml"].replace("value: prod", "value: staging")})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout + done.stderr
    assert project.head_message() == "change"


@pytest.mark.slow
def test_commit_of_a_bad_manifest_is_blocked_then_the_fix_goes_in(project: Project) -> None:
    done = project.commit({"pod.yaml": BAD})
    _blocked(done, project, "pod.yaml:10:7")
    fixed = project.commit({"pod.yaml": GOOD})
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


@pytest.mark.slow
def test_fix_hook_changes_the_file_then_the_commit_goes_in(tmp_path: Path, committed_checkout: Path,
                                                            precommit_home: Path) -> None:
    """`gpulint-fix` adds the missing limit: pre-commit fails because the file changed, then passes."""
    project = Project(tmp_path / "project", committed_checkout, precommit_home, {"README.md": "# ops\n"},
                      hooks=("gpulint-fix",))
    request_only = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p  # keep\nspec:\n  containers:\n  - name: app\n"
                    "    image: registry.example.com/app:1\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n")
    failed = project.commit({"pod.yaml": request_only})
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "files were modified by this hook" in failed.stdout + failed.stderr
    assert (project.path / "pod.yaml").read_text() == request_only + "      limits:\n        nvidia.com/gpu: 1\n"
    assert project.head_message() == "start"
    fixed = project.commit({"pod.yaml": (project.path / "pod.yaml").read_text()})
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert project.head_message() == "change"
