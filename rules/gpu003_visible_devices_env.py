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

## Fix
Unsafe (`--unsafe-fixes`): the container then sees the GPUs the scheduler gives
it, which may be other cards than the ones it named.

- An explicit list (indices, `GPU-`/`MIG-` UUIDs, `G:M` MIG indices, CDI
  names) on a container without a GPU limit: the entry is deleted and
  `nvidia.com/gpu: <number of devices listed>` is added to `resources.limits`.
- `all`: the same, when the object says how many GPUs that is — the
  container's own `nvidia.com/gpu` request, or the pod's `nodeSelector` on
  GPU feature discovery's `nvidia.com/gpu.count` label. Otherwise there is no
  fix, and the finding says why: how many GPUs the workload needs is yours to say.
- A container that already has a GPU limit: the entry is deleted (the device
  plugin sets the variable to the allocated GPUs).
- `none`: the value becomes `void`.

No fix when the variable is set more than once or its value is a `$(NAME)`
reference.

```diff
 containers:
 - name: train
   image: registry.example.com/train:1.0
-  env:
-  - name: NVIDIA_VISIBLE_DEVICES
-    value: "0,1"
+  resources:
+    limits:
+      nvidia.com/gpu: 2
```

## References
- ACK, "Use the default Kubernetes GPU scheduling", prohibited operation 3: https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy, item 3: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- NVIDIA container toolkit, environment variables: https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime/README.md
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from gpulint.api import Admission, Applicability, Edit, Fix, Rule, RuleContext, Severity, SystemRole, ValueAt, Violation
from gpulint.knowledge.celforms import grants_devices, last_entry
from gpulint.knowledge.envexpand import expanded_value
from gpulint.knowledge.envresolve import env_setters
from gpulint.knowledge.gpu import (
    GRANTS,
    HIDDEN_NONE,
    VISIBLE_DEVICES,
    classify_visible_devices,
    describe_devices,
    gpu_limits,
)
from gpulint.knowledge.quantity import parse_quantity
from gpulint.lazypattern import lazy
from gpulint.model.workload import Container, EnvVar, PodSpec, Workload

# GPU feature discovery's node label: how many GPUs a node has.
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
_DEVICE_RE = lazy(r"\d+(?::\d+)?\Z|(?:MIG-)?GPU-[0-9a-fA-F-]+(?:/\d+/\d+)?\Z|MIG-[0-9a-fA-F-]+\Z"
                        r"|[\w.-]+/[\w.-]+=[\w.:-]+\Z")


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    setters = env_setters(workload, VISIBLE_DEVICES)
    if not setters:
        return   # most workloads
    none_hides = ctx.option("none-is-hidden")
    for container, pod in setters.items():
        var = container.env_value(VISIBLE_DEVICES)
        if var is None or var.value_from is not None or var.value is None:
            continue
        expanded = expanded_value(container, var)
        value = var.value if expanded is None else expanded  # unknown `$(NAME)`: judged as written
        outcome = classify_visible_devices(value)
        shown = var.value if value == var.value else f"{var.value} (expanded: {value})"
        if outcome == GRANTS:
            fix, why = _fix(container, pod, var, value != var.value, ctx)
            yield Violation(
                f"{VISIBLE_DEVICES}={shown} in env exposes {describe_devices(value)} "
                "without the scheduler knowing; request nvidia.com/gpu in resources.limits instead",
                ValueAt(var.path), container, fix=fix, no_fix=why,
            )
        elif outcome == HIDDEN_NONE and not none_hides:
            fix = None
            if _set_once(container) and value == var.value:
                fix = Fix(f"set {VISIBLE_DEVICES} to void", Applicability.UNSAFE,
                          (Edit.set(var.path + ("value",), "void"),))
            yield Violation(
                f"{VISIBLE_DEVICES}=none still injects the NVIDIA driver libraries; use void to hide GPUs",
                ValueAt(var.path), container, fix=fix,
            )


def _set_once(container: Container) -> bool:
    return sum(1 for var in container.env if var.name == VISIBLE_DEVICES) == 1


def _fix(container: Container, pod: PodSpec, var: EnvVar, expanded: bool,
         ctx: RuleContext) -> tuple[Fix | None, str | None]:
    """The repair of a granting value (see the Fix section), or why there is none."""
    if not _set_once(container):
        return None, f"no fix: {VISIBLE_DEVICES} is set more than once"
    if expanded or "$(" in str(var.value):
        return None, "no fix: the value is a $(NAME) reference"
    delete = Edit.delete(var.path)
    if gpu_limits(container, ctx.settings):
        return Fix(f"delete {VISIBLE_DEVICES}: the GPU limit gives the container its GPUs",
                   Applicability.UNSAFE, (delete,)), None
    tokens = [token.strip() for token in str(var.value).split(",") if token.strip()]
    if "all" in tokens or any(token.endswith("=all") for token in tokens):
        count = _known_count(container, pod)
        if count is None:
            return None, (f"no fix: `all` is every GPU of the node, and the object does not say how many "
                          f"that is (a {GPU_COUNT_LABEL} node selector or a nvidia.com/gpu request would)")
    elif all(_DEVICE_RE.match(token) for token in tokens):
        count = len(set(tokens))
    else:
        return None, "no fix: the value is not a list of devices gpulint can count"
    return Fix(f"delete {VISIBLE_DEVICES} and request nvidia.com/gpu: {count} in resources.limits",
               Applicability.UNSAFE, (delete, Edit.add(container.resources.limits_path("nvidia.com/gpu"), count))), None


def _known_count(container: Container, pod: PodSpec) -> int | None:
    """How many GPUs `all` stands for, when the object says it."""
    for value in (container.resources.requests.get("nvidia.com/gpu"), pod.node_selector.get(GPU_COUNT_LABEL)):
        amount = parse_quantity(value) if value is not None else None
        if amount is not None and amount > 0 and amount == int(amount):
            return int(amount)
    return None


def admission(options: Mapping[str, Any]) -> Admission:
    grants = grants_devices("e.value", options["none-is-hidden"])
    return Admission(
        f"sets {VISIBLE_DEVICES} in env to a value that exposes GPUs without the scheduler knowing; request "
        f"nvidia.com/gpu in resources.limits instead ({VISIBLE_DEVICES}=void hides GPUs)",
        container=last_entry("c", f"has(e.value) && !has(e.valueFrom) && {grants}"),
        enforced="every literal env value that exposes GPUs",
        linter_only="`$(NAME)` references are expanded by the linter; the policy judges them as written",
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
    admission=admission,
    # Roles whose built-in components (data/system_components.yaml) are all exempt from this rule.
    exempt_roles=frozenset({SystemRole.DEVICE_PLUGIN, SystemRole.DRA_PLUGIN, SystemRole.CDI_WRITER,
                            SystemRole.GPU_NODE_AGENT, SystemRole.DEVICE_DISCOVERER, SystemRole.DEVICE_MANAGER,
                            SystemRole.RUNTIME_HOOK, SystemRole.MANAGEMENT_AGENT}),
)
