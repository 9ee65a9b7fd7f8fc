"""
## What it does
Reads Node objects of a cluster dump (`kubectl get nodes -o yaml` or `-o json`,
a `List` or single Nodes) and reports NVIDIA GPU nodes whose GPUs the scheduler
cannot use:

- the node's labels say it has NVIDIA GPUs but `status.capacity` advertises no
  NVIDIA GPU resource (reported at the first label that says so);
- `status.capacity` advertises `nvidia.com/gpu: 0` (at that entry);
- the capacity is there but `status.allocatable` is 0 or missing for it (at the
  allocatable entry): the device plugin registered the GPUs and reports them
  unhealthy;
- the capacity is lower than the GPU count the labels announce
  (`nvidia.com/gpu.count`, `aliyun.accelerator/nvidia_count`): the device plugin
  registered only part of the GPUs (a warning).

A GPU resource is `nvidia.com/gpu` or any other `nvidia.com/*` resource the
device plugin may advertise instead (MIG `nvidia.com/mig-*` with the mixed
strategy, `nvidia.com/gpu.shared` for renamed time-slicing or MPS replicas, VM
passthrough device names), and ACK's shared-GPU resources `aliyun.com/gpu-mem`
and `aliyun.com/gpu-count`. The count comparison is made only for
`nvidia.com/gpu` without the MIG mixed strategy.

Label sources trusted, and why: they are set by the components that detect the
hardware, or by the cloud when it provisions a GPU node.

- GPU feature discovery / GPU Operator: `nvidia.com/gpu.present`,
  `nvidia.com/gpu.count`, `nvidia.com/gpu.product` (and the other
  `nvidia.com/gpu.*`, `nvidia.com/mig.*`, `nvidia.com/cuda.*` labels);
  `nvidia.com/gpu.deploy.*` are operator switches, not hardware facts, and are
  not read. Node feature discovery: `feature.node.kubernetes.io/pci-10de.present`
  (10de is NVIDIA's PCI vendor id).
- GKE: `cloud.google.com/gke-accelerator` (it names only NVIDIA GPUs; TPUs have
  their own labels). ACK: `aliyun.accelerator/nvidia_name`,
  `aliyun.accelerator/nvidia_count`. EKS: `k8s.amazonaws.com/accelerator` and
  Karpenter's `karpenter.k8s.aws/instance-gpu-manufacturer` when the value names
  NVIDIA.
- An instance type (`node.kubernetes.io/instance-type`) of a documented NVIDIA
  GPU family (AWS p3/p4d/p5/g4dn/g5/g6, GCE a2/a3/g2, Azure N-series, Alibaba
  ecs.gn*) only when the node's labels or `spec.providerID` name that cloud.
- Generic keys (`accelerator`, `gpu`) only with a value naming NVIDIA hardware.

Never reported: nodes without such evidence (CPU nodes, AMD, Intel, Neuron, TPU
nodes), and Nodes without `status` (a manifest, not a dump: there is nothing
advertised yet).

## Why is this bad
The policy's first check before deploying GPU workloads ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#gpu-capacity-on-the-nodes)): `kubectl describe node` must show a non-zero `nvidia.com/gpu`
under Capacity. When it is missing or 0, the NVIDIA device plugin is probably not
running on that node (or its driver is not ready): the scheduler cannot place
any GPU Pod there, GPU Pods stay Pending, and this is exactly the state in which
teams reach for the bypasses the other rules catch (privileged containers,
`NVIDIA_VISIBLE_DEVICES`, host device mounts).

## Example
```yaml
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels:
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.count: "8"
status:
  capacity:
    cpu: "96"
    memory: 1056439544Ki
```

## Use instead
```yaml
status:
  capacity:
    nvidia.com/gpu: "8"
  allocatable:
    nvidia.com/gpu: "8"
```
Check the device plugin (or the GPU Operator's `nvidia-device-plugin-daemonset`)
Pod on the node and its logs, and the driver (`nvidia-smi` on the node).

## Fix
None: the node's GPUs come from its device plugin and driver, which no manifest edit
repairs.

## References
- gpulint's policy, GPU capacity on the nodes: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#gpu-capacity-on-the-nodes
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- NVIDIA GPU feature discovery labels: https://github.com/NVIDIA/k8s-device-plugin/tree/main/docs/gpu-feature-discovery
- GKE, Run GPUs in GKE Standard node pools: https://cloud.google.com/kubernetes-engine/docs/how-to/gpus
- Karpenter well-known labels: https://karpenter.sh/docs/reference/instance-types/
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from gpulint.api import KeyAt, Rule, RuleContext, Severity, ValueAt, Violation
from gpulint.knowledge.quantity import parse_quantity
from gpulint.knowledge.vendors import NODE_GPU_COUNT_LABELS, node_nvidia_evidence
from gpulint.model.nodes import NodeView
from gpulint.model.workload import Workload

if TYPE_CHECKING:
    from decimal import Decimal  # (not at run time: a plain scan imports no decimal)

GPU = "nvidia.com/gpu"


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    node: NodeView | None = workload.node
    if node is None or not node.has_status or node.capacity is None:
        return
    evidence = node_nvidia_evidence(node.labels, node.provider_id)
    if not evidence:
        return
    why = ", ".join(evidence[:3])
    first_key = evidence[0].partition("=")[0]
    resources = [name for name in node.capacity if _is_gpu_capacity(name)]
    if not resources:
        yield Violation(f"node {node.name} is labelled as an NVIDIA GPU node ({why}) but its status.capacity "
                        f"advertises no {GPU}: the scheduler cannot place GPU Pods on it; the NVIDIA device "
                        "plugin is probably not running there (or the driver is not ready)",
                        KeyAt(node.label_path(first_key)))
        return
    amounts = {name: parse_quantity(node.capacity[name]) for name in resources}
    if all(amount is not None and amount <= 0 for amount in amounts.values()):
        name = resources[0]
        yield Violation(f"node {node.name} advertises {name}: {node.capacity[name]} in status.capacity although "
                        f"its labels say it has NVIDIA GPUs ({why}): the device plugin found no usable GPU",
                        ValueAt(node.capacity_path(name)))
        return
    for name in resources:
        amount = amounts[name]
        if amount is None or amount <= 0 or node.allocatable is None:  # no allocatable section: nothing to compare
            continue
        allocatable = node.allocatable.get(name)
        left = parse_quantity(allocatable) if allocatable is not None else None
        if allocatable is None or left is not None and left <= 0:
            where = (ValueAt(node.allocatable_path(name)) if allocatable is not None
                     else KeyAt(node.capacity_path(name)))
            yield Violation(f"node {node.name} has {name}: {node.capacity[name]} in status.capacity but "
                            f"{allocatable if allocatable is not None else 'none'} allocatable: the device "
                            "plugin registered the GPUs and reports them unhealthy, so no Pod can get them",
                            where)
            return
    yield from _fewer_than_labelled(node, amounts)


def _fewer_than_labelled(node: NodeView, amounts: dict[str, Decimal | None]) -> Iterator[Violation]:
    amount = amounts.get(GPU)
    if amount is None or str(node.labels.get("nvidia.com/mig.strategy", "")).lower() == "mixed":
        return
    for key in NODE_GPU_COUNT_LABELS:
        if key == "karpenter.k8s.aws/instance-gpu-count" and \
                str(node.labels.get("karpenter.k8s.aws/instance-gpu-manufacturer", "")).lower() != "nvidia":
            continue
        labelled = parse_quantity(node.labels.get(key))
        if labelled is not None and amount < labelled:
            yield Violation(f"node {node.name} advertises {GPU}: {node.capacity[GPU] if node.capacity else amount} "
                            f"in status.capacity but its label {key}={node.labels[key]} says it has "
                            f"{node.labels[key]} GPUs: the device plugin registered only part of them",
                            ValueAt(node.capacity_path(GPU)), severity=Severity.WARNING)
            return


def _is_gpu_capacity(name: str) -> bool:
    return name.startswith("nvidia.com/") or name in ("aliyun.com/gpu-mem", "aliyun.com/gpu-count")


RULE = Rule(
    id="GPU106",
    name="gpu-node-without-capacity",
    severity=Severity.ERROR,
    summary="A node labelled as an NVIDIA GPU node advertises no usable nvidia.com/gpu to the scheduler.",
    doc=__doc__ or "",
    check=check,
    tags=("reliability", "gpu"),
)
