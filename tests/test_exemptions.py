"""The system-component allowlist: image matching, entry validation, the suppressor, the CLI."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, run_cli, scan_json

from gpulint.api import RULE_ID_RE, Severity
from gpulint.load.locations import Span
from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import objects_in
from gpulint.model.podspecs import workload_of
from gpulint.model.workload import Workload
from gpulint.results.findings import Finding
from gpulint.results.scanning import SuppressionContext
from gpulint.suppress.systemcomponents import (
    ExemptionError,
    SystemComponentSuppressor,
    _compile_pattern,
    builtin_components,
    image_repository,
    parse_components,
    system_component_suppressor,
)


def _workload(text: str) -> Workload:
    docs = [d for d in load_documents(text) if isinstance(d, Document)]
    workload = workload_of(next(objects_in("test.yaml", docs[0])))
    assert workload is not None
    return workload


def _finding(rule: str = "GPU006", container: str | None = None) -> Finding:
    return Finding(rule, "x", Severity.ERROR, "m", "test.yaml", Span(1, 1, 1, 2), container=container)


def _ctx(workload: Workload, container_name: str | None) -> SuppressionContext:
    container = None
    if container_name is not None:
        container = next(c for _pod, c in workload.containers() if c.name == container_name)
    return SuppressionContext(workload, container, workload.obj, None, 0)


POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: {namespace}
spec:
  containers:
  - name: a
    image: {a}
  - name: b
    image: {b}
"""


def _pod(a: str, b: str, namespace: str = "kube-system") -> Workload:
    return _workload(POD.format(a=a, b=b, namespace=namespace))


@pytest.mark.parametrize("image, repository", [
    ("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "nvcr.io/nvidia/k8s-device-plugin"),
    ("nvidia/k8s-device-plugin", "docker.io/nvidia/k8s-device-plugin"),
    ("index.docker.io/nvidia/k8s-device-plugin:v1", "docker.io/nvidia/k8s-device-plugin"),
    ("ubuntu:22.04", "docker.io/library/ubuntu"),
    ("localhost:5000/gpu/plugin", "localhost:5000/gpu/plugin"),
    ("NVCR.IO/nvidia/driver:550", "nvcr.io/nvidia/driver"),
    ("registry.cn-beijing.aliyuncs.com/acs/k8s-gpushare-plugin@sha256:" + "ab" * 32,
     "registry.cn-beijing.aliyuncs.com/acs/k8s-gpushare-plugin"),
    # Placeholders and broken references are not images.
    ("FILLED BY THE OPERATOR", None),
    ("FILLED_BY_THE_VALIDATOR", None),
    ("{{ .Values.image }}", None),
    (" nvidia/cuda", None),
    ("nvcr.io/nvidia/Driver", None),
    ("nvcr.io//nvidia", None),
    ("", None),
])
def test_image_repository(image: str, repository: str | None) -> None:
    assert image_repository(image) == repository


def _suppressor(entries: list[dict]) -> SystemComponentSuppressor:
    return system_component_suppressor(entries, builtin=False)


MIRROR = {"name": "mirrored device plugin", "images": ["harbor.example.com/mirror/nvidia/k8s-device-plugin"],
          "exempt": ["GPU006"], "source": "our mirror"}


@pytest.mark.parametrize("pattern, compiled", [
    ("nvcr.io/nvidia/k8s-device-plugin", ("nvcr.io/nvidia/k8s-device-plugin", None)),
    ("*.azurecr.io/team/dev?ce-plug*", ("", r"[^/.]*\.azurecr\.io/team/dev[^/]ce\-plug[^/]*\Z")),
    ("reg.io/a\\*b/c", ("reg.io/a\\", r"reg\.io/a\\[^/]*b/c\Z")),   # a backslash stays literal
    ("cuda", ("docker.io/library/cuda", None)),
])
def test_compile_pattern_escapes_all_but_the_wildcards(pattern: str, compiled: tuple) -> None:
    assert _compile_pattern(pattern) == compiled


def test_extra_entries_add_mirrors() -> None:
    suppress = _suppressor([MIRROR])
    workload = _pod("harbor.example.com/mirror/nvidia/k8s-device-plugin:v0.17.0", "busybox")
    verdict = suppress(_finding(), _ctx(workload, "a"))
    assert verdict is not None
    assert (verdict.kind, verdict.reason) == ("system-component", "system component: mirrored device plugin")
    # Only the rules listed in `exempt`, only the container the finding is about.
    assert suppress(_finding("GPU003"), _ctx(workload, "a")) is None
    assert suppress(_finding(), _ctx(workload, "b")) is None


def test_builtin_list_is_on_by_default_and_can_be_turned_off() -> None:
    workload = _pod("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "busybox")
    assert system_component_suppressor()(_finding(), _ctx(workload, "a")) is not None
    assert system_component_suppressor(builtin=False)(_finding(), _ctx(workload, "a")) is None
    # A configuration's own entries still apply without the built-in list.
    mirror = _pod("harbor.example.com/mirror/nvidia/k8s-device-plugin:v1", "busybox")
    assert system_component_suppressor([MIRROR], builtin=False)(_finding(), _ctx(mirror, "a")) is not None


def test_pod_level_findings_need_every_container_recognised() -> None:
    suppress = system_component_suppressor()
    both = _pod("nvcr.io/nvidia/driver:550.90.07-ubuntu22.04", "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.6.10")
    verdict = suppress(_finding("GPU001"), _ctx(both, None))
    assert verdict is not None
    assert verdict.reason == ("system component: NVIDIA driver (GPU Operator driver container), "
                              "NVIDIA driver manager")
    mixed = _pod("nvcr.io/nvidia/driver:550.90.07-ubuntu22.04", "registry.example.com/app:1")
    assert suppress(_finding("GPU001"), _ctx(mixed, None)) is None
    # ... and each of them exempt from that rule (the driver manager is not exempt from GPU007).
    assert suppress(_finding("GPU007"), _ctx(both, None)) is None


def test_findings_without_a_workload_are_never_exempt() -> None:
    suppress = system_component_suppressor()
    assert suppress(_finding("GPU000"), SuppressionContext(None, None, None, "x", 0)) is None


def test_namespaces_restrict_an_entry() -> None:
    entry = dict(MIRROR, namespaces=["gpu-operator"])
    suppress = _suppressor([entry])
    image = "harbor.example.com/mirror/nvidia/k8s-device-plugin:v1"
    assert suppress(_finding(), _ctx(_pod(image, "busybox", "gpu-operator"), "a")) is not None
    assert suppress(_finding(), _ctx(_pod(image, "busybox", "tenant-a"), "a")) is None


def test_templates_match_placeholder_images_only() -> None:
    entry = {"name": "operator asset", "templates": [{"app": "gpu-thing"}], "exempt": ["GPU006"]}
    suppress = _suppressor([entry])
    text = POD.replace("  name: p\n", "  name: p\n  labels: {{app: gpu-thing}}\n")
    workload = _workload(text.format(a="FILLED BY THE OPERATOR", b="registry.example.com/app:1",
                                     namespace="x"))
    assert suppress(_finding(), _ctx(workload, "a")) is not None
    assert suppress(_finding(), _ctx(workload, "b")) is None
    assert suppress(_finding(), _ctx(workload, None)) is None


@pytest.mark.parametrize("pattern", [
    "evil/k8s-device-plugin",                        # another Docker Hub namespace
    "docker.io/nvidia/k8s-device-plugin",            # the real one, on Docker Hub
    "nvcr.io.evil.example/nvidia/k8s-device-plugin",
    "evil.example/nvcr.io/nvidia/k8s-device-plugin",
    "nvcr.io/nvidia/k8s-device-plugin-dev",
    "nvcr.io/nvidia/k8s-device-plugin/x",
    "registry.cn-hangzhou.aliyuncs.com.evil.example/acs/k8s-gpushare-plugin",
    "registry.cn-x.evil.example/acs/k8s-gpushare-plugin",
    "registry.cn-hangzhou.aliyuncs.com/evil/k8s-gpushare-plugin",
    "registry.cn-hangzhou.aliyuncs.com/acs/evil/k8s-gpushare-plugin",
    "us-docker.pkg.dev/gce-ai-infra/gpudirect-x/evil/nccl-plugin-y",
    # Unrelated images under a listed component's registry path.
    "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic",
    "nvcr.io/nvidia/cuda",
    "nvcr.io/nvidia/k8s/cuda-sample",
    "registry.k8s.io/nvidia-gpu-device-plugin-test",
])
def test_look_alikes_are_not_recognised(pattern: str) -> None:
    repository = image_repository(pattern + ":1")
    assert repository is not None
    recognised = [c.name for c in builtin_components() if c.matches_repository(repository)]
    if pattern == "docker.io/nvidia/k8s-device-plugin":
        assert recognised == ["NVIDIA device plugin / GPU feature discovery"]
    else:
        assert recognised == []


@pytest.mark.parametrize("image", [
    "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
    "nvcr.io/nvidia/gpu-operator:v24.9.0",
    "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v23.9.1",
    "nvcr.io/nvidia/driver:550.90.07-ubuntu22.04",
    "nvcr.io/nvidia/k8s/container-toolkit:v1.16.2-ubuntu20.04",
    "nvcr.io/nvidia/cloud-native/dcgm:3.3.8-1-ubuntu22.04",
    "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04",
    "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.9.0-ubuntu20.04",
    "registry.cn-hangzhou.aliyuncs.com/acs/k8s-gpushare-plugin:v2-1.11-aff8a23",
    "registry-vpc.cn-zhangjiakou.aliyuncs.com/acs/k8s-gpushare-schd-extender:1.11-d170d8a",
    "docker.io/projecthami/hami:v2.4.1",
    "projecthami/hami:v2.4.1",
    "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.0.6",
    # Older names and public mirrors of listed components.
    "k8s.gcr.io/nvidia-gpu-device-plugin@sha256:" + "08" * 32,
    "registry.k8s.io/nvidia-gpu-device-plugin@sha256:" + "08" * 32,
    "k8s.gcr.io/minikube-nvidia-driver-installer:e2d9b43228decf5d6f7dce3f0a85d390f138fa01",
    "gcr.io/gke-release/nri-device-injector:1.0.25-gke.6",
])
def test_real_components_are_recognised(image: str) -> None:
    repository = image_repository(image)
    assert repository is not None
    assert any(c.matches_repository(repository) for c in builtin_components())


@pytest.mark.parametrize("entry, message", [
    ("device-plugin", "must be a mapping"),
    ({"images": ["nvcr.io/a/b"], "exempt": ["GPU006"]}, "`name` must be a non-empty string"),
    ({"name": "x", "exempt": ["GPU006"]}, "needs `images`"),
    ({"name": "x", "images": "nvcr.io/a/b", "exempt": ["GPU006"]}, "`images` must be a list of strings"),
    ({"name": "x", "images": ["nvcr.io/a/b:v1"], "exempt": ["GPU006"]}, "drop the tag or digest"),
    ({"name": "x", "images": ["nvcr.io/a/b@sha256:00"], "exempt": ["GPU006"]}, "drop the tag or digest"),
    ({"name": "x", "images": ["nvcr.io/a/b"]}, "`exempt` must list"),
    ({"name": "x", "images": ["nvcr.io/a/b"], "exempt": ["privileged-gpu"]}, "rule ids like GPU006"),
    ({"name": "x", "images": ["nvcr.io/a/b"], "exempt": ["GPU006"], "image": "typo"}, "unknown field(s) image"),
    ({"name": "x", "templates": [{"app": 1}], "exempt": ["GPU006"]}, "`templates` must be"),
    ({"name": "x", "images": ["nvcr.io/a/b"], "exempt": ["GPU006"], "workload-base": "yes"},
     "`workload-base` must be true or false"),
])
def test_bad_entries_are_explained(entry: object, message: str) -> None:
    with pytest.raises(ExemptionError) as error:
        parse_components([entry], ".gpulint.yaml")
    assert message in str(error.value)
    assert str(error.value).startswith(".gpulint.yaml: system component #1")


def test_builtin_list_is_well_formed() -> None:
    components = builtin_components()
    assert len({c.name for c in components}) == len(components)
    for component in components:
        assert component.source, component.name
        assert all(RULE_ID_RE.match(rule) and rule.startswith("GPU00") for rule in component.exempt), component.name
        for pattern in component.images:
            host, _, path = pattern.partition("/")
            # Every pattern names its registry; wildcards never start a host.
            assert "." in host and not host.startswith("*"), pattern
            # A wildcard only stands for a region in a registry host: one in the
            # repository path would also cover the vendor's other images.
            assert "*" not in path and "?" not in path, pattern


def test_cli_reports_system_components_as_suppressed() -> None:
    path = str(FIXTURES / "exemptions" / "nvidia-device-plugin.yaml")
    code, report = scan_json("--select", "GPU006", path)
    assert code == 0
    schema = json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert report["summary"]["findings"] == 0 and report["summary"]["suppressed"] == 2
    first = report["findings"][0]
    assert first["suppressed"] is True
    assert first["suppression"] == {"kind": "system-component",
                                    "reason": "system component: NVIDIA device plugin / GPU feature discovery"}

    code, out, _err = run_cli("scan", "--select", "GPU006", path)
    assert code == 0 and "GPU006" not in out and "2 suppressed (--show-suppressed to list)" in out
    code, out, _err = run_cli("scan", "--select", "GPU006", "--show-suppressed", path)
    assert code == 0
    assert out.count("[suppressed (system-component): system component: NVIDIA device plugin") == 2

    code, report = scan_json("--select", "GPU006", "--no-default-exemptions", path)
    assert code == 1
    assert report["summary"]["suppressed"] == 0 and report["summary"]["findings"] == 2


def test_data_file_is_packaged() -> None:
    text = files("gpulint.knowledge").joinpath("data/system_components.yaml").read_text(encoding="utf-8")
    assert "components:" in text


def test_help_documents_the_flag() -> None:
    code, out, _err = run_cli("scan", "--help")
    assert code == 0 and "--no-default-exemptions" in out


def test_suppressor_is_one_pipeline_entry(tmp_path: Path) -> None:
    """The suppressor follows the Suppressor protocol: JSON output of a mixed pod."""
    manifest = tmp_path / "mixed.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: mixed}\nspec:\n"
        "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
        "  containers:\n"
        "  - name: plugin\n    image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n"
        "    securityContext: {privileged: true}\n"
        "  - name: miner\n    image: registry.example.com/miner:1\n"
        "    securityContext: {privileged: true}\n")
    code, out, _err = run_cli("scan", "--select", "GPU006", "--format", "json", str(manifest))
    findings = json.loads(out)["findings"]
    assert code == 1
    assert [(f["container"], f["suppressed"]) for f in findings] == [("plugin", True), ("miner", False)]


def test_the_shipped_components_are_read_when_a_finding_first_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Making the suppressor reads nothing (a scan answered from the result cache asks no
    question); the first finding reads the shipped list once, ahead of the configuration's."""
    from gpulint.suppress import systemcomponents as exemptions

    reads = []
    real = exemptions.builtin_components

    def counting() -> tuple:
        reads.append(1)
        return real()

    monkeypatch.setattr(exemptions, "builtin_components", counting)
    suppress = system_component_suppressor([MIRROR])
    assert reads == []
    workload = _pod("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "busybox")
    assert suppress(_finding(), _ctx(workload, "a")) is not None
    suppress(_finding(), _ctx(workload, "a"))
    assert len(reads) == 1
    assert suppress.components[:-1] == real()
    assert suppress.components[-1].name == "mirrored device plugin"
