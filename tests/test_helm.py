"""Helm charts: rendered with the real helm, findings mapped to template and values lines."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, ROOT, run_cli, scan_json, scanned
from tooling import expected_for, map_markers, mapped_of, rendered_root

CHART = "fixtures/charts/gpu-app"
CONTAINERS = {"trainer", "sidecar", "exporter", "worker", "smoke", "gpu-exporter"}


def _helm_template(helm: str, *args: str, cwd: Path = ROOT) -> str:
    env = {**os.environ, "HELM_CONFIG_HOME": tempfile.mkdtemp(), "HELM_CACHE_HOME": tempfile.mkdtemp(),
           "HELM_DATA_HOME": tempfile.mkdtemp()}
    done = subprocess.run([helm, "template", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout


def _chart(tmp_path: Path, name: str, templates: dict[str, str], values: str = "",
           chart_extra: str = "") -> Path:
    chart = tmp_path / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n{chart_extra}")
    (chart / "values.yaml").write_text(values)
    for file, text in templates.items():
        (chart / "templates" / file).write_text(text)
    return chart


def test_findings_map_to_template_and_values_lines(helm: str, at_root: Path) -> None:
    code, report = scan_json("--helm", helm, CHART)
    assert code == 1
    markers = map_markers(FIXTURES / "charts" / "gpu-app")
    jsonschema.validate(report, json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text()))
    rendered = _helm_template(helm, "release-name", CHART).split("\n")
    findings = [f for f in report["findings"] if f["rule"] == "GPU003"]
    assert {f["container"] for f in findings} == CONTAINERS
    for finding in findings:
        at = scanned(finding)
        assert at["path"] == f"{CHART} (rendered)"
        # `path`/`line` are the file a user edits: the first mapped location, as text and SARIF lead with.
        assert (finding["path"], finding["line"], finding["column"]) == (
            finding["mapped"][0]["path"], finding["mapped"][0]["line"], finding["mapped"][0]["column"])
        # The rendered position is the env entry of `helm template` output with the same arguments.
        line = rendered[at["line"] - 1]
        assert line[at["column"] - 1:].startswith("name: NVIDIA_VISIBLE_DEVICES"), line
        expected = expected_for(markers, "GPU003", rendered_root(finding), finding["container"])
        assert expected, f"no map marker for {finding['container']}"
        assert mapped_of(finding) == expected, finding["container"]
        assert finding["source"]["template"].startswith("gpu-app/")
    assert report["summary"]["files"] == 1 and report["summary"]["scanned"] == 1


def test_text_output_leads_with_the_template_line(helm: str, at_root: Path) -> None:
    code, out, _err = run_cli("scan", "--helm", helm, "--select", "GPU003", CHART)
    assert code == 1
    trainer = next(line for line in out.splitlines() if 'container "trainer"' in line)
    assert trainer.startswith(f"{CHART}/templates/_helpers.tpl:10:3: GPU003 [error] ")
    assert f"helper included at {CHART}/templates/deployment.yaml:22:13" in trainer
    assert f"values key gpu.visibleDevices at {CHART}/values.yaml:7:3" in trainer
    assert f"rendered at {CHART} (rendered):" in trainer


def test_one_template_with_two_documents_maps_to_the_right_one(helm: str, at_root: Path) -> None:
    _code, report = scan_json("--helm", helm, CHART)
    worker = next(f for f in report["findings"] if f["container"] == "worker")
    template = worker["mapped"][0]
    assert template["path"] == f"{CHART}/templates/workers.yaml"
    lines = (ROOT / template["path"]).read_text().splitlines()
    # The first document of workers.yaml also has the variable (set to void): not that one.
    first = next(i for i, text in enumerate(lines, 1) if "NVIDIA_VISIBLE_DEVICES" in text)
    assert template["line"] > first
    assert "---" in lines[first:template["line"]]


def test_skip_tests_leaves_out_test_hooks(helm: str, at_root: Path) -> None:
    _code, with_tests = scan_json("--helm", helm, CHART)
    _code, without = scan_json("--helm", helm, "--helm-skip-tests", CHART)
    assert "smoke" in {f["container"] for f in with_tests["findings"]}
    assert "smoke" not in {f["container"] for f in without["findings"]}
    assert len(without["findings"]) == len(with_tests["findings"]) - 1


def test_values_file_set_release_and_namespace(helm: str, at_root: Path, tmp_path: Path) -> None:
    override = tmp_path / "prod-values.yaml"
    override.write_text("workers:\n  devices: \"2,3\"\nsidecar:\n  env: []\n")
    _code, report = scan_json("--select", "GPU003", "--helm", helm, "--values", str(override),
                              "--set", "gpu.visibleDevices=0", "--helm-release", "train", "--helm-namespace", "ml",
                              CHART)
    by_container = {f["container"]: f for f in report["findings"]}
    assert "sidecar" not in by_container                 # the values file emptied its env
    worker = by_container["worker"]
    assert "NVIDIA_VISIBLE_DEVICES=2,3" in worker["message"]
    assert mapped_of(worker)[1] == ("values", str(override), 2, 3)
    trainer = by_container["trainer"]
    assert trainer["object"]["name"] == "train-gpu-app" and trainer["object"]["namespace"] == "ml"
    assert "NVIDIA_VISIBLE_DEVICES=0" in trainer["message"]
    # --set has no file: no values location, the template location says where the value came from.
    assert [m["role"] for m in trainer["mapped"]] == ["template", "template"]
    assert "--set gpu.visibleDevices=0 (command line, no file)" in trainer["mapped"][0]["description"]


def test_explicit_file_inside_a_chart_scans_the_chart(helm: str, at_root: Path) -> None:
    """What a pre-commit hook passes: a changed template or values.yaml."""
    _code, whole = scan_json("--helm", helm, CHART)
    _code, via_files = scan_json("--helm", helm, f"{CHART}/templates/deployment.yaml", f"{CHART}/values.yaml",
                                 f"{CHART}/charts/gpu-exporter/templates/daemonset.yaml")
    assert via_files["summary"]["files"] == 1
    assert [mapped_of(f) for f in via_files["findings"]] == [mapped_of(f) for f in whole["findings"]]


def test_files_under_a_chart_are_not_scanned_loose(helm: str, at_root: Path) -> None:
    _code, report = scan_json("--helm", helm, "fixtures/charts")
    # Four charts (values-app is rendered three times: its defaults and two ci files; new-cluster-app
    # is not rendered at helm's default Kubernetes version, its template read as literal text).
    assert report["summary"]["files"] == 4
    assert {scanned(f)["path"].split(" (")[0] for f in report["findings"]} == {
        "fixtures/charts/gpu-app", "fixtures/charts/values-app", "fixtures/charts/aliased-app",
        "fixtures/charts/new-cluster-app/Chart.yaml", "fixtures/charts/new-cluster-app/templates/job.yaml"}
    assert not [f for f in report["findings"] if f["rule"] == "GPU000"]


def test_helper_constructs_map_to_values(helm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`with`, `range $k, $v`, `$.Values`, `index` and toYaml of a subtree all lead to the values key."""
    values = (
        "a:\n  devices: all\n"                    # 2
        "envmap:\n  NVIDIA_VISIBLE_DEVICES: \"1\"\n"  # 4
        "hyphen-key:\n  devices: \"2\"\n"            # 6
        "extra:\n  - name: NVIDIA_VISIBLE_DEVICES\n    value: \"3\"\n"  # 8
        "scaffold:\n  name: templated\n  securityContext:\n    privileged: false\n"  # 10
        "  env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: \"4\"\n"  # 15
    )
    pod = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: with
      image: x
      env:
      {{- with .Values.a }}
        - name: NVIDIA_VISIBLE_DEVICES
          value: {{ .devices | quote }}
      {{- end }}
    - name: rangevars
      image: x
      env:
      {{- range $k, $v := .Values.envmap }}
        - name: {{ $k }}
          value: {{ $v | quote }}
      {{- end }}
    - name: index
      image: x
      env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: {{ index $.Values "hyphen-key" "devices" | quote }}
    - name: toyaml
      image: x
      env: {{- toYaml .Values.extra | nindent 8 }}
    - name: {{ .Values.scaffold.name }}
      {{- with .Values.scaffold.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      image: x
      {{- with .Values.scaffold.env }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
"""
    chart = _chart(tmp_path, "constructs", {"pod.yaml": pod}, values)
    monkeypatch.chdir(tmp_path)
    _code, report = scan_json("--helm", helm, "constructs")
    got = {f["container"]: mapped_of(f) for f in report["findings"]}
    assert got == {
        "with": [("template", "constructs/templates/pod.yaml", 11, 11), ("values", "constructs/values.yaml", 2, 3)],
        "rangevars": [("template", "constructs/templates/pod.yaml", 18, 11),
                      ("values", "constructs/values.yaml", 4, 3)],
        "index": [("template", "constructs/templates/pod.yaml", 24, 11), ("values", "constructs/values.yaml", 6, 3)],
        "toyaml": [("template", "constructs/templates/pod.yaml", 28, 7), ("values", "constructs/values.yaml", 8, 5)],
        # `helm create` style: a templated container name and `with`/toYaml blocks inside the item.
        "templated": [("template", "constructs/templates/pod.yaml", 37, 9),
                      ("values", "constructs/values.yaml", 15, 7)],
    }
    assert chart.is_dir()


def test_missing_dependency_is_reported_with_helms_message(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "needs-dep", {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"},
                   chart_extra="dependencies:\n  - name: redis\n    version: 1.0.0\n"
                               "    repository: https://charts.example.com\n")
    code, report = scan_json("--helm", helm, str(chart))
    assert code == 1
    [finding] = report["findings"]
    assert finding["rule"] == "GPU010"
    assert finding["path"] == f"{chart}/Chart.yaml" and (finding["line"], finding["column"]) == (5, 11)
    # Rendered without it (tests/test_helm_offline.py): its own templates are scanned.
    assert finding["message"].startswith("chart dependencies missing in charts/: redis (redis is enabled with these "
                                         "values): the chart was rendered without them")
    assert "never fetches dependencies" in finding["message"]
    assert report["summary"]["helm_chart"] == 0 and report["summary"]["scanned"] == 1


def test_template_error_points_at_the_template_line(helm: str, tmp_path: Path) -> None:
    chart = _chart(tmp_path, "broken", {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                                   "  name: {{ .Values.missing.key }}\n"})
    _code, report = scan_json("--helm", helm, str(chart))
    [finding] = report["findings"]
    assert finding["rule"] == "GPU010" and "nil pointer" in finding["message"]
    assert finding["path"] == f"{chart}/templates/cm.yaml"
    assert (finding["line"], finding["column"]) == (4, 18)


def test_without_helm_the_chart_is_reported_not_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.chdir(ROOT)
    code, report = scan_json(CHART)
    assert code == 1
    # Its templates are read as literal text (tests/test_helm_offline.py); the chart is reported once.
    [finding] = [f for f in report["findings"] if f["rule"] == "GPU010"]
    assert not [f for f in report["findings"] if f["rule"] == "GPU011"]
    assert finding["path"] == f"{CHART}/Chart.yaml"
    assert "helm not found on PATH" in finding["message"]
    assert "helm template RELEASE fixtures/charts/gpu-app | gpulint scan -" in finding["message"]
    assert report["summary"]["helm_chart"] == 1
    _code, report = scan_json("--helm", str(empty / "helm"), CHART)
    assert "is not an executable file" in next(f for f in report["findings"] if f["rule"] == "GPU010")["message"]


def test_helm_is_found_on_path(helm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(Path(helm).parent) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.chdir(ROOT)
    _code, report = scan_json(CHART)
    assert len([f for f in report["findings"] if f["rule"] == "GPU003"]) == len(CONTAINERS)


def test_bad_values_and_set_options_are_usage_errors(at_root: Path) -> None:
    code, _out, err = run_cli("scan", "--values", "nope.yaml", CHART)
    assert code == 2 and "--values nope.yaml: no such file" in err
    code, _out, err = run_cli("scan", "--set", "novalue", CHART)
    assert code == 2 and "expected KEY=VALUE" in err


def test_piped_helm_output_maps_when_the_chart_is_beside_the_cwd(helm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rendered = _helm_template(helm, "release-name", CHART)
    monkeypatch.chdir(FIXTURES / "charts")         # ./gpu-app is the chart named in `# Source:`
    _code, report = scan_json("-", input=rendered)
    trainer = next(f for f in report["findings"] if f["container"] == "trainer")
    assert scanned(trainer)["path"] == "-"
    assert mapped_of(trainer)[0] == ("template", "gpu-app/templates/_helpers.tpl", 10, 3)
    monkeypatch.chdir(ROOT)                          # no chart here: the template path is still shown
    _code, report = scan_json("-", input=rendered)
    for finding in report["findings"]:
        assert finding["mapped"] == [] and finding["source"]["template"].startswith("gpu-app/")
    code, out, _err = run_cli("scan", "-", input=rendered)
    assert "[from gpu-app/templates/deployment.yaml]" in out


def test_no_temporary_path_in_any_output(helm: str, at_root: Path, tmp_path: Path) -> None:
    broken = _chart(tmp_path, "broken", {"cm.yaml": "a: {{ .Values.x.y }}\n"},
                    chart_extra="dependencies:\n  - name: gone\n    version: 1.0.0\n")
    outputs = []
    for fmt in ("text", "json"):
        _code, out, err = run_cli("scan", "--format", fmt, "--helm", helm, CHART)
        outputs.append(out + err)
        _code, out, err = run_cli("scan", "--format", fmt, "--helm", helm, str(broken))
        outputs.append(out.replace(str(tmp_path), "<user dir>") + err)
    temp_root = str(Path(tempfile.gettempdir()).resolve())
    for text in outputs:
        assert "gpulint-render-" not in text and temp_root not in text, text
    json.loads(outputs[2])


def test_corpus_rendered_charts_carry_their_template(corpus: Path, at_root: Path) -> None:
    rendered = sorted((corpus / "rendered" / "helm").glob("*.yaml"))
    if not rendered:
        pytest.skip("no rendered Helm output in the corpus")
    _code, report = scan_json(*map(str, rendered))
    assert report["summary"]["error"] == 0
    for finding in report["findings"]:
        if finding["object"] is not None:
            assert finding["source"] and finding["source"]["template"], finding


SCAFFOLD_VALUES = """securityContext:
  privileged: true
  capabilities:
    add: [SYS_ADMIN]
resources:
  limits:
    nvidia.com/gpu: 1
volumes:
  - name: dev
    hostPath:
      path: /dev/nvidia0
volumeMounts:
  - name: dev
    mountPath: /dev/nvidia0
podLabels:
  team: ml
nodeSelector:
  accelerator: a100
tolerations:
  - key: nvidia.com/gpu
    operator: Exists
ingress:
  enabled: true
autoscaling:
  enabled: true
"""


def _every_key_maps_to_its_line(helm: str, chart: Path, display: str, values: tuple[str, ...] = ()) -> int:
    """Each key of each rendered object maps to a template line naming that key, or to the
    action that writes it with a values key ending in it."""
    from gpulint.api import KeyAt
    from gpulint.load.yamlload import Document, load_documents
    from gpulint.model.objects import objects_in
    from gpulint.render import RenderOptions, render
    from gpulint.results.inputkind import InputKind

    rendered = render(InputKind.CHART, chart, display, RenderOptions(helm=helm, values=values))
    assert rendered.failure is None and rendered.text and rendered.mapper

    def keys(data: object, path: tuple = ()):  # noqa: ANN202
        if isinstance(data, dict):
            for key, value in data.items():
                yield path + (key,)
                yield from keys(value, path + (key,))
        elif isinstance(data, list):
            for i, value in enumerate(data):
                yield from keys(value, path + (i,))

    checked = 0
    for doc in load_documents(rendered.text):
        assert isinstance(doc, Document)
        for obj in objects_in(rendered.display, doc):
            for path in keys(obj.data):
                mapped = rendered.mapper.map(obj, KeyAt(path))
                assert mapped, (obj.template, path)
                first = mapped[0]
                line = Path(first.file).read_text().split("\n")[first.span.line - 1]
                key = path[-1]
                if key in line and "{{" not in line[: line.find(key)]:
                    checked += 1
                    continue
                values_keys = [m.description for m in mapped if m.role == "values"]
                assert "{{" in line and any(v.rstrip('"]').endswith(key) for v in values_keys), (
                    obj.template, path, first, line, values_keys)
                checked += 1
    return checked


def test_every_key_of_a_helm_create_chart_maps_to_its_line(helm: str, tmp_path: Path) -> None:
    env = {**os.environ, "HELM_CONFIG_HOME": str(tmp_path / "c"), "HELM_CACHE_HOME": str(tmp_path / "k"),
           "HELM_DATA_HOME": str(tmp_path / "d")}
    subprocess.run([helm, "create", "scaffold"], cwd=tmp_path, env=env, capture_output=True, timeout=60, check=True)
    (tmp_path / "gpu.yaml").write_text(SCAFFOLD_VALUES)
    display = str(tmp_path / "scaffold")
    assert _every_key_maps_to_its_line(helm, Path(display), display, (str(tmp_path / "gpu.yaml"),)) > 100


def test_every_key_of_the_fixture_chart_maps_to_its_line(helm: str, at_root: Path) -> None:
    assert _every_key_maps_to_its_line(helm, Path(CHART), CHART) > 50
