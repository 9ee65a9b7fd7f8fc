"""`--fix` in a Helm chart's values file: a fix that sets scalars of a rendered object whose
values are written literally in the chart's values.yaml is made there, verified by rendering
the chart again with the edited values; anything else keeps "no fix" and says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli, scan_json

from gpulint.fix.resolve import NO_FIX_TEMPLATE

CHART = FIXTURES / "fixes" / "charts" / "gpu102-values"
pytestmark = pytest.mark.skipif(shutil.which("helm") is None, reason="needs helm")


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


def test_a_values_fix_that_breaks_another_place_is_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One key feeds two containers with different limits: fixing one breaks the other, which is caught
    by rendering again; the second fix is dropped as an internal error, the file keeps the first."""
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
    assert code == 2
    assert (chart / "values.yaml").read_text() == "gpu:\n  request: 1\n  limit: 1\n  big: 3\n"
    assert ("shared/values.yaml:2:12: internal error: the fix of GPU102 (make the nvidia.com/gpu request equal "
            "to its limit) was not applied: it adds a GPU102 finding at shared/templates/pod.yaml:10: "
            "nvidia.com/gpu request 3 differs from its limit 1") in err
    assert "gpulint: 1 fixed, 1 remaining" in err


def test_a_value_from_a_command_line_values_file_has_no_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copy(tmp_path, monkeypatch)
    (tmp_path / "prod.yaml").write_text("trainer:\n  gpu:\n    request: 3\n")
    _code, report = scan_json("--select", "GPU102", "--values", "prod.yaml", CHART.name)
    found = {(f["line"], f["container"]): f["fix"] for f in report["findings"]}
    assert found[(14, "trainer")] == {"applicability": None, "title": NO_FIX_TEMPLATE, "edits": []}
    assert found[(31, "worker")]["path"] == "gpu102-values/values.yaml"
