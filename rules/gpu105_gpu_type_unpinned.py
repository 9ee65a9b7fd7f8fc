"""
## What it does
Off by default: run it with `--select GPU105` (or enable it in the config) on
clusters that mix GPU models. Finds pod templates that request GPUs (a positive
quantity of a `gpu-resources` name in a container's limits or requests) but do
not pin the GPU model: no `nodeSelector` and no node affinity (required or
preferred, `In`/`Exists`/`Gt`/`Lt`) on a GPU-model label, i.e. a key of the
`gpu-model-labels` setting (`accelerator`, `aliyun.accelerator/nvidia_name`,
`nvidia.com/gpu.product`, `cloud.google.com/gke-accelerator`,
`node.kubernetes.io/instance-type`, ...).

A pod template is also pinned when its annotations match the option
`model-annotations` (HAMi's `nvidia.com/use-gputype`) or when it requests a
resource matching the option `model-resources` (MIG devices
`nvidia.com/mig-*`: the profile fixes the slice's memory and compute). One
finding per pod template, at the GPU resource key of its first container that
requests GPUs (its limit, else its request): that is the line that asks for "a
GPU of any model".

## Why is this bad
In a heterogeneous cluster the scheduler treats every `nvidia.com/gpu` as the
same: a training job sized for an 80 GB A100 can land on a 16 GB T4 and fail
with out-of-memory errors, or an inference service lands on an expensive card
it does not need. The ACK document ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)) and the Kubernetes "Schedule
GPUs" page both advise labelling nodes with their GPU model
(`kubectl label nodes <node> accelerator=<gpu-model>`) and selecting it with a
`nodeSelector`. On a homogeneous cluster this finding is noise, which is why
the rule is off by default.

## Example
```yaml
spec:
  containers:
  - name: train
    image: registry.example.com/train:1.0
    resources:
      limits:
        nvidia.com/gpu: 1
```

## Use instead
```yaml
spec:
  nodeSelector:
    aliyun.accelerator/nvidia_name: Tesla-V100-SXM2-16GB
  containers:
  - name: train
    image: registry.example.com/train:1.0
    resources:
      limits:
        nvidia.com/gpu: 1
```

## Fix
None: which GPU model the workload needs is yours to say.

## References
- ACK, "Use the default Kubernetes GPU scheduling" (label nodes and use a nodeSelector): https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- Kubernetes, Schedule GPUs, "Clusters containing different types of GPUs": https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- NVIDIA GPU Feature Discovery labels (`nvidia.com/gpu.product`): https://github.com/NVIDIA/k8s-device-plugin
"""

from __future__ import annotations

from typing import Iterable, Iterator

from gpulint.api import KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.knowledge.gpu import gpu_model_pinning, is_gpu_resource, matches_any
from gpulint.knowledge.quantity import parse_quantity
from gpulint.knowledge.resources import Entry, entries
from gpulint.model.workload import Container, PodSpec, Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    annotations = list(ctx.option("model-annotations") or ())
    model_resources = list(ctx.option("model-resources") or ())
    for pod in workload.pod_specs:
        first = _first_gpu_request(pod, ctx)
        if first is None:
            continue
        container, entry = first
        if gpu_model_pinning(pod, ctx.settings) is not None:
            continue
        if any(matches_any(str(key), annotations) for key in pod.annotations):
            continue
        if any(matches_any(e.name, model_resources) for c in pod.containers for e in _gpu_entries(c, ctx)):
            continue
        yield Violation(
            f"{entry.name} is requested without pinning a GPU model (no nodeSelector or node affinity "
            "on a GPU-model label such as accelerator or nvidia.com/gpu.product): in a cluster with "
            "several GPU models the Pod may land on any of them",
            KeyAt(entry.path), container,
        )


def _first_gpu_request(pod: PodSpec, ctx: RuleContext) -> tuple[Container, Entry] | None:
    for container in pod.containers:
        found = list(_gpu_entries(container, ctx))
        if found:
            return container, found[0]  # limits come first
    return None


def _gpu_entries(container: Container, ctx: RuleContext) -> Iterable[Entry]:
    for entry in entries(container):
        if entry.value is None or not is_gpu_resource(entry.name, ctx.settings):
            continue
        amount = parse_quantity(entry.value)
        if amount is None or amount > 0:
            yield entry


RULE = Rule(
    id="GPU105",
    name="gpu-type-unpinned",
    severity=Severity.INFO,
    summary="A GPU workload that does not select a GPU model (heterogeneous clusters); off by default.",
    doc=__doc__ or "",
    check=check,
    enabled_by_default=False,
    options={"model-annotations": ["nvidia.com/use-gputype"], "model-resources": ["nvidia.com/mig-*"]},
    tags=("reliability", "gpu"),
)
