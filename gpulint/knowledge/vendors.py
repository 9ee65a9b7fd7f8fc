"""Which accelerator vendor a resource, node label or device path belongs to.

gpulint's rules are about NVIDIA GPUs: an object is NVIDIA-GPU related only on
NVIDIA-specific evidence. Other accelerators (AMD, Intel, AWS Neuron, Google
TPU, Habana Gaudi, FPGAs) are known, so that their resource names are valid and
their device plugins and workloads are never mistaken for NVIDIA ones.

Node labels are evidence by key when the key itself is NVIDIA's
(`nvidia.com/gpu.present`, ACK `aliyun.accelerator/nvidia_name`, GKE
`cloud.google.com/gke-accelerator`, which only ever names NVIDIA GPUs), and by
value when the key is generic (`accelerator: nvidia-tesla-t4`, EKS
`k8s.amazonaws.com/accelerator`, Karpenter's `instance-gpu-manufacturer`).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Iterable

from gpulint.lazypattern import glob_matches, lazy

# Resources other vendors' device plugins advertise (not NVIDIA's): valid names for GPU104,
# never NVIDIA evidence.
OTHER_ACCELERATOR_RESOURCES: dict[str, str] = {
    "amd.com/gpu": "AMD",                # ROCm device plugin (a narrow name: `amd.com/gpus` stays a typo)
    "gpu.intel.com/*": "Intel",          # Intel GPU device plugin: i915, xe, dxg (WSL), millicores...
    "fpga.intel.com/*": "Intel FPGA",
    "aws.amazon.com/neuron*": "AWS Neuron",  # neuron, neuroncore, neurondevice
    "google.com/tpu": "Google TPU",
    "habana.ai/*": "Habana Gaudi",       # habana.ai/gaudi
    "xilinx.com/*": "Xilinx FPGA",       # xilinx.com/fpga-xilinx_u200_...
    "amd.com/xilinx*": "Xilinx FPGA",
    "metax-tech.com/*": "MetaX",
    "mthreads.com/*": "Moore Threads",
    "iluvatar.ai/*": "Iluvatar",
    "huawei.com/ascend*": "Huawei Ascend",
    "cambricon.com/*": "Cambricon",
}

# Device nodes of other vendors' accelerators. Not reported as NVIDIA host access
# (see GPU001): they reach no NVIDIA GPU, and /dev/dri, /dev/vfio also serve video,
# display and VM passthrough, so without a vendor's evidence they say nothing.
OTHER_DEVICE_PATHS: dict[str, str] = {
    "/dev/kfd": "AMD ROCm compute",
    "/dev/dri": "DRM (AMD, Intel and other GPUs' render nodes)",
    "/dev/vfio": "VFIO passthrough",
    "/dev/accel": "compute accelerator (Intel Gaudi, NPU)",
    "/dev/neuron": "AWS Neuron",
    "/dev/accel0": "Google TPU",
    "/dev/xclmgmt": "Xilinx FPGA",
}

# Node label keys that by themselves say the node has NVIDIA GPUs.
NVIDIA_LABEL_KEYS: tuple[str, ...] = (
    "nvidia.com/gpu", "nvidia.com/gpu.*", "nvidia.com/mig.*", "nvidia.com/cuda.*",
    "cloud.google.com/gke-accelerator",   # GKE: values are nvidia-tesla-t4, nvidia-l4... (TPUs: gke-tpu-*)
    "cloud.google.com/gke-gpu*",          # gke-gpu-driver-version, gke-gpu-sharing-strategy...
    "aliyun.accelerator/nvidia*",         # ACK: nvidia_name, nvidia_count, nvidia_mem
    "ack.node.gpu.schedule",              # ACK GPU sharing of NVIDIA GPUs
    "gpushare",                           # ACK gpushare device plugin: `gpushare=true`
    "feature.node.kubernetes.io/pci-10de.present",  # NFD: PCI vendor 10de is NVIDIA
)

# Generic keys whose value may name the hardware: evidence only when the value is NVIDIA's.
GENERIC_ACCELERATOR_KEYS: tuple[str, ...] = (
    "accelerator", "gpu", "gpu-type", "gpu-model", "gpu.type",
    "k8s.amazonaws.com/accelerator",      # EKS: nvidia-tesla-v100, nvidia-tesla-k80...
    "karpenter.k8s.aws/instance-gpu-manufacturer",  # nvidia, amd
    "karpenter.k8s.aws/instance-gpu-name",          # t4, a10g, a100, h100... (radeon-pro-v520: AMD)
    "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
)

# Values naming NVIDIA hardware: the vendor, its data-centre and workstation product
# lines, and the model numbers clouds use as label values (t4, a10g, h100-80gb...).
_NVIDIA_VALUE_RE = lazy(
    r"(?:^|[^a-z0-9])(?:nvidia|tesla|quadro|geforce|rtx|gtx|dgx|hgx|"
    r"[kpvtalhb]\d{1,3}[a-z]?|gh\d{3}|gb\d{3}|rtx\d+)(?:$|[^a-z])",
    re.IGNORECASE,
)
# Cloud instance families documented as NVIDIA GPU instances; only read when the
# provider's label is present (`node.kubernetes.io/instance-type` names the type).
_NVIDIA_INSTANCE_RE = lazy(
    r"(?:p2|p3|p3dn|p4d|p4de|p5|p5e|p5en|p6|g3|g3s|g4dn|g5|g5g|g6|g6e|gr6)\.[a-z0-9]+\Z"   # AWS EC2
    r"|(?:a2|a3|g2)-[a-z0-9-]+\Z"                                                  # GCE
    r"|standard_n[cdv][a-z0-9_]*\Z"                                                 # Azure N-series
    r"|ecs\.(?:gn|ebmgn|sgn|vgn)[a-z0-9.-]+\Z",                                     # Alibaba ECS GPU
    re.IGNORECASE,
)
_OTHER_VALUE_RE = lazy(r"amd|radeon|instinct|mi\d{2,3}|intel|gaudi|neuron|inferentia|trainium|tpu",
                             re.IGNORECASE)


# Words in an image's repository path or tag naming another vendor's accelerator
# software stack (ROCm is AMD's, oneAPI/XPU Intel's, Neuron AWS's...): an image
# saying one belongs to that vendor, and its `gpu` word is never CUDA evidence.
OTHER_IMAGE_WORDS: tuple[tuple[str, str], ...] = (
    (r"rocm|amd|amdgpu|radeon|instinct", "AMD"),
    (r"intel|oneapi|xpu|habana|gaudi", "Intel"),    # Habana Gaudi is Intel's
    (r"neuron|inferentia|trainium", "AWS Neuron"),
    (r"tpu", "Google TPU"),
    (r"ascend|cann", "Huawei Ascend"),
)
# The word boundaries are written once around the vendors' words, not once per vendor: under
# IGNORECASE each `[^a-z]`-like class costs about 1.4M instructions to compile (it takes in the
# non-ASCII letters that fold to a-z); ten of them were 2 % of a one-file scan. The search is
# the same (only one of `^` and `[^a-z0-9]` can match before a word at a given position).
_OTHER_IMAGE_RE = re.compile(
    "(?:^|[^a-z0-9])(?:"
    + "|".join(rf"(?P<v{i}>{words})" for i, (words, _) in enumerate(OTHER_IMAGE_WORDS))
    + ")(?:$|[^a-z])",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=1024)
def image_vendor(repository: str, tag: str | None) -> str | None:
    """The other accelerator vendor an image's repository path or tag names
    (`rocm/k8s-device-plugin` -> AMD, `intel/intel-gpu-plugin` -> Intel), or None."""
    for text in (repository, tag or ""):
        for part in text.split("/"):
            match = _OTHER_IMAGE_RE.search(part)
            if match is not None:
                return OTHER_IMAGE_WORDS[int(match.lastgroup[1:])][1]   # type: ignore[index]
    return None


@functools.lru_cache(maxsize=1024)
def other_vendor_resource(name: str) -> str | None:
    """The vendor of another accelerator's resource name (`amd.com/gpu` -> AMD), or None."""
    return next((vendor for pattern, vendor in OTHER_ACCELERATOR_RESOURCES.items()
                 if glob_matches(name, pattern)), None)


@functools.lru_cache(maxsize=64)
def _globs(patterns: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or r"(?!)")


def names_nvidia_hardware(value: object) -> bool:
    """Whether a label value names NVIDIA hardware (`nvidia-tesla-t4`, `NVIDIA-A100-SXM4-80GB`, `h100`)."""
    if not isinstance(value, str) or not value:
        return False
    if "nvidia" in value.lower():
        return True
    if _OTHER_VALUE_RE.search(value):
        return False
    return _NVIDIA_VALUE_RE.search(value) is not None


def nvidia_label_evidence(key: str, values: Iterable[object] | None,
                          nvidia_keys: tuple[str, ...] = NVIDIA_LABEL_KEYS) -> str | None:
    """Why a node label (or selector on `key` with `values`) says NVIDIA GPUs, or None.

    `values` is None for a key-only selector (`operator: Exists`): then only an
    NVIDIA key is evidence. `nvidia_keys` are the globs of keys that count by
    themselves (the `gpu-node-labels` setting; NVIDIA_LABEL_KEYS by default).
    """
    if _globs(nvidia_keys).match(key):
        return key
    if not _globs(GENERIC_ACCELERATOR_KEYS).match(key):
        return None
    for value in values or ():
        if key.endswith("instance-type"):
            if isinstance(value, str) and _NVIDIA_INSTANCE_RE.match(value):
                return f"{key}={value}"
        elif names_nvidia_hardware(value):
            return f"{key}={value}"
    return None


def other_device_path(path: str) -> str | None:
    """What another vendor's device node `path` (normalised) is, or None."""
    for directory, what in OTHER_DEVICE_PATHS.items():
        if path == directory or path.startswith(directory + "/") or (
                directory == "/dev/neuron" and path.startswith(directory)):
            return what
    return None


# --- NVIDIA GPU nodes (GPU106) ---------------------------------------------------

# Labels whose value counts the node's NVIDIA GPUs: GPU feature discovery, ACK, and
# Karpenter (read only when the Karpenter manufacturer label says nvidia).
NODE_GPU_COUNT_LABELS = ("nvidia.com/gpu.count", "aliyun.accelerator/nvidia_count",
                         "karpenter.k8s.aws/instance-gpu-count")
# Labels or spec.providerID prefixes that say which cloud runs the node, by the instance
# naming they make trustworthy (an instance type alone could be anyone's name).
_PROVIDER_LABELS = {
    "aws": ("eks.amazonaws.com/nodegroup", "eks.amazonaws.com/compute-type", "karpenter.k8s.aws/instance-family",
            "alpha.eksctl.io/nodegroup-name", "k8s.io/cloud-provider-aws"),
    "gce": ("cloud.google.com/gke-nodepool", "cloud.google.com/machine-family"),
    "azure": ("kubernetes.azure.com/agentpool", "kubernetes.azure.com/cluster"),
    "alicloud": ("alibabacloud.com/nodepool-id", "node.csi.alibabacloud.com/disktype.cloud_essd"),
}
_INSTANCE_BY_PROVIDER = {
    "aws": lazy(r"(?:p2|p3|p3dn|p4d|p4de|p5|p5e|p5en|p6-b200|g3|g3s|g4dn|g5|g5g|g6|g6e|gr6)\.[a-z0-9]+\Z"),
    "gce": lazy(r"(?:a2|a3|a4|g2)-[a-z0-9-]+\Z"),
    "azure": lazy(r"standard_n[cdv][a-z0-9_]*\Z", re.IGNORECASE),
    "alicloud": lazy(r"ecs\.(?:gn|ebmgn|sgn|vgn)[a-z0-9.-]+\Z"),
}
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_FALSY = frozenset({"", "false", "0", "none", "no", "disabled"})


def node_nvidia_evidence(labels: dict, provider_id: str | None) -> list[str]:
    """The node labels saying the node has NVIDIA GPUs (`key=value`), in label order.

    NVIDIA's own keys and generic keys with an NVIDIA value count (as for pod
    selectors), unless the value says no (`nvidia.com/gpu.present=false`). An
    instance type counts only when it is a documented NVIDIA GPU family of the
    cloud the node's labels or providerID name.
    """
    provider = _provider(labels, provider_id)
    found = []
    for key, value in labels.items():
        if str(value).strip().lower() in _FALSY or key.startswith("nvidia.com/gpu.deploy."):
            continue  # operator switches, not hardware facts
        if key in _INSTANCE_TYPE_LABELS:
            pattern = _INSTANCE_BY_PROVIDER.get(provider or "")
            if pattern is not None and isinstance(value, str) and pattern.match(value):
                found.append(f"{key}={value}")
            continue
        if key == "karpenter.k8s.aws/instance-gpu-count":
            continue  # a count, only read with the manufacturer label
        if nvidia_label_evidence(key, (value,)) is not None:
            found.append(f"{key}={value}")
    return found


def _provider(labels: dict, provider_id: str | None) -> str | None:
    if provider_id:
        scheme = provider_id.partition("://")[0].lower()
        if scheme in _INSTANCE_BY_PROVIDER:
            return scheme
    for provider, keys in _PROVIDER_LABELS.items():
        if any(key in labels for key in keys):
            return provider
    return None
