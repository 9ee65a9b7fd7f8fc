"""GPU request rules GPU101-GPU105: resource-name knowledge, settings, options,
default selection, and their behaviour on the real-world corpus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES, scan_json

from gpulint.inputs.discovery import discover
from gpulint.knowledge.gpu import DEFAULT_SETTINGS, settings_with
from gpulint.knowledge.resources import (
    api_rejects_name,
    edit_distance,
    is_placeholder_name,
    is_template_value,
    looks_like_gpu,
    resource_names,
    suggestions,
)
from gpulint.results.scanning import ScanConfig
from gpulint.scan.engine import scan
from gpulint.scan.registry import load_rules

DEFAULT_NAMES = resource_names({})

REQUEST_RULES = ("GPU101", "GPU102", "GPU103", "GPU104", "GPU105")


# --- resource names -------------------------------------------------------------


@pytest.mark.parametrize("a, b, distance", [
    ("", "", 0), ("gpu", "gpu", 0), ("gpu", "", 3), ("", "gpu", 3), ("gup", "gpu", 1), ("gpus", "gpu", 1),
    ("gpu", "cpu", 1), ("nvidia/gpu", "nvidia.com/gpu", 4), ("kitten", "sitting", 3), ("ca", "abc", 3),
])
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance
    assert edit_distance(b, a) == distance


@pytest.mark.parametrize("name", [
    "nvidia.com/gpus", "nvidia.com/GPU", "nvidia/gpu", "gpu", "NVIDIA.COM/gpu", "nvidia.com/gup",
    "nvidia.com/gpu-count", "nvidia.com/mig1g.5gb", "alpha.kubernetes.io/nvidia-gpu", "amd.com/gpus",
    "nvidia.co/vgpu", "kubernetes.io/gpu",
])
def test_looks_like_gpu(name: str) -> None:
    assert looks_like_gpu(name, DEFAULT_NAMES)
    assert not DEFAULT_NAMES.is_known(name)


@pytest.mark.parametrize("name", [
    "volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/gpu-memory", "vendor.io/fancy-vgpu",
])
def test_a_schedulers_own_gpu_resource_is_known_not_a_typo(name: str) -> None:
    """A domain of its own (no known vendor's, nor within two edits of one) with `gpu` in the
    name: a device plugin in the cluster advertises it (Volcano's vGPU plugin)."""
    assert DEFAULT_NAMES.is_known(name) and not DEFAULT_NAMES.is_validated(name)


@pytest.mark.parametrize("name", [
    "cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "hugepages-1Gi", "rdma/hca_shared_devices_a",
    "nvidia.com/rdma_shared_device_a", "nvidia.com/hostdev", "smarter-devices/fuse", "aws.amazon.com/neuron",
    "vpc.amazonaws.com/efa", "habana.ai/gaudi", "google.com/tpu", "devices.kubevirt.io/kvm", "aliyun.com/eni",
    "xilinx.com/fpga-xilinx_u250", "squat.ai/serial",
])
def test_other_extended_resources_do_not_look_like_gpus(name: str) -> None:
    assert not looks_like_gpu(name, DEFAULT_NAMES)


@pytest.mark.parametrize("name", [
    "nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-7g.80gb",
    "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe", "aliyun.com/gpu-mem", "aliyun.com/gpu-count",
    "aliyun.com/gpu-core.percentage", "nvidia.com/gpumem", "nvidia.com/gpucores", "iluvatar.ai/BI-V100-vgpu",
])
def test_known_names_are_validated_by_default(name: str) -> None:
    assert DEFAULT_NAMES.is_known(name)
    assert DEFAULT_NAMES.is_validated(name)


def test_overcommittable_names_are_known_but_not_validated() -> None:
    names = resource_names({"overcommittable-resources": ["nvidia.com/gpu.shared", "vendor.io/hpn-gpu"]})
    assert names.is_known("nvidia.com/gpu.shared") and not names.is_validated("nvidia.com/gpu.shared")
    assert names.is_known("vendor.io/hpn-gpu") and not names.is_validated("vendor.io/hpn-gpu")
    assert names.is_validated("nvidia.com/gpu")
    assert not DEFAULT_NAMES.is_validated("vendor.io/hpn-gpu")


@pytest.mark.parametrize("name, expected", [
    ("nvidia.com/gpus", ["nvidia.com/gpu"]),
    ("nvidia.com/GPU", ["nvidia.com/gpu"]),
    ("nvidia/gpu", ["nvidia.com/gpu"]),
    ("gpu", ["nvidia.com/gpu"]),
    ("nvidia.com/gup", ["nvidia.com/gpu"]),
    ("amd.com/gpus", ["amd.com/gpu"]),
    ("alpha.kubernetes.io/nvidia-gpu", ["nvidia.com/gpu"]),
    ("nvidia.com/mig1g.5gb", ["nvidia.com/mig-1g.5gb"]),
    ("nvidia.com/MIG-1g.5gb", ["nvidia.com/mig-1g.5gb"]),
    ("nvidia.com/gpu-count", ["aliyun.com/gpu-count"]),
    ("aliyun.com/gpumem", ["aliyun.com/gpu-mem"]),
    ("gpu.intel.com/I915", ["gpu.intel.com/i915"]),
    ("vendor.io/something-gpu-like-and-long", []),
])
def test_suggestions(name: str, expected: list[str]) -> None:
    assert suggestions(name, DEFAULT_NAMES) == expected


def test_suggestions_come_from_the_configured_names() -> None:
    names = resource_names({"gpu-resources": DEFAULT_SETTINGS["gpu-resources"] + ["nvidia.com/a100"]})
    assert suggestions("nvidia.com/a10O", names) == ["nvidia.com/a100"]


@pytest.mark.parametrize("name, rejected", [
    ("gpu", True), ("NVIDIA.COM/gpu", True), ("nvidia.com/-gpu", True), ("a/b/c", True),
    ("nvidia.com/GPU", False), ("nvidia/gpu", False), ("nvidia.com/gpus", False), ("cpu", False),
    ("hugepages-2Mi", False), ("alpha.kubernetes.io/nvidia-gpu", False),
])
def test_api_rejects_name(name: str, rejected: bool) -> None:
    assert api_rejects_name(name) is rejected


def test_placeholders() -> None:
    assert is_placeholder_name("example.com/gpu") and is_placeholder_name("gpu.example/x")
    assert not is_placeholder_name("nvidia.com/gpu") and not is_placeholder_name("gpu")
    for value in ("${GPUS}", "$GPUS", "{{ .Values.gpus }}", "<number-of-gpus>", " ${A} "):
        assert is_template_value(value), value
    for value in ("1", "one", "$", "${}", 1, None, "1${A}"):
        assert not is_template_value(value), value


# --- rules through the scan -------------------------------------------------------


POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: registry.example.com/a:1
    resources:
%s
"""


def _scan(tmp_path: Path, resources: str, settings: dict | None = None, options: dict | None = None,
          select: tuple[str, ...] = REQUEST_RULES[:4]) -> list[tuple[str, int, int]]:
    path = tmp_path / "pod.yaml"
    path.write_text(POD % resources)
    rules = load_rules()
    config = ScanConfig(rules=[rules[r] for r in select], all_rules=rules, settings=settings_with(settings),
                        options=options or {})
    result = scan(discover([str(path)]).inputs, config)
    assert not result.internal_errors
    return sorted((f.rule_id, f.span.line, f.span.column) for f in result.findings)


def test_overcommittable_setting_skips_request_rules(tmp_path: Path) -> None:
    resources = """      requests: {nvidia.com/gpu.shared: 1, nvidia.com/gpu: 1}
      limits: {nvidia.com/gpu.shared: 2}"""
    assert _scan(tmp_path, resources) == [("GPU101", 9, 44), ("GPU102", 9, 18)]
    settings = {"overcommittable-resources": ["nvidia.com/gpu.shared"]}
    assert _scan(tmp_path, resources, settings) == [("GPU101", 9, 44)]


def test_configured_gpu_resources_are_validated_and_known(tmp_path: Path) -> None:
    resources = """      limits: {nvidia.com/a100-gpu: 0.5}"""
    assert _scan(tmp_path, resources) == [("GPU104", 9, 16)]
    settings = {"gpu-resources": DEFAULT_SETTINGS["gpu-resources"] + ["nvidia.com/a100-gpu"]}
    assert _scan(tmp_path, resources, settings) == [("GPU103", 9, 16)]


def test_ignore_resources_option(tmp_path: Path) -> None:
    resources = """      limits: {nvidia.co/vgpu: 1, nvidia.com/gpus: 1}"""
    assert _scan(tmp_path, resources) == [("GPU104", 9, 16), ("GPU104", 9, 35)]
    options = {"GPU104": {"ignore-resources": ["nvidia.co/*"]}}
    assert _scan(tmp_path, resources, options=options) == [("GPU104", 9, 35)]


def test_gpu_model_labels_setting(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("""apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {example.io/gpu-model: h100}
  containers:
  - name: c
    image: registry.example.com/a:1
    resources:
      limits: {nvidia.com/gpu: 1}
""")
    rules = load_rules()

    def run(settings: dict | None) -> list[str]:
        config = ScanConfig(rules=[rules["GPU105"]], all_rules=rules, settings=settings_with(settings))
        return [f.rule_id for f in scan(discover([str(path)]).inputs, config).findings]

    assert run(None) == ["GPU105"]
    assert run({"gpu-model-labels": ["example.io/gpu-model"]}) == []


def test_gpu105_is_off_by_default() -> None:
    bad = FIXTURES / "rules" / "GPU105" / "bad-unpinned.yaml"
    _code, report = scan_json(str(bad))
    assert not [f for f in report["findings"] if f["rule"] == "GPU105"]
    _code, report = scan_json("--select", "GPU105", str(bad))
    assert {f["rule"] for f in report["findings"]} == {"GPU105"}
    _code, report = scan_json("--extend-select", "gpu-type-unpinned", str(bad))
    assert "GPU105" in {f["rule"] for f in report["findings"]}
    assert not load_rules()["GPU105"].enabled_by_default


def test_messages_quote_the_api_server(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(POD % """      requests: {nvidia.com/gpu: 2, amd.com/gpu: 1, gpu.intel.com/i915: 500m}
      limits: {nvidia.com/gpu: 1000m, gpu.intel.com/i915: -1}""")
    _code, report = scan_json("--select", "GPU1", str(path))
    messages = {f["rule"] + ":" + str(f["column"]): f["message"] for f in report["findings"]}
    assert '"must be equal to nvidia.com/gpu limit of 1"' in messages["GPU102:18"]
    assert '"Limit must be set for non overcommitable resources"' in messages["GPU101:37"]
    assert '"must be an integer"' in messages["GPU103:53"]
    assert '"must be greater than or equal to 0"' in messages["GPU103:39"]
    assert all('(Pod p, container "c")' in m for m in messages.values())


def test_wrong_types_are_gpu000_only(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(POD % """      limits: {nvidia.com/gpu: [1], amd.com/gpu: {n: 1}}
      requests: {nvidia.com/gpu: [1]}""")
    _code, report = scan_json(str(path))
    assert {f["rule"] for f in report["findings"]} == {"GPU000"}


# --- the corpus -------------------------------------------------------------------

# Every finding GPU101-GPU104 make on the corpus, each checked by hand:
# - the LeaderWorkerSet worker requests nvidia.com/gpu without a limit (LABELS: gpu-request-invalid);
# - the PyTorchJob template leaves the nvidia.com/gpu limit empty (LABELS: gpu-request-invalid).
CORPUS_FINDINGS = [
    ("kubernetes-sigs__kueue/site/static/examples/serving-workloads/sample-leaderworkerset-tas.yaml",
     "GPU101", 42, 15),
    ("aws-samples__awsome-distributed-training/3.test_cases/pytorch/mosaicml-composer/stable-diffusion/"
     "multi-node/3.stable-diffusion-eks.yaml-template", "GPU103", 35, 19),
]


def test_corpus_findings_are_exactly_the_labelled_ones(corpus: Path) -> None:
    template = corpus / CORPUS_FINDINGS[1][0]
    _code, report = scan_json("--select", "GPU101,GPU102,GPU103,GPU104", str(corpus), str(template))
    found = sorted((str(Path(f["path"]).relative_to(corpus)), f["rule"], f["line"], f["column"])
                   for f in report["findings"] if f["rule"] not in ("GPU000", "GPU010"))  # engine rules: reported unless ignored
    assert found == sorted(CORPUS_FINDINGS)


# gpu-request-invalid labels that gpulint leaves unreported by design (the test above
# checks that they are not reported):
# - a TODO placeholder, `nvidia.com/gpu: "<number_of_gpus>"`, labelled `debatable`:
#   GPU103 leaves template placeholders (`$GPUS`, `{{ .Values.gpus }}`, `<gpus>`)
#   alone, they are filled in before the manifest is applied (rules/gpu103_gpu_quantity_invalid.py).
CORPUS_LABELS_NOT_REPORTED = [
    ("GoogleCloudPlatform__cluster-toolkit/community/cos-nvidia-bug-report/bug-report-pod.yaml", 31),
]


def test_corpus_labels_of_invalid_requests_are_found(corpus: Path) -> None:
    rows = [line.split("\t") for line in (corpus / "LABELS.tsv").read_text().splitlines()[1:]]
    labelled = {(row[0], int(row[1])) for row in rows if len(row) > 2 and row[2] == "gpu-request-invalid"}
    reported = {(path, line) for path, _rule, line, _col in CORPUS_FINDINGS}
    print(f"\ngpu-request-invalid: {len(labelled & reported)}/{len(labelled)} labels reported")
    assert labelled == reported | set(CORPUS_LABELS_NOT_REPORTED)
    assert not reported & set(CORPUS_LABELS_NOT_REPORTED)


def test_corpus_gpu105_only_on_gpu_workloads(corpus: Path) -> None:
    _code, report = scan_json("--select", "GPU105", str(corpus))
    findings = [f for f in report["findings"] if f["rule"] == "GPU105"]
    assert findings, "the corpus has unpinned GPU workloads"
    counts = Counter(f["message"].split(" ")[0] for f in findings)
    print(f"\nGPU105 by resource: {dict(sorted(counts.items()))}")
    # GPU resources only; amd.com/gpu is one (the default `gpu-resources`: ROCm's example
    # Pods request it). Other accelerators (aws.amazon.com/neuron, google.com/tpu, Xilinx
    # FPGAs) are not GPUs and are never reported.
    assert all(f["message"].split(" ")[0] in ("nvidia.com/gpu", "aliyun.com/gpu-mem", "nvidia.com/gpumem",
                                              "metax-tech.com/gpu", "iluvatar.ai/BI-V100-vgpu", "amd.com/gpu")
               for f in findings), [f["message"] for f in findings]


def test_a_device_class_in_another_file_declares_an_extended_resource_name(tmp_path: Path) -> None:
    """KEP-5004: the DeviceClass of the scan (any file) makes its extendedResourceName known."""
    (tmp_path / "pod.yaml").write_text(POD % """      limits: {nvidia.com/gpu-a100: 1}""")
    (tmp_path / "class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: a100.gpu.nvidia.com}\n"
        "spec: {extendedResourceName: nvidia.com/gpu-a100}\n")
    rules = load_rules()
    config = ScanConfig(rules=[rules["GPU104"]], all_rules=rules, settings=settings_with(None), options={})

    def found() -> list[tuple[str, int, int]]:
        result = scan(discover([str(tmp_path)]).inputs, config)
        return sorted((f.rule_id, f.span.line, f.span.column) for f in result.findings)

    assert found() == []
    (tmp_path / "class.yaml").unlink()
    assert found() == [("GPU104", 9, 16)]


def test_a_mangled_claim_name_names_nothing(tmp_path: Path) -> None:
    """A pod claim whose name is no string (a list) is no crash: it names no claim."""
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n"
                    "  - {name: [[1]], resourceClaimTemplateName: t}\n  containers:\n  - name: c\n"
                    "    image: registry.example.com/a:1\n    securityContext: {privileged: true}\n"
                    "    resources:\n      claims: [{name: [[1]]}]\n")
    code, report = scan_json("--no-cache", str(path))
    assert report["summary"]["internal_errors"] == 0
    assert [(f["rule"], f["line"], f["column"]) for f in report["findings"]] == [("GPU006", 10, 23)]


# --- the shortcuts of the per-container resource entries -----------------------------


def test_resource_names_follow_settings_changed_in_place() -> None:
    settings = {"gpu-resources": ["nvidia.com/gpu"], "overcommittable-resources": []}
    first = resource_names(settings)
    assert resource_names(settings) is first
    assert resource_names({"gpu-resources": ["nvidia.com/gpu"], "overcommittable-resources": []}) is first
    settings["gpu-resources"].append("vendor.io/accel")
    changed = resource_names(settings)
    assert changed.gpu == ("nvidia.com/gpu", "vendor.io/accel")
    assert changed.is_validated("vendor.io/accel") and not first.is_validated("vendor.io/accel")


@pytest.mark.parametrize("limits, requests, nulls, validated, unknown", [
    ({"cpu": "1", "memory": "1Gi"}, {"cpu": "1"}, (), [], []),
    ({"cpu": "1", "nvidia.com/gpu": 1}, {"nvidia.com/gpu": 1}, (), ["nvidia.com/gpu"], []),
    ({"cpu": "1"}, {"nvidia.com/gup": 1}, (), [], ["nvidia.com/gup"]),
    ({1: "2", "memory": "1Gi"}, {}, (), [], []),
    ({"cpu": "1"}, {}, ("nvidia.com/gpu",), ["nvidia.com/gpu"], []),
])
def test_entries_shortcut_agrees_with_every_entry(limits: dict, requests: dict, nulls: tuple,
                                                  validated: list, unknown: list) -> None:
    from gpulint.knowledge.resources import entries, unknown_gpu_like_entries, validated_pairs
    from gpulint.model.workload import Container, Resources

    resources = Resources(limits, requests, [], ("r",), nulls, ())
    container = Container("container", "c", None, [], [], resources, None, {}, None, None, [], [], [], ("c",))
    assert [pair.name for pair in validated_pairs(container, DEFAULT_NAMES)] == validated
    assert list(dict.fromkeys(e.name for e in entries(container) if DEFAULT_NAMES.is_validated(e.name))) == validated
    assert [e.name for e in unknown_gpu_like_entries(container, DEFAULT_NAMES)] == unknown
    assert [e.name for e in entries(container) if DEFAULT_NAMES.is_unknown_gpu_like(e.name)] == unknown


@pytest.mark.parametrize("resources, asks", [
    ({"cpu": "1", "memory": "1Gi"}, False), ({"cpu": "1", "nvidia.com/gpu": 1}, True),
    ({"nvidia.com/gpu": "0"}, False), ({"nvidia.com/gpu": "x"}, True), ({"volcano.sh/vgpu-number": 2}, True),
    ({"deviceclass.resource.kubernetes.io/gpu.nvidia.com": 1}, True), ({"vendor.io/accel": 1}, False),
])
def test_named_answers_agree_with_asks_gpus(resources: dict, asks: bool) -> None:
    from gpulint.knowledge.gpu import _asks_gpus, _gpu_names, _known_tuple, setting_re

    settings = settings_with({})
    gpu_re, known, answers = _gpu_names(settings)
    assert _gpu_names(settings)[2] is answers   # kept for the same settings
    assert _asks_gpus(resources, setting_re(settings, "gpu-resources"), known=_known_tuple(settings)) is asks
    assert _asks_gpus(resources, gpu_re, known=known, answers=answers) is asks
    assert _asks_gpus(resources, gpu_re, known=known, answers=answers) is asks   # from the kept answers
    settings["gpu-resources"].append("vendor.io/accel")   # changed in place: answered anew
    gpu_re, known, answers = _gpu_names(settings)
    assert _asks_gpus({"vendor.io/accel": 1}, gpu_re, known=known, answers=answers) is True
