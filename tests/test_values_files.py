"""Values files for charts outside the scanned tree are checked by container shape (model/valuesfile.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, scan_json

from gpulint.model.valuesfile import is_values_name

VALUES = FIXTURES / "outside-charts"


@pytest.mark.parametrize(("name", "expected"), [
    ("values.yaml", True), ("gpu-values.yaml", True), ("values-prod.yml", True), ("my.values.yaml", True),
    ("values_gpu.yaml", True), ("overrides.yaml", True), ("prod-override.yml", True),
    ("deploy/values/gpu.yaml", True), ("config/helm/dask.yml", True), ("deploy/helm/README.md", False),
    ("deploy/manifests/gpu.yaml", False), ("valuesfile.json", False), ("myvalues.yaml", False),
    ("deployment.yaml", False), ("values.txt", False),
])
def test_values_files_are_known_by_name(name: str, expected: bool) -> None:
    assert is_values_name(name) is expected


def test_container_shaped_blocks_are_checked_at_their_own_lines() -> None:
    code, report = scan_json(str(VALUES / "gpu-values.yaml"))
    found = [(f["rule"], f["line"], f["column"], f["object"]["name"], f["container"]) for f in report["findings"]]
    assert (code, found) == (1, [
        ("GPU005", 4, 3, "(top level)", "values"),   # a CUDA image with `nvidia.com/gpu: 0`
        ("GPU003", 12, 5, "worker", "worker"),       # an `env` list
        ("GPU003", 19, 7, "server", "server"),       # `extraEnv`
        ("GPU003", 23, 29, "agent", "agent"),        # an `env` mapping, at the value
        ("GPU006", 25, 5, "agent", "agent"),
    ])
    assert all("(values file for a chart gpulint could not render, component " in f["message"]
               for f in report["findings"])
    assert report["summary"]["scanned"] == 1 and report["summary"]["workloads"] == 4


@pytest.mark.parametrize("name", ["values-cpu.yaml", "values-workflow.yml", "docker-compose.override.yml",
                                  "gpu-settings.yaml"])
def test_what_is_not_a_bypass_or_not_values_is_quiet(name: str) -> None:
    code, report = scan_json(str(VALUES / name))
    assert (code, report["findings"]) == (0, [])


def test_only_compose_and_ci_are_left_alone_not_every_services_key(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("services:\n  api:\n    image: nvidia/cuda:12.4.0-base-ubuntu22.04\n"
                    "    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: all\n")
    _, report = scan_json(str(path))
    assert [(f["rule"], f["line"], f["column"]) for f in report["findings"]] == [("GPU003", 5, 7)]


def test_an_image_beside_components_given_resources_and_a_disabled_component(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "helm"
    folder.mkdir(parents=True)
    (folder / "dask.yml").write_text(
        "worker:\n  image:\n    repository: nvcr.io/nvidia/cuda\n    tag: 12.4.0-base-ubuntu22.04\n"
        "  resources:\n    limits:\n      nvidia.com/gpu: 0\n"
        "scheduler:\n  image:\n    repository: nvcr.io/nvidia/cuda\n    tag: 12.4.0-base-ubuntu22.04\n"
        "parser:\n  enabled: false\n  image: nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04\n  env:\n"
        "  - name: NVIDIA_VISIBLE_DEVICES\n    value: all\n")
    _, report = scan_json(str(folder / "dask.yml"))
    # The file sets the worker's resources (no GPU), so the scheduler beside it, given none, runs without
    # one too; the parser is not deployed.
    assert [(f["rule"], f["line"], f["column"], f["object"]["name"]) for f in report["findings"]] == [
        ("GPU005", 3, 5, "worker"), ("GPU005", 10, 5, "scheduler")]
    # A catalogue of images an operator picks from (no component with resources beside them) is not pods.
    (folder / "runtimes.yml").write_text("runtimes:\n  vllm:\n    image:\n      repository: nvcr.io/nvidia/cuda\n"
                                         "      tag: 12.4.0-base-ubuntu22.04\n  tgi:\n    image:\n"
                                         "      repository: nvcr.io/nvidia/cuda\n      tag: 12.4.0-base-ubuntu22.04\n")
    assert scan_json(str(folder / "runtimes.yml"))[1]["findings"] == []


def test_a_flux_helmrelease_and_an_argo_application_carry_values(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app\nspec:\n  values:\n"
        "    controllers:\n      main:\n        containers:\n          main:\n            image:\n"
        "              repository: ghcr.io/example/app\n              tag: 1.0.0\n            env:\n"
        "              NVIDIA_VISIBLE_DEVICES: all\n"
        "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app\nspec:\n  source:\n"
        "    helm:\n      valuesObject:\n        worker:\n          extraEnv:\n          - name: NVIDIA_VISIBLE_DEVICES\n"
        "            value: all\n")
    _, report = scan_json(str(path))
    assert [(f["rule"], f["line"], f["column"], f["object"]["kind"], f["container"]) for f in report["findings"]] == [
        ("GPU003", 15, 39, "HelmRelease", "main"), ("GPU003", 27, 13, "Application", "worker")]


def test_a_values_file_inline_suppression_works(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("agent:\n  env:\n  # gpulint: ignore[GPU003] the agent is the device plugin\n"
                    "  - name: NVIDIA_VISIBLE_DEVICES\n    value: all\n")
    code, report = scan_json(str(path))
    assert code == 0 and [(f["rule"], f["line"], f["suppressed"]) for f in report["findings"]] == [
        ("GPU003", 4, True)]


def test_values_beside_templates_belong_to_that_chart(tmp_path: Path) -> None:
    """A chart folder whose Chart.yaml is missing is still a chart's: its values are not a remote chart's."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "values.yaml").write_text("agent:\n  env:\n  - name: NVIDIA_VISIBLE_DEVICES\n    value: all\n")
    code, report = scan_json(str(tmp_path / "values.yaml"))
    assert (code, report["findings"], report["summary"]["not_kubernetes"]) == (0, [], 1)


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_a_charts_own_values_are_checked_through_its_render_only(tmp_path: Path) -> None:
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    # A block the templates never use: nothing of it reaches a pod, so nothing is reported.
    (chart / "values.yaml").write_text("unused:\n  image: busybox\n  env:\n  - name: NVIDIA_VISIBLE_DEVICES\n"
                                       "    value: all\n")
    (chart / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n  - name: app\n"
        "    image: busybox:1.36\n")
    code, report = scan_json(str(tmp_path))
    assert (code, [f["rule"] for f in report["findings"]]) == (0, [])


# --- values files a script passes to helm ---------------------------------------------------------------

GPU_VALUES = ("nim:\n  image: nvcr.io/nim/meta/llama:1.0\n  env:\n  - name: NVIDIA_VISIBLE_DEVICES\n    value: \"0\"\n"
              "  resources:\n    limits:\n      nvidia.com/gpu: 0\n")


@pytest.mark.parametrize(("line", "expected"), [
    ("helm upgrade --install vss nvidia/vss -n ai -f gpu.yaml --set a=b", [("nvidia/vss", ["gpu.yaml"])]),
    ("helm install x oci://r.io/c --values=a.yaml --values b.yaml -fc.yaml", [("oci://r.io/c", ["a.yaml", "b.yaml",
                                                                                               "c.yaml"])]),
    ("helm template x chart --repo https://charts.example --values v.yaml", [(None, ["v.yaml"])]),
    ("helm install x nvidia/vss && kubectl apply -f pod.yaml", []),     # kubectl's -f is not helm's
    ("helm lint charts/app --values v.yaml", []),                       # renders nothing a cluster runs
])
def test_helm_commands_are_read_from_scripts(line: str, expected: list) -> None:
    from gpulint.inputs.helmscripts import _helm_calls

    assert _helm_calls(line + "\n") == expected


def test_values_a_script_passes_to_a_remote_chart_are_checked_whatever_their_name(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config.example" / "cfg").mkdir(parents=True)
    (tmp_path / "deploy" / "up.sh").write_text(
        "#!/bin/sh\nhelm upgrade --install \\\n  vss nvidia/vss --namespace \"$NS\" \\\n  -f ../config/gpu.yaml\n"
        "helm install local ./mychart --values ../config/local.yaml\n"
        "helm install dask dask/dask --values config/cfg/dask.yml\n")
    for name in ("gpu.yaml", "local.yaml", "unused.yaml"):
        (tmp_path / "config" / name).write_text(GPU_VALUES)
    (tmp_path / "config.example" / "cfg" / "dask.yml").write_text(GPU_VALUES)
    (tmp_path / "deploy" / "mychart" / "templates").mkdir(parents=True)
    (tmp_path / "deploy" / "mychart" / "Chart.yaml").write_text("apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
    code, report = scan_json("--no-cache", "--select", "GPU003", str(tmp_path))
    # gpu.yaml as the script names it; dask.yml by `cfg/dask.yml` (the script's config/ is a copy of
    # config.example/); local.yaml too (its chart, rendered with it, uses none of it); unused.yaml is
    # passed to nothing.
    assert (code, sorted((Path(f["path"]).relative_to(tmp_path).as_posix(), f["line"]) for f in report["findings"])) == (
        1, [("config.example/cfg/dask.yml", 4), ("config/gpu.yaml", 4), ("config/local.yaml", 4)])


def test_a_duplicate_key_in_a_values_file_says_helm_keeps_the_last(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("api:\n  image: busybox\n  env:\n  - name: NVIDIA_VISIBLE_DEVICES\n    value: all\n"
                    "api:\n  image: busybox\n  env:\n  - name: LOG_LEVEL\n    value: info\n")
    code, report = scan_json(str(path))
    assert (code, [(f["rule"], f["line"], f["column"]) for f in report["findings"]]) == (1, [("GPU000", 6, 1)])
    assert report["findings"][0]["message"] == (
        "duplicate key 'api' (first defined at line 1): Helm keeps only the last value, so the first one is "
        "ignored and not checked; the ignored value holds NVIDIA_VISIBLE_DEVICES")


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_a_chart_of_the_tree_is_rendered_with_the_values_its_script_passes(tmp_path: Path) -> None:
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    (chart / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ required \"name\" .Values.name }}\nspec:\n  containers:\n"
        "  - name: c\n    image: busybox:1.36\n    env:\n    {{- toYaml .Values.env | nindent 4 }}\n")
    (tmp_path / "prod.yaml").write_text("name: trainer\nenv:\n- name: NVIDIA_VISIBLE_DEVICES\n  value: all\n")
    (tmp_path / "up.sh").write_text("#!/bin/sh\nhelm upgrade --install app ./app --values prod.yaml\n")
    code, report = scan_json("--no-cache", str(tmp_path))
    found = sorted((f["rule"], f["severity"], Path(f["path"]).relative_to(tmp_path).as_posix(), f["line"])
                   for f in report["findings"])
    # The defaults fail (`required`): said at info, since the render with the script's values was
    # checked; its finding maps to prod.yaml:3, where the shape check of prod.yaml said it too (once).
    assert (code, found) == (1, [("GPU003", "error", "app/templates/pod.yaml", 10),
                                 ("GPU010", "info", "app/templates/pod.yaml", 4)])
    [env] = [f for f in report["findings"] if f["rule"] == "GPU003"]
    assert ("values", str(tmp_path / "prod.yaml"), 3) in [(m["role"], m["path"], m["line"]) for m in env["mapped"]]
    assert env["rendered"]["path"] == f"{tmp_path / 'app'} (rendered with {tmp_path / 'prod.yaml'} (as up.sh passes them))"
    assert "rendered and checked with" in [f for f in report["findings"] if f["rule"] == "GPU010"][0]["message"]
