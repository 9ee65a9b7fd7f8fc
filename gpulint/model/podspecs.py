"""The one place that knows where workloads keep their pod templates.

Built-in kinds have fixed paths. Every other kind (CRDs: Ray, Kubeflow, JobSet,
LeaderWorkerSet, Volcano, Knative, Argo Rollouts, OpenKruise, Tekton...) is
searched by shape: any mapping with a `containers` list is a pod spec, and any
other mapping with an `image` string and a container key (`command`, `env`,
`resources`, `securityContext`, `script`...), or under a key that names it a
container (`mainContainer`), is a container wherever it sits
(`runner:`, `worker:`, `steps[]`, `sidecars[]`, `stepTemplate`). Such a loose
container gets its pod-level fields (volumes, hostPID, node selection) from the
nearest enclosing mapping that has any, else from the mapping holding it. Two
CRD families keep containers elsewhere and are handled by name: Argo Workflows
templates (`container`, `script`, `containerSet`) and KServe components
(`predictor.model` and the framework shorthands).

Containers also live in strings: a strategic-merge patch of the pod (Argo
`podSpecPatch` on a workflow or a template, any key spelled so) is parsed
(gpulint.model.podpatch) and its pod spec checked with positions inside the
string; its containers merge by name with the pods they patch (a patch container
runs its base container's image, and a base container gets the patch's
resources). A custom-resource component with a container's keys but no `image`
of its own (`env`, `command`...) runs the resource's top-level image
(`spec.image`), and is a container too.
"""

from __future__ import annotations

from typing import Any, Iterator

import functools

from gpulint.model.nodes import is_node, node_view
from gpulint.model.objects import HELM_VALUES_KIND, KubeObject
from gpulint.model.podpatch import patch_object
from gpulint.model.workload import Container, PodSpec, Problems, Resources, Workload, at_path as _at, build_pod_spec
from gpulint.record import replace

KNOWN_KINDS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
_KNOWN_LABELS = {kind: ".".join(rel) for kind, rel in KNOWN_KINDS.items()}
# Core API groups whose kinds above are really the built-ins (a CRD may reuse a name).
_CORE_GROUPS = {"v1", "apps/v1", "apps/v1beta1", "apps/v1beta2", "batch/v1", "batch/v1beta1",
                "extensions/v1beta1", "batch/v2alpha1"}

# Objects that never hold pod templates; skipping them keeps the shape search cheap.
_NO_PODS = frozenset({
    "ConfigMap", "Secret", "Service", "ServiceAccount", "Role", "RoleBinding", "ClusterRole",
    "ClusterRoleBinding", "Namespace", "Ingress", "NetworkPolicy", "PersistentVolume",
    "PersistentVolumeClaim", "StorageClass", "CustomResourceDefinition", "Endpoints",
    "EndpointSlice", "HorizontalPodAutoscaler", "PodDisruptionBudget", "PriorityClass",
    "RuntimeClass", "LimitRange", "ResourceQuota", "Lease", "Event", "APIService",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ServiceMonitor",
    "PodMonitor", "PrometheusRule", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass",
})

_ARGO_KINDS = frozenset({"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"})
_KSERVE_COMPONENTS = ("predictor", "transformer", "explainer")
# A serving runtime is a template: KServe merges the selecting InferenceService's model spec
# (its resources among them) into the runtime's container of this name.
_KSERVE_RUNTIMES = frozenset({"ServingRuntime", "ClusterServingRuntime"})
_KSERVE_CONTAINER = "kserve-container"
_KSERVE_FRAMEWORKS = ("model", "tensorflow", "pytorch", "sklearn", "xgboost", "onnx", "triton",
                      "huggingface", "lightgbm", "pmml", "paddle", "alibi", "art", "aix")
_SKIP_KEYS = frozenset({"metadata", "status", "apiVersion", "kind"})
# Keys that make a mapping with an `image` string a container (`name` alone does not:
# `{name, image}` pairs also list images to pre-pull or mirror).
CONTAINER_KEYS = frozenset({"command", "args", "env", "envFrom", "resources", "securityContext",
                            "volumeMounts", "ports", "script", "workingDir", "lifecycle", "livenessProbe",
                            "readinessProbe", "imagePullPolicy"})
# Keys of a pod spec's container lists (a mapping without either is looked into without two lookups).
_POD_SPEC_KEYS = frozenset({"containers", "initContainers"})
# Pod-level keys: the nearest enclosing mapping with one of them is a loose container's pod.
POD_KEYS = frozenset({"volumes", "hostPID", "hostNetwork", "hostIPC", "nodeSelector", "affinity",
                      "tolerations", "runtimeClassName", "resourceClaims", "serviceAccountName"})
# Container lists build_pod_spec reads itself.
_POD_LISTS = ("initContainers", "containers", "ephemeralContainers", "sidecars")


def workload_of(obj: KubeObject) -> Workload | None:
    """The workload view of an object, or None when it holds no pod spec."""
    kind = obj.ref.kind
    known = KNOWN_KINDS.get(kind)
    if known is not None and obj.ref.api_version in _CORE_GROUPS:
        # A built-in workload (most of them): its pod template at a fixed path, nothing found by shape.
        problems = Problems()
        pod = build_pod_spec(obj, known, _KNOWN_LABELS[kind], problems)
        if pod is None:
            return Workload(obj, [], list(problems)) if problems else None
        return Workload(obj, [pod], list(problems))
    if kind in _NO_PODS and _is_builtin_group(obj.ref.api_version):
        return None
    if kind == HELM_VALUES_KIND and not obj.ref.api_version:
        from gpulint.model.valuesfile import values_workload  # only for values files (valuesfile.py)

        return values_workload(obj)
    values_rels = _chart_values(obj)
    if values_rels:
        # The values of a chart a controller installs (Flux, Argo CD): components by shape.
        from gpulint.model.valuesfile import values_pods

        pods = [pod for rel in values_rels for pod in values_pods(obj, rel)]
        return Workload(obj, pods, []) if pods else None
    problems = Problems()
    if is_node(obj):
        node = node_view(obj, problems)
        return Workload(obj, [], list(problems), node=node)
    pods = list(_pod_specs(obj, problems))
    if pods and _may_patch(obj):
        pods += _patched_pods(obj, pods)
    if not pods and not problems:
        return None
    return Workload(obj, pods, list(problems))


def _chart_values(obj: KubeObject) -> list[tuple]:
    """Where an object holds values for a Helm chart its controller renders: a Flux HelmRelease's
    `spec.values`, an Argo CD Application's `helm.valuesObject` (of `source` or each `sources[]`)."""
    group = obj.ref.api_version.partition("/")[0]
    if obj.ref.kind == "HelmRelease" and group == "helm.toolkit.fluxcd.io":
        return [("spec", "values")]
    if obj.ref.kind == "Application" and group == "argoproj.io":
        spec = obj.data.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        rels = [("spec", "source", "helm", "valuesObject")]
        sources = spec.get("sources")
        rels += [("spec", "sources", i, "helm", "valuesObject") for i in range(len(sources))] \
            if isinstance(sources, list) else []
        return rels
    return []


def _is_builtin_group(api_version: str) -> bool:
    group = api_version.rpartition("/")[0]
    return "." not in group or group.endswith(".k8s.io") or group == "monitoring.coreos.com"


def _pod_specs(obj: KubeObject, problems: Problems) -> Iterator[PodSpec]:
    """Pod specs of an object that is no built-in workload (workload_of reads those)."""
    kind = obj.ref.kind
    if kind in _ARGO_KINDS:
        yield from _argo(obj, problems)
        return
    kserve = obj.ref.api_version.startswith("serving.kserve.io/")
    loose: list[tuple] = []
    top_image = None if kserve else _top_image(obj)
    runtime = kserve and kind in _KSERVE_RUNTIMES
    for rel in _find_container_holders(obj.data, (), None, (), None if kserve else loose, top_image is not None):
        extra = _kserve_extras(obj, rel) if kserve else None
        pod = build_pod_spec(obj, rel, _label(rel), problems, extra_containers=extra)
        if pod is not None:
            if runtime:
                for container in pod.containers:
                    if container.name == _KSERVE_CONTAINER:
                        container.resources_from = "the InferenceService that selects this serving runtime"
            yield _with_operator_resources(obj, rel, pod)
    if kserve:
        yield from _kserve_shorthand(obj, problems)
        return
    for pod, rels in _loose_pods(obj, loose, problems):
        for rel in rels:   # the first container whose component declares resources
            if _with_operator_resources(obj, rel, pod).operator_resources_path is not None:
                break
        if top_image is not None:
            for container in pod.containers:
                if container.image is None:   # a component running the resource's image
                    container.image, container.image_at = top_image
        yield pod


# Keys under which a custom resource declares the resources of a component its
# operator builds pods for (NVIDIA Dynamo `services.<name>.resources`, Kubeflow
# Trainer `trainer.resourcesPerNode`; and the Spark operator's `gpu: {name, quantity}`).
_OPERATOR_RESOURCE_KEYS = ("resources", "resourcesPerNode")


def _with_operator_resources(obj: KubeObject, rel: tuple, pod: PodSpec) -> PodSpec:
    """Note on `pod` the resources the nearest component of the custom resource declares
    for the pod spec or container at `rel`: a `resources` mapping with limits or requests
    in an enclosing mapping, or `resourcesPerNode` there or in the mapping at `rel`."""
    chain: list[tuple[int, dict]] = []   # (depth, mapping) of the mappings on the way, the root's not
    data: Any = obj.data
    for depth, item in enumerate(rel, 1):
        try:
            data = data[item]
        except (KeyError, IndexError, TypeError):
            return pod
        if isinstance(data, dict):
            chain.append((depth, data))
    for depth, holder in reversed(chain):
        for key in _OPERATOR_RESOURCE_KEYS:
            value = holder.get(key)   # (first: most components have neither key)
            if not isinstance(value, dict):
                continue
            if key == "resources" and (depth == len(rel) or rel[depth] == key):
                continue   # the container's own resources, or the pod spec sits under it
            if any(isinstance(value.get(s), dict) for s in ("limits", "requests")):
                merged: dict = {}
                for section in ("requests", "limits"):
                    if isinstance(value.get(section), dict):
                        merged.update({str(k): v for k, v in value[section].items()})
                pod.operator_resources = merged
                pod.operator_resources_path = rel[:depth] + (key,)
                return pod
        # The Spark operator's spelling: `gpu: {name: nvidia.com/gpu, quantity: 1}` on the driver
        # or executor it builds a pod for.
        gpu = holder.get("gpu")
        if isinstance(gpu, dict) and isinstance(gpu.get("name"), str) and "quantity" in gpu:
            pod.operator_resources = {gpu["name"]: gpu["quantity"]}
            pod.operator_resources_path = rel[:depth] + ("gpu",)
            return pod
    return pod


def _loose_pods(obj: KubeObject, loose: list[tuple], problems: Problems) -> Iterator[tuple[PodSpec, list[tuple]]]:
    """Pod specs of the loose containers, grouped by the mapping that gives their pod-level
    fields, each with the paths of its containers. A component declaring the GPUs its
    operator requests for it (`gpu: {name, quantity}`) is a pod of its own: the Spark
    operator builds one for the driver and one per executor."""
    groups: dict[tuple, list[tuple[tuple, dict, str, str]]] = {}
    rels: dict[tuple, list[tuple]] = {}
    for rel, pod_rel in loose:
        own = rel if isinstance(_at(obj.data, rel), dict) and isinstance(_at(obj.data, rel).get("gpu"), dict) else None
        key = (pod_rel, own)
        rels.setdefault(key, []).append(rel)
        parent = rel[:-1]
        if len(parent) == len(pod_rel) + 1 and parent[:-1] == pod_rel and parent[-1] in _POD_LISTS:
            groups.setdefault(key, [])  # `sidecars`/`initContainers`: build_pod_spec reads the list
            continue
        name = next((item for item in reversed(rel) if isinstance(item, str)), "")
        groups.setdefault(key, []).append((obj.path(*rel), _at(obj.data, rel), "", name))
    for (pod_rel, _own), extra in groups.items():
        pod = build_pod_spec(obj, pod_rel, _label(pod_rel), problems, extra_containers=extra)
        if pod is not None:
            yield pod, rels[(pod_rel, _own)]


def _find_container_holders(data: Any, rel: tuple, pod_rel: tuple | None, holder: tuple,
                            loose: list[tuple] | None, inherit: bool = False,
                            found: list[tuple] | None = None) -> list[tuple]:
    """Paths of mappings that have a `containers` list, outermost first.

    When `loose` is a list, containers found by shape outside such mappings are
    added to it as (path, path of the mapping giving their pod-level fields):
    `pod_rel`, the nearest enclosing mapping with a pod-level key, else
    `holder`, the nearest enclosing mapping. (Gathered in `found`, not yielded: a
    generator per nested mapping, each value passed up through every level, cost more.)
    """
    if found is None:
        found = []
    if isinstance(data, dict):
        if not _POD_SPEC_KEYS.isdisjoint(data) and (isinstance(data.get("containers"), list)
                                                    or isinstance(data.get("initContainers"), list)):
            found.append(rel)
            return found
        if loose is not None and rel:
            # (is_container_shaped and _named_container need an `image` string, _runs_top_image no
            # `image` key: each mapping is asked only what it could be)
            if isinstance(data.get("image"), str):
                shaped = is_container_shaped(data) or _named_container(rel[-1], data)
            else:
                shaped = inherit and _runs_top_image(data)
            if shaped:
                loose.append((rel, pod_rel if pod_rel is not None else holder))
                return found
        if rel and not POD_KEYS.isdisjoint(data):
            pod_rel = rel
        for key, value in data.items():
            if isinstance(value, (dict, list)) and (rel or key not in _SKIP_KEYS):
                _find_container_holders(value, rel + (key,), pod_rel, rel, loose, inherit, found)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            if isinstance(value, (dict, list)):
                _find_container_holders(value, rel + (i,), pod_rel, holder, loose, inherit, found)
    return found


def is_container_shaped(data: dict) -> bool:
    """A mapping with an `image` string and a container key is a container, wherever it sits."""
    return isinstance(data.get("image"), str) and not CONTAINER_KEYS.isdisjoint(data)


def _named_container(key: Any, data: dict) -> bool:
    """A mapping with an `image` string under a key that names it a container (`mainContainer`
    of a Dynamo service's `extraPodSpec`, `container`), even with no other container key."""
    return isinstance(key, str) and key.lower().endswith("container") and isinstance(data.get("image"), str)


def _runs_top_image(data: dict) -> bool:
    """A component without an image string of its own that has what only a container has: an
    `env` list of variables, or a `command`/`args` list (its operator runs the resource's image)."""
    if "image" in data:
        return False   # its own image, whatever its spelling
    env = data.get("env")
    if isinstance(env, list) and env and all(isinstance(e, dict) and "name" in e for e in env):
        return True
    return any(isinstance(data.get(key), list) and data[key] for key in ("command", "args"))


def _top_image(obj: KubeObject) -> tuple[str, tuple] | None:
    """The image a custom resource runs for components that name none (`spec.image`, a string
    or `{repository, tag}`), and its document path; None when there is none."""
    spec = obj.data.get("spec")
    image = spec.get("image") if isinstance(spec, dict) else None
    if isinstance(image, str) and image.strip():
        return image, obj.path("spec", "image")
    if isinstance(image, dict) and isinstance(image.get("repository"), str):
        tag = image.get("tag")
        text = image["repository"] + (f":{tag}" if isinstance(tag, (str, int, float)) and str(tag) else "")
        return text, obj.path("spec", "image", "repository")
    return None


@functools.lru_cache(maxsize=256)
def _label(rel: tuple) -> str:
    """`spec.workers[0].template.spec`. (Cached: objects of one kind repeat the same paths.)"""
    out = ""
    for item in rel:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out or "(root)"


def _argo(obj: KubeObject, problems: Problems) -> Iterator[PodSpec]:
    spec_rel: tuple = ("spec",)
    if obj.ref.kind == "CronWorkflow":
        spec_rel = ("spec", "workflowSpec")
    spec = obj.data
    for item in spec_rel:
        spec = spec.get(item) if isinstance(spec, dict) else None
    if not isinstance(spec, dict):
        return
    templates = spec.get("templates")
    if not isinstance(templates, list):
        return
    for i, template in enumerate(templates):
        if not isinstance(template, dict):
            continue
        rel = spec_rel + ("templates", i)
        extra: list[tuple[tuple, dict, str, str]] = []
        for key in ("container", "script"):
            if isinstance(template.get(key), dict):
                extra.append((obj.path(*rel, key), template[key], "script" if key == "script" else "", "main"))
        container_set = template.get("containerSet")
        holder_rel = rel
        if isinstance(container_set, dict):
            # containerSet.containers are containers of the template's pod.
            pod = build_pod_spec(obj, rel + ("containerSet",), _label(rel + ("containerSet",)), problems,
                                 fallback=spec, fallback_rel=spec_rel)
            if pod is not None:
                yield pod
        if extra or isinstance(template.get("sidecars"), list) or isinstance(template.get("initContainers"), list):
            pod = build_pod_spec(obj, holder_rel, _label(rel), problems, extra_containers=extra,
                                 fallback=spec, fallback_rel=spec_rel)
            if pod is not None:
                yield pod


def _kserve_extras(obj: KubeObject, rel: tuple) -> list[tuple[tuple, dict, str, str]] | None:
    holder = obj.data
    for item in rel:
        holder = holder[item]
    if not rel or rel[-1] not in _KSERVE_COMPONENTS:
        return None
    return [(obj.path(*rel, key), holder[key], "", "kserve-container") for key in _KSERVE_FRAMEWORKS
            if isinstance(holder.get(key), dict)]


def _kserve_shorthand(obj: KubeObject, problems: Problems) -> Iterator[PodSpec]:
    """KServe components written without `containers` (e.g. `predictor.model`)."""
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return
    for component in _KSERVE_COMPONENTS:
        holder = spec.get(component)
        if not isinstance(holder, dict) or isinstance(holder.get("containers"), list):
            continue
        rel = ("spec", component)
        extra = _kserve_extras(obj, rel)
        if extra:
            pod = build_pod_spec(obj, rel, _label(rel), problems, extra_containers=extra)
            if pod is not None:
                yield pod


# --- pod-spec patches held in strings ------------------------------------------------


def _may_patch(obj: KubeObject) -> bool:
    """Whether the object's document text spells a pod-spec patch key. Once per document text: the
    items of a large List share one. (The last answer is kept by the text's identity, as one pair
    that another thread sees whole: a cache by value would hash every document's whole text.)"""
    global _last_may_patch
    text = obj.doc.text
    if _last_may_patch[0] is text:
        return _last_may_patch[1]
    answer = "odSpecPatch" in text or "od_spec_patch" in text
    _last_may_patch = (text, answer)
    return answer


_last_may_patch: tuple = (None, False)


def _is_patch_key(key: Any) -> bool:
    """Keys documented as a strategic-merge patch of the pod: Argo's `podSpecPatch`, and the
    same name in other spellings (`pod_spec_patch`)."""
    return isinstance(key, str) and key.replace("_", "").replace("-", "").lower() == "podspecpatch"


def _patch_keys(data: Any, rel: tuple) -> Iterator[tuple]:
    if isinstance(data, dict):
        for key, value in data.items():
            if _is_patch_key(key) and isinstance(value, str):
                yield rel + (key,)
            elif isinstance(value, (dict, list)) and not (key in _SKIP_KEYS and not rel):
                yield from _patch_keys(value, rel + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            if isinstance(value, (dict, list)):
                yield from _patch_keys(value, rel + (i,))


def _patched_pods(obj: KubeObject, pods: list[PodSpec]) -> list[PodSpec]:
    """Pod specs of the object's pod-spec patches, merged with the pods each one patches
    (those under the mapping that holds the patch: a template's, or every template's)."""
    found: list[PodSpec] = []
    for rel in _patch_keys(obj.data, ()):
        patch = patch_object(obj, rel)
        if patch is None:
            continue
        holder = obj.path(*rel[:-1])
        patched = [pod for pod in pods if pod.path[:len(holder)] == holder]
        # Type problems inside a patch have no position in the manifest's document: the
        # patch is checked for what it grants, not validated.
        pod = build_pod_spec(patch, (), _label(rel), Problems())
        if pod is None or not pod.containers:
            continue
        for container in pod.containers:
            container.origin = patch
            bases = [c for p in patched for c in p.containers if c.name == container.name]
            for base in bases:
                _merge(base, container, obj)
        found.append(pod)
    return found


def _merge(base: Container, patch: Container, obj: KubeObject) -> None:
    """A strategic merge by container name: the patch container runs the base's image unless it
    names one, and either side's resources are the union (the patch's quantities win)."""
    base.patches.append(patch)
    patch.patched = base
    if patch.image is None and base.image is not None:
        patch.image = base.image
        patch.image_at = base.image_path
        patch.image_origin = base.image_origin or obj
    merged = _merged_resources(base.resources, patch.resources)
    if merged is not None:
        base.resources = merged
        base.memo.clear()
    merged = _merged_resources(patch.resources, base.resources)
    if merged is not None:
        patch.resources = replace(merged, limits={**merged.limits, **patch.resources.limits},
                                  requests={**merged.requests, **patch.resources.requests})
        patch.memo.clear()


def _merged_resources(into: Resources, extra: Resources) -> Resources | None:
    """`into` with `extra`'s limits, requests and claims added (None when nothing changes)."""
    limits = {**into.limits, **extra.limits}
    requests = {**into.requests, **extra.requests}
    claims = into.claims + [c for c in extra.claims if c not in into.claims]
    if limits == into.limits and requests == into.requests and claims == into.claims:
        return None
    return replace(into, limits=limits, requests=requests, claims=claims)
