"""Baselines survive reformatting, count duplicates, and are deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import active, run_cli, scan_json

ORIGINAL = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
  namespace: ml
spec:
  template:
    spec:
      containers:
      - name: trainer
        image: registry.example.com/train:1
        env:
        - name: LOG_LEVEL
          value: info
        - name: NVIDIA_VISIBLE_DEVICES
          value: all
      - name: sidecar
        image: registry.example.com/sidecar:1
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: "0"
---
apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  containers:
  - name: shell
    image: registry.example.com/shell:1
    env: [{name: NVIDIA_VISIBLE_DEVICES, value: "GPU-8f6b2d1c-1111-2222-3333-444455556666"}]
"""

# The same objects: reindented, keys and list entries reordered, lines and a
# document added above, flow style turned into block style and back, values
# requoted, and the documents swapped.
REFORMATTED = """# Reformatted by a YAML formatter, and a new ConfigMap on top.
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ml}
data: {a: b}
---
kind: Pod
apiVersion: v1
metadata: {name: debug}
spec:
    containers:
    -   image: registry.example.com/shell:1
        name: shell
        env:
        -   value: GPU-8f6b2d1c-1111-2222-3333-444455556666
            name: NVIDIA_VISIBLE_DEVICES
---
metadata:
    namespace: ml
    name: train
kind: Deployment
apiVersion: apps/v1
spec:
    template:
        spec:
            containers:
            -   name: sidecar
                env: [{name: NVIDIA_VISIBLE_DEVICES, value: '0'}]
                image: registry.example.com/sidecar:1


            -   env:
                -   {value: "all", name: NVIDIA_VISIBLE_DEVICES}
                -   name: LOG_LEVEL
                    value: debug
                image: registry.example.com/train:2
                name: trainer
"""

NEW_VIOLATION = """            -   name: new-helper
                image: registry.example.com/helper:1
                env:
                -   name: NVIDIA_VISIBLE_DEVICES
                    value: all
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "k8s").mkdir()
    return tmp_path


def _write_baseline(repo: Path, *paths: str) -> dict:
    code, out, err = run_cli("scan", "--write-baseline", str(repo / "baseline.json"), *paths)
    assert code == 0, err
    return json.loads((repo / "baseline.json").read_text())


def test_baseline_survives_reformatting_and_new_violations_still_fail(repo: Path) -> None:
    manifest = repo / "k8s" / "app.yaml"
    manifest.write_text(ORIGINAL)
    code, report = scan_json(str(manifest))
    assert (code, len(active(report))) == (1, 3)
    baseline = _write_baseline(repo, str(manifest))
    assert sum(entry["count"] for entry in baseline["entries"]) == 3

    manifest.write_text(REFORMATTED)
    code, report = scan_json("--baseline", str(repo / "baseline.json"), str(manifest))
    assert (code, active(report)) == (0, [])
    assert report["summary"]["suppressed"] == 3
    assert {f["suppression"]["kind"] for f in report["findings"]} == {"baseline"}

    manifest.write_text(REFORMATTED + NEW_VIOLATION)
    code, report = scan_json("--baseline", str(repo / "baseline.json"), str(manifest))
    assert (code, active(report)) == (1, [("GPU003", 41, 21)])
    (new,) = [f for f in report["findings"] if not f["suppressed"]]
    assert new["container"] == "new-helper"


def test_a_new_copy_of_a_baselined_finding_fails(repo: Path) -> None:
    manifest = repo / "k8s" / "app.yaml"
    manifest.write_text(ORIGINAL)
    _write_baseline(repo, str(manifest))
    # A second copy of the Pod in the same file: the same key, one more than baselined.
    pod = ORIGINAL[ORIGINAL.index("apiVersion: v1"):]
    manifest.write_text(ORIGINAL + "---\n" + pod)
    code, report = scan_json("--baseline", str(repo / "baseline.json"), str(manifest))
    assert code == 1
    assert len(active(report)) == 1
    assert report["summary"]["suppressed"] == 3


def test_baseline_file_is_sorted_deterministic_and_relative(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "k8s" / "b.yaml").write_text(ORIGINAL)
    (repo / "k8s" / "a.yaml").write_text(ORIGINAL.replace("name: train\n", "name: other\n"))
    first = _write_baseline(repo, str(repo / "k8s"))
    text = (repo / "baseline.json").read_text()
    assert first["version"] == 1
    assert [e["file"] for e in first["entries"]] == ["k8s/a.yaml"] * 3 + ["k8s/b.yaml"] * 3
    assert first["entries"][2] == {
        "container": "shell", "count": 1,
        "field_path": "spec.containers[name=shell].env[name=NVIDIA_VISIBLE_DEVICES]",
        "file": "k8s/a.yaml", "rule": "GPU003",
        "object": {"apiVersion": "v1", "kind": "Pod", "name": "debug", "namespace": None},
    }
    assert [e["object"]["name"] for e in first["entries"]] == ["other", "other", "debug",
                                                               "train", "train", "debug"]
    assert text == json.dumps(first, indent=2, sort_keys=True) + "\n"
    # Another working directory and relative paths: the same bytes, and it still applies.
    monkeypatch.chdir(repo / "k8s")
    assert run_cli("scan", "--write-baseline", "../baseline.json", ".")[0] == 0
    assert (repo / "baseline.json").read_text() == text
    code, report = scan_json("--baseline", "../baseline.json", "a.yaml", "b.yaml")
    assert (code, report["summary"]["suppressed"]) == (0, 6)


def test_write_baseline_skips_findings_already_suppressed(repo: Path) -> None:
    manifest = repo / "k8s" / "app.yaml"
    manifest.write_text(ORIGINAL.replace("        - name: NVIDIA_VISIBLE_DEVICES\n          value: all",
                                         "        - name: NVIDIA_VISIBLE_DEVICES  # gpulint: ignore[GPU003] special\n"
                                         "          value: all"))
    baseline = _write_baseline(repo, str(manifest))
    assert sorted(e["container"] for e in baseline["entries"]) == ["shell", "sidecar"]
    code, out, _err = run_cli("scan", "--write-baseline", str(repo / "baseline.json"), str(manifest))
    assert code == 0
    assert out.splitlines()[-1].endswith("3 suppressed (--show-suppressed to list).")


def test_line_based_findings_are_keyed_by_line_text(repo: Path) -> None:
    dockerfile = repo / "Dockerfile"
    dockerfile.write_text("FROM registry.example.com/base:1\n# gpulint: ignore\nENV A=1\n")
    assert scan_json(str(dockerfile))[0] == 1          # GPU091: a bare ignore
    _write_baseline(repo, str(dockerfile))
    dockerfile.write_text("# syntax=docker/dockerfile:1\nFROM registry.example.com/base:1\n\n"
                          "   #   gpulint:   ignore  \nENV A=1\n")
    code, report = scan_json("--baseline", str(repo / "baseline.json"), str(dockerfile))
    assert (code, [f["suppressed"] for f in report["findings"]]) == (0, [True])


def test_baseline_from_the_config_file_is_relative_to_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = repo / "k8s" / "app.yaml"
    manifest.write_text(ORIGINAL)
    _write_baseline(repo, str(manifest))
    (repo / ".gpulint.yaml").write_text("baseline: baseline.json\n")
    monkeypatch.chdir(repo / "k8s")
    code, report = scan_json("app.yaml")
    assert (code, report["summary"]["suppressed"]) == (0, 3)
    assert report["findings"][0]["suppression"]["reason"] == "in baseline ../baseline.json"


@pytest.mark.parametrize("content, message", [
    (None, "baseline file not found (create it with --write-baseline)"),
    ("{not json", "invalid baseline JSON"),
    ('{"version": 9, "entries": []}', "not a gpulint baseline of version 1"),
    ('{"version": 1, "entries": [{"rule": "GPU003"}]}', "entry 0 is malformed"),
    ('{"version": 1, "entries": [{"rule": "GPU003", "file": "a", "field_path": "x", "count": 0}]}',
     "entry 0 is malformed (count must be a positive integer)"),
])
def test_bad_baseline_is_a_usage_error(repo: Path, content: str | None, message: str) -> None:
    path = repo / "baseline.json"
    if content is not None:
        path.write_text(content)
    (repo / "k8s" / "app.yaml").write_text(ORIGINAL)
    code, out, err = run_cli("scan", "--baseline", str(path), str(repo / "k8s"))
    assert (code, out) == (2, "")
    assert err.startswith(f"gpulint: error: {path}")
    assert message in err


def test_incomplete_scan_writes_no_baseline(repo: Path) -> None:
    code, _out, err = run_cli("scan", "--write-baseline", str(repo / "baseline.json"), str(repo / "missing.yaml"))
    assert code == 2
    assert "not written" in err
    assert not (repo / "baseline.json").exists()


def test_unparsable_yaml_is_keyed_by_line_text_and_can_be_suppressed_inline(repo: Path) -> None:
    template = repo / "k8s" / "tpl.yaml"
    body = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }}\nspec:\n  runtimeClassName: {{ .rc }}\n"
    template.write_text(body)
    code, report = scan_json(str(template))
    # an unrendered template whose unknown runtimeClassName could hide a bypass: a warning there
    assert (code, active(report)) == (1, [("GPU011", 6, 21)])
    _write_baseline(repo, str(template))
    template.write_text("# a comment\n---\n" + body)
    code, report = scan_json("--baseline", str(repo / "baseline.json"), str(template))
    assert (code, [f["line"] for f in report["findings"] if f["suppressed"]]) == (0, [8])
    template.write_text(body.replace("spec:\n", "spec:\n  # gpulint: ignore[GPU011] rendered by CI\n"))
    code, report = scan_json(str(template))
    assert code == 0
    assert report["findings"][0]["suppression"] == {"kind": "inline", "reason": "rendered by CI"}
