"""GPU006 beyond positions (the fixtures): which GPU signal the message names."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, run_cli, scan_json

from gpulint.knowledge.hostpaths import gpu_related_path

GPU006 = FIXTURES / "rules" / "GPU006"


@pytest.mark.parametrize("path, expected", [
    ("/dev/nvidia0", True), ("/dev/nvidiactl", True), ("/dev/nvidia-caps", True),
    # Other vendors' device nodes say nothing about NVIDIA GPUs.
    ("/dev/dri", False), ("/dev/dri/renderD128", False), ("/dev/kfd", False), ("/dev/vfio/12", False), ("/run/nvidia", True), ("/run/nvidia/driver", True),
    ("/usr/local/nvidia", True), ("/home/kubernetes/bin/nvidia/lib64", True),
    ("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", True), ("/usr/lib64/libcuda.so.1", True),
    ("/usr/bin/nvidia-smi", True),
    ("/", False), ("/dev", False), ("/sys", False), ("/var/lib/kubelet/device-plugins", False),
    ("/etc/kubernetes", False), ("/usr/lib", False), ("/data/gpu-models", False),
    # Matching is per path component: a directory named after the vendor counts. It
    # only matters together with privileged, where over-reporting is the safe side.
    ("/data/nvidia-models", True),
])
def test_gpu_host_paths(path: str, expected: bool) -> None:
    assert gpu_related_path(path) is expected


def _messages(name: str) -> list[str]:
    _code, report = scan_json("--select", "GPU006", str(GPU006 / name))
    return [f["message"] for f in report["findings"]]


@pytest.mark.parametrize("name, phrases", [
    ("bad-requests-gpu.yaml", ["it requests nvidia.com/gpu", "it requests aliyun.com/gpu-mem",
                               "it claims a DRA resource", "GPU-share annotation"]),
    ("bad-visible-devices.yaml", ["NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_VISIBLE_DEVICES=0,1",
                                  "NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_VISIBLE_DEVICES from valueFrom"]),
    ("bad-gpu-image.yaml", ["its image nvidia/cuda:12.4.1-base-ubuntu22.04 defaults NVIDIA_VISIBLE_DEVICES to all"]),
    ("bad-runtime-class.yaml", ["runtimeClassName nvidia"]),
    ("bad-node-targeting.yaml", ["nodeSelector nvidia.com/gpu.present", "nodeSelector accelerator",
                                 "node affinity on cloud.google.com/gke-accelerator",
                                 "node affinity on aliyun.accelerator/nvidia_name",
                                 "toleration of nvidia.com/gpu", "nodeSelector gpushare",
                                 "nodeSelector k8s.amazonaws.com/accelerator=nvidia-tesla-v100",
                                 "node affinity on karpenter.k8s.aws/instance-gpu-manufacturer=nvidia"]),
    ("bad-host-path.yaml", ["host path /dev/nvidia0", "host path /run/nvidia/driver",
                            "host path /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "host path /dev/nvidia-caps"]),
])
def test_message_names_the_signal(name: str, phrases: list[str]) -> None:
    messages = _messages(name)
    for phrase in phrases:
        assert any(phrase in m for m in messages), (phrase, messages)


def test_fix_depends_on_whether_gpus_are_requested() -> None:
    requested = _messages("bad-requests-gpu.yaml")[0]
    assert requested.endswith("drop privileged: the GPU limit alone gives it its GPUs (Deployment ml/trainer, "
                              'container "train")')
    unrequested = _messages("bad-runtime-class.yaml")[0]
    assert "request nvidia.com/gpu in resources.limits and drop privileged" in unrequested


def test_sys_admin_is_a_warning_and_privileged_an_error() -> None:
    _code, report = scan_json("--select", "GPU006", str(GPU006 / "bad-sys-admin.yaml"))
    by_container = {f["container"]: f["severity"] for f in report["findings"]}
    assert by_container == {"sys-admin": "warning", "cap-prefix": "warning", "all": "warning", "both": "error"}
    code, _report = scan_json("--select", "GPU006", "--fail-on", "error", str(GPU006 / "bad-sys-admin.yaml"))
    assert code == 1


def test_explain() -> None:
    code, out, _err = run_cli("explain", "privileged-gpu")
    assert code == 0
    assert out.startswith("# GPU006 privileged-gpu\n")
    for heading in ("## What it does", "## Why is this bad", "## Example", "## Use instead", "## References"):
        assert heading in out
