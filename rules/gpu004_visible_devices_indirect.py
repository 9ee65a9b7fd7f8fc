"""
## What it does
Finds containers that get `NVIDIA_VISIBLE_DEVICES` indirectly instead of from a
literal `env` value (which GPU003 checks):

- an `env` entry with `valueFrom` — `configMapKeyRef`, `secretKeyRef`,
  `fieldRef`, `resourceFieldRef`, any source;
- an `envFrom` ConfigMap or Secret that holds the key, also through a `prefix`
  (prefix `NVIDIA_` with key `VISIBLE_DEVICES`, prefix `NVIDIA_VISIBLE_` with key
  `DEVICES`, ...).

ConfigMaps and Secrets are looked up across every file of the scan (Secret
`data` is base64-decoded). When the value is known it is judged like a literal:
`void`, empty and `none` hide GPUs and are not reported (`none` is reported when
the option `none-is-hidden` is false). A `valueFrom` whose source is not in the
scan, or whose `fieldRef` points at something the manifest does not fix (an
annotation a scheduler writes at run time), is still reported: the pod requests
GPUs through the variable, whatever the value turns out to be.

Kubernetes semantics decide which setting counts: a later `envFrom` source
overrides an earlier one and any `env` entry overrides `envFrom`, so an `env`
literal that overrides a ConfigMap is left to GPU003 and reported once. The
finding points at the container's `- name: NVIDIA_VISIBLE_DEVICES` entry
(`valueFrom`) or at the `envFrom` entry, and names the ConfigMap key and where it
is defined. Values from Secrets are never printed.

An `envFrom` source that is not in the scan cannot be checked. It is reported
as **info** (below the default `--fail-on warning`) only where a hidden
`NVIDIA_VISIBLE_DEVICES` would matter and is plausible: the source's `prefix`
could form the name (`NVIDIA_`, ...), or the container requests no GPU while
running a GPU image, using an NVIDIA runtime class or targeting GPU nodes.
A Secret of tokens beside an ordinary workload is not reported. ConfigMaps that
no workload consumes are never reported.

## Why is this bad
Policy item 4 ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)): requesting GPUs for a Pod through the
`NVIDIA_VISIBLE_DEVICES` environment variable is prohibited, and moving the value
into a ConfigMap, a Secret or the downward API does not change what the NVIDIA
container runtime hook does when the container is created: it mounts the named
GPUs (unprivileged containers' variables are honoured by default,
`accept-nvidia-visible-devices-envvar-when-unprivileged`). The scheduler never
accounts for them: it over-allocates the node and several Pods contend for one
card and its memory. Devices injected by the hook without runc knowing them
also disappear with "Failed to initialize NVML: Unknown Error" after a
`systemctl daemon-reload` or container update (NVIDIA/nvidia-container-toolkit#48,
NVIDIA/nvidia-docker#1730, NVIDIA/gpu-operator#485); pods that requested no GPU
see every GPU (NVIDIA/gpu-operator#421, #700). Indirection also hides the
request from reviewers: the Pod looks GPU-free while a ConfigMap hands it all.

## Example
```yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: gpu-env}
data:
  VISIBLE_DEVICES: all
---
# in the Pod
containers:
- name: train
  image: registry.example.com/train:1.0
  envFrom:
  - prefix: NVIDIA_
    configMapRef: {name: gpu-env}
  env:
  - name: NVIDIA_VISIBLE_DEVICES
    valueFrom:
      configMapKeyRef: {name: gpu-env, key: VISIBLE_DEVICES}
```

## Use instead
```yaml
containers:
- name: train
  image: registry.example.com/train:1.0
  resources:
    limits:
      nvidia.com/gpu: 1
```
To keep a container away from GPUs, set `NVIDIA_VISIBLE_DEVICES=void` (an `env`
entry overrides anything `envFrom` provides).

## Fix
None: the value lives in a ConfigMap or Secret that other workloads may read too, and
how many GPUs to request instead is not in the object.

## References
- ACK, "Use the default Kubernetes GPU scheduling", prohibited operation 4: https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy, item 4: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- NVIDIA container toolkit, environment variables: https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime/README.md
- Kubernetes, Define environment variables / ConfigMaps (`envFrom`, `prefix`, precedence): https://kubernetes.io/docs/tasks/configure-pod-container/configure-pod-configmap/
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
- NVIDIA/gpu-operator#421: https://github.com/NVIDIA/gpu-operator/issues/421
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from gpulint.api import Admission, Rule, RuleContext, Severity, ValueAt, Violation
from gpulint.knowledge import celforms
from gpulint.knowledge.celforms import cel_string, last_entry, sets_variable
from gpulint.knowledge.envresolve import LITERAL, EnvSetting, describe_env_from, env_setters, resolve
from gpulint.knowledge.gpu import (
    GRANTS,
    HIDDEN_NONE,
    VISIBLE_DEVICES,
    classify_visible_devices,
    describe_devices,
    gpu_node_targeting,
    image_visible_devices_default,
    requests_gpu,
    uses_nvidia_runtime,
)
from gpulint.model.workload import Container, PodSpec, Workload

_FIX = "request nvidia.com/gpu in resources.limits instead"


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    setters = env_setters(workload, VISIBLE_DEVICES)
    if not setters:
        return   # most workloads: nothing sets the variable in any container
    none_hides = ctx.option("none-is-hidden")
    for container, pod in setters.items():
        resolution = resolve(VISIBLE_DEVICES, container, pod, workload.namespace, ctx.index)
        setting = resolution.setting
        if setting is not None and setting.via != LITERAL:
            message = _judge(setting, none_hides)
            if message is not None:
                yield Violation(message, ValueAt(setting.path), container)
        if resolution.unverifiable:
            reason = _plausible_reason(container, pod, ctx)
            for item in resolution.unverifiable:
                why = f'its prefix "{item.prefix}" can form the name' if item.prefix else reason
                if why is None:
                    continue
                yield Violation(
                    f"envFrom {describe_env_from(item)} is not in the scanned files, so gpulint cannot "
                    f"check whether it sets {VISIBLE_DEVICES} ({why}); add its manifest to the scan, "
                    f"or set {VISIBLE_DEVICES} explicitly in env (an env entry overrides envFrom)",
                    ValueAt(item.path), container, severity=Severity.INFO,
                )


def _judge(setting: EnvSetting, none_hides: bool) -> str | None:
    """The message for a valueFrom/envFrom setting, or None when it hides GPUs."""
    how = setting.via
    if setting.value is None:
        if setting.external:
            unknown = "which is not in the scanned files"
        elif setting.source is not None and setting.key not in setting.source.entries:
            unknown = f"which has no such key ({_where(setting)})"
        elif setting.source is not None:
            unknown = f"whose value is not text ({_where(setting)})"
        elif setting.var is not None and setting.var.value_from and "fieldRef" in setting.var.value_from:
            unknown = "a value the manifest does not fix"
        else:
            unknown = "a value only known at run time"
        return (f"{VISIBLE_DEVICES} is set through {how} from {setting.origin}, {unknown}: requesting GPUs "
                f"through the variable bypasses the scheduler; {_FIX}")
    outcome = classify_visible_devices(setting.value)
    shown = "" if setting.secret else f"={setting.value.strip()}"
    if outcome == GRANTS:
        return (f"{VISIBLE_DEVICES}{shown} comes through {how} from {setting.origin}{_at(setting)} and exposes "
                f"{describe_devices(setting.value)} without the scheduler knowing; {_FIX}")
    if outcome == HIDDEN_NONE and not none_hides:
        return (f"{VISIBLE_DEVICES}{shown} comes through {how} from {setting.origin}{_at(setting)} and still "
                "injects the NVIDIA driver libraries; use void to hide GPUs")
    return None


def _where(setting: EnvSetting) -> str:
    source = setting.source
    assert source is not None
    return f"{source.obj.ref.describe()} in {source.obj.file}"


def _at(setting: EnvSetting) -> str:
    """` (defined at file:line)` for a value held by a ConfigMap/Secret of the scan."""
    source, key = setting.source, setting.key
    if source is None or key is None or key not in source.entries:
        return ""
    span = source.obj.doc.span(source.entries[key].path)
    line = f":{span.line}" if span is not None else ""
    return f" (defined at {source.obj.file}{line})"


def _plausible_reason(container: Container, pod: PodSpec, ctx: RuleContext) -> str | None:
    """Why a hidden NVIDIA_VISIBLE_DEVICES would grant unaccounted GPUs here, or None."""
    if requests_gpu(container, pod, ctx.settings):
        return None
    image_rule = image_visible_devices_default(container.image, ctx.settings)
    if image_rule is not None and image_rule.sets == "all":
        return f"the container requests no GPU and runs GPU image {container.image}"
    if uses_nvidia_runtime(pod, ctx.settings):
        return f"the container requests no GPU and the pod uses runtime class {pod.runtime_class_name}"
    target = gpu_node_targeting(pod, ctx.settings)
    if target is not None:
        return f"the container requests no GPU and the pod targets GPU nodes ({target})"
    return None


def admission(options: Mapping[str, Any]) -> Admission:
    """Strict: the value a valueFrom or a ConfigMap holds is not in the object, so any valueFrom
    of the variable, and any envFrom whose prefix can form its name, is refused."""
    name = cel_string(VISIBLE_DEVICES)
    prefixed = (f"(has(c.envFrom) && c.envFrom.exists(s, has(s.prefix) && s.prefix != \"\" && "
                f"{name}.startsWith(s.prefix)) && !{sets_variable('c')})")
    # An envFrom without a prefix may hold the variable: refused where it would matter (`_plausible_reason`).
    plausible = (f"(!{sets_variable('c')} && has(c.envFrom) && c.envFrom.exists(s, !has(s.prefix) || s.prefix == \"\") "
                 f"&& !{celforms.requests_gpu('c')} && !variables.shareAnnotation && ({celforms.gpu_image('c')} || "
                 "variables.nvidiaRuntime || variables.targetsGpuNodes))")
    return Admission(
        f"gets {VISIBLE_DEVICES} through valueFrom or envFrom (a prefix that forms its name, or a source that may "
        f"hold it in a container that requests no GPU but runs a GPU image, the NVIDIA runtime or on GPU nodes), "
        f"which requests GPUs through the variable and bypasses the scheduler; {_FIX}, or set "
        f"{VISIBLE_DEVICES}=void in env",
        container=f"({last_entry('c', 'has(e.valueFrom)')} || {prefixed} || {plausible})",
        variables=(("targetsGpuNodes", celforms.targets_gpu_nodes()),),
        enforced="every valueFrom of the variable, every envFrom whose prefix can form its name, and an "
                 "envFrom without prefix in a container that requests no GPU but runs a GPU image, the NVIDIA "
                 "runtime class or targets GPU nodes (strict: the value they hold is not in the object)",
        linter_only="the value a ConfigMap or Secret of the scan holds (void is allowed by the linter); "
                    "GPU nodes named without the word nvidia (`accelerator: h100`)",
    )


RULE = Rule(
    id="GPU004",
    name="visible-devices-indirect",
    severity=Severity.ERROR,
    summary="NVIDIA_VISIBLE_DEVICES set through valueFrom or envFrom requests GPUs the scheduler does not account for.",
    doc=__doc__ or "",
    check=check,
    options={"none-is-hidden": True},
    security_severity="8.0",
    admission=admission,
)
