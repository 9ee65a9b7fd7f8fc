"""
## What it does
Finds `privileged: true` in the `securityContext` of a container that is
GPU-related, and names the signal that makes it so:

- it requests NVIDIA GPUs (`nvidia.com/gpu` and the NVIDIA-backed sharing
  resources in limits or requests, a DRA claim, a GPU-share annotation of
  KAI/HAMi); a DRA claim whose ResourceClaim or ResourceClaimTemplate is in the
  scan counts only when one of its device classes is NVIDIA's
  (`gpu.nvidia.com`, `mig.nvidia.com`); other vendors' resources (`amd.com/gpu`, `gpu.intel.com/*`,
  `aws.amazon.com/neuron*`, `google.com/tpu`, `habana.ai/gaudi`) are not NVIDIA
  evidence;
- it sets `NVIDIA_VISIBLE_DEVICES` in `env` to anything but `void`/empty
  (literal or `valueFrom`);
- its image sets `NVIDIA_VISIBLE_DEVICES=all` by default (`nvidia/cuda`,
  `nvcr.io/nvidia/*`, `pytorch/pytorch`, ...) and the container leaves the
  variable unset (`void` hides the GPUs; any other value is the previous case);
- its pod runs with an NVIDIA `runtimeClassName` (`nvidia`, configurable);
- its pod targets NVIDIA GPU nodes: a `nodeSelector` or node affinity on a
  label whose key is NVIDIA's (`nvidia.com/gpu.*`,
  `cloud.google.com/gke-accelerator`, `aliyun.accelerator/nvidia_*`,
  `gpushare`, ...) or a generic key whose value names NVIDIA hardware
  (`accelerator: nvidia-tesla-t4`, `k8s.amazonaws.com/accelerator`,
  Karpenter's `instance-gpu-manufacturer: nvidia`, an NVIDIA GPU instance
  type such as `p4d.24xlarge`), or a toleration of an NVIDIA taint
  (`nvidia.com/gpu`). A generic key by itself (`accelerator: neuron`,
  `gpu: "true"`) is not evidence;
- it mounts an NVIDIA device node or driver path by `hostPath`
  (`/dev/nvidia*`, `/run/nvidia`, `/usr/local/nvidia`, `libnvidia-*`,
  `nvidia-smi`).

The finding points at the `privileged` key. Containers, init containers and
ephemeral containers of every pod template are checked.

It also reports, as a warning, a GPU-related container that is not privileged
but adds `SYS_ADMIN` (or `ALL`) to its capabilities: the NVIDIA container
toolkit treats any container whose bounding set holds `CAP_SYS_ADMIN` as
privileged and then always honours `NVIDIA_VISIBLE_DEVICES`, even where the
cluster turned that off for unprivileged containers. `allowPrivilegeEscalation`
is not reported: it governs setuid binaries, not devices.

Device plugins and workloads of other accelerators (AMD, Intel, AWS Neuron,
Google TPU, Habana Gaudi, FPGAs) show no NVIDIA evidence and are not reported.
Privileged containers with nothing GPU-related (NFS helpers, Docker-in-Docker
sidecars, monitoring agents) are left to general-purpose linters. GPU stack
components (device plugins, GPU Operator operands, DCGM exporter, ACK gpushare,
HAMi) legitimately run privileged: the built-in system-component allowlist
reports their findings as suppressed (see `--show-suppressed` and
`--no-default-exemptions`), and so does recognition by role for components in
no list (device plugins, DRA kubelet plugins, NRI plugins, CDI spec writers,
device discoverers and runtime hook installers by their hostPath mounts, GPU node
agents by what they mount and declare, driver installers by a driver tree and the
host root or `/dev`: see docs/evidence.md), but never for a pod whose containers
request GPUs. Kubernetes has no pod-level `privileged` field, so
only container `securityContext`s are read.

## Why is this bad
Policy item 6 ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)): setting `privileged: true` in a Pod's
`securityContext` to run GPU programs is prohibited. A privileged container
gets every device of the host, `/dev/nvidia*` included (containerd and CRI-O
add all host devices unless `privileged_without_host_devices` is set), and the
NVIDIA runtime hook always honours `NVIDIA_VISIBLE_DEVICES` in privileged
containers. The container can use every GPU of the node, including GPUs the
scheduler allocated to other Pods: the scheduler over-allocates the node and
Pods fight over one card (ome-projects/ome#833: a privileged pod taking GPUs
allocated to another pod). GPUs reached this way are unknown to the device
plugin and lose access with "Failed to initialize NVML: Unknown Error"
(NVIDIA/nvidia-container-toolkit#48).

## Example
```yaml
containers:
- name: train
  image: nvcr.io/nvidia/pytorch:24.05-py3
  securityContext:
    privileged: true
```

## Use instead
```yaml
containers:
- name: train
  image: nvcr.io/nvidia/pytorch:24.05-py3
  resources:
    limits:
      nvidia.com/gpu: 1
```
Request the GPUs the container needs and drop `privileged`; add only the
specific capabilities the program needs (never `SYS_ADMIN`).

## Fix
Unsafe (`--unsafe-fixes`), only for a container that already has a GPU limit:
`privileged: true` is deleted (with `securityContext` when nothing else is in
it), unless the container also adds `SYS_ADMIN`, which the runtime treats as
privileged all the same. The container keeps the GPUs it requested and loses every other device
of the host; a program that needed one of them, or a capability privileged
mode gave, needs it granted explicitly. Without a GPU limit there is no fix:
how many GPUs to request is yours to say.

```diff
 - name: train
   image: nvcr.io/nvidia/pytorch:24.05-py3
-  securityContext:
-    privileged: true
   resources:
     limits:
       nvidia.com/gpu: 1
```

## References
- ACK, "Use the default Kubernetes GPU scheduling", prohibited operation 6: https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy, item 6: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- NVIDIA container toolkit, privileged containers (`internal/config/image/privileged.go`: `CAP_SYS_ADMIN` in the bounding set means privileged): https://github.com/NVIDIA/nvidia-container-toolkit
- NVIDIA container toolkit, `accept-nvidia-visible-devices-envvar-when-unprivileged`: https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime/README.md
- Kubernetes, Configure a Security Context for a Pod or Container: https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
- containerd CRI config, `privileged_without_host_devices`: https://github.com/containerd/containerd/blob/main/docs/cri/config.md
- ome-projects/ome#833: https://github.com/ome-projects/ome/issues/833
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from gpulint.api import (
    Admission,
    Applicability,
    Edit,
    Fix,
    KeyAt,
    Rule,
    RuleContext,
    Severity,
    SystemRole,
    ValueAt,
    Violation,
)
from gpulint.knowledge.celforms import (
    VOID_RE,
    cel_string,
    gpu_image,
    last_entry,
    nvidia_request,
    sets_variable,
    targets_gpu_nodes,
)
from gpulint.knowledge.gpu import VISIBLE_DEVICES, gpu_limits, gpu_signals, requests_gpu
from gpulint.model.workload import Container, Workload

# Capability names that give CAP_SYS_ADMIN (Kubernetes accepts both spellings).
_SYS_ADMIN = frozenset({"SYS_ADMIN", "CAP_SYS_ADMIN", "ALL", "CAP_ALL"})


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for pod, container in workload.containers():
        if container.privileged is True:
            signals = gpu_signals(pod, container, ctx.settings, ctx.index)
            if signals:
                fix = ("drop privileged: the GPU limit alone gives it its GPUs"
                       if requests_gpu(container, pod, ctx.settings)
                       else "request nvidia.com/gpu in resources.limits and drop privileged")
                path = container.path + ("securityContext", "privileged")
                repair = None
                if gpu_limits(container, ctx.settings) and _sys_admin_entry(container) is None:
                    repair = Fix("delete privileged: true (the GPU limit gives the container its GPUs)",
                                 Applicability.UNSAFE, (Edit.delete(path),))
                yield Violation(
                    f"privileged: true on a GPU container ({'; '.join(signals)}) gives it every GPU of "
                    f"the node, unseen by the scheduler; {fix}",
                    KeyAt(path), container, fix=repair,
                )
            continue
        if "capabilities" not in container.security_context:
            continue   # most containers (read without a call)
        added = _sys_admin_entry(container)
        if added is None:
            continue
        signals = gpu_signals(pod, container, ctx.settings, ctx.index)
        if signals:
            index, name = added
            yield Violation(
                f"capability {name} on a GPU container ({'; '.join(signals)}) makes the NVIDIA "
                "runtime treat it as privileged and honour NVIDIA_VISIBLE_DEVICES unconditionally; "
                "drop it",
                ValueAt(container.path + ("securityContext", "capabilities", "add", index)), container,
                severity=Severity.WARNING,
            )


def _sys_admin_entry(container: Container) -> tuple[int, str] | None:
    """(index, name) of the first `capabilities.add` entry giving CAP_SYS_ADMIN."""
    capabilities = container.security_context.get("capabilities")
    added = capabilities.get("add") if isinstance(capabilities, dict) else None
    if not isinstance(added, list):
        return None
    for index, name in enumerate(added):
        if isinstance(name, str) and name.strip().upper() in _SYS_ADMIN:
            return index, name
    return None


def admission(options: Mapping[str, Any]) -> Admission:
    """The signals a policy can read from the object: a request, the variable, the runtime class,
    NVIDIA node labels and taints, NVIDIA host paths."""
    sc = "c.securityContext"
    privileged = f"(has({sc}) && has({sc}.privileged) && {sc}.privileged == true)"
    caps = f"{sc}.capabilities.add"
    sys_admin_re = "^\\s*(?i:(?:CAP_)?(?:SYS_ADMIN|ALL))\\s*$"
    sys_admin = (f"(has({sc}) && has({sc}.capabilities) && has({caps}) && "
                 f"{caps}.exists(n, type(n) == string && n.matches({cel_string(sys_admin_re)})))")
    setting = last_entry("c", "has(e.valueFrom) || (has(e.value) && "
                                     f"!e.value.matches({cel_string(VOID_RE)}))")
    signals = " || ".join((
        nvidia_request("c"), setting, f"(!{sets_variable('c')} && {gpu_image('c')})",
        "variables.nvidiaRuntime", "variables.targetsGpuNodes",
        "(has(c.volumeMounts) && c.volumeMounts.exists(m, m.name in variables.nvidiaVolumes))",
    ))
    volumes = ("has(variables.spec.volumes) ? variables.spec.volumes.filter(v, has(v.hostPath) && "
               "v.hostPath.path.matches(variables.knowledge.nvidiaPaths)).map(v, v.name) : []")
    return Admission(
        "is privileged (or adds CAP_SYS_ADMIN) and GPU-related (it requests GPUs, sets NVIDIA_VISIBLE_DEVICES, "
        "runs a GPU image or the NVIDIA runtime, targets GPU nodes or mounts NVIDIA host paths), which gives it "
        "every GPU of the node, unseen by the scheduler; request nvidia.com/gpu in resources.limits and drop "
        "privileged",
        container=f"({privileged} || {sys_admin}) && ({signals})",
        variables=(("targetsGpuNodes", targets_gpu_nodes()), ("nvidiaVolumes", volumes)),
        enforced=f"privileged or CAP_SYS_ADMIN with a GPU request, {VISIBLE_DEVICES} in env, an image "
                 "defaulting it to all, node affinity or a nodeSelector on NVIDIA nodes, an NVIDIA runtime "
                 "class, an NVIDIA node label key (or a generic key whose value says nvidia) in nodeSelector, "
                 "an NVIDIA toleration, or an NVIDIA hostPath mount",
        linter_only="generic node labels whose value names NVIDIA hardware without the word "
                    "(`h100`, GPU instance types); DRA claims resolved to another vendor's device classes",
    )


RULE = Rule(
    id="GPU006",
    name="privileged-gpu",
    severity=Severity.ERROR,
    summary="A GPU-related container runs privileged and can use every GPU of the node.",
    doc=__doc__ or "",
    check=check,
    security_severity="8.5",
    # A container is GPU-related by a GPU limit, but also by weaker evidence (its image, its node
    # selection, its runtime class), and privileged may be there for another reason.
    precision="medium",
    admission=admission,
    # Roles whose built-in components (data/system_components.yaml) are all exempt from this rule.
    exempt_roles=frozenset({SystemRole.DEVICE_PLUGIN, SystemRole.DRA_PLUGIN, SystemRole.CDI_WRITER,
                            SystemRole.NRI_PLUGIN, SystemRole.DRIVER_INSTALLER, SystemRole.GPU_NODE_AGENT, SystemRole.DEVICE_DISCOVERER, SystemRole.DEVICE_MANAGER,
                            SystemRole.RUNTIME_HOOK, SystemRole.MANAGEMENT_AGENT}),
)
