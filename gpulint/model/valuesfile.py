"""Values files for charts that are not in the scanned tree, read as containers by their shape.

A values file written for a chart gpulint cannot render (a remote chart a script
installs with `--values`, an override file kept beside a deployment) is not a
Kubernetes object, yet what it sets ends up in one: a component's `env`,
`image` and `resources`, `securityContext`, `extraEnv`. Such a file is known
by its name (`values.yaml`, `gpu-values.yaml`, `values-prod.yml`,
`overrides.yaml`; a chart's own values sit inside its chart and are checked
through its render instead). Inside it, a mapping is a component when it has
the shape of a container:

- an image (`image: repo:tag`, or `image: {repository, tag}`) with an env list,
  `securityContext`, `resources` or `command`/`args`; or a block with only a
  chart-style image beside a component that sets `resources` (the file decides
  the resources of the blocks it lists: a `scheduler:` beside a `worker:` given
  GPUs). A block with only an image elsewhere (a catalogue of images an operator
  picks from) keeps the chart's own resources, which gpulint cannot see; or
- an env list of Kubernetes env entries (`env`, `extraEnv`, `extraEnvVars`,
  `extraEnvs`, `additionalEnv`: items with `name` and `value`/`valueFrom`), or an
  `env` mapping of variable names (`NVIDIA_VISIBLE_DEVICES: all`), which charts
  turn into entries.

A block the chart is told not to deploy (`enabled: false`, `deployed: false`)
is left out with everything under it. Each component becomes one object of its own (kind HELM_VALUES_KIND, named by
its dotted path) with one pod spec holding one container, at the values file's
own positions, so the container rules apply unchanged. What is not a
container's shape is left alone, and so are documents that are something else
with a values-like name (a CI workflow, a Compose file, a list of Ansible tasks).
Values are not manifests: a type a chart would convert is no GPU000.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterator

from gpulint.lazypattern import lazy
from gpulint.load.yamlload import Document
from gpulint.model.objects import HELM_VALUES_KIND, KubeObject, ObjectRef, is_kubernetes
from gpulint.model.workload import (
    ROLE_CONTAINER,
    Container,
    EnvVar,
    PodSpec,
    Problems,
    Volume,
    VolumeMount,
    Workload,
    build_container,
)

# `values.yaml`, `gpu-values.yaml`, `values-prod.yml`, `my.values.yaml`, `overrides.yaml`, `prod-override.yml`.
_NAME_RE = lazy(r"(?:\A|[-_.])(?:values|overrides?)(?:[-_.][^/]*)?\.ya?ml\Z", re.I)
# A folder kept for values files outside any chart (`config/helm/`, `helm-values/`, `values/`).
_FOLDER_RE = lazy(r"\A(?:helm|[\w.-]*values)\Z", re.I)
_ENV_LISTS = ("env", "extraEnv", "extraEnvVars", "extraEnvs", "additionalEnv", "envVars")
_VOLUME_LISTS = ("volumes", "extraVolumes")
_MOUNT_LISTS = ("volumeMounts", "extraVolumeMounts")
_ENV_NAME_RE = lazy(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_MAX_DEPTH = 40
# `enabled: false` (the Helm convention for a subchart or component), `deployed: false`, `install: false`.
_OFF_KEYS = ("enabled", "deployed", "install")


def is_values_name(path: str) -> bool:
    """Whether a file's name, or the folder holding it, says it holds Helm values."""
    if not path.endswith((".yaml", ".yml", ".YAML", ".YML")):
        return False
    folder = os.path.basename(os.path.dirname(path))
    return _NAME_RE.search(os.path.basename(path)) is not None or _FOLDER_RE.match(folder) is not None


def is_remote_values(path: str) -> bool:
    """Whether `path` (as given) is a values file for a chart that is not beside it: named as values
    (is_values_name), and not in a chart's own folder (one with `templates/`, even when its
    Chart.yaml is missing: its templates are read as they are)."""
    if not is_values_name(path):
        return False
    folder = os.path.dirname(path) or "."
    return not (os.path.isdir(os.path.join(folder, "templates")) or os.path.isfile(os.path.join(folder, "Chart.yaml")))


def values_objects(file: str, doc: Document) -> list[KubeObject]:
    """One object per container-shaped component of a values document (none when it is not one)."""
    data = doc.data
    if not isinstance(data, dict) or is_kubernetes(data) or _something_else(data):
        return []
    out = []
    for rel, _mapping in _components(data, (), 0):
        name = _label(rel)
        out.append(KubeObject(file, doc, rel, data, ObjectRef("", HELM_VALUES_KIND, name, None), None, None))
    return out


def values_workload(obj: KubeObject) -> Workload | None:
    """The workload of one component (see values_objects): a pod spec with its one container."""
    mapping = obj.doc.data
    for item in obj.base:
        mapping = mapping[item]
    return Workload(obj, [_pod(mapping, obj.base, obj.doc.data)], [])


def values_pods(obj: KubeObject, rel: tuple) -> list[PodSpec]:
    """Pod specs of the components of values an object holds at `rel` (a Flux HelmRelease's
    `spec.values`, an Argo CD Application's `helm.valuesObject`): one per component."""
    values: Any = obj.data
    for item in rel:
        values = values.get(item) if isinstance(values, dict) else None
    if not isinstance(values, dict):
        return []
    return [_pod(mapping, obj.path(*rel, *sub), values) for sub, mapping in _components(values, (), 0)]


def _pod(mapping: dict, rel: tuple, root: dict) -> PodSpec:
    container = _container(mapping, rel)
    runtime = mapping.get("runtimeClassName", root.get("runtimeClassName"))
    return PodSpec(
        path=rel,
        label=_label(rel),
        host_pid=mapping.get("hostPID") is True,
        host_network=mapping.get("hostNetwork") is True,
        host_ipc=mapping.get("hostIPC") is True,
        runtime_class_name=runtime if isinstance(runtime, str) else None,
        node_selector=_dict(mapping.get("nodeSelector")),
        affinity=_dict(mapping.get("affinity")),
        tolerations=mapping.get("tolerations") if isinstance(mapping.get("tolerations"), list) else [],
        volumes=list(_volumes(mapping, rel)),
        annotations=_dict(mapping.get("podAnnotations")),
        labels=_dict(mapping.get("podLabels")),
        metadata_path=None,
        resource_claims=[],
        containers=[container],
        raw=mapping,
    )


def _container(mapping: dict, rel: tuple) -> Container:
    shaped = {key: mapping[key] for key in ("command", "args", "resources", "securityContext", "envFrom")
              if key in mapping}
    name = mapping.get("name")
    shaped["name"] = name if isinstance(name, str) else next(
        (item for item in reversed(rel) if isinstance(item, str)), "values")
    image = _image(mapping.get("image"))
    if image is not None:
        shaped["image"] = image
    # Problems are dropped: a chart converts what it reads, a values file is no manifest.
    container = build_container(shaped, rel, ROLE_CONTAINER, Problems())
    container.env = list(_env(mapping, rel))
    container.volume_mounts = [VolumeMount(str(item.get("name", "")), str(item.get("mountPath", "")), rel + (key, i))
                               for key in _MOUNT_LISTS if isinstance(mapping.get(key), list)
                               for i, item in enumerate(mapping[key]) if isinstance(item, dict)]
    return container


def _components(data: Any, rel: tuple, depth: int) -> Iterator[tuple[tuple, dict]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(data, dict):
        if any(data.get(key) is False for key in _OFF_KEYS):
            return   # a component the chart is told not to deploy
        if _is_component(data):
            yield rel, data
        # A block with only a chart-style image (`scheduler: {image: {repository, tag}}`) is a component
        # when a block beside it is one and sets resources (`worker:` given GPUs): the file decides the
        # resources of the components it lists. A catalogue of images (runtimes an operator picks from)
        # has no such neighbour.
        if any(isinstance(value, dict) and _is_component(value) and isinstance(value.get("resources"), dict)
               for value in data.values()):
            for key, value in data.items():
                if (isinstance(value, dict) and not _is_component(value) and _chart_image(value.get("image"))
                        and not any(value.get(off) is False for off in _OFF_KEYS)):
                    yield rel + (key,), value
        for key, value in data.items():
            if key in _ENV_LISTS or key in ("resources", "securityContext"):
                continue
            if isinstance(value, (dict, list)):
                yield from _components(value, rel + (key,), depth + 1)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            if isinstance(value, (dict, list)):
                yield from _components(value, rel + (i,), depth + 1)


def _is_component(mapping: dict) -> bool:
    env = any(_env_entries(mapping.get(key)) or _env_map(mapping.get(key)) for key in _ENV_LISTS)
    if env:
        return True
    if _image(mapping.get("image")) is None:
        return False
    resources = mapping.get("resources")
    return (isinstance(mapping.get("securityContext"), dict)
            or (isinstance(resources, dict) and any(isinstance(resources.get(k), dict) for k in ("limits", "requests")))
            or isinstance(mapping.get("command"), list) or isinstance(mapping.get("args"), list))


def _chart_image(value: Any) -> bool:
    """`image: {repository: ..., tag: ...}`: how charts take the image of a component they run."""
    return isinstance(value, dict) and isinstance(value.get("repository"), str) and bool(value["repository"])


def _env_entries(value: Any) -> bool:
    """A non-empty list of Kubernetes env entries (`name` with `value` or `valueFrom`)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(item, dict) and isinstance(item.get("name"), str)
                    and ("value" in item or "valueFrom" in item) for item in value))


def _env_map(value: Any) -> bool:
    """A non-empty mapping of environment variable names to scalar values."""
    return (isinstance(value, dict) and bool(value)
            and all(isinstance(key, str) and _ENV_NAME_RE.match(key) and not isinstance(item, (dict, list))
                    for key, item in value.items()))


def _env(mapping: dict, rel: tuple) -> Iterator[EnvVar]:
    for key in _ENV_LISTS:
        items = mapping.get(key)
        if _env_map(items):
            for name, value in items.items():
                yield EnvVar(name, value if value is None else str(value), None, rel + (key, name))
            continue
        if not _env_entries(items):
            continue
        for i, item in enumerate(items):
            value = item.get("value")
            value_from = item.get("valueFrom")
            yield EnvVar(item["name"], value if value is None or isinstance(value, str) else str(value),
                         value_from if isinstance(value_from, dict) else None, rel + (key, i))


def _image(value: Any) -> str | None:
    """The image a values entry names: a string, or `{registry, repository, tag}` put together."""
    if isinstance(value, str) and value:
        return value
    if not isinstance(value, dict):
        return None
    repository = value.get("repository", value.get("name", value.get("image")))
    if not isinstance(repository, str) or not repository:
        return None
    registry = value.get("registry")
    if isinstance(registry, str) and registry and not repository.startswith(registry + "/"):
        repository = f"{registry.rstrip('/')}/{repository}"
    tag = value.get("tag")
    if isinstance(tag, (str, int, float)) and str(tag):
        repository += f":{tag}"
    digest = value.get("digest")
    if isinstance(digest, str) and digest:
        repository += f"@{digest}"
    return repository


def _volumes(mapping: dict, rel: tuple) -> Iterator[Volume]:
    for key in _VOLUME_LISTS:
        items = mapping.get(key)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            kind = next((k for k, v in item.items() if k != "name" and isinstance(v, dict)), "")
            yield Volume(str(item.get("name", "")), kind, item.get(kind) or {}, rel + (key, i))


def _something_else(data: dict) -> bool:
    """Whether a document with a values-like name is a CI workflow or a Compose file."""
    if "jobs" in data and ("on" in data or True in data or "stages" in data):
        return True  # GitHub Actions (`on:` reads as true in YAML 1.1), GitLab CI
    services = data.get("services")
    return isinstance(services, dict) and any(
        isinstance(service, dict) and ("environment" in service or "build" in service or "deploy" in service)
        for service in services.values())


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _label(rel: tuple) -> str:
    out = ""
    for item in rel:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out or "(top level)"
