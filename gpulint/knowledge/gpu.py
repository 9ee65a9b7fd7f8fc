"""Shared GPU facts the rules rest on (POLICY.md §2 and §5).

Kept in one module so that rules agree on what a GPU request, a hidden GPU and
a GPU node look like; the configurable lists are defaults a config can extend.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from gpulint.knowledge.envexpand import expanded_value
from gpulint.knowledge.hostpaths import gpu_related_path, normalize
from gpulint.knowledge.quantity import parse_quantity
from gpulint.knowledge.vendors import (
    NVIDIA_LABEL_KEYS,
    nvidia_label_evidence,
    image_vendor,
    other_device_path,
    other_vendor_resource,
)
from gpulint.lazypattern import glob_matches, lazy

if TYPE_CHECKING:
    from gpulint.model.index import ConfigIndex
    from gpulint.model.workload import Container, PodSpec, Workload

VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"

# NVIDIA_VISIBLE_DEVICES outcomes (nvidia-container-toolkit).
HIDDEN_VOID = "void"      # void, empty: nothing injected, like plain runc
HIDDEN_NONE = "none"      # no GPU, but driver libraries and capabilities are injected
GRANTS = "grants"         # all, indices, UUIDs, MIG ids, G:M, CDI names, anything else

_UUID_RE = re.compile(r"(?:MIG-)?GPU-[0-9a-fA-F-]+(?:/\d+/\d+)?\Z|MIG-[0-9a-fA-F-]+\Z")


def classify_visible_devices(value: object) -> str:
    """What NVIDIA_VISIBLE_DEVICES=value does when a container is created.

    The value is a comma separated, trimmed list; any `void` token makes the
    whole value void, and an empty value injects nothing.
    """
    text = "" if value is None else str(value)
    tokens = [t.strip() for t in text.split(",")]
    tokens = [t for t in tokens if t]
    if not tokens or any(t == "void" for t in tokens):
        return HIDDEN_VOID
    if all(t == "none" for t in tokens):
        return HIDDEN_NONE
    return GRANTS


def describe_devices(value: object) -> str:
    """A short human description of a granting value, for messages."""
    text = str(value).strip()
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if "all" in tokens:
        return "every GPU of the node"
    if any("=" in t for t in tokens):
        return "GPUs named through CDI"
    if any(_UUID_RE.match(t) for t in tokens):
        return "GPUs or MIG devices chosen by UUID"
    if all(t.isdigit() or re.fullmatch(r"\d+:\d+", t) for t in tokens):
        return "GPUs chosen by index"
    return "GPUs"


# --- shared settings -----------------------------------------------------------
# Defaults of the settings rules share; a config file can replace or extend each
# list (see the README). Patterns are shell-style globs (fnmatch).

DEFAULT_SETTINGS: dict[str, list[str]] = {
    # Scheduler-visible GPU resources (POLICY.md §5).
    "gpu-resources": [
        "nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-*",
        "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe",
        "aliyun.com/gpu-mem", "aliyun.com/gpu-count", "aliyun.com/gpu-core.percentage",
        "nvidia.com/gpumem", "nvidia.com/gpucores", "nvidia.com/gpumem-percentage",
        # Intel device plugin monitoring and GPU Aware Scheduling resources.
        "gpu.intel.com/i915_monitoring", "gpu.intel.com/xe_monitoring",
        "gpu.intel.com/millicores", "gpu.intel.com/memory.max", "gpu.intel.com/tiles",
        # Other vendors' GPUs, as HAMi and their device plugins name them.
        "metax-tech.com/gpu", "metax-tech.com/sgpu", "mthreads.com/vgpu",
        "iluvatar.ai/vgpu", "iluvatar.ai/*-vgpu",
    ],
    # GPU resources a config marks as overcommittable (e.g. ACS GPU-HPN shared GPUs):
    # request/limit validity rules skip them.
    "overcommittable-resources": [],
    # Pod annotations through which a scheduler (KAI, HAMi) hands out GPU shares.
    "gpu-request-annotations": ["gpu-fraction", "gpu-memory", "hami.io/*", "nvidia.com/use-gpu*"],
    # Node label keys that by themselves say a node has NVIDIA GPUs. Generic keys
    # (`accelerator`, `gpu`, EKS `k8s.amazonaws.com/accelerator`, instance types) count
    # only when their value names NVIDIA hardware (gpulint.knowledge.vendors).
    "gpu-node-labels": list(NVIDIA_LABEL_KEYS),
    # Node label keys naming the GPU model (heterogeneous clusters, GPU105).
    "gpu-model-labels": [
        "accelerator", "aliyun.accelerator/nvidia_name", "nvidia.com/gpu.product",
        "cloud.google.com/gke-accelerator", "karpenter.k8s.aws/instance-gpu-name",
        "k8s.amazonaws.com/accelerator",
        # A cloud instance type fixes the GPU model too.
        "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
    ],
    # Taint keys GPU nodes carry; tolerating one means the pod targets GPU nodes.
    # Taint keys NVIDIA GPU nodes carry (other vendors' taints, e.g. amd.com/gpu, are no NVIDIA evidence).
    "gpu-tolerations": ["nvidia.com/gpu", "nvidia.com/*", "aliyun.accelerator/nvidia*"],
    # RuntimeClasses that run the NVIDIA runtime hook (the GPU Operator creates `nvidia`).
    "runtime-classes": ["nvidia", "nvidia-cdi", "nvidia-legacy"],
    # Extra image patterns whose image sets NVIDIA_VISIBLE_DEVICES=all (added to
    # the built-in list in data/gpu_images.yaml).
    "gpu-images": [],
}


def settings_with(overrides: dict | None = None) -> dict:
    merged = {key: list(value) for key, value in DEFAULT_SETTINGS.items()}
    for key, value in (overrides or {}).items():
        merged[key] = list(value)
    return merged


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Whether `name` matches one of the shell-style globs (case-sensitive)."""
    compiled = globs_re(tuple(patterns))
    return compiled is not None and compiled.match(name) is not None


class Globs:
    """Shell-style globs (case-sensitive) matched like one regex: `match(name)` is None
    when no glob matches. Names without wildcards are looked up in a set; a regex is
    compiled for the others on first use (compiling every configured name cost
    a noticeable part of a small scan's start-up)."""

    __slots__ = ("_literal", "_wild", "_re")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self._literal = frozenset(p for p in patterns if not is_glob(p))
        self._wild = tuple(p for p in patterns if is_glob(p))
        self._re: re.Pattern | None = None

    def match(self, name: str) -> bool | None:
        if name in self._literal:
            return True
        if not self._wild:
            return None
        if self._re is None:
            self._re = re.compile("|".join(fnmatch.translate(pattern) for pattern in self._wild))
        return True if self._re.match(name) is not None else None


_GLOB_CHARS = frozenset("*?[")


def is_glob(pattern: str) -> bool:
    """Whether `pattern` has a shell wildcard (else it matches only itself)."""
    return not _GLOB_CHARS.isdisjoint(pattern)


@functools.lru_cache(maxsize=256)
def globs_re(patterns: tuple[str, ...]) -> Globs | None:
    """The globs of a list as one matcher (None for an empty list); rules test every
    resource key and label against these lists."""
    if not patterns:
        return None
    return Globs(patterns)


_matches_any = matches_any


def setting(settings: Mapping[str, Any], key: str) -> list[str]:
    value = settings.get(key)
    return list(value) if value is not None else DEFAULT_SETTINGS[key]


def setting_re(settings: Mapping[str, Any], key: str) -> Globs | None:
    """`globs_re` of a glob-list setting, without copying the list first (asked per resource)."""
    value = settings.get(key)
    return globs_re(tuple(value if value is not None else DEFAULT_SETTINGS[key]))


def is_gpu_resource(name: str, settings: Mapping[str, Any]) -> bool:
    compiled = setting_re(settings, "gpu-resources")
    return compiled is not None and compiled.match(name) is not None


def gpu_limits(container: Container, settings: Mapping[str, Any]) -> dict[str, Any]:
    """GPU resources in the container's limits, with their quantities as written."""
    return {k: v for k, v in container.resources.limits.items() if is_gpu_resource(k, settings)}


def requests_gpu(container: Container, pod: PodSpec, settings: Mapping[str, Any]) -> bool:
    """Whether the scheduler hands this container GPUs in a way it accounts for.

    A positive GPU limit (or request: Kubernetes copies it), a DRA claim, or a
    GPU-share annotation of KAI/HAMi on the pod template (`pod` is the
    container's own). Computed once per container and settings: five rules ask.
    """
    memo = container.memo.get("gpu.requests_gpu")
    if memo is None or memo[0] is not settings:
        memo = container.memo["gpu.requests_gpu"] = (settings, _requests_gpu(container, pod, settings))
    return memo[1]


def _requests_gpu(container: Container, pod: PodSpec, settings: Mapping[str, Any]) -> bool:
    gpu_re = setting_re(settings, "gpu-resources")
    if _asks_gpus(container.resources.limits, gpu_re) or _asks_gpus(container.resources.requests, gpu_re):
        return True
    if container.resources.claims:
        return True
    # A custom resource's operator requests what the component declares (`gpu: 2` is
    # its own spelling of nvidia.com/gpu in NVIDIA Dynamo's services).
    if _asks_gpus(pod.operator_resources, gpu_re, also=("gpu",)):
        return True
    annotations_re = setting_re(settings, "gpu-request-annotations")
    return annotations_re is not None and any(annotations_re.match(str(key)) is not None for key in pod.annotations)


def _asks_gpus(resources: Mapping[str, Any], gpu_re: Globs | None, also: tuple[str, ...] = ()) -> bool:
    """Whether `resources` name a GPU resource (or one of `also`) with a positive or unknown quantity."""
    for name, quantity in resources.items():
        if name in also or (gpu_re is not None and gpu_re.match(name) is not None):
            amount = parse_quantity(quantity)
            if amount is None or amount > 0:
                return True
    return False


def pod_requests_gpu(pod: PodSpec, settings: Mapping[str, Any]) -> bool:
    return any(requests_gpu(c, pod, settings) for c in pod.containers)


def gpu_node_targeting(pod: PodSpec, settings: Mapping[str, Any]) -> str | None:
    """Why the pod lands on NVIDIA GPU nodes (a nodeSelector, affinity or toleration), or None.

    A label key counts by itself when it is NVIDIA's (the `gpu-node-labels`
    setting); a generic key (`accelerator`, `gpu`) only when its value names
    NVIDIA hardware (`accelerator: nvidia-tesla-t4`; `accelerator: neuron` does not).
    """
    labels = tuple(setting(settings, "gpu-node-labels"))
    for key, value in pod.node_selector.items():
        evidence = nvidia_label_evidence(str(key), (value,), labels)
        if evidence is not None:
            return f"nodeSelector {evidence}"
    for key, values in _affinity_terms(pod.affinity):
        evidence = nvidia_label_evidence(key, values, labels)
        if evidence is not None:
            return f"node affinity on {evidence}"
    taints = setting(settings, "gpu-tolerations")
    for toleration in pod.tolerations:
        if isinstance(toleration, dict) and isinstance(toleration.get("key"), str):
            if _matches_any(toleration["key"], taints):
                return f"toleration of {toleration['key']}"
    return None


def gpu_model_pinning(pod: PodSpec, settings: Mapping[str, Any]) -> str | None:
    """The nodeSelector or node-affinity key that fixes the GPU model, or None."""
    labels = setting(settings, "gpu-model-labels")
    for key in pod.node_selector:
        if _matches_any(str(key), labels):
            return f"nodeSelector {key}"
    for key in _affinity_keys(pod.affinity):
        if _matches_any(key, labels):
            return f"node affinity on {key}"
    return None


def _affinity_keys(affinity: dict) -> Iterator[str]:
    for key, _values in _affinity_terms(affinity):
        yield key


def _affinity_terms(affinity: dict) -> Iterator[tuple[str, list | None]]:
    """(key, values) of the node-affinity expressions that select nodes (`In`, `Exists`, `Gt`...);
    values is None for a key-only expression."""
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    if not isinstance(node, dict):
        return
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    preferred = node.get("preferredDuringSchedulingIgnoredDuringExecution")
    all_terms = list(terms) if isinstance(terms, list) else []
    if isinstance(preferred, list):
        all_terms += [p.get("preference") for p in preferred if isinstance(p, dict)]
    for term in all_terms:
        if not isinstance(term, dict):
            continue
        for section in ("matchExpressions", "matchFields"):
            for expr in term.get(section) or ():
                if isinstance(expr, dict) and isinstance(expr.get("key"), str):
                    if expr.get("operator") not in ("NotIn", "DoesNotExist"):
                        values = expr.get("values")
                        yield expr["key"], (list(values) if isinstance(values, list) else None)


def uses_nvidia_runtime(pod: PodSpec, settings: Mapping[str, Any]) -> bool:
    return pod.runtime_class_name is not None and _matches_any(
        pod.runtime_class_name, setting(settings, "runtime-classes"))


def gpu_signals(pod: PodSpec, container: Container, settings: Mapping[str, Any],
                index: ConfigIndex | None = None) -> list[str]:
    """Why this container is NVIDIA-GPU related, as short phrases for the message (empty: it is not).

    `index` (the scan's ConfigIndex) resolves DRA claims to their device classes.
    """
    signals: list[str] = []
    request = nvidia_request(container, pod, settings, index)
    if request is not None:
        signals.append(request)

    var = container.env_value(VISIBLE_DEVICES)
    if var is None:
        # Only an unset variable leaves the image's default in force.
        image_rule = image_visible_devices_default(container.image, settings)
        if image_rule is not None and image_rule.sets == "all":
            signals.append(f"its image {container.image} defaults {VISIBLE_DEVICES} to all")
    elif var.value_from is not None:
        signals.append(f"it sets {VISIBLE_DEVICES} from valueFrom")
    else:
        expanded = expanded_value(container, var)
        if classify_visible_devices(var.value if expanded is None else expanded) != HIDDEN_VOID:
            signals.append(f"it sets {VISIBLE_DEVICES}={var.value}")

    if uses_nvidia_runtime(pod, settings):
        signals.append(f"its pod runs with runtimeClassName {pod.runtime_class_name}")
    targeting = gpu_node_targeting(pod, settings)
    if targeting is not None:
        signals.append(f"its pod targets GPU nodes by {targeting}")
    for mount in container.volume_mounts:
        volume = pod.volume(mount.name)
        host_path = volume.host_path if volume is not None else None
        if host_path is not None and gpu_related_path(host_path):
            signals.append(f"it mounts host path {host_path}")
            break
    return signals


def nvidia_request(container: Container, pod: PodSpec, settings: Mapping[str, Any],
                   index: ConfigIndex | None = None) -> str | None:
    """How the container asks the scheduler for NVIDIA GPUs, for messages, or None.

    Like `requests_gpu`, without other vendors' resources (`amd.com/gpu`) and
    without DRA claims whose device classes (when the scan holds the claim or
    template) are all another vendor's (`neuron.aws.com`).
    """
    for section in (container.resources.limits, container.resources.requests):
        for name, quantity in section.items():
            if is_gpu_resource(name, settings) and other_vendor_resource(name) is None:
                amount = parse_quantity(quantity)
                if amount is None or amount > 0:
                    return f"it requests {name}"
    if container.resources.claims and _claims_nvidia(container, pod, index):
        return "it claims a DRA resource"
    if _share_annotation(pod, settings):
        return "its pod carries a GPU-share annotation"
    return None


def _claims_nvidia(container: Container, pod: PodSpec, index: ConfigIndex | None) -> bool:
    """Whether the container's DRA claims may be NVIDIA devices: true unless every claim
    resolves, through the scan, to device classes none of which is NVIDIA's (`*.nvidia.com`)."""
    by_name = {entry.get("name"): entry for entry in pod.resource_claims if isinstance(entry, dict)}
    for claim in container.resources.claims:
        entry = by_name.get(claim.get("name")) if isinstance(claim, dict) else None
        classes = None
        if entry is not None and index is not None:
            for key, kind in (("resourceClaimTemplateName", "ResourceClaimTemplate"),
                              ("resourceClaimName", "ResourceClaim")):
                if isinstance(entry.get(key), str):
                    classes = index.claim_classes(kind, None, entry[key])
        if classes is None or any("nvidia" in name.lower() for name in classes):
            return True
    return False


def _share_annotation(pod: PodSpec, settings: Mapping[str, Any]) -> bool:
    annotations_re = setting_re(settings, "gpu-request-annotations")
    return annotations_re is not None and any(annotations_re.match(str(key)) is not None for key in pod.annotations)


NVIDIA_FIX = "request nvidia.com/gpu in resources.limits instead"


def other_vendor_of(workload: Workload, settings: Mapping[str, Any], index: ConfigIndex | None = None) -> str | None:
    """The other accelerator vendor a workload is about (AMD, AWS Neuron...), when it shows
    another vendor's evidence (resources, taints, device nodes, an image of its software
    stack) and no NVIDIA evidence."""
    vendor: str | None = None
    for pod in workload.pod_specs:
        for toleration in pod.tolerations:
            key = toleration.get("key") if isinstance(toleration, dict) else None
            vendor = vendor or (other_vendor_resource(key) if isinstance(key, str) else None)
        for volume in pod.volumes:
            if vendor is None and volume.host_path is not None:
                vendor = other_device_path(normalize(volume.host_path))
        for container in pod.containers:
            if gpu_signals(pod, container, settings, index):
                return None
            for section in (container.resources.limits, container.resources.requests):
                for name in section:
                    vendor = vendor or other_vendor_resource(name)
            ref = parse_image(container.image) if vendor is None and container.image else None
            if ref is not None:
                vendor = image_vendor(ref.repository, ref.tag)   # `rocm/...`: AMD's stack
    return vendor


def accelerator_fix(workload: Workload, settings: Mapping[str, Any], index: ConfigIndex | None = None) -> str:
    """The advice ending a host-access finding: NVIDIA's resource, or vendor-neutral words
    for another vendor's workload (which must never be told to request nvidia.com/gpu)."""
    vendor = other_vendor_of(workload, settings, index)
    if vendor is None:
        return NVIDIA_FIX
    return f"request the {vendor} device through its device plugin's resource in resources.limits instead"


# --- images that default NVIDIA_VISIBLE_DEVICES ------------------------------


@dataclass(frozen=True, repr=False)
class ImageRef:
    """An image reference split the way registries read it."""

    registry: str            # "docker.io" for Docker Hub, whatever its spelling
    repository: str          # "nvidia/cuda", "library/ubuntu"
    tag: str | None          # None when absent
    digest: str | None       # "sha256:..." when pinned

    @property
    def name(self) -> str:
        """`registry/repository`, what image data entries match."""
        return f"{self.registry}/{self.repository}"

    @property
    def effective_tag(self) -> str | None:
        """The tag a pull resolves: `latest` when neither tag nor digest is given."""
        if self.tag is not None:
            return self.tag
        return None if self.digest else "latest"

    def __str__(self) -> str:
        text = self.name
        if self.tag is not None:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


_DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com")


def parse_image(image: str) -> ImageRef | None:
    """Split `[registry[:port]/]path[:tag][@digest]`; None for text that is no reference (templates)."""
    text = image.strip()
    if not text or any(c.isspace() for c in text) or any(c in text for c in "{}$<>"):
        return None
    text, _, digest = text.partition("@")
    first, sep, rest = text.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        registry, path = first.lower(), rest
    else:
        registry, path = "docker.io", text
    if registry in _DOCKER_HUB:
        registry = "docker.io"
    tag = None
    last_slash = path.rfind("/")
    colon = path.rfind(":")
    if colon > last_slash:
        path, tag = path[:colon], path[colon + 1:]
    if not path:
        return None
    if registry == "docker.io" and "/" not in path:
        path = f"library/{path}"
    return ImageRef(registry, path, tag or None, digest or None)


def normalize_image(image: str) -> str:
    """`nvidia/cuda:12` -> `docker.io/nvidia/cuda:12`; `ubuntu` -> `docker.io/library/ubuntu`."""
    ref = parse_image(image)
    return str(ref) if ref is not None else image.strip()


@dataclass(frozen=True, repr=False)
class ImageRule:
    """What an image family sets NVIDIA_VISIBLE_DEVICES to, and why we believe it.

    `match` is a glob over `registry/repository`; `tags` (any must match) and
    `except_tags` (none may match) narrow it to some tags. A reference whose tag
    is unknown (pinned by digest only) matches only rules without tag globs.
    """

    match: str        # glob over registry/repository (Docker Hub images get docker.io/)
    sets: str         # "all" or "void": what the image sets NVIDIA_VISIBLE_DEVICES to
    source: str       # why we believe it
    tags: tuple[str, ...] = ()
    except_tags: tuple[str, ...] = ()

    def matches(self, ref: ImageRef) -> bool:
        if not glob_matches(ref.name, self.match):
            return False
        if not self.tags and not self.except_tags:
            return True
        tag = ref.effective_tag
        if tag is None:
            return False
        if self.tags and not _matches_any(tag, self.tags):
            return False
        return not _matches_any(tag, self.except_tags)


def _image_rule(entry: Any) -> ImageRule:
    if not isinstance(entry, dict) or not isinstance(entry.get("match"), str) \
            or entry.get("sets") not in ("all", "void"):
        raise RuntimeError(f"gpulint/knowledge/data/gpu_images.yaml: bad entry {entry!r}")
    return ImageRule(entry["match"], entry["sets"], str(entry.get("source", "")),
                     tuple(str(t) for t in entry.get("tags") or ()),
                     tuple(str(t) for t in entry.get("except-tags") or ()))


@functools.lru_cache(maxsize=1)
def _image_data() -> dict:
    from gpulint.load.packaged import read_text

    from gpulint.load.yamlload import Document, load_documents

    text = read_text("gpulint.knowledge", "data/gpu_images.yaml")
    for doc in load_documents(text):
        if isinstance(doc, Document) and isinstance(doc.data, dict):
            return doc.data
    raise RuntimeError("gpulint/knowledge/data/gpu_images.yaml is unreadable")


@functools.lru_cache(maxsize=1)
def builtin_image_rules() -> tuple[ImageRule, ...]:
    return tuple(_image_rule(e) for e in _image_data().get("images", []))


@functools.lru_cache(maxsize=1)
def ngc_mirror_names() -> dict[str, tuple[str, str]]:
    """NGC repositories (under nvcr.io/nvidia/) recognisable when copied into another
    registry: each name, and its flattened spelling (`ai-dynamo-vllm-runtime`), -> (name, source)."""
    names: dict[str, tuple[str, str]] = {}
    for entry in _image_data().get("ngc-mirrors", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("repository"), str):
            raise RuntimeError(f"gpulint/knowledge/data/gpu_images.yaml: bad ngc-mirrors entry {entry!r}")
        repository = entry["repository"]
        names[repository] = names[repository.replace("/", "-")] = (repository, str(entry.get("source", "")))
    return names


def image_visible_devices_default(image: str | None, settings: Mapping[str, Any]) -> ImageRule | None:
    """The first image rule matching `image` (user `gpu-images` patterns come first and set `all`), or None.

    User patterns are globs over the normalized reference (`docker.io/org/name:tag`)
    or the reference as written.
    """
    if not image:
        return None
    patterns = settings.get("gpu-images")  # (not `setting()`: no list copy, asked per container)
    return _image_default(image, tuple(patterns if patterns is not None else DEFAULT_SETTINGS["gpu-images"]))


@functools.lru_cache(maxsize=4096)
def _image_default(image: str, patterns: tuple[str, ...]) -> ImageRule | None:
    """image_visible_devices_default for one image: a scan meets the same few images again and again."""
    ref = parse_image(image)
    if ref is None:
        return None
    normalized = str(ref)
    for pattern in patterns:
        if glob_matches(normalized, pattern) or glob_matches(image.strip(), pattern):
            return ImageRule(pattern, "all", "configured gpu-images pattern")
    for rule in builtin_image_rules():
        if rule.matches(ref):
            return rule
    return image_by_evidence(ref)


# NGC namespaces whose images are built on NVIDIA's CUDA base images.
_NGC_PREFIXES = ("nvidia/", "nim/")
# "cuda" as a word of the repository or tag (`-cuda11.8`, `cuda12.1-cudnn8`, `my-cuda-app`),
# or a CUDA version tag (`cu118`, `cu121`, `cu12`).
CUDA_WORDS = r"cuda|cu1\d{1,2}"
_CUDA_WORD_RE = re.compile(rf"(?:^|[^a-z0-9])(?:{CUDA_WORDS})(?:$|[^a-z])", re.IGNORECASE)
# "gpu" as a word of the repository's name or tag (`mindspore-gpu`, `2.13.0-gpu`,
# `:gpu`): how frameworks name their CUDA builds; not in another vendor's image,
# nor in a name that says the image is a cluster component about GPUs
# (`gpu-operator`, `kubevirt-gpu-device-plugin`, `nvidia_gpu_exporter`), which
# need not be built on CUDA at all.
GPU_WORDS = "gpus?"
_GPU_WORD_RE = re.compile(rf"(?:^|[^a-z0-9]){GPU_WORDS}(?:$|[^a-z])", re.IGNORECASE)
COMPONENT_WORDS = ("operator|plugin|exporter|scheduler|extender|controller|manager|discovery|monitor|"
                   "label+er|validator|webhook|admission|driver|installer|toolkit|agent|feature")
_COMPONENT_WORD_RE = lazy(rf"(?:^|[^a-z])(?:{COMPONENT_WORDS})s?(?:$|[^a-z])", re.IGNORECASE)


def image_by_evidence(ref: ImageRef) -> ImageRule | None:
    """Whether an image is a CUDA image by what its reference says, without a list.

    NGC images (`nvcr.io/nvidia/...`, `nvcr.io/nim/...`), copies of NGC images in
    another registry (same repository name, or its path joined with `-`), and
    images whose repository name or tag says CUDA or, unless it names another
    vendor's stack (ROCm, oneAPI, Neuron...), GPU, are built on `nvidia/cuda`,
    whose ENV sets NVIDIA_VISIBLE_DEVICES=all. Exceptions (images that set
    `void`) come first in data/gpu_images.yaml.
    """
    if ref.registry == "nvcr.io" and ref.repository.startswith(_NGC_PREFIXES):
        return ImageRule(f"nvcr.io/{ref.repository.split('/', 1)[0]}/*", "all",
                         "NGC images are built on NVIDIA CUDA base images and set it (NVIDIA/k8s-device-plugin#203; "
                         "e.g. k8s-device-plugin, dcgm-exporter Dockerfiles: ENV NVIDIA_VISIBLE_DEVICES=all)")
    name = ref.repository.rpartition("/")[2]
    tag = ref.tag or ""
    if _CUDA_WORD_RE.search(name) or _CUDA_WORD_RE.search(tag):
        return ImageRule(ref.name, "all", "its repository or tag says CUDA: CUDA images are built on "
                                          "nvidia/cuda (ENV NVIDIA_VISIBLE_DEVICES=all)")
    if image_vendor(ref.repository, ref.tag) is not None:
        return None
    mirrors = ngc_mirror_names()
    two = "/".join(ref.repository.split("/")[-2:])
    mirrored = next((n for n in (two, name) if n in mirrors), None)
    if mirrored is not None:
        original, source = mirrors[mirrored]
        return ImageRule(ref.name, "all", f"a copy of the NGC image nvcr.io/nvidia/{original} ({source})")
    if (_GPU_WORD_RE.search(name) or _GPU_WORD_RE.search(tag)) and not _COMPONENT_WORD_RE.search(name):
        return ImageRule(ref.name, "all", "its repository or tag says GPU, as frameworks name their CUDA "
                                          "builds (built on nvidia/cuda: ENV NVIDIA_VISIBLE_DEVICES=all)")
    return None
