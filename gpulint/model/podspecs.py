"""The one place that knows where workloads keep their pod templates.

Built-in kinds have fixed paths. Every other kind (CRDs: Ray, Kubeflow, JobSet,
LeaderWorkerSet, Volcano, Knative, Argo Rollouts, OpenKruise, Tekton...) is
searched by shape: any mapping with a `containers` list is a pod spec, and any
other mapping with an `image` string and a container key (`command`, `env`,
`resources`, `securityContext`, `script`...) is a container wherever it sits
(`runner:`, `worker:`, `steps[]`, `sidecars[]`, `stepTemplate`). Such a loose
container gets its pod-level fields (volumes, hostPID, node selection) from the
nearest enclosing mapping that has any, else from the mapping holding it. Two
CRD families keep containers elsewhere and are handled by name: Argo Workflows
templates (`container`, `script`, `containerSet`) and KServe components
(`predictor.model` and the framework shorthands).
"""

from __future__ import annotations

from typing import Any, Iterator

from gpulint.model.nodes import is_node, node_view
from gpulint.model.objects import HELM_VALUES_KIND, KubeObject
from gpulint.model.workload import PodSpec, Problems, Workload, at_path as _at, build_pod_spec

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
_KSERVE_FRAMEWORKS = ("model", "tensorflow", "pytorch", "sklearn", "xgboost", "onnx", "triton",
                      "huggingface", "lightgbm", "pmml", "paddle", "alibi", "art", "aix")
_SKIP_KEYS = frozenset({"metadata", "status", "apiVersion", "kind"})
# Keys that make a mapping with an `image` string a container (`name` alone does not:
# `{name, image}` pairs also list images to pre-pull or mirror).
CONTAINER_KEYS = frozenset({"command", "args", "env", "envFrom", "resources", "securityContext",
                            "volumeMounts", "ports", "script", "workingDir", "lifecycle", "livenessProbe",
                            "readinessProbe", "imagePullPolicy"})
# Pod-level keys: the nearest enclosing mapping with one of them is a loose container's pod.
POD_KEYS = frozenset({"volumes", "hostPID", "hostNetwork", "hostIPC", "nodeSelector", "affinity",
                      "tolerations", "runtimeClassName", "resourceClaims", "serviceAccountName"})
# Container lists build_pod_spec reads itself.
_POD_LISTS = ("initContainers", "containers", "ephemeralContainers", "sidecars")


def workload_of(obj: KubeObject) -> Workload | None:
    """The workload view of an object, or None when it holds no pod spec."""
    kind = obj.ref.kind
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
    kind = obj.ref.kind
    known = KNOWN_KINDS.get(kind)
    if known is not None and obj.ref.api_version in _CORE_GROUPS:
        pod = build_pod_spec(obj, known, ".".join(known), problems)
        if pod is not None:
            yield pod
        return
    if kind in _ARGO_KINDS:
        yield from _argo(obj, problems)
        return
    kserve = obj.ref.api_version.startswith("serving.kserve.io/")
    loose: list[tuple] = []
    for rel in _find_container_holders(obj.data, (), None, (), None if kserve else loose):
        extra = _kserve_extras(obj, rel) if kserve else None
        pod = build_pod_spec(obj, rel, _label(rel), problems, extra_containers=extra)
        if pod is not None:
            yield _with_operator_resources(obj, rel, pod)
    if kserve:
        yield from _kserve_shorthand(obj, problems)
    for pod, rels in _loose_pods(obj, loose, problems):
        for rel in rels:   # the first container whose component declares resources
            if _with_operator_resources(obj, rel, pod).operator_resources_path is not None:
                break
        yield pod


# Keys under which a custom resource declares the resources of a component its
# operator builds pods for (NVIDIA Dynamo `services.<name>.resources`, Kubeflow
# Trainer `trainer.resourcesPerNode`).
_OPERATOR_RESOURCE_KEYS = ("resources", "resourcesPerNode")


def _with_operator_resources(obj: KubeObject, rel: tuple, pod: PodSpec) -> PodSpec:
    """Note on `pod` the resources the nearest component of the custom resource declares
    for the pod spec or container at `rel`: a `resources` mapping with limits or requests
    in an enclosing mapping, or `resourcesPerNode` there or in the mapping at `rel`."""
    chain: list[tuple[tuple, dict]] = []
    data: Any = obj.data
    for i in range(len(rel) + 1):
        if isinstance(data, dict) and i:   # the object's root is no component
            chain.append((rel[:i], data))
        if i < len(rel):
            try:
                data = data[rel[i]]
            except (KeyError, IndexError, TypeError):
                return pod
    for where, holder in reversed(chain):
        for key in _OPERATOR_RESOURCE_KEYS:
            if key == "resources" and (where == rel or rel[:len(where) + 1] == where + (key,)):
                continue   # the container's own resources, or the pod spec sits under it
            value = holder.get(key)
            if isinstance(value, dict) and any(isinstance(value.get(s), dict) for s in ("limits", "requests")):
                merged: dict = {}
                for section in ("requests", "limits"):
                    if isinstance(value.get(section), dict):
                        merged.update({str(k): v for k, v in value[section].items()})
                pod.operator_resources = merged
                pod.operator_resources_path = where + (key,)
                return pod
    return pod


def _loose_pods(obj: KubeObject, loose: list[tuple], problems: Problems) -> Iterator[tuple[PodSpec, list[tuple]]]:
    """Pod specs of the loose containers, grouped by the mapping that gives their pod-level
    fields, each with the paths of its containers."""
    groups: dict[tuple, list[tuple[tuple, dict, str, str]]] = {}
    rels: dict[tuple, list[tuple]] = {}
    for rel, pod_rel in loose:
        rels.setdefault(pod_rel, []).append(rel)
        parent = rel[:-1]
        if len(parent) == len(pod_rel) + 1 and parent[:-1] == pod_rel and parent[-1] in _POD_LISTS:
            groups.setdefault(pod_rel, [])  # `sidecars`/`initContainers`: build_pod_spec reads the list
            continue
        name = next((item for item in reversed(rel) if isinstance(item, str)), "")
        groups.setdefault(pod_rel, []).append((obj.path(*rel), _at(obj.data, rel), "", name))
    for pod_rel, extra in groups.items():
        pod = build_pod_spec(obj, pod_rel, _label(pod_rel), problems, extra_containers=extra)
        if pod is not None:
            yield pod, rels[pod_rel]


def _find_container_holders(data: Any, rel: tuple, pod_rel: tuple | None, holder: tuple,
                            loose: list[tuple] | None) -> Iterator[tuple]:
    """Paths of mappings that have a `containers` list, outermost first.

    When `loose` is a list, containers found by shape outside such mappings are
    added to it as (path, path of the mapping giving their pod-level fields):
    `pod_rel`, the nearest enclosing mapping with a pod-level key, else
    `holder`, the nearest enclosing mapping.
    """
    if isinstance(data, dict):
        if isinstance(data.get("containers"), list) or isinstance(data.get("initContainers"), list):
            yield rel
            return
        if loose is not None and rel and is_container_shaped(data):
            loose.append((rel, pod_rel if pod_rel is not None else holder))
            return
        if rel and not POD_KEYS.isdisjoint(data):
            pod_rel = rel
        for key, value in data.items():
            if key in _SKIP_KEYS and not rel:
                continue
            if isinstance(value, (dict, list)):
                yield from _find_container_holders(value, rel + (key,), pod_rel, rel, loose)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            if isinstance(value, (dict, list)):
                yield from _find_container_holders(value, rel + (i,), pod_rel, holder, loose)


def is_container_shaped(data: dict) -> bool:
    """A mapping with an `image` string and a container key is a container, wherever it sits."""
    return isinstance(data.get("image"), str) and not CONTAINER_KEYS.isdisjoint(data)


def _label(rel: tuple) -> str:
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
