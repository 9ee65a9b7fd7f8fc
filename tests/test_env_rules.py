"""GPU004, GPU005, GPU007, GPU008: cross-file resolution, Dockerfiles, options, image references."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from conftest import FIXTURES, scan_json
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from gpulint.api import RuleContext
from gpulint.knowledge.gpu import image_visible_devices_default, parse_image
from gpulint.load.dockerfile import parse as parse_dockerfile
from gpulint.load.yamlload import Document, load_documents
from gpulint.model.index import ConfigIndex
from gpulint.model.objects import objects_in
from gpulint.model.podspecs import workload_of

GPU004 = importlib.import_module("gpulint.rules.gpu004_visible_devices_indirect")
GPU005 = importlib.import_module("gpulint.rules.gpu005_image_default_visible_devices")
GPU007 = importlib.import_module("gpulint.rules.gpu007_nvidia_runtime_without_gpu_limit")


def _findings(report: dict) -> list[tuple[str, str, int, int, str]]:
    return sorted((Path(f["path"]).name, f["rule"], f["line"], f["column"], f["severity"])
                  for f in report["findings"])


def _check(module, text: str, options: dict | None = None, settings: dict | None = None) -> list:
    """Run one rule's check over every workload of `text`, with a scan-wide index of its ConfigMaps."""
    index = ConfigIndex()
    objects = []
    for doc in load_documents(text):
        if isinstance(doc, Document):
            for obj in objects_in("<test>", doc):
                index.add(obj)
                objects.append(obj)
    ctx = RuleContext({**module.RULE.options, **(options or {})}, index, settings or {})
    out = []
    for obj in objects:
        workload = workload_of(obj)
        if workload is not None:
            out.extend(module.check(workload, ctx))
    return out


# --- GPU004: sources in other files ---------------------------------------------


def test_cross_file_sources_are_resolved_when_the_directory_is_scanned() -> None:
    _code, report = scan_json(str(FIXTURES / "rules" / "GPU004" / "cross-file"))
    assert _findings(report) == [
        # ConfigMap ml/gpu-env (not other/gpu-env) holds `all`
        ("workloads.yaml", "GPU004", 16, 11, "error"),
        # the unnamespaced ConfigMap `prefixed` provides VISIBLE_DEVICES=0,1 through prefix NVIDIA_
        ("workloads.yaml", "GPU004", 22, 11, "error"),
        # key `hidden` is void; the Secret sets void, which also silences GPU005 for nvidia/cuda
    ]
    messages = [f["message"] for f in report["findings"]]
    assert "configmaps.yaml:8" in messages[0] and "=all" in messages[0]
    assert "configmaps.yaml:23" in messages[1] and "=0,1" in messages[1]


def test_cross_file_workload_alone_reports_unverifiable_sources_lower() -> None:
    _code, report = scan_json(str(FIXTURES / "rules" / "GPU004" / "cross-file" / "workloads.yaml"))
    assert _findings(report) == [
        ("workloads.yaml", "GPU004", 16, 11, "error"),    # valueFrom outside the scan still requests GPUs
        ("workloads.yaml", "GPU004", 22, 11, "info"),     # envFrom outside the scan: unverifiable
        ("workloads.yaml", "GPU004", 27, 11, "error"),
        ("workloads.yaml", "GPU004", 33, 11, "info"),
        ("workloads.yaml", "GPU005", 31, 16, "warning"),
    ]


def test_secret_values_stay_out_of_messages() -> None:
    _code, report = scan_json(str(FIXTURES / "rules" / "GPU004" / "bad-envfrom.yaml"))
    secret = [f for f in report["findings"] if f["container"] == "secret"]
    assert len(secret) == 1
    assert "nvidia.com/gpu=all" not in secret[0]["message"]
    assert "GPUs named through CDI" in secret[0]["message"]


POD_NONE = """
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {NVIDIA_VISIBLE_DEVICES: none}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    image: x
    envFrom: [{configMapRef: {name: cm}}]
"""


def test_none_is_reported_only_when_the_option_says_so() -> None:
    assert _check(GPU004, POD_NONE) == []
    found = _check(GPU004, POD_NONE, options={"none-is-hidden": False})
    assert len(found) == 1 and "driver libraries" in found[0].message


# --- GPU005: image references and data -------------------------------------------


@pytest.mark.parametrize("image, expected", [
    ("nvidia/cuda:12", ("docker.io", "nvidia/cuda", "12", None)),
    ("ubuntu", ("docker.io", "library/ubuntu", None, None)),
    ("docker.io/library/ubuntu:22.04", ("docker.io", "library/ubuntu", "22.04", None)),
    ("index.docker.io/nvidia/cuda", ("docker.io", "nvidia/cuda", None, None)),
    ("localhost:5000/nvidia/cuda:12", ("localhost:5000", "nvidia/cuda", "12", None)),
    ("registry.example.com:5000/team/app", ("registry.example.com:5000", "team/app", None, None)),
    ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd@sha256:ab",
     ("nvcr.io", "nvidia/k8s/cuda-sample", "vectoradd", "sha256:ab")),
])
def test_parse_image(image: str, expected: tuple) -> None:
    ref = parse_image(image)
    assert ref is not None
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == expected


@pytest.mark.parametrize("image", ["{{ .Values.image }}", "$IMAGE", "", "<your-registry>/app"])
def test_templated_images_are_not_references(image: str) -> None:
    assert parse_image(image) is None
    assert image_visible_devices_default(image, {}) is None


@pytest.mark.parametrize("image, sets", [
    ("rayproject/ray:2.52.0-gpu", "all"),
    ("rayproject/ray:nightly-py39-cu121", "all"),
    ("rayproject/ray:2.52.0", None),                       # untagged suffix is the CPU image
    ("rayproject/ray@sha256:ab", None),                    # tag unknown: no tag-dependent match
    ("rayproject/ray-ml", "all"),                          # latest aliases -gpu for ray-ml
    ("rayproject/ray-ml:2.9.0-py310-cpu", None),
    ("tensorflow/tensorflow:latest-gpu", "all"),
    ("tensorflow/tensorflow:latest", None),
    ("nvidia/cuda@sha256:ab", "all"),                      # no tag needed for nvidia/cuda
    ("nvcr.io/nvidia/gpu-operator:v24.9.0", "void"),       # the trap: listed before nvcr.io/nvidia/*
    ("nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.0", "void"),
    ("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "all"),
    ("registry-vpc.cn-hangzhou.aliyuncs.com/acs/k8s-gpushare-plugin:v2", "all"),
    # By evidence, without a list: NGC namespaces, a repository or tag that says CUDA.
    ("example.com/nvidia/cuda:12", "all"),                 # a mirror of nvidia/cuda is still CUDA
    ("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", "all"),
    ("nvcr.io/nvidia/tritonserver:24.05-py3", "all"),
    ("registry.example.com/team/trainer:2.1-cuda11.8", "all"),
    ("registry.example.com/team/trainer:torch2.3-cu118", "all"),
    ("registry.example.com/team/cuda-trainer", "all"),
    ("registry.example.com/team/trainer:2.1-cpu", None),
    ("registry.example.com/team/cudatoolkit-docs:1", None),  # `cuda` must be a word
    ("registry.example.com/team/accumulator:cu", None),
    ("nvcr.io/partner/app:1", None),                       # other NGC namespaces are not NVIDIA's builds
])
def test_image_data(image: str, sets: str | None) -> None:
    rule = image_visible_devices_default(image, {})
    assert (rule.sets if rule else None) == sets
    if rule is not None:
        assert rule.source


def test_every_image_entry_has_a_source() -> None:
    from gpulint.knowledge.gpu import builtin_image_rules

    rules = builtin_image_rules()
    assert rules and all(rule.source for rule in rules)


POD_CUSTOM_IMAGE = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    image: registry.example.com/ml/trainer:3.1
"""


def test_gpu_images_setting_extends_the_data() -> None:
    assert _check(GPU005, POD_CUSTOM_IMAGE) == []
    found = _check(GPU005, POD_CUSTOM_IMAGE, settings={"gpu-images": ["registry.example.com/ml/*"]})
    assert len(found) == 1 and "configured gpu-images pattern" in found[0].message
    found = _check(GPU005, POD_CUSTOM_IMAGE, settings={"gpu-images": ["registry.example.com/ml/trainer:3.*"]})
    assert len(found) == 1


# --- GPU005: Dockerfiles ----------------------------------------------------------


def test_dockerfile_finding_spans_the_assignment() -> None:
    _code, report = scan_json(str(FIXTURES / "rules" / "GPU005" / "bad.Dockerfile"))
    [finding] = report["findings"]
    # `NVIDIA_VISIBLE_DEVICES=all` on line 8, from column 48 up to the end of the line
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (8, 48, 8, 74)


def test_containerfile_is_checked(tmp_path: Path) -> None:
    (tmp_path / "Containerfile").write_text("FROM registry.access.redhat.com/ubi9\nENV NVIDIA_VISIBLE_DEVICES=all\n")
    _code, report = scan_json(str(tmp_path))
    assert [(f["rule"], f["line"], f["column"]) for f in report["findings"]] == [("GPU005", 2, 5)]
    (tmp_path / "Containerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=void\n")
    _code, report = scan_json(str(tmp_path))
    assert report["findings"] == []


def test_dockerfile_reader_follows_buildkit() -> None:
    text = (
        "# escape=`\n"
        "ARG BASE=ubuntu:22.04\n"
        "FROM $BASE AS base\n"
        "ENV A=1 `\n"
        "    NVIDIA_VISIBLE_DEVICES=\"${GPUS:-all}\" B=$A\n"
        "RUN <<EOF\n"
        "ENV NVIDIA_VISIBLE_DEVICES=void\n"
        "EOF\n"
        "FROM base\n"
        "env C 'x y'\n"
    )
    parsed = parse_dockerfile("Dockerfile", text)
    assert [(s.name, s.base, s.parent) for s in parsed.stages] == [("base", "ubuntu:22.04", None), (None, "base", 0)]
    env = parsed.effective_env()
    assert env["NVIDIA_VISIBLE_DEVICES"].value == "all"
    assert env["NVIDIA_VISIBLE_DEVICES"].span == (5, 5, 5, 42)
    assert env["B"].value == ""           # values of one ENV see the variables from before it
    assert env["C"].value == "x y"
    assert [i.keyword for i in parsed.instructions] == ["ARG", "FROM", "ENV", "RUN", "FROM", "ENV"]


# --- GPU007 -------------------------------------------------------------------


def test_runtime_classes_setting() -> None:
    pod = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  runtimeClassName: gpu-runtime
  containers: [{name: a, image: x}]
"""
    assert _check(GPU007, pod) == []
    assert len(_check(GPU007, pod, settings={"runtime-classes": ["gpu-*"]})) == 1


# --- robustness -----------------------------------------------------------------

_DOCKERFILE_TOKENS = st.sampled_from([
    "FROM ", "ENV ", "ARG ", "RUN ", "env ", " AS ", "=", "\\\n", "`", "$", "${", "}", ":-", '"', "'",
    "\n", " ", "\t", "# escape=`\n", "#", "<<EOF\n", "EOF\n", "base", "NVIDIA_VISIBLE_DEVICES", "all", "void",
])


@hsettings(max_examples=300, deadline=None)
@given(st.lists(_DOCKERFILE_TOKENS, max_size=60).map("".join))
def test_dockerfile_reader_never_fails(text: str) -> None:
    parsed = parse_dockerfile("Dockerfile", text)
    for pair in parsed.effective_env().values():
        line, column, end_line, end_column = pair.span
        assert 1 <= line <= end_line and column >= 1


@hsettings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abc/:@.-_ 0{}$")), max_size=30))
def test_image_matching_never_fails(image: str) -> None:
    image_visible_devices_default(image, {})


_EXPANSION_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    image: registry.example.com/app:1
    envFrom:
    - configMapRef: {name: not-in-the-scan}
      prefix: CFG_
    env:
    - name: FROM_FIELD
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: GPUS
      value: "0,1"
    - name: V1
      value: $(GPUS)
    - name: V2
      value: $(FROM_FIELD)
    - name: V3
      value: $(CFG_DEVICES)
    - name: V4
      value: $(UNDEFINED) and $$(GPUS) and $(GPUS
    - name: NVIDIA_VISIBLE_DEVICES
      value: $(GPUS)
"""


def test_env_references_expand_as_the_kubelet_expands_them() -> None:
    from gpulint.knowledge.envexpand import expanded_value
    from gpulint.load.yamlload import load_documents
    from gpulint.model.objects import objects_in
    from gpulint.model.podspecs import workload_of

    doc = next(iter(load_documents(_EXPANSION_POD)))
    workload = workload_of(next(objects_in("pod.yaml", doc)))
    assert workload is not None
    (_pod, container), = list(workload.containers())
    values = {var.name: expanded_value(container, var) for var in container.env}
    assert values == {
        "FROM_FIELD": "",                       # a valueFrom entry has no literal value
        "GPUS": "0,1",
        "V1": "0,1",
        "V2": None,                             # set through valueFrom: not shown by the manifest
        "V3": None,                             # an envFrom source outside the scan may define it
        "V4": "$(UNDEFINED) and $(GPUS) and $(GPUS",
        "NVIDIA_VISIBLE_DEVICES": "0,1",
    }
    _code, report = scan_json("--select", "GPU003", "-", input=_EXPANSION_POD)
    (finding,) = report["findings"]
    assert (finding["rule"], finding["line"], finding["column"]) == ("GPU003", 24, 7)
    assert finding["message"].startswith(
        "NVIDIA_VISIBLE_DEVICES=$(GPUS) (expanded: 0,1) in env exposes GPUs chosen by index")
