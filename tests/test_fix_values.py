"""`--fix` in a Helm chart's values file: a fix of a rendered object whose values are written
literally in the chart's values.yaml (or a --values file in the repository) is made there, as a
scalar replaced or as entries added, deleted or renamed in a subtree the template copies whole
(toYaml); it is verified by rendering the chart again with the edited values, and left out when
the render is not what the same fix in a plain file makes; anything else keeps "no fix" and
says why."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli, scan_json

from gpulint.fix.resolve import NO_FIX_TEMPLATE

CHARTS = FIXTURES / "fixes" / "charts"
CHART = CHARTS / "gpu102-values"
NONE_IS_NOT_HIDDEN = str(FIXTURES / "rules" / "GPU003" / "none-is-not-hidden.gpulint.yaml")
pytestmark = pytest.mark.usefixtures("helm")   # the real helm (GPULINT_REQUIRE_TOOLS=1: it must be there)


def _copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / CHART.name
    shutil.copytree(CHART, target, ignore=shutil.ignore_patterns("*.fixed"))
    monkeypatch.chdir(tmp_path)
    return target


def test_the_fix_is_a_text_edit_of_the_values_scalar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copy(tmp_path, monkeypatch)
    _code, report = scan_json("--select", "GPU102", CHART.name)
    found = [(f["path"], f["line"], f["column"], f["container"], f["fix"]) for f in report["findings"]]
    edit = {"applicability": "safe", "title": "make the nvidia.com/gpu request equal to its limit",
            "path": "gpu102-values/values.yaml"}
    assert found == [
        ("gpu102-values/templates/jobs.yaml", 14, 15, "trainer",
         {**edit, "edits": [{"line": 5, "column": 14, "end_line": 5, "end_column": 15, "text": "1"}]}),
        ("gpu102-values/templates/jobs.yaml", 31, 15, "worker",     # single quotes kept
         {**edit, "edits": [{"line": 8, "column": 18, "end_line": 8, "end_column": 21, "text": "'2'"}]}),
        ("gpu102-values/templates/jobs.yaml", 38, 15, "sidecar",    # `add .Values.sidecar.request 1`
         {"applicability": None, "title": NO_FIX_TEMPLATE, "edits": []}),
    ]


def test_golden_fix_and_a_second_fix_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _copy(tmp_path, monkeypatch)
    template = (chart / "templates" / "jobs.yaml").read_bytes()
    code, _out, err = run_cli("scan", "--fix", "--select", "GPU102", CHART.name)
    assert code == 1
    assert "gpulint: 2 fixed, 1 remaining" in err
    assert (chart / "values.yaml").read_bytes() == (CHART / "values.yaml.fixed").read_bytes()
    assert (chart / "templates" / "jobs.yaml").read_bytes() == template
    _code, report = scan_json("--select", "GPU102", CHART.name)
    assert [(f["line"], f["container"], f["fix"]["title"]) for f in report["findings"]] == \
        [(38, "sidecar", NO_FIX_TEMPLATE)]
    code, _out, err = run_cli("scan", "--fix", "--select", "GPU102", CHART.name)
    assert code == 1
    assert "gpulint: 0 fixed, 1 remaining" in err
    assert (chart / "values.yaml").read_bytes() == (CHART / "values.yaml.fixed").read_bytes()


def test_diff_shows_the_values_file_and_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = _copy(tmp_path, monkeypatch)
    before = (chart / "values.yaml").read_bytes()
    code, out, err = run_cli("scan", "--diff", "--select", "GPU102", CHART.name)
    assert code == 1
    assert (chart / "values.yaml").read_bytes() == before
    assert out == (
        "--- a/gpu102-values/values.yaml\n"
        "+++ b/gpu102-values/values.yaml\n"
        "@@ -2,10 +2,10 @@\n"
        " trainer:\n"
        "   image: registry.example.com/trainer:1.4\n"
        "   gpu:\n"
        "-    request: 2   # asked for two\n"
        "+    request: 1   # asked for two\n"
        "     limit: 1\n"
        " worker:\n"
        "-  gpu: {request: '4', limit: \"2\"}\n"
        "+  gpu: {request: '2', limit: \"2\"}\n"
        " # The sidecar's request goes through a template function: no fix.\n"
        " sidecar:\n"
        "   request: 1\n")
    assert "gpulint: 2 fixes in 1 file would be applied" in err


def test_a_values_key_read_in_two_places_has_its_fixes_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One key feeds two containers with different limits: fixing it for one changes the other, which
    the render with the edited values shows (it is not what the fix makes of the object in a plain
    file); both fixes are left out with a note saying so, and the file stays as it is."""
    chart = tmp_path / "shared"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: shared\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("gpu:\n  request: 2\n  limit: 1\n  big: 3\n")
    (chart / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: shared\nspec:\n  containers:\n"
        "    - name: a\n      image: i\n      resources:\n"
        "        requests: {nvidia.com/gpu: {{ .Values.gpu.request }}}\n"
        "        limits: {nvidia.com/gpu: {{ .Values.gpu.limit }}}\n"
        "    - name: b\n      image: i\n      resources:\n"
        "        requests: {nvidia.com/gpu: {{ .Values.gpu.request }}}\n"
        "        limits: {nvidia.com/gpu: {{ .Values.gpu.big }}}\n")
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("scan", "--fix", "--select", "GPU102", "shared")
    assert code == 1
    assert (chart / "values.yaml").read_text() == "gpu:\n  request: 2\n  limit: 1\n  big: 3\n"
    said = ("shared/values.yaml:2:12: the fix of GPU102 was left out: no fix: the chart rendered with the edited "
            "values differs from the fixed object at spec.containers[{other}].resources.requests.nvidia.com/gpu of "
            "Pod shared (the values are read elsewhere too, or written otherwise than the template reads them)")
    assert said.format(other=1) in err and said.format(other=0) in err
    assert "internal error" not in err
    assert "gpulint: 0 fixed, 2 remaining" in err


# --- fixes that add, delete or rename entries of a subtree the template copies whole ----------------------

# (chart, extra arguments, the values file fixed, findings: rule, template, line, column, container,
# applicability, edits of the values file as (line, column, end line, end column, text))
GOLDEN = [
    ("toyaml-resources", (), "values.yaml", [
        ("GPU101", "templates/trainer.yaml", 19, 13, "trainer", "safe",       # `{{- with }}` + toYaml
         [(7, 15, 7, 15, "\n    limits:\n      nvidia.com/gpu: 2")]),
        ("GPU104", "templates/worker.yaml", 17, 11, "worker", "unsafe",       # `resources: {{- toYaml ... }}`
         [(10, 24, 10, 41, "'nvidia.com/gpu'")]),                             # in flow style, quotes kept
    ]),
    ("toyaml-env", ("--config", NONE_IS_NOT_HIDDEN), "values.yaml", [
        ("GPU005", "templates/notebook.yaml", 8, 7, "notebook", "unsafe",
         [(15, 42, 15, 42, "\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: void")]),
        ("GPU003", "templates/sidecar.yaml", 10, 9, "sidecar", "unsafe",     # `none` := `void` through a chart
         [(20, 14, 20, 20, "'void'")]),
        ("GPU003", "templates/trainer.yaml", 10, 9, "trainer", "unsafe",     # the entry deleted, a limit added
         [(5, 1, 7, 1, ""), (11, 15, 11, 15, "\n    limits:\n      nvidia.com/gpu: 2")]),
    ]),
    ("toyaml-security", (), "values.yaml", [
        ("GPU007", "templates/exporter.yaml", 7, 3, None, "unsafe", [(11, 1, 12, 1, "")]),   # `{{- if }}` guard
        ("GPU006", "templates/trainer.yaml", 13, 9, "trainer", "unsafe", [(7, 1, 8, 1, "")]),
    ]),
    ("given-values", ("--values", "given-values/values-prod.yaml"), "values-prod.yaml", [   # overrides values.yaml
        ("GPU101", "templates/job.yaml", 13, 13, "trainer", "safe", [(5, 13, 5, 13, "\n  limits:\n    nvidia.com/gpu: 4")]),
    ]),
]


@pytest.mark.parametrize(("name", "args", "values", "findings"), GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_values_fix(name: str, args: tuple, values: str, findings: list, helm: str, tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    source = CHARTS / name
    chart = tmp_path / name
    shutil.copytree(source, chart, ignore=shutil.ignore_patterns("*.fixed"))
    monkeypatch.chdir(tmp_path)
    templates = {path: path.read_bytes() for path in (chart / "templates").iterdir()}
    code, report = scan_json(*args, name)
    assert code == 1
    assert [(f["rule"], f["path"], f["line"], f["column"], f["container"], f["fix"]["applicability"],
             f["fix"]["path"], [(e["line"], e["column"], e["end_line"], e["end_column"], e["text"])
                                for e in f["fix"]["edits"]]) for f in report["findings"]] == \
        [(rule, f"{name}/{template}", line, column, container, applicability, f"{name}/{values}", edits)
         for rule, template, line, column, container, applicability, edits in findings]
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", *args, name)
    assert (code, err.splitlines()[-1]) == (0, f"gpulint: {len(findings)} fixed, 0 remaining"), err
    assert (chart / values).read_bytes() == (source / f"{values}.fixed").read_bytes()
    assert {path: path.read_bytes() for path in (chart / "templates").iterdir()} == templates
    for other in chart.glob("*.yaml"):
        if other.name != values:
            assert other.read_bytes() == (source / other.name).read_bytes()
    given = [arg for pair in zip(args[::2], args[1::2]) if pair[0] == "--values" for arg in pair]
    rendered = subprocess.run([helm, "template", "x", name, *given], capture_output=True, text=True, timeout=60)
    assert rendered.returncode == 0, rendered.stderr
    code, report = scan_json(*args, name)
    assert (code, report["findings"]) == (0, [])
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", *args, name)
    assert (code, err.splitlines()[-1]) == (0, "gpulint: 0 fixed, 0 remaining")
    assert (chart / values).read_bytes() == (source / f"{values}.fixed").read_bytes()


# A delete whose template is not guarded renders `null` where the plain fix removes the key; a value
# taken from a list by index, and one given with --set, have no fix.
_NO_FIX_VALUES = """trainer:
  resources:
    limits: {nvidia.com/gpu: 1}
  securityContext:
    privileged: true
runtimeClassName: nvidia
devices: [none]
"""
_NO_FIX_TEMPLATE = """apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
    - name: trainer
      image: registry.example.com/trainer:1.4
      resources: {{- toYaml .Values.trainer.resources | nindent 8 }}
      securityContext: {{- toYaml .Values.trainer.securityContext | nindent 8 }}
---
apiVersion: v1
kind: Pod
metadata:
  name: exporter
spec:
  containers:
    - name: exporter
      image: registry.example.com/exporter:0.3
      env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: {{ index .Values.devices 0 }}
---
apiVersion: v1
kind: Pod
metadata:
  name: idle
spec:
  runtimeClassName: {{ .Values.runtimeClassName }}
  containers:
    - name: idle
      image: registry.example.com/idle:1
"""


def test_a_values_fix_the_template_renders_otherwise_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = tmp_path / "nf"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: nf\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(_NO_FIX_VALUES)
    (chart / "templates" / "pods.yaml").write_text(_NO_FIX_TEMPLATE)
    monkeypatch.chdir(tmp_path)
    _code, report = scan_json("--config", NONE_IS_NOT_HIDDEN, "nf")
    assert [(f["rule"], f["line"], f["column"], f["fix"]["title"], f["fix"].get("path")) for f in report["findings"]] == [
        ("GPU006", 10, 7, "delete privileged: true (the GPU limit gives the container its GPUs)", "nf/values.yaml"),
        ("GPU003", 21, 11, NO_FIX_TEMPLATE, None),          # `index .Values.devices 0`: a list item by index
        ("GPU007", 29, 3, "delete runtimeClassName nvidia: no container requests a GPU", "nf/values.yaml"),
    ]
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", "--config", NONE_IS_NOT_HIDDEN, "nf")
    assert code == 1
    assert (chart / "values.yaml").read_text() == _NO_FIX_VALUES
    tail = "(the values are read elsewhere too, or written otherwise than the template reads them)"
    assert err.splitlines() == [
        "gpulint: nf/values.yaml:4:1: the fix of GPU006 was left out: no fix: the chart rendered with the edited "
        f"values differs from the fixed object at spec.containers[0].securityContext of Pod trainer {tail}",
        "gpulint: nf/values.yaml:6:1: the fix of GPU007 was left out: no fix: the chart rendered with the edited "
        f"values differs from the fixed object at spec.runtimeClassName of Pod idle {tail}",
        "gpulint: 0 fixed, 3 remaining",
    ]


def test_a_value_given_with_set_has_no_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CHARTS / "toyaml-resources", tmp_path / "toyaml-resources", ignore=shutil.ignore_patterns("*.fixed"))
    monkeypatch.chdir(tmp_path)
    _code, report = scan_json("--set", "worker.resources.limits.nvidia\\.com/gpus=1", "toyaml-resources")
    assert [(f["rule"], f["line"], f["fix"]["title"], f["fix"].get("path")) for f in report["findings"]] == [
        ("GPU101", 19, "add nvidia.com/gpu to resources.limits, equal to the request", "toyaml-resources/values.yaml"),
        ("GPU104", 17, "no fix: the value is given on the command line "
                       "(--set worker.resources.limits.nvidia\\.com/gpus=1)", None),
    ]


def test_a_values_file_outside_the_repository_is_not_edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """prod.yaml beside the chart, no git work tree: the chart's repository is the chart (the scan root)."""
    _copy(tmp_path, monkeypatch)
    (tmp_path / "prod.yaml").write_text("trainer:\n  gpu:\n    request: 3\n")
    _code, report = scan_json("--select", "GPU102", "--values", "prod.yaml", CHART.name)
    found = {(f["line"], f["container"]): f["fix"] for f in report["findings"]}
    assert found[(14, "trainer")] == {"applicability": None, "title": NO_FIX_TEMPLATE, "edits": []}
    assert found[(31, "worker")]["path"] == "gpu102-values/values.yaml"


def test_sarif_carries_the_values_fix_and_rdjson_does_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SARIF fix may change another artifact than the result's location (SARIF 2.1.0 §3.55.2): the
    values file's edits are its artifact change. An rdjson suggestion is in its diagnostic's file: none."""
    import json

    from sarif_check import check as check_sarif

    shutil.copytree(CHARTS / "toyaml-resources", tmp_path / "toyaml-resources", ignore=shutil.ignore_patterns("*.fixed"))
    monkeypatch.chdir(tmp_path)
    _code, out, _err = run_cli("scan", "--format", "sarif", "--select", "GPU101", "toyaml-resources")
    run = check_sarif(json.loads(out), tmp_path)
    (result,) = run["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "toyaml-resources/templates/trainer.yaml"
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "toyaml-resources/values.yaml"
    assert fix["properties"] == {"applicability": "safe"}
    assert change["replacements"] == [{
        "deletedRegion": {"endColumn": 15, "endLine": 7, "startColumn": 15, "startLine": 7},
        "insertedContent": {"text": "\n    limits:\n      nvidia.com/gpu: 2"}}]
    _code, out, _err = run_cli("scan", "--format", "rdjson", "--select", "GPU101", "toyaml-resources")
    (diagnostic,) = json.loads(out)["diagnostics"]
    assert diagnostic["code"]["value"] == "GPU101" and "suggestions" not in diagnostic


def test_what_a_template_generates_anew_on_each_render_does_not_stop_a_values_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A random pod annotation (the "roll on every upgrade" pattern) and a generated Secret differ
    between any two renders: the check compares everything else."""
    chart = tmp_path / "rolling"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: rolling\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("resources:\n  requests:\n    nvidia.com/gpu: 1\n")
    (chart / "templates" / "all.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\nstringData:\n"
        "  token: {{ randAlphaNum 32 | quote }}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector:\n"
        "    matchLabels: {app: app}\n  template:\n    metadata:\n      labels: {app: app}\n"
        "      annotations:\n        rollme: {{ randAlphaNum 5 | quote }}\n    spec:\n      containers:\n"
        "        - name: app\n          image: registry.example.com/app:1\n          resources:\n"
        "            {{- toYaml .Values.resources | nindent 12 }}\n")
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("scan", "--fix", "--select", "GPU101", "rolling")
    assert (code, err.splitlines()) == (0, ["gpulint: 1 fixed, 0 remaining"])
    assert (chart / "values.yaml").read_text() == \
        "resources:\n  requests:\n    nvidia.com/gpu: 1\n  limits:\n    nvidia.com/gpu: 1\n"


def test_a_chart_ci_values_render_is_fixed_in_its_ci_values_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chart's `ci/gpu-values.yaml` render asks for the GPUs: the limit goes there, values.yaml stays."""
    chart = tmp_path / "ci-chart"
    shutil.copytree(CHARTS / "given-values", chart, ignore=shutil.ignore_patterns("*.fixed", "values-prod.yaml"))
    (chart / "ci").mkdir()
    shutil.copy(CHARTS / "given-values" / "values-prod.yaml", chart / "ci" / "gpu-values.yaml")
    monkeypatch.chdir(tmp_path)
    _code, report = scan_json("ci-chart")
    assert [(f["rule"], f["line"], f["column"], f["fix"]["path"]) for f in report["findings"]] == \
        [("GPU101", 13, 13, "ci-chart/ci/gpu-values.yaml")]
    code, _out, err = run_cli("scan", "--fix", "ci-chart")
    assert (code, err.splitlines()) == (0, ["gpulint: 1 fixed, 0 remaining"])
    assert (chart / "ci" / "gpu-values.yaml").read_bytes() == (CHARTS / "given-values" / "values-prod.yaml.fixed").read_bytes()
    assert (chart / "values.yaml").read_bytes() == (CHARTS / "given-values" / "values.yaml").read_bytes()
