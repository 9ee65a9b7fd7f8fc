"""Charts helm cannot render offline as they are, rendered with the real helm all the same.

- dependencies missing in charts/: rendered without them (GPU010 warning names them);
- a Chart.yaml `version`/`appVersion` Helm cannot load (a release tool's placeholder):
  rendered with a stand-in (GPU010 at info severity: nothing is left unchecked);
- a chart that still does not render: its templates read as literal text, findings at
  template lines, one GPU010 for the chart and no GPU011 per template.

The fixture charts under fixtures/rules/GPU010/charts carry `# expect:` markers; a finding on
a rendered chart is placed at the template line it maps to.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, run_cli, scan_json, scanned
from expectations import read
from tooling import find_tool

CHARTS = FIXTURES / "rules" / "GPU010" / "charts"


def _placed(finding: dict) -> tuple[str, str, int, int]:
    """(path, rule, line, column) where a human edits it: the template line for a rendered finding."""
    for mapped in finding["mapped"]:
        if mapped["role"] == "template":
            return mapped["path"], finding["rule"], mapped["line"], mapped["column"]
    return finding["path"], finding["rule"], finding["line"], finding["column"]


def _chart(tmp_path: Path, chart_yaml: str, templates: dict[str, str], values: str = "",
           files: dict[str, str] | None = None) -> Path:
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(chart_yaml)
    (chart / "values.yaml").write_text(values)
    for name, text in templates.items():
        (chart / "templates" / name).write_text(text)
    for name, text in (files or {}).items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    return chart


GPU_POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    version: {{ .Chart.Version | quote }}\n"
           "    app-version: {{ .Chart.AppVersion | quote }}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
           "    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: all\n")


@pytest.mark.parametrize("chart", sorted(p.name for p in CHARTS.iterdir()))
def test_fixture_charts(helm: str, chart: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    directory = (CHARTS / chart).relative_to(ROOT)
    _code, report = scan_json("--helm", helm, "--show-suppressed", str(directory))
    found = sorted(_placed(f) for f in report["findings"])
    expected = sorted((path.relative_to(ROOT).as_posix(), rule, line, column)
                      for path in sorted((CHARTS / chart).rglob("*")) if path.is_file()
                      for rule, line, column in read(path).active)
    assert found == expected and expected
    assert not [f for f in report["findings"] if f["suppressed"]]
    assert report["summary"]["files"] == 1


# --- dependencies missing in charts/ -----------------------------------------------------


def test_missing_dependencies_are_left_out_and_named(helm: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    chart = "fixtures/rules/GPU010/charts/missing-dependency"
    code, report = scan_json("--helm", helm, chart)
    assert code == 1 and report["summary"]["scanned"] == 1 and report["summary"]["helm_chart"] == 0
    [warning] = [f for f in report["findings"] if f["rule"] == "GPU010"]
    assert (warning["path"], warning["line"], warning["column"], warning["severity"]) == (
        f"{chart}/Chart.yaml", 7, 9, "warning")
    assert warning["message"] == (
        "chart dependencies missing in charts/: gpu-stack, metrics (gpu-stack is disabled by gpuStack.enabled "
        "with these values; metrics is enabled with these values): the chart was rendered without them, so what "
        "they render was not checked; gpulint renders offline and never fetches dependencies: run "
        f"`helm dependency build {chart}` first")
    [privileged] = [f for f in report["findings"] if f["rule"] == "GPU006"]
    assert scanned(privileged)["path"] == f"{chart} (rendered)"
    # With the condition's value changed by a values file, the message says so.
    override = tmp_path / "on-values.yaml"
    override.write_text("gpuStack: {enabled: true}\n")
    _code, enabled = scan_json("--helm", helm, "--values", str(override), chart)
    [warning] = [f for f in enabled["findings"] if f["rule"] == "GPU010"]
    assert "(gpu-stack is enabled by gpuStack.enabled with these values; metrics is" in warning["message"]
    _code, report = scan_json("--helm", helm, "--values", str(override), "--set", "gpuStack.enabled=false", chart)
    [warning] = [f for f in report["findings"] if f["rule"] == "GPU010"]
    assert "(gpu-stack is disabled by gpuStack.enabled with these values; metrics is" in warning["message"]


def test_requirements_yaml_of_an_apiversion_v1_chart(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "apiVersion: v1\nname: app\nversion: 1.0.0\n", {"pod.yaml": GPU_POD},
                   "tags:\n  monitoring: false\n",
                   {"requirements.yaml": "dependencies:\n- name: exporter\n  version: 1.0.0\n"
                                         "  repository: https://charts.example.com\n  tags: [monitoring]\n"})
    _code, report = scan_json("--helm", helm, str(chart))
    by_rule = {f["rule"]: f for f in report["findings"]}
    assert set(by_rule) == {"GPU003", "GPU010"}
    warning = by_rule["GPU010"]
    assert (warning["path"], warning["line"], warning["column"]) == (f"{chart}/requirements.yaml", 2, 9)
    assert "(exporter is disabled by its tags with these values)" in warning["message"]
    # Every dependency left out is one Helm would not render with these values either:
    # nothing went unchecked, so the note is info (a clean CI), not a warning.
    assert warning["severity"] == "info"
    assert "as Helm renders it with these values" in warning["message"]
    assert by_rule["GPU003"]["mapped"][0]["line"] == 13
    _code, enabled = scan_json("--helm", helm, "--set", "tags.monitoring=true", str(chart))
    [warning] = [f for f in enabled["findings"] if f["rule"] == "GPU010"]
    assert warning["severity"] == "warning"
    assert "(exporter is enabled by its tags with these values)" in warning["message"]
    assert "so what they render was not checked" in warning["message"]


def test_a_vendored_dependency_is_rendered_and_a_missing_one_left_out(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n"
                             "- {name: here, version: 0.1.0, repository: 'https://charts.example.com'}\n"
                             "- {name: gone, version: 0.1.0, repository: 'https://charts.example.com'}\n",
                   {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}, "",
                   {"charts/here/Chart.yaml": "apiVersion: v2\nname: here\nversion: 0.1.0\n",
                    "charts/here/templates/pod.yaml": GPU_POD})
    _code, report = scan_json("--helm", helm, str(chart))
    placed = sorted(_placed(f) for f in report["findings"])
    assert placed == [(f"{chart}/Chart.yaml", "GPU010", 6, 10),
                      (f"{chart}/charts/here/templates/pod.yaml", "GPU003", 13, 7)]


def test_the_dependency_note_of_a_chart_with_ci_values_is_said_once(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nversion: 1.0.0\n"
                             "dependencies:\n- {name: dep, version: 1.0.0, repository: 'https://example.com'}\n",
                   {"pod.yaml": GPU_POD}, "", {"ci/a-values.yaml": "a: 1\n", "ci/b-values.yaml": "b: 1\n"})
    _code, report = scan_json("--helm", helm, str(chart))
    assert sorted(_placed(f) for f in report["findings"]) == [
        (f"{chart}/Chart.yaml", "GPU010", 5, 10), (f"{chart}/templates/pod.yaml", "GPU003", 13, 7)]
    assert report["summary"]["files"] == 1 and report["summary"]["scanned"] == 1


# --- a version Helm cannot load --------------------------------------------------------------


@pytest.mark.parametrize(("written", "shown", "column"), [
    ("version: [[ .Version ]]", "[[ .Version ]]", 10),      # a nested YAML list
    ("version: {{ .Version }}", "{{ .Version }}", 10),      # not YAML at all
    ('version: "${VERSION}"', '"${VERSION}"', 10),          # a string, not SemVer
    ("version: '@VERSION@'", "'@VERSION@'", 10),
])
def test_a_placeholder_version_gets_a_stand_in(helm: str, tmp_path: Path, written: str, shown: str,
                                               column: int) -> None:
    chart = _chart(tmp_path, f"apiVersion: v2\nname: app\n{written}\n", {"pod.yaml": GPU_POD})
    code, report = scan_json("--helm", helm, "--select", "GPU010", str(chart))
    assert code == 0          # an info note does not fail the scan
    [note] = report["findings"]
    assert (note["path"], note["line"], note["column"], note["severity"]) == (
        f"{chart}/Chart.yaml", 3, column, "info")
    assert note["message"] == (
        f"`version: {shown}` in Chart.yaml is not a version Helm can load (a placeholder a release tool "
        "fills in?): the chart was rendered with the stand-in version 0.0.0 in gpulint's private copy; its "
        "templates were checked as usual")
    assert report["summary"]["scanned"] == 1


def test_stand_ins_for_version_and_app_version_render_the_templates(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nappVersion: [[ .AppVersion ]]\n", {"pod.yaml": GPU_POD})
    code, report = scan_json("--helm", helm, str(chart))
    assert code == 1
    notes = [(f["line"], f["column"], f["severity"], f["message"].split(":", 1)[0]) for f in report["findings"]
             if f["rule"] == "GPU010"]
    assert notes == [(1, 1, "info", "Chart.yaml has no `version`, which Helm requires"),
                     (3, 13, "info", "`appVersion")]
    [env] = [f for f in report["findings"] if f["rule"] == "GPU003"]
    assert scanned(env)["path"] == f"{chart} (rendered)" and env["mapped"][0]["line"] == 13


def test_the_stand_in_is_what_the_templates_see(tmp_path: Path) -> None:
    from gpulint.render import RenderOptions, render
    from gpulint.results.inputkind import InputKind

    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nversion: [[ .Version ]]\nappVersion: 2.1\n",
                   {"pod.yaml": GPU_POD})
    rendered = render(InputKind.CHART, chart, "app", RenderOptions(helm=find_tool("helm")))
    assert rendered.failure is None and rendered.text is not None
    assert 'version: "0.0.0"' in rendered.text and 'app-version: "2.1"' in rendered.text
    # The chart itself is left as it was.
    assert (chart / "Chart.yaml").read_text().endswith("version: [[ .Version ]]\nappVersion: 2.1\n")


def test_the_version_note_can_be_suppressed_where_it_is_written(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\n"
                             "version: [[ .Version ]]  # gpulint: ignore[GPU010] filled in by the release tool\n",
                   {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
    code, report = scan_json("--helm", helm, str(chart))
    [note] = report["findings"]
    assert code == 0 and note["suppressed"] and note["line"] == 3


def test_a_valid_numeric_version_is_left_alone(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nversion: 1\nappVersion: 1.10\n", {"pod.yaml": GPU_POD})
    _code, report = scan_json("--helm", helm, str(chart))
    assert [f["rule"] for f in report["findings"]] == ["GPU003"]


# --- a chart that still does not render: its templates read literally -------------------------


def test_a_chart_that_does_not_render_is_read_as_literal_text(helm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    chart = "fixtures/rules/GPU010/charts/not-rendered"
    code, report = scan_json("--helm", helm, chart)
    assert code == 1
    assert not [f for f in report["findings"] if f["rule"] in ("GPU000", "GPU011")]
    [failure] = [f for f in report["findings"] if f["rule"] == "GPU010"]
    assert (failure["path"], failure["line"], failure["column"]) == (f"{chart}/templates/workers/daemonset.yaml", 6, 11)
    assert failure["message"].startswith("helm template failed: template: not-rendered/templates/workers/")
    assert failure["message"].endswith(
        "; the chart was not rendered, so its 2 template files were read as literal text instead: only its "
        "literal text was checked, each action read as a placeholder")
    env = next(f for f in report["findings"] if f["rule"] == "GPU003")
    assert (env["path"], env["line"], env["column"], env["mapped"]) == (
        f"{chart}/templates/workers/daemonset.yaml", 23, 11, [])
    assert report["summary"] == {**report["summary"], "files": 1, "helm_chart": 1, "scanned": 0}


def test_a_template_unreadable_even_literally_is_counted(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nversion: 1.0.0\n",
                   {"a.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ include \"absent\" . }}\n",
                    "b.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: x\nspec: [\n"})
    _code, report = scan_json("--helm", helm, str(chart))
    [failure] = report["findings"]
    assert failure["rule"] == "GPU010" and failure["path"] == f"{chart}/templates/a.yaml"
    assert failure["message"].endswith(
        "read as literal text instead: only its literal text was checked, each action read as a placeholder; "
        f"1 document could not be read even so (first: {chart}/templates/b.yaml:4: invalid YAML: while parsing a "
        "flow mapping started at line 3, column 11: did not find expected ',' or '}')")


def test_without_helm_the_templates_are_read_literally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.chdir(ROOT)
    chart = "fixtures/rules/GPU010/charts/not-rendered"
    code, report = scan_json(chart)
    assert code == 1
    placed = sorted((f["rule"], f["path"], f["line"]) for f in report["findings"])
    assert placed == [("GPU003", f"{chart}/templates/workers/daemonset.yaml", 23),
                      ("GPU006", f"{chart}/charts/metrics/templates/exporter.yaml", 11),
                      ("GPU010", f"{chart}/Chart.yaml", 1)]
    failure = next(f for f in report["findings"] if f["rule"] == "GPU010")
    assert "helm not found on PATH" in failure["message"]
    assert "so its 2 template files were read as literal text instead" in failure["message"]


def test_a_render_with_ci_values_replaces_the_literal_reading(helm: str, tmp_path: Path) -> None:
    """`required` fails with the defaults, the chart-testing values supply it: the rendered
    findings stand, the literal ones of the failed defaults render go."""
    template = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ required \"name\" .Values.name }}\nspec:\n"
                "  containers:\n  - name: c\n    image: busybox\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n"
                "      value: all\n")
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nversion: 1.0.0\n", {"pod.yaml": template}, "",
                   {"ci/named-values.yaml": "name: trainer\n"})
    _code, report = scan_json("--helm", helm, str(chart))
    rows = sorted((scanned(f)["path"], *_placed(f)) for f in report["findings"])
    assert rows == [(f"{chart} (rendered with ci/named-values.yaml)", f"{chart}/templates/pod.yaml", "GPU003", 10, 7),
                    (f"{chart}/templates/pod.yaml", f"{chart}/templates/pod.yaml", "GPU010", 4, 11)]


def test_literal_reading_is_deterministic(helm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    outputs = {run_cli("scan", "--helm", helm, "--format", fmt, str(CHARTS.relative_to(ROOT)))[1]
               for fmt in ("json",) for _ in range(2)}
    assert len(outputs) == 1
    json.loads(outputs.pop())


def test_corpus_chart_without_its_helpers_is_read_literally(helm: str, corpus: Path) -> None:
    """The corpus sample of fake-gpu-operator has no helpers template: Helm stops at the first
    include; its status exporter's privileged init container is still found at its line."""
    chart = corpus / "run-ai__fake-gpu-operator" / "deploy" / "fake-gpu-operator"
    _code, report = scan_json("--helm", helm, "--show-suppressed", str(chart))
    placed = sorted((Path(p).relative_to(chart).as_posix(), rule, line, column)
                    for p, rule, line, column in map(_placed, report["findings"]))
    assert ("templates/status-exporter/daemonset.yaml", "GPU006", 28, 11) in placed
    gpu010 = [row for row in placed if row[1] == "GPU010"]
    assert gpu010 == [("Chart.yaml", "GPU010", 27, 11), ("templates/status-exporter/daemonset.yaml", "GPU010", 5, 11)]
    assert not [row for row in placed if row[1] in ("GPU000", "GPU011")]


def test_dependency_conditions_and_tags_as_helm_reads_them() -> None:
    from gpulint.load.yamlload import load_documents
    from gpulint.render.chartfix import enabled
    from gpulint.render.values import ValuesChain, ValuesFile, parse_set

    doc = next(load_documents("a: {enabled: 'yes'}\nb: {enabled: false}\nc: {enabled: true}\n"
                              "tags: {gpu: false, extra: true, off: false}\n"))
    chain = ValuesChain.build([ValuesFile("values.yaml", doc)], [], [], [])
    assert enabled("a.enabled, b.enabled", [], chain) is False      # a string is no boolean: the next path decides
    assert enabled("missing.enabled,c.enabled", ["gpu"], chain) is True   # a condition wins over tags
    assert enabled("", ["gpu", "extra"], chain) is True              # one tag true enables
    assert enabled("", ["gpu", "off"], chain) is False               # all tags false disable
    assert enabled("missing.enabled", ["unset"], chain) is None      # nothing decides: rendered
    assert enabled("c.enabled", [], chain, parse_set("c.enabled=false")) is False
    assert enabled("c.enabled", [], chain, parse_set("c.enabled.x=1")) is None


def test_a_literal_finding_can_be_suppressed_in_its_template(helm: str, tmp_path: Path) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ include \"absent\" . }}\nspec:\n  containers:\n"
           "  - name: c\n    image: busybox\n    env:\n"
           "    - name: NVIDIA_VISIBLE_DEVICES  # gpulint: ignore[GPU003] the node has one GPU\n      value: all\n")
    chart = _chart(tmp_path, "apiVersion: v2\nname: app\nversion: [[ .Version ]]\nappVersion: [[ .AppVersion ]]\n",
                   {"pod.yaml": pod})
    _code, report = scan_json("--helm", helm, str(chart))
    rows = [(f["rule"], f["path"].rsplit("/", 1)[1], f["line"], f["severity"], bool(f["suppressed"]))
            for f in report["findings"]]
    assert rows == [("GPU010", "Chart.yaml", 3, "info", False), ("GPU010", "Chart.yaml", 4, "info", False),
                    ("GPU010", "pod.yaml", 4, "warning", False), ("GPU003", "pod.yaml", 10, "error", True)]
