"""
## What it does
Finds pods that run with an NVIDIA runtime class (`runtimeClassName: nvidia`;
the names are the `runtime-classes` setting, by default `nvidia`, `nvidia-cdi`
and `nvidia-legacy`) although none of their containers requests a GPU
(`resources.limits`, a DRA claim, or a GPU-share annotation). Pods whose every
container hides GPUs (`NVIDIA_VISIBLE_DEVICES=void` or `none`, literally or from
a ConfigMap in the scan) are not reported. The finding points at the
`runtimeClassName` key and says which containers run an image that defaults to
`all`.

## Why is this bad
Beyond the policy text, but the same bypass ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#container-engines-runtime-classes-and-node-access)): the runtime class
only selects the NVIDIA container runtime, which injects whatever
`NVIDIA_VISIBLE_DEVICES` names. Without a GPU limit the device plugin never sets
that variable, so the image's default decides, and CUDA and NGC images default
to `all`: the pod gets every GPU of the node while the scheduler believes it has
none, over-allocates the node and lets several pods contend for one card
(NVIDIA/gpu-operator#421, #700). Such hook-injected devices also vanish with
"Failed to initialize NVML: Unknown Error" after a `systemctl daemon-reload`
(NVIDIA/nvidia-container-toolkit#48, NVIDIA/nvidia-docker#1730,
NVIDIA/gpu-operator#485). A pod that needs no GPU needs no NVIDIA runtime.

It is a warning rather than an error because the runtime class alone grants
nothing when the image leaves the variable unset; GPU005 reports the image when
it does not.

## Example
```yaml
spec:
  runtimeClassName: nvidia
  containers:
  - name: app
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
```

## Use instead
```yaml
spec:
  runtimeClassName: nvidia
  containers:
  - name: app
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: 1
```
or drop `runtimeClassName` from pods that need no GPU.

## Fix
Unsafe (`--unsafe-fixes`): `runtimeClassName` is deleted, so the pod runs with
the node's default runtime and no container sees a GPU. Pods that need GPUs
should request them instead; that choice is yours, so the fix only removes
the runtime class.

```diff
 spec:
-  runtimeClassName: nvidia
   containers:
   - name: app
```

## References
- The GPU Operator creates RuntimeClass `nvidia`: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#container-engines-runtime-classes-and-node-access
- Kubernetes, Runtime Class: https://kubernetes.io/docs/concepts/containers/runtime-class/
- NVIDIA GPU Operator, container runtime configuration: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
- NVIDIA/gpu-operator#421: https://github.com/NVIDIA/gpu-operator/issues/421
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from gpulint.api import Admission, Applicability, Edit, Fix, KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.knowledge.celforms import hides_devices, last_entry, sets_variable
from gpulint.knowledge.envresolve import resolve
from gpulint.knowledge.gpu import (
    GRANTS,
    VISIBLE_DEVICES,
    classify_visible_devices,
    image_visible_devices_default,
    pod_requests_gpu,
    uses_nvidia_runtime,
)
from gpulint.model.workload import Container, PodSpec, Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for pod in workload.pod_specs:
        if not pod.containers or not uses_nvidia_runtime(pod, ctx.settings):
            continue
        if pod_requests_gpu(pod, ctx.settings):
            continue
        exposed = [c for c in pod.containers if _may_see_gpus(c, pod, workload, ctx)]
        if not exposed:
            continue  # every container hides GPUs itself
        defaults = [c for c in exposed if _image_default(c, ctx) == "all"]
        detail = ""
        if defaults:
            names = ", ".join(f'"{c.name}" ({c.image})' for c in defaults)
            detail = f"; container {names} runs an image that defaults {VISIBLE_DEVICES} to all and gets every GPU"
        yield Violation(
            f"runtimeClassName {pod.runtime_class_name} runs the NVIDIA runtime but no container of the pod "
            f"requests a GPU{detail}; request nvidia.com/gpu in resources.limits, or drop the runtime class",
            KeyAt(pod.field_path("runtimeClassName")),
            fix=Fix(f"delete runtimeClassName {pod.runtime_class_name}: no container requests a GPU",
                    Applicability.UNSAFE, (Edit.delete(pod.field_path("runtimeClassName")),)),
        )


def _image_default(container: Container, ctx: RuleContext) -> str | None:
    rule = image_visible_devices_default(container.image, ctx.settings)
    return rule.sets if rule is not None else None


def _may_see_gpus(container: Container, pod: PodSpec, workload: Workload, ctx: RuleContext) -> bool:
    """False when the container hides GPUs: void/none in its env (or a ConfigMap), or an image that sets void."""
    setting = resolve(VISIBLE_DEVICES, container, pod, workload.namespace, ctx.index).setting
    if setting is None:
        return _image_default(container, ctx) != "void"
    return setting.value is None or classify_visible_devices(setting.value) == GRANTS


def admission(options: Mapping[str, Any]) -> Admission:
    """A container hides GPUs when each of its env entries of the variable hides them (`_may_see_gpus`)."""
    hidden = "!has(e.valueFrom) && (!has(e.value) || " + hides_devices("e.value") + ")"
    image_void = "(has(c.image) && c.image.matches(variables.knowledge.voidImages))"
    hides = f"({sets_variable('c')} ? {last_entry('c', hidden)} : {image_void})"
    return Admission(
        "runs the NVIDIA runtime class but no container of the pod requests a GPU; request nvidia.com/gpu in "
        "resources.limits, or drop the runtime class",
        pod=("variables.nvidiaRuntime && !variables.podRequestsGpu && "
             f"variables.containers.exists(c, !{hides})"),
        enforced="an NVIDIA runtime class in a pod whose containers request no GPU, unless each container "
                 "hides GPUs with a literal void or none, or runs an image known to set void",
        linter_only="a void or none from a ConfigMap of the scan also hides GPUs for the linter",
    )


RULE = Rule(
    id="GPU007",
    name="nvidia-runtime-without-gpu-limit",
    severity=Severity.WARNING,
    summary="A pod runs with the NVIDIA runtime class but none of its containers requests a GPU.",
    doc=__doc__ or "",
    check=check,
    security_severity="5.5",
    admission=admission,
)
