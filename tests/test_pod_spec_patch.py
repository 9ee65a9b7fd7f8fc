"""Containers held in strings (pod-spec patches) and components that run their resource's image."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import active, scan_json

from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import objects_in
from gpulint.model.podspecs import workload_of

WORKFLOW = """apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {{generateName: w-}}
spec:
  entrypoint: main
  templates:
  - name: main
    podSpecPatch: {patch}
    container:
      image: registry.example.com/job:1
"""


ESCAPED = r'"{\"containers\": [{\"name\": \"main\", \"env\": [{\"name\": \"NVIDIA_VISIBLE_DEVICES\", \"value\": \"all\"}]}]}"'


@pytest.mark.parametrize("patch, where", [
    # One-line strings without escapes: read from their own characters, at their columns.
    ("""'{"containers": [{"name": "main", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}'""", (8, 61)),
    ('"{containers: [{name: main, env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]}]}"', (8, 53)),
    # An escaped string cannot be read in place: its nodes are placed from the string's first
    # character (column 20, after the quote), counted in the value (`{"containers": [{"name":
    # "main", "env": [` is 41 characters): exact up to the first escape.
    (ESCAPED, (8, 20 + 41)),
])
def test_patch_strings_are_checked_at_their_positions(tmp_path: Path, patch: str, where: tuple) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.format(patch=patch), encoding="utf-8")
    _code, report = scan_json("--no-cache", str(path))
    assert active(report) == [("GPU003", *where)]


def test_a_patch_that_is_no_mapping_is_no_pod(tmp_path: Path) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.format(patch="'{{inputs.parameters.patch}}'"), encoding="utf-8")
    code, report = scan_json("--no-cache", str(path))
    assert (code, active(report)) == (0, [])


def _workload(text: str):
    [doc] = [d for d in load_documents(text) if isinstance(d, Document)]
    return workload_of(next(objects_in("t.yaml", doc)))


def test_patch_containers_merge_by_name_with_the_pods_they_patch() -> None:
    text = WORKFLOW.format(patch="|\n      containers:\n      - name: main\n        resources:\n"
                                 "          limits: {nvidia.com/gpu: 2}\n      - name: extra\n"
                                 "        image: registry.example.com/extra:1")
    workload = _workload(text)
    base, patch_pod = workload.pod_specs
    [main] = base.containers
    assert main.resources.limits == {"nvidia.com/gpu": 2}            # the patch's GPUs
    assert [p.name for p in main.patches] == ["main"]
    patched_main, extra = patch_pod.containers
    assert (patched_main.image, patched_main.image_path) == ("registry.example.com/job:1",
                                                             ("spec", "templates", 0, "container", "image"))
    assert patched_main.origin is not None and patched_main.image_origin is workload.obj
    assert (extra.image, extra.patched, extra.path) == ("registry.example.com/extra:1", None, ("containers", 1))
    # The patch's own document places its nodes at the manifest's lines.
    span = patched_main.origin.doc.span(("containers", 0, "resources"), key=True)
    assert (span.line, span.column) == (11, 9)


def test_a_component_without_an_image_runs_the_resources_image() -> None:
    workload = _workload("apiVersion: x.example.com/v1\nkind: Serve\nmetadata: {name: s}\nspec:\n"
                         "  image: {repository: registry.example.com/srv, tag: '2'}\n"
                         "  router:\n    env: [{name: A, value: b}]\n")
    [pod] = workload.pod_specs
    [router] = pod.containers
    assert (router.name, router.image, router.image_path) == (
        "router", "registry.example.com/srv:2", ("spec", "image", "repository"))


def test_a_patch_in_a_chart_maps_to_its_template_line(tmp_path: Path) -> None:
    """A rendered chart's finding inside a patch string points at the template line holding it."""
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: wf\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("visible: all\n")
    (chart / "templates" / "wf.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata:\n  name: {{ .Release.Name }}-wf\n"
        "spec:\n  templates:\n  - name: main\n    podSpecPatch: |\n      containers:\n      - name: main\n"
        "        env:\n        - name: NVIDIA_VISIBLE_DEVICES\n          value: {{ .Values.visible }}\n"
        "    container:\n      image: registry.example.com/job:1\n")
    _code, report = scan_json("--no-cache", str(chart))
    [finding] = [f for f in report["findings"] if f["rule"] == "GPU003"]
    [template] = [m for m in finding["mapped"] if m["role"] == "template"]
    assert (Path(template["path"]).name, template["line"], template["column"]) == ("wf.yaml", 12, 11)


@pytest.mark.parametrize("patch, fixed", [
    # Read in place: a fix edits the string where it stands.
    ("'{\"containers\":[{\"name\":\"main\",\"env\":[{\"name\":\"NVIDIA_VISIBLE_DEVICES\",\"value\":\"0,1\"}]}]}'",
     "'{\"containers\":[{\"name\":\"main\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": 2}}}]}'"),
    # Read from its value: no position of the file to edit at, so no fix (and no broken file).
    (ESCAPED.replace("all", "0,1"), None),
])
def test_fixes_inside_a_patch_only_where_it_is_read_in_place(tmp_path: Path, patch: str, fixed: str | None) -> None:
    from conftest import run_cli

    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.format(patch=patch), encoding="utf-8")
    _code, out, err = run_cli("scan", "--no-cache", "--diff", "--unsafe-fixes", str(path))
    assert "internal error" not in err
    if fixed is None:
        assert out == "" and "GPU003 the patch string is escaped or folded: edit it by hand" in err
    else:
        assert f"+    podSpecPatch: {fixed}" in out
