"""NVIDIA scope: what is NVIDIA evidence, and other vendors' accelerators are known but not NVIDIA."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, scan_json
from tooling import find_tool

from gpulint.knowledge.resources import resource_names
from gpulint.knowledge.vendors import (
    image_vendor,
    names_nvidia_hardware,
    nvidia_label_evidence,
    other_vendor_resource,
)


@pytest.mark.parametrize("key, values, expected", [
    ("nvidia.com/gpu.present", ["true"], "nvidia.com/gpu.present"),
    ("nvidia.com/gpu.product", None, "nvidia.com/gpu.product"),
    ("cloud.google.com/gke-accelerator", None, "cloud.google.com/gke-accelerator"),
    ("aliyun.accelerator/nvidia_name", ["Tesla-V100-SXM2-16GB"], "aliyun.accelerator/nvidia_name"),
    ("feature.node.kubernetes.io/pci-10de.present", ["true"], "feature.node.kubernetes.io/pci-10de.present"),
    ("accelerator", ["nvidia-tesla-t4"], "accelerator=nvidia-tesla-t4"),
    ("accelerator", ["neuron", "nvidia-l4"], "accelerator=nvidia-l4"),
    ("gpu-type", ["a100"], "gpu-type=a100"),
    ("k8s.amazonaws.com/accelerator", ["nvidia-tesla-v100"], "k8s.amazonaws.com/accelerator=nvidia-tesla-v100"),
    ("karpenter.k8s.aws/instance-gpu-name", ["h100"], "karpenter.k8s.aws/instance-gpu-name=h100"),
    ("node.kubernetes.io/instance-type", ["g5.12xlarge"], "node.kubernetes.io/instance-type=g5.12xlarge"),
    ("node.kubernetes.io/instance-type", ["Standard_NC24ads_A100_v4"],
     "node.kubernetes.io/instance-type=Standard_NC24ads_A100_v4"),
    # Not NVIDIA evidence: a generic key by itself, or another vendor's value.
    ("accelerator", None, None),
    ("accelerator", ["neuron"], None),
    ("accelerator", ["tpu-v5-lite-podslice"], None),
    ("gpu", ["true"], None),
    ("karpenter.k8s.aws/instance-gpu-manufacturer", ["amd"], None),
    ("karpenter.k8s.aws/instance-gpu-name", ["radeon-pro-v520"], None),
    ("node.kubernetes.io/instance-type", ["trn1.32xlarge"], None),
    ("node.kubernetes.io/instance-type", ["m5.xlarge"], None),
    ("amd.com/gpu.product-name", ["AMD_Instinct_MI300X"], None),
    ("kubernetes.io/arch", ["amd64"], None),
])
def test_nvidia_label_evidence(key: str, values: list | None, expected: str | None) -> None:
    assert nvidia_label_evidence(key, values) == expected


@pytest.mark.parametrize("value, expected", [
    ("NVIDIA-A100-SXM4-80GB", True), ("Tesla-T4", True), ("nvidia-h100-80gb", True), ("l4", True),
    ("AMD-Instinct-MI250X", False), ("inferentia2", False), ("Intel-Data-Center-GPU-Max-1550", False),
    ("true", False), ("", False), (3, False),
])
def test_names_nvidia_hardware(value: object, expected: bool) -> None:
    assert names_nvidia_hardware(value) is expected


@pytest.mark.parametrize("name, vendor", [
    ("amd.com/gpu", "AMD"), ("gpu.intel.com/dxg", "Intel"), ("gpu.intel.com/i915", "Intel"),
    ("aws.amazon.com/neuroncore", "AWS Neuron"), ("google.com/tpu", "Google TPU"),
    ("habana.ai/gaudi", "Habana Gaudi"), ("xilinx.com/fpga-xilinx_u200", "Xilinx FPGA"),
    ("nvidia.com/gpu", None), ("amd.com/gpus", None), ("aliyun.com/gpu-mem", None),
])
def test_other_vendor_resource(name: str, vendor: str | None) -> None:
    assert other_vendor_resource(name) == vendor


def test_other_vendors_resources_are_known_to_gpu104() -> None:
    names = resource_names({})
    for name in ("gpu.intel.com/dxg", "aws.amazon.com/neuron", "google.com/tpu", "habana.ai/gaudi"):
        assert not names.is_unknown_gpu_like(name), name
    assert names.is_unknown_gpu_like("amd.com/gpus")


def test_other_vendors_fixture_is_silent() -> None:
    _code, report = scan_json(str(FIXTURES / "vendors" / "good-other-accelerators.yaml"))
    assert report["findings"] == []


def test_other_vendor_host_access_gets_no_nvidia_advice() -> None:
    _code, report = scan_json(str(FIXTURES / "rules" / "GPU001" / "bad-other-vendor-host.yaml"))
    [finding] = report["findings"]
    assert (finding["rule"], finding["line"], finding["column"]) == ("GPU001", 18, 22)
    assert "nvidia.com/gpu" not in finding["message"]
    assert "request the AMD device through its device plugin's resource" in finding["message"]


@pytest.mark.parametrize("repository, tag, vendor", [
    ("rocm/k8s-device-plugin", "labeller-latest", "AMD"),
    ("example/pytorch", "2.3-rocm6.1", "AMD"),
    ("intel/intel-gpu-plugin", "0.30.0", "Intel"),
    ("example/habana-pytorch", "1.16", "Intel"),
    ("public.ecr.aws/neuron/pytorch-inference-neuronx", None, "AWS Neuron"),
    ("nvidia/cuda", "12.4.1-base", None),
    ("library/ubuntu", "22.04", None),
    ("example/gamdock", None, None),          # a word inside another word says nothing
    ("example/mindspore-gpu-example", "0.2.0", None),
])
def test_image_vendor(repository: str, tag: str | None, vendor: str | None) -> None:
    assert image_vendor(repository, tag) == vendor


def test_image_vendor_pattern_finds_what_one_pattern_per_vendor_finds() -> None:
    """The vendor pattern writes the word boundaries once around all vendors' words (cheaper to
    compile); it must find the same vendor as a pattern with the boundaries around each vendor's
    words, on every word with every kind of neighbour, the letters IGNORECASE folds included."""
    import itertools
    import re

    from gpulint.knowledge import vendors

    per_vendor = re.compile("|".join(rf"(?P<v{i}>(?:^|[^a-z0-9])(?:{words})(?:$|[^a-z]))"
                                     for i, (words, _) in enumerate(vendors.OTHER_IMAGE_WORDS)), re.IGNORECASE)
    words = [word for words, _ in vendors.OTHER_IMAGE_WORDS for word in words.split("|")]
    around = ["", "-", "x", "z", "1", "9", "X", ".", "\u212a", "\u017f", "\u0131", "\u0130", "\u00e9"]
    checked = 0
    for word, before, after, shout in itertools.product(words, around, around, (False, True)):
        for text in (f"{before}{word}{after}", f"{before}{word}{after}-{words[0]}", f"ab{before}{word}{after}"):
            text = text.upper() if shout else text
            old, new = per_vendor.search(text), vendors._OTHER_IMAGE_RE.search(text)
            assert (old and old.lastgroup) == (new and new.lastgroup), text
            checked += 1
    assert checked == len(words) * len(around) ** 2 * 2 * 3


def test_another_vendors_image_gives_its_advice(tmp_path: Path) -> None:
    """A pod with no resource or taint of another vendor, but whose image is of its
    software stack (ROCm's node labeller mounting the host /dev), gets that vendor's advice."""
    path = tmp_path / "labeller.yaml"
    path.write_text("""apiVersion: apps/v1
kind: DaemonSet
metadata: {name: labeller, namespace: kube-system}
spec:
  selector: {matchLabels: {app: labeller}}
  template:
    metadata: {labels: {app: labeller}}
    spec:
      containers:
      - name: labeller
        image: rocm/k8s-device-plugin:labeller-latest
        volumeMounts: [{name: dev, mountPath: /dev}]
      volumes:
      - name: dev
        hostPath: {path: /dev}
""", encoding="utf-8")
    _code, report = scan_json(str(path))
    [finding] = report["findings"]
    assert (finding["rule"], finding["line"], finding["column"]) == ("GPU001", 15, 26)
    assert "nvidia.com/gpu" not in finding["message"]
    assert "request the AMD device through its device plugin's resource" in finding["message"]


_NVIDIA_RULES = ("GPU003", "GPU004", "GPU005", "GPU006", "GPU007", "GPU008", "GPU104")


@pytest.mark.parametrize("repo", ["ROCm__k8s-device-plugin", "aws-neuron__neuron-helm-charts"])
def test_other_vendors_in_the_corpus_get_no_nvidia_findings(corpus: Path, repo: str) -> None:
    """Another vendor's device plugins and workloads: no NVIDIA finding. Whole-node access
    (the host /dev, the runtime's /run) is still reported; its advice names no NVIDIA resource
    when the workload shows another vendor's evidence."""
    helm = find_tool("helm")  # the Neuron device plugin is a chart
    _code, report = scan_json("--helm", helm, str(corpus / repo))
    found = sorted((f["rule"], Path(f["path"]).name, f["line"]) for f in report["findings"] if f["rule"] not in ("GPU000", "GPU010"))
    if repo.startswith("ROCm"):
        # The labeller mounts the host /dev (labelled node-direct-access); /dev/kfd and /dev/dri are not reported.
        assert found == [("GPU001", "k8s-ds-amdgpu-labeller.yaml", 90)]
    else:
        # The Neuron device plugin mounts the host /run (labelled runtime-cli).
        assert [f[0] for f in found] == ["GPU002"]
        [finding] = [f for f in report["findings"] if f["rule"] == "GPU002"]
        assert "nvidia.com/gpu" not in finding["message"] and "AWS Neuron" in finding["message"]


def test_configured_node_label_keys_replace_the_nvidia_keys() -> None:
    keys = ("example.com/gpu-pool",)
    assert nvidia_label_evidence("example.com/gpu-pool", None, keys) == "example.com/gpu-pool"
    assert nvidia_label_evidence("nvidia.com/gpu.present", ["true"], keys) is None
    # Generic keys with an NVIDIA value still count: that is hardware named, not a configured key.
    assert nvidia_label_evidence("accelerator", ["nvidia-l4"], keys) == "accelerator=nvidia-l4"


def test_a_dra_claim_is_other_vendor_only_when_its_template_says_so() -> None:
    text = (FIXTURES / "vendors" / "good-other-accelerators.yaml").read_text(encoding="utf-8")
    docs = text.split("\n---\n")
    pod = next(d for d in docs if "name: neuron-dra" in d)
    # Without its template in the scan the claim may be an NVIDIA GPU: the privileged container is reported.
    _code, report = scan_json("--select", "GPU006", "-", input=pod)
    assert [(f["rule"], f["container"]) for f in report["findings"]] == [("GPU006", "infer")]
    assert "it claims a DRA resource" in report["findings"][0]["message"]
