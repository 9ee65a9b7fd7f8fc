"""
## What it does
Finds containers whose `env` sets `NVIDIA_VISIBLE_DEVICES` to a value that
exposes GPUs: `all`, indices (`0,1`), `GPU-`/`MIG-` UUIDs, `G:M` MIG indices or
CDI names (`nvidia.com/gpu=0`). Block and flow style, anchors and aliases are
all read; each container is reported once, at the entry that takes effect (the
last one, as in Kubernetes). A `$(NAME)` reference to an earlier `env` entry is
expanded first, as the kubelet does (`$(HIDE)` after `HIDE: void` hides GPUs;
`$$` is a literal `$`); a reference to a variable set through `valueFrom` or
`envFrom` is judged as written. It fires even when the container also requests
GPUs: the variable then overrides the devices the scheduler allocated.

`void` and an empty value hide GPUs and are never reported; `none` (no GPU,
driver libraries still injected) is not reported unless the option
`none-is-hidden` is set to false. `CUDA_VISIBLE_DEVICES` only filters inside
the process and a shell `export` runs after the container is created, so
neither is a bypass. GPU stack components that must see every GPU (device
plugins, DRA kubelet plugins and CDI spec writers, listed by image or
recognised by their role) are reported as suppressed system components.

## Why is this bad
Policy item 3 ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)): adding `NVIDIA_VISIBLE_DEVICES=all` or a GPU ID
to a Pod's `env` is prohibited. The NVIDIA container runtime hook reads the
variable when the container is created and mounts the named GPUs, and by
default it honours the variable in unprivileged containers
(`accept-nvidia-visible-devices-envvar-when-unprivileged` is true). The
scheduler never sees these GPUs: it over-allocates the node, several Pods end
up sharing one card, and workloads fail. GPUs injected this way, unknown to
runc, also lose access with "Failed to initialize NVML: Unknown Error" after a
`systemctl daemon-reload` (NVIDIA/nvidia-container-toolkit#48,
NVIDIA/nvidia-docker#1730); all GPUs become visible to pods that requested
none (NVIDIA/gpu-operator#421, kubernetes/kubernetes#133618).

## Example
```yaml
containers:
- name: train
  image: registry.example.com/train:1.0
  env:
  - name: NVIDIA_VISIBLE_DEVICES
    value: all
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
To make sure a container sees no GPU, set `NVIDIA_VISIBLE_DEVICES=void`.

## References
- ACK, "Use the default Kubernetes GPU scheduling", prohibited operation 3: https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy, item 3: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- NVIDIA container toolkit, environment variables: https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime/README.md
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
"""

from __future__ import annotations

from typing import Iterator

from gpulint.api import Rule, RuleContext, Severity, SystemRole, ValueAt, Violation
from gpulint.knowledge.envexpand import expanded_value
from gpulint.knowledge.gpu import (
    GRANTS,
    HIDDEN_NONE,
    VISIBLE_DEVICES,
    classify_visible_devices,
    describe_devices,
)
from gpulint.model.workload import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    none_hides = ctx.option("none-is-hidden")
    for _pod, container in workload.containers():
        var = container.env_value(VISIBLE_DEVICES)
        if var is None or var.value_from is not None or var.value is None:
            continue
        expanded = expanded_value(container, var)
        value = var.value if expanded is None else expanded  # unknown `$(NAME)`: judged as written
        outcome = classify_visible_devices(value)
        shown = var.value if value == var.value else f"{var.value} (expanded: {value})"
        if outcome == GRANTS:
            yield Violation(
                f"{VISIBLE_DEVICES}={shown} in env exposes {describe_devices(value)} "
                "without the scheduler knowing; request nvidia.com/gpu in resources.limits instead",
                ValueAt(var.path), container,
            )
        elif outcome == HIDDEN_NONE and not none_hides:
            yield Violation(
                f"{VISIBLE_DEVICES}=none still injects the NVIDIA driver libraries; use void to hide GPUs",
                ValueAt(var.path), container,
            )


RULE = Rule(
    id="GPU003",
    name="visible-devices-env",
    severity=Severity.ERROR,
    summary="NVIDIA_VISIBLE_DEVICES set in a container's env exposes GPUs the scheduler does not account for.",
    doc=__doc__ or "",
    check=check,
    options={"none-is-hidden": True},
    security_severity="8.0",
    # Roles whose built-in components (data/system_components.yaml) are all exempt from this rule.
    exempt_roles=frozenset({SystemRole.DEVICE_PLUGIN, SystemRole.DRA_PLUGIN, SystemRole.CDI_WRITER}),
)
