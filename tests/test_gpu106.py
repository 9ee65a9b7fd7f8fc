"""GPU106 gpu-node-without-capacity: Node dumps, each message, and what is never reported."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, run_cli, scan_json

from gpulint.knowledge.vendors import node_nvidia_evidence

GPU106 = FIXTURES / "rules" / "GPU106"


def _findings(name: str) -> list[tuple[int, int, str, str]]:
    _code, report = scan_json("--select", "GPU106", str(GPU106 / name))
    return [(f["line"], f["column"], f["severity"], f["message"]) for f in report["findings"]]


def test_each_broken_gpu_operator_node_has_its_message() -> None:
    found = _findings("bad-gpu-operator-nodes.yaml")
    assert [(line, col, sev) for line, col, sev, _m in found] == [
        (15, 7, "error"), (42, 23, "error"), (60, 23, "error"), (73, 23, "warning"), (86, 7, "error")]
    missing, zero, unhealthy, partial, unlisted = (m for *_pos, m in found)
    assert missing.startswith("node gpu-node-a is labelled as an NVIDIA GPU node "
                              "(feature.node.kubernetes.io/pci-10de.present=true, nvidia.com/gpu.present=true, "
                              "nvidia.com/gpu.count=8) but its status.capacity advertises no nvidia.com/gpu")
    assert "device plugin is probably not running there" in missing
    assert zero.startswith('node gpu-node-b advertises nvidia.com/gpu: 0 in status.capacity')
    assert unhealthy.startswith("node gpu-node-c has nvidia.com/gpu: 4 in status.capacity but 0 allocatable")
    assert partial.startswith("node gpu-node-d advertises nvidia.com/gpu: 6 in status.capacity but its label "
                              "nvidia.com/gpu.count=8 says it has 8 GPUs")
    assert unlisted.startswith("node gpu-node-e has nvidia.com/gpu: 2 in status.capacity but none allocatable")
    # The operator switch nvidia.com/gpu.deploy.device-plugin is no hardware evidence.
    assert "gpu.deploy" not in missing


def test_cloud_nodes_by_their_provider_labels() -> None:
    found = _findings("bad-cloud-nodes.yaml")
    assert [(line, col) for line, col, _s, _m in found] == [(10, 5), (29, 5), (50, 5)]
    assert "cloud.google.com/gke-accelerator=nvidia-l4" in found[0][3]
    assert "aliyun.accelerator/nvidia_count=1" in found[1][3]
    assert "node.kubernetes.io/instance-type=g5.12xlarge" in found[2][3]


def test_json_list_dump_and_healthy_nodes() -> None:
    found = _findings("bad-nodes.json")
    assert [(line, col) for line, col, _s, _m in found] == [(33, 21)]
    assert found[0][3].startswith("node dgx-02 ")
    assert _findings("good-nodes.yaml") == []


def test_dump_on_stdin() -> None:
    text = (GPU106 / "bad-nodes.json").read_text(encoding="utf-8")
    code, out, _err = run_cli("scan", "--select", "GPU106", "-", input=text)
    assert code == 1
    assert "node dgx-02 is labelled as an NVIDIA GPU node" in out


@pytest.mark.parametrize("labels, provider_id, expected", [
    ({"nvidia.com/gpu.present": "true"}, None, ["nvidia.com/gpu.present=true"]),
    ({"nvidia.com/gpu.present": "false"}, None, []),
    ({"nvidia.com/gpu.deploy.operands": "true"}, None, []),
    ({"accelerator": "nvidia-tesla-t4"}, None, ["accelerator=nvidia-tesla-t4"]),
    ({"accelerator": "neuron"}, None, []),
    ({"node.kubernetes.io/instance-type": "p4d.24xlarge"}, None, []),
    ({"node.kubernetes.io/instance-type": "p4d.24xlarge"}, "aws:///us-east-1a/i-0abc",
     ["node.kubernetes.io/instance-type=p4d.24xlarge"]),
    ({"node.kubernetes.io/instance-type": "Standard_NC6s_v3", "kubernetes.azure.com/agentpool": "gpu"}, None,
     ["node.kubernetes.io/instance-type=Standard_NC6s_v3"]),
    ({"node.kubernetes.io/instance-type": "a2-highgpu-1g"}, "aws:///x", []),  # a GCE name on AWS
    ({"karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia", "karpenter.k8s.aws/instance-gpu-count": "4"},
     None, ["karpenter.k8s.aws/instance-gpu-manufacturer=nvidia"]),
    ({"karpenter.k8s.aws/instance-gpu-manufacturer": "amd", "karpenter.k8s.aws/instance-gpu-count": "1"},
     None, []),
])
def test_node_evidence(labels: dict, provider_id: str | None, expected: list[str]) -> None:
    assert node_nvidia_evidence(labels, provider_id) == expected


def test_explain() -> None:
    code, out, _err = run_cli("explain", "GPU106")
    assert code == 0
    assert out.startswith("# GPU106 gpu-node-without-capacity")
    assert "Label sources trusted" in out
