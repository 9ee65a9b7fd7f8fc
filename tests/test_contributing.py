"""CONTRIBUTING.md's "Adding a rule", followed for a toy rule in a copy of the repository.

The copy gets the rule module and its fixtures as the recipe says, the recipe's
command writes the documentation pages, and then: the rule runs on its fixtures
with exactly the marked findings, `gpulint explain` prints its page, and the
files changed are the module, the fixtures and the generated pages, nothing else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from expectations import read
from repo_copy import copy_as_repo, git

RULE_ID = "GPU199"
MODULE = "rules/gpu199_latest_tag.py"
FIXTURES = f"fixtures/rules/{RULE_ID}"
GENERATE = "python scripts/gen_rule_docs.py"

TOY_RULE = '''"""
## What it does
Reports a container image pinned to the `latest` tag.

## Why is this bad
`latest` names whatever was pushed last: the GPU stack a pod runs changes under it.

## Example
```yaml
image: registry.example.com/app:latest
```

## Use instead
Pin a version tag or a digest.

## Fix
None: which version to pin is the author's choice.

## References
- Kubernetes images: https://kubernetes.io/docs/concepts/containers/images/
"""

from typing import Iterator

from gpulint.api import KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.model import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for _pod, container in workload.containers():
        if container.image is not None and container.image.endswith(":latest"):
            yield Violation("image pinned to `latest`; pin a version or digest", KeyAt(container.key_path("image")),
                            container=container)


RULE = Rule(id="GPU199", name="latest-tag", severity=Severity.WARNING,
            summary="A container image pinned to the latest tag.", doc=__doc__ or "", check=check)
'''

BAD = """apiVersion: v1
kind: Pod
metadata:
  name: toy
spec:
  containers:
  - name: app
    image: registry.example.com/app:latest  # expect: GPU199
  - name: sidecar
    image: registry.example.com/sidecar:1.2
  initContainers:
  - image: registry.example.com/init:latest  # expect: GPU199
    name: init
"""

GOOD = """apiVersion: v1
kind: Pod
metadata:
  name: toy
spec:
  containers:
  - name: app
    image: registry.example.com/app:1.2
"""


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """A command in the copy, with the copy's gpulint (and its rules package) first on the path."""
    env = {**os.environ, "PYTHONPATH": str(repo), "GPULINT_NO_CACHE": "1", "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([sys.executable, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def test_the_recipe_names_the_files_and_commands_this_test_uses() -> None:
    recipe = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for step in ("rules/gpuNNN_<name>.py", "fixtures/rules/GPUNNN/", "# expect: GPUNNN", GENERATE,
                 "docs/rules/GPUNNN.md", "docs/rules/README.md", "gpulint explain GPUNNN"):
        assert step in recipe, step


@pytest.mark.slow
def test_adding_a_rule_touches_its_module_its_fixtures_and_generated_docs_only(tmp_path: Path) -> None:
    repo = copy_as_repo(tmp_path / "repo")
    # As installed, `rules/` is the package gpulint.rules (pyproject.toml's package-dir).
    (repo / "gpulint" / "rules").symlink_to("../rules")
    with open(repo / ".git" / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write("/gpulint/rules\n")

    (repo / MODULE).write_text(TOY_RULE)
    (repo / FIXTURES).mkdir(parents=True)
    (repo / FIXTURES / "bad-latest.yaml").write_text(BAD)
    (repo / FIXTURES / "good-pinned.yaml").write_text(GOOD)
    generated = _run(repo, *GENERATE.split()[1:])
    assert generated.returncode == 0, generated.stderr

    changed = sorted(line[3:] for line in git("status", "--porcelain", "--untracked-files=all", cwd=repo).splitlines())
    assert changed == ["docs/rules/GPU199.md", "docs/rules/README.md", f"{FIXTURES}/bad-latest.yaml",
                       f"{FIXTURES}/good-pinned.yaml", MODULE]
    assert _run(repo, *GENERATE.split()[1:], "--check").returncode == 0
    assert "| [GPU199](GPU199.md) | latest-tag | warning |" in (repo / "docs/rules/README.md").read_text()

    for fixture in ("bad-latest.yaml", "good-pinned.yaml"):
        path = repo / FIXTURES / fixture
        done = _run(repo, "-m", "gpulint.cli.launch", "scan", "--format", "json", str(path))
        assert done.returncode in (0, 1), done.stderr
        findings = json.loads(done.stdout)["findings"]
        assert sorted((f["rule"], f["line"], f["column"]) for f in findings) == read(path).active
    assert read(repo / FIXTURES / "bad-latest.yaml").active == [(RULE_ID, 8, 5), (RULE_ID, 12, 5)]

    explained = _run(repo, "-m", "gpulint.cli.launch", "explain", RULE_ID)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout == (repo / "docs/rules/GPU199.md").read_text()
