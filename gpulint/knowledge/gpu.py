"""Shared GPU facts the rules rest on (POLICY.md §2 and §5).

Kept in one module so that rules agree on what a GPU request, a hidden GPU and
a GPU node look like; the configurable lists are defaults a config can extend.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, TypeVar

from gpulint.knowledge.envexpand import expanded_value
from gpulint.knowledge.hostpaths import gpu_related_path, normalize
from gpulint.knowledge.quantity import parse_quantity
from gpulint.knowledge.vendors import (
    NVIDIA_LABEL_KEYS,
    OTHER_ACCELERATOR_RESOURCES,
    nvidia_label_evidence,
    image_vendor,
    other_device_path,
    other_vendor_resource,
)
from gpulint.lazypattern import glob_matches, lazy
from gpulint.record import record, set_field

_T = TypeVar("_T")

if TYPE_CHECKING:
    from gpulint.model.index import ConfigIndex
    from gpulint.model.workload import Container, PodSpec, Workload

VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"

# NVIDIA_VISIBLE_DEVICES outcomes (nvidia-container-toolkit).
HIDDEN_VOID = "void"      # void, empty: nothing injected, like plain runc
HIDDEN_NONE = "none"      # no GPU, but driver libraries and capabilities are injected
GRANTS = "grants"         # all, indices, UUIDs, MIG ids, G:M, CDI names, anything else

_UUID_RE = lazy(r"(?:MIG-)?GPU-[0-9a-fA-F-]+(?:/\d+/\d+)?\Z|MIG-[0-9a-fA-F-]+\Z")


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


# KEP-5004 (DRA extended resources): a DeviceClass is requested like an extended resource,
# under its own `extendedResourceName` or the implicit `deviceclass.resource.kubernetes.io/
# <class name>`; the scheduler allocates a DRA claim for it. A DeviceClass name is a DNS
# subdomain, so the name is valid only with one.
DRA_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"
_DEVICE_CLASS_RE = lazy(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\Z")


def dra_extended_class(name: str) -> str | None:
    """The DeviceClass a KEP-5004 implicit extended resource name requests, or None."""
    if not name.startswith(DRA_EXTENDED_PREFIX):
        return None
    device_class = name[len(DRA_EXTENDED_PREFIX):]
    return device_class if len(device_class) <= 63 and _DEVICE_CLASS_RE.match(device_class) else None


# Domains of other vendors' DRA drivers, whose DeviceClasses are named `<kind>.<domain>`
# (`gpu.amd.com`, `gpu.intel.com`, `neuron.aws.com`, `tpu.google.com`).
_OTHER_DRA_DOMAINS = ("amd.com", "intel.com", "aws.com", "amazon.com", "google.com", "habana.ai")


def _dra_extended_nvidia(name: str) -> bool:
    """Whether a DRA extended resource may be NVIDIA devices: its class is not another
    vendor's (`gpu.nvidia.com`, or a class of the cluster's own such as `gpu`)."""
    device_class = dra_extended_class(name)
    if device_class is None:
        return False
    return "nvidia" in device_class or not any(
        device_class == domain or device_class.endswith("." + domain) for domain in _OTHER_DRA_DOMAINS)


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and
    transpositions of adjacent characters (`gup` -> `gpu` is one edit)."""
    if a == b:
        return 0
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


# Domains no device plugin of its own may take: Kubernetes' reserved ones.
_RESERVED_DOMAINS = ("kubernetes.io", "k8s.io")


@functools.lru_cache(maxsize=64)
def _known_domains(known: tuple[str, ...]) -> frozenset[str]:
    """Domains of the known GPU resources (`known`: the configured globs) and of other vendors'
    accelerator resources."""
    names = known + tuple(OTHER_ACCELERATOR_RESOURCES)
    return frozenset(name.rpartition("/")[0] for name in names if "/" in name and not is_glob(name.rpartition("/")[0]))


@functools.lru_cache(maxsize=4096)
def scheduler_gpu_resource(name: str, known: tuple[str, ...]) -> bool:
    """Whether `name` is a GPU resource of a device plugin or scheduler of its own, in no list
    (Volcano's `volcano.sh/vgpu-number`, `volcano.sh/vgpu-memory`): a domain of its own, with
    a dot, that is neither a known GPU vendor's (`known`: the configured GPU resource globs)
    nor a misspelling of one (within two edits), and `gpu` in its name. A device plugin
    advertises such names; they are requests of GPUs, not typos."""
    domain, sep, local = name.rpartition("/")
    if not sep or "." not in domain or domain != domain.lower() or "gpu" not in local.lower():
        return False
    if any(domain == reserved or domain.endswith("." + reserved) for reserved in _RESERVED_DOMAINS):
        return False   # Kubernetes' own names (`alpha.kubernetes.io/nvidia-gpu`, removed)
    return not any(edit_distance(domain, other) <= 2 for other in _known_domains(known))


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
    gpu_re, known, answers = _gpu_names(settings)
    if _asks_gpus(container.resources.limits, gpu_re, known=known, answers=answers) \
            or _asks_gpus(container.resources.requests, gpu_re, known=known, answers=answers):
        return True
    if container.resources.claims:
        return True
    # A custom resource's operator requests what the component declares (`gpu: 2` is
    # its own spelling of nvidia.com/gpu in NVIDIA Dynamo's services).
    if pod.operator_resources and _asks_gpus(pod.operator_resources, gpu_re, also=("gpu",)):
        return True
    if serverless_gpu_instance(pod) is not None:
        return True
    return _share_annotation(pod, settings)


# A pod that runs in a serverless container instance of its own (Alibaba Cloud ECI, through
# ACK's virtual node) asks for its instance type by annotation: a GPU type (ECS's GPU families
# `ecs.gn6i-…`, `ecs.ebmgn7…`, `ecs.sgn…`, `ecs.vgn…`) gives it a whole GPU instance, where no
# other pod runs and nothing is hidden from a scheduler (it requests GPUs; it is no GPU signal
# of the rules about GPUs reached around the scheduler: the node's GPUs are all its own).
_INSTANCE_SPECS_KEY_RE = re.compile(r"(?:^|/)eci-use-specs\Z")
# (All of a comma-separated list of instance types, for the admission form too.)
GPU_INSTANCE_TYPES = r"^(?i:\s*ecs\.(?:ebm|s|v)?gn\d[^,]*)(?:,(?i:\s*ecs\.(?:ebm|s|v)?gn\d[^,]*))*$"
_GPU_INSTANCE_TYPE_RE = lazy(r"ecs\.(?:ebm|s|v)?gn\d", re.IGNORECASE)


def serverless_gpu_instance(pod: PodSpec) -> str | None:
    """The GPU instance type a serverless pod asks for by annotation, or None."""
    for key, value in pod.annotations.items():
        if isinstance(value, str) and _INSTANCE_SPECS_KEY_RE.search(str(key)):
            types = [t.strip() for t in value.split(",") if t.strip()]
            if types and all(_GPU_INSTANCE_TYPE_RE.match(t) for t in types):
                return types[0]
    return None


def per_gpu_settings(make: Callable[[Mapping[str, Any]], _T]) -> Callable[[Mapping[str, Any]], _T]:
    """`make(settings)`, which reads no setting but `gpu-resources` and `overcommittable-resources`,
    kept for the last settings where both are lists: a scan asks with the same settings for every
    container. The lists are kept as copies, compared element by element (in C), so settings
    changed in place are seen; the entry is one tuple, replaced whole, so a thread reads the
    answer of one settings, never a mix of two."""
    last: tuple = ()

    @functools.wraps(make)
    def answer(settings: Mapping[str, Any]) -> _T:
        nonlocal last
        gpu = settings.get("gpu-resources")
        over = settings.get("overcommittable-resources")
        kept = last
        if kept and type(gpu) is list and type(over) is list and kept[0] == gpu and kept[1] == over:
            return kept[2]
        found = make(settings)
        last = (list(gpu) if type(gpu) is list else None, list(over) if type(over) is list else None, found)
        return found

    return answer


@per_gpu_settings
def _gpu_names(settings: Mapping[str, Any]) -> tuple[Globs | None, tuple[str, ...], dict[str, bool]]:
    """The `gpu-resources` matcher, the known names (`_known_tuple`) and a dict for the answers
    of `_asks_gpus` per resource name, for these settings."""
    return setting_re(settings, "gpu-resources"), _known_tuple(settings), {}


def _known_tuple(settings: Mapping[str, Any]) -> tuple[str, ...]:
    gpu = settings.get("gpu-resources")
    over = settings.get("overcommittable-resources")
    return tuple(gpu if gpu is not None else DEFAULT_SETTINGS["gpu-resources"]) + \
        tuple(over if over is not None else DEFAULT_SETTINGS["overcommittable-resources"])


def _asks_gpus(resources: Mapping[str, Any], gpu_re: Globs | None, also: tuple[str, ...] = (),
               known: tuple[str, ...] | None = None, answers: dict[str, bool] | None = None) -> bool:
    """Whether `resources` name a GPU resource (or one of `also`, a DRA extended resource: a
    device claim like any other, or, with `known`, a scheduler's own GPU resource) with a
    positive or unknown quantity. `answers`: each name's answer kept there, for the same
    arguments (the same few names, `cpu` and `memory`, recur in every container)."""
    for name, quantity in resources.items():
        named = answers.get(name) if answers is not None else None
        if named is None:
            named = name in also or (gpu_re is not None and gpu_re.match(name) is not None) \
                or dra_extended_class(name) is not None \
                or known is not None and scheduler_gpu_resource(name, known)
            if answers is not None:
                if len(answers) >= 4096:   # a scan of hostile input must not grow it without bound
                    answers.clear()
                answers[name] = named
        if named:
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
    if not pod.node_selector and not pod.affinity and not pod.tolerations:
        return None   # most pods: nothing places them (and no setting need be read)
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
            if is_gpu_resource(name, settings) and other_vendor_resource(name) is None \
                    or _dra_extended_nvidia(name):
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
    # (Names are strings in any valid pod; a mangled one, a list, names nothing.)
    by_name = {entry["name"]: entry for entry in pod.resource_claims
               if isinstance(entry, dict) and isinstance(entry.get("name"), str)}
    for claim in container.resources.claims:
        name = claim.get("name") if isinstance(claim, dict) else None
        entry = by_name.get(name) if isinstance(name, str) else None
        classes = None
        if entry is not None and index is not None:
            for key, kind in (("resourceClaimTemplateName", "ResourceClaimTemplate"),
                              ("resourceClaimName", "ResourceClaim")):
                if isinstance(entry.get(key), str):
                    classes = index.claim_classes(kind, None, entry[key])
        if classes is None or any("nvidia" in name.lower() for name in classes):
            return True
    return False


# A GPU-sharing scheduler's request annotation, by its shape: a GPU quantity word and a request
# word in the name (`tensor-fusion.ai/vram-request`, `…/tflops-limit`, `…/gpu-count`), as the
# listed `gpu-fraction`, `gpu-memory` (KAI) and `hami.io/gpu-*` are spelled.
SHARE_ANNOTATION_SHAPE = (r"(?i)(?:^|[/._-])(?:v?gpu|vram|tflops)[-_.]?"
                          r"(?:request|limit|count|number|num|memory|mem|fraction|cores?|percentage)s?$")
_SHARE_ANNOTATION_RE = re.compile(SHARE_ANNOTATION_SHAPE.replace("$", "\\Z"))


def _share_annotation(pod: PodSpec, settings: Mapping[str, Any]) -> bool:
    """Whether the pod carries an annotation through which a GPU-sharing scheduler hands it GPUs:
    one of the `gpu-request-annotations` setting, or one shaped like them."""
    if not pod.annotations:
        return False   # most pod templates (and no setting need be read)
    annotations_re = setting_re(settings, "gpu-request-annotations")
    for key in pod.annotations:
        if annotations_re is not None and annotations_re.match(str(key)) is not None:
            return True
        if _SHARE_ANNOTATION_RE.search(str(key)):
            return True
    return False


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


@record(frozen=True)
class ImageRef:
    """An image reference split the way registries read it."""

    __slots__ = ("registry", "repository", "tag", "digest")
    registry: str            # "docker.io" for Docker Hub, whatever its spelling
    repository: str          # "nvidia/cuda", "library/ubuntu"
    tag: str | None          # None when absent
    digest: str | None       # "sha256:..." when pinned

    def __init__(self, registry: str, repository: str, tag: str | None, digest: str | None) -> None:
        set_field(self, "registry", registry)
        set_field(self, "repository", repository)
        set_field(self, "tag", tag)
        set_field(self, "digest", digest)

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


@record(frozen=True)
class ImageRule:
    """What an image family sets NVIDIA_VISIBLE_DEVICES to, and why we believe it.

    `match` is a glob over `registry/repository`; `tags` (any must match) and
    `except_tags` (none may match) narrow it to some tags. A reference whose tag
    is unknown (pinned by digest only) matches only rules without tag globs.
    """

    __slots__ = ("match", "sets", "source", "tags", "except_tags")
    match: str        # glob over registry/repository (Docker Hub images get docker.io/)
    sets: str         # "all" or "void": what the image sets NVIDIA_VISIBLE_DEVICES to
    source: str       # why we believe it
    tags: tuple[str, ...]
    except_tags: tuple[str, ...]

    def __init__(self, match: str, sets: str, source: str, tags: tuple[str, ...] = (),
                 except_tags: tuple[str, ...] = ()) -> None:
        set_field(self, "match", match)
        set_field(self, "sets", sets)
        set_field(self, "source", source)
        set_field(self, "tags", tags)
        set_field(self, "except_tags", except_tags)

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
    """Images recognisable when copied into another registry: NGC repositories (`repository`,
    under nvcr.io/nvidia/) and other distinctive CUDA images (`image`, a whole reference):
    each name, its last two components and its flattened spelling (`ai-dynamo-vllm-runtime`)
    -> (the original image, source)."""
    names: dict[str, tuple[str, str]] = {}
    for entry in _image_data().get("ngc-mirrors", []):
        if not isinstance(entry, dict) or not (isinstance(entry.get("repository"), str)
                                               or isinstance(entry.get("image"), str)):
            raise RuntimeError(f"gpulint/knowledge/data/gpu_images.yaml: bad ngc-mirrors entry {entry!r}")
        source = str(entry.get("source", ""))
        if isinstance(entry.get("repository"), str):
            repository = entry["repository"]
            original = f"nvcr.io/nvidia/{repository}"
        else:
            original = entry["image"]
            repository = "/".join(original.split("/")[-2:])
        names[repository] = names[repository.replace("/", "-")] = (original, source)
        if "image" in entry:
            names.setdefault(repository.rpartition("/")[2], (original, source))
    return names


@functools.lru_cache(maxsize=1)
def ngc_families() -> dict[str, str]:
    """NGC image families built on the CUDA userland: path (or last component) under
    nvcr.io/nvidia/ -> source."""
    families: dict[str, str] = {}
    for entry in _image_data().get("ngc-families", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("repository"), str):
            raise RuntimeError(f"gpulint/knowledge/data/gpu_images.yaml: bad ngc-families entry {entry!r}")
        families[entry["repository"]] = str(entry.get("source", ""))
    return families


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
        return placeholder_registry_rule(image)
    normalized = str(ref)
    for pattern in patterns:
        if glob_matches(normalized, pattern) or glob_matches(image.strip(), pattern):
            return ImageRule(pattern, "all", "configured gpu-images pattern")
    for rule in builtin_image_rules():
        if rule.matches(ref):
            return rule
    return image_by_evidence(ref)


# The NGC framework release tag (`24.01-py3`, `24.05-py3-sdk`, `23.10-tf2-py3`,
# `24.05-trtllm-python-py3`): only NGC's CUDA framework images are released so.
NGC_RELEASE_TAG = r"\d{2}\.\d{2}(?:\.\d+)?-(?:[a-z0-9]+-)*py3(?:-[a-z0-9]+)*"
_NGC_RELEASE_TAG_RE = lazy(NGC_RELEASE_TAG + r"\Z")
# "cuda" (or cuDNN, which only CUDA images carry) as a word of the repository or tag
# (`-cuda11.8`, `cuda12.1-cudnn8`, `my-cuda-app`, `12.4.1-cudnn-runtime-ubuntu22.04`), or a
# CUDA version tag (`cu118`, `cu121`, `cu12`).
CUDA_WORDS = r"cuda|cudnn|cu1\d{1,2}"
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


_CPU_WORD_RE = lazy(r"(?:^|[^a-z])cpu(?:$|[^a-z])", re.IGNORECASE)


def _mirror_rule(ref: ImageRef) -> ImageRule | None:
    """The rule of a copy of a listed CUDA image in another registry (same name), or None; a
    CPU build (`-cpu` tag) of the same name is none."""
    mirrors = ngc_mirror_names()
    name = ref.repository.rpartition("/")[2]
    two = "/".join(ref.repository.split("/")[-2:])
    mirrored = next((n for n in (two, name) if n in mirrors), None)
    if mirrored is None or _CPU_WORD_RE.search(ref.tag or ""):
        return None
    original, source = mirrors[mirrored]
    if ref.name == original:
        return ImageRule(ref.name, "all", source)
    return ImageRule(ref.name, "all", f"a copy of the image {original} ({source})")


# An image whose registry (and tag) a script fills in (`$ECR_REGISTRY/ray-llm:$TAG`,
# `${REGISTRY}/sglang:v1`): its repository path is still written out.
_PLACEHOLDER_REGISTRY_RE = lazy(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/(?P<path>[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)*)"
    r"(?::(?P<tag>[\w.-]+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?))?\Z")


def placeholder_registry_rule(image: str) -> ImageRule | None:
    """For an image whose registry is a variable, the rule its written repository name gives
    (a copy of a listed CUDA image), or None."""
    match = _PLACEHOLDER_REGISTRY_RE.match(image.strip())
    if match is None:
        return None
    tag = match.group("tag")
    ref = ImageRef("(a registry a script fills in)", match.group("path"),
                   tag if tag and "$" not in tag else None, None)
    if image_vendor(ref.repository, ref.tag) is not None:
        return None
    return _mirror_rule(ref)


def image_by_evidence(ref: ImageRef) -> ImageRule | None:
    """Whether an image is a CUDA image by what its reference says.

    NGC images of a CUDA family (data/gpu_images.yaml `ngc-families`) or with an
    NGC framework release tag, NIM microservices (`nvcr.io/nim/...`), copies of
    NVIDIA product images in another registry (same repository name, or its path
    joined with `-`), and images whose repository name or
    tag says CUDA or, unless it names another vendor's stack (ROCm, oneAPI,
    Neuron...), GPU, are built on `nvidia/cuda`, whose ENV sets
    NVIDIA_VISIBLE_DEVICES=all. The `nvcr.io/nvidia/` prefix alone is not:
    NGC also hosts operators, distroless and Kubernetes component images.
    Exceptions (images that set `void`) come first in data/gpu_images.yaml.
    """
    if ref.registry == "nvcr.io":
        org, _, path = ref.repository.partition("/")
        if org == "nim":
            # The NIM org holds only NVIDIA Inference Microservices: CUDA inference servers.
            return ImageRule("nvcr.io/nim/*", "all", "NGC NIM microservices are built on NVIDIA CUDA "
                                                     "images (ENV NVIDIA_VISIBLE_DEVICES=all)")
        if org == "nvidia":
            families = ngc_families()
            family = path if path in families else path.rpartition("/")[2]
            if family in families:
                return ImageRule(f"nvcr.io/nvidia/{path}", "all", families[family])
            if _NGC_RELEASE_TAG_RE.match(ref.tag or ""):
                return ImageRule(ref.name, "all", f"tag {ref.tag} is an NGC framework release, built on "
                                                  "the NGC CUDA base (ENV NVIDIA_VISIBLE_DEVICES=all)")
    name = ref.repository.rpartition("/")[2]
    tag = ref.tag or ""
    if _CUDA_WORD_RE.search(name) or _CUDA_WORD_RE.search(tag):
        return ImageRule(ref.name, "all", "its repository or tag says CUDA: CUDA images are built on "
                                          "nvidia/cuda (ENV NVIDIA_VISIBLE_DEVICES=all)")
    if image_vendor(ref.repository, ref.tag) is not None:
        return None
    mirrored = _mirror_rule(ref)
    if mirrored is not None:
        return mirrored
    if (_GPU_WORD_RE.search(name) or _GPU_WORD_RE.search(tag)) and not _COMPONENT_WORD_RE.search(name):
        return ImageRule(ref.name, "all", "its repository or tag says GPU, as frameworks name their CUDA "
                                          "builds (built on nvidia/cuda: ENV NVIDIA_VISIBLE_DEVICES=all)")
    return None
