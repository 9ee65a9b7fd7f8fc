"""
## What it does
Finds the two device-request channels of the NVIDIA container toolkit that rank
above `NVIDIA_VISIBLE_DEVICES`, written by hand into a manifest:

- **CDI annotations:** a pod (or pod template) annotation whose key starts with
  `cdi.k8s.io/` and whose value, a comma separated list of CDI device names,
  names NVIDIA devices (`nvidia.com/gpu=all`, `nvidia.com/gpu=0`,
  `nvidia.com/gpu=GPU-<uuid>`, `management.nvidia.com/gpu=all`, ...). The finding
  points at the annotation key. Annotations of a Pod object, of pod templates
  (Deployment, Job, Ray, Kubeflow, ...) and of Argo Workflow templates count;
  annotations of a controller object itself never reach its pods and do not.
- **Device-list volume mounts:** a `volumeMount` whose `mountPath` is
  `/var/run/nvidia-container-devices` or `/run/nvidia-container-devices`, or lies
  under them (`/var/run/nvidia-container-devices/all`,
  `/var/run/nvidia-container-devices/GPU-<uuid>`). The finding points at the
  `mountPath`.

## Why is this bad
Beyond the policy text, but the same bypass ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#device-selection-in-the-nvidia-container-toolkit)). The toolkit picks
the devices of a container from CDI annotations first, then from volume mounts
under `/var/run/nvidia-container-devices` (when
`accept-nvidia-visible-devices-as-volume-mounts` is on), and only then from
`NVIDIA_VISIBLE_DEVICES`. Device plugins use these channels to hand over the
GPUs the scheduler allocated; a manifest that sets them itself requests GPUs
the scheduler never counted, exactly like `NVIDIA_VISIBLE_DEVICES=all` (policy
items 3 and 4). The node is over-allocated, pods contend for one card
(NVIDIA/gpu-operator#421), and devices injected behind the kubelet's back are
lost with "Failed to initialize NVML: Unknown Error" after a
`systemctl daemon-reload` (NVIDIA/nvidia-container-toolkit#48,
NVIDIA/nvidia-docker#1730, NVIDIA/gpu-operator#485).

## Example
```yaml
metadata:
  annotations:
    cdi.k8s.io/gpus: nvidia.com/gpu=all
spec:
  containers:
  - name: app
    image: registry.example.com/app:1.0
    volumeMounts:
    - name: gpus
      mountPath: /var/run/nvidia-container-devices/all
```

## Use instead
```yaml
spec:
  containers:
  - name: app
    image: registry.example.com/app:1.0
    resources:
      limits:
        nvidia.com/gpu: 1
```
For devices that need more than a count, use DRA (`resources.claims` with a
ResourceClaim), which the scheduler accounts for.

## Fix
None: how many GPUs to request instead of the named devices is a decision about the
workload.

## References
- Device-selection precedence in the NVIDIA container toolkit: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#device-selection-in-the-nvidia-container-toolkit
- NVIDIA container toolkit, runtime configuration (CDI, volume-mounts strategy): https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime/README.md
- Container Device Interface, annotations: https://github.com/cncf-tags/container-device-interface
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
- Kubernetes, Dynamic Resource Allocation: https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/
"""

from __future__ import annotations

import functools
import posixpath
from typing import Any, Iterator, Mapping

from gpulint.api import Admission, KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.knowledge.celforms import DOT_SEGMENT_RE, alternatives, cel_string, within_regex
from gpulint.model.workload import Workload

CDI_ANNOTATION_PREFIX = "cdi.k8s.io/"
DEVICE_LIST_DIRS = ("/var/run/nvidia-container-devices", "/run/nvidia-container-devices")


def nvidia_cdi_devices(value: object) -> list[str]:
    """The NVIDIA CDI device names (`nvidia.com/gpu=0`, ...) in a CDI annotation value."""
    if not isinstance(value, str):
        return []
    found = []
    for token in value.split(","):
        name = token.strip()
        kind, sep, device = name.partition("=")
        vendor = kind.partition("/")[0]
        if sep and device and (vendor == "nvidia.com" or vendor.endswith(".nvidia.com")):
            found.append(name)
    return found


@functools.lru_cache(maxsize=4096)  # the same few mount paths recur in every container
def _device_list_mount(mount_path: str) -> bool:
    if not mount_path.startswith("/"):
        return False
    path = posixpath.normpath(mount_path)
    return any(path == root or path.startswith(root + "/") for root in DEVICE_LIST_DIRS)


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for pod in workload.pod_specs:
        if pod.metadata_path is None:
            continue
        for key, value in pod.annotations.items():
            if not str(key).startswith(CDI_ANNOTATION_PREFIX):
                continue
            devices = nvidia_cdi_devices(value)
            if devices:
                yield Violation(
                    f"CDI annotation {key} requests {', '.join(devices)} directly from the container runtime, "
                    "ahead of NVIDIA_VISIBLE_DEVICES and without the scheduler knowing; request nvidia.com/gpu "
                    "in resources.limits (or a DRA claim) instead",
                    KeyAt(pod.metadata_path + ("annotations", key)),
                )
    for _pod, container in workload.containers():
        for mount in container.volume_mounts:
            if _device_list_mount(mount.mount_path):
                yield Violation(
                    f"volume mount at {mount.mount_path} uses the NVIDIA toolkit's volume-mount device list to "
                    "request GPUs without the scheduler knowing; request nvidia.com/gpu in resources.limits "
                    "instead",
                    KeyAt(mount.path + ("mountPath",)), container,
                )


# A CDI annotation value naming an NVIDIA device (`nvidia_cdi_devices`): a comma-separated token
# `<vendor>/<class>=<device>` whose vendor is nvidia.com or one of its subdomains.
CDI_NVIDIA_RE = r"(?:^|,)\s*(?:nvidia\.com|[^,=/]*\.nvidia\.com)(?:/[^,=]*)?=[^,]*[^,\s]"


def admission(options: Mapping[str, Any]) -> Admission:
    meta = "variables.meta.annotations"
    prefix = cel_string(CDI_ANNOTATION_PREFIX)
    mounts = alternatives(within_regex(directory) for directory in DEVICE_LIST_DIRS)
    # A path with `.` or `..` components cannot be normalised by a policy: refused when it names the directory.
    dotted = f"(m.mountPath.matches({cel_string(DOT_SEGMENT_RE)}) && m.mountPath.contains(\"nvidia-container-devices\"))"
    return Admission(
        "requests GPUs directly from the container runtime (a CDI annotation naming NVIDIA devices, or a "
        "mount of the NVIDIA toolkit's nvidia-container-devices list) without the scheduler knowing; request "
        "nvidia.com/gpu in resources.limits (or a DRA claim) instead",
        pod=(f"has({meta}) && {meta}.exists(k, k.startsWith({prefix}) && type({meta}[k]) == string && "
             f"{meta}[k].matches({cel_string(CDI_NVIDIA_RE)}))"),
        container=(f"has(c.volumeMounts) && c.volumeMounts.exists(m, "
                   f"m.mountPath.matches({cel_string(mounts)}) || {dotted})"),
        enforced="CDI annotations naming NVIDIA devices on the pod (template); mounts at or under the "
                 "nvidia-container-devices directories",
        linter_only="nothing; a mount path with `.` or `..` components that names the directory is refused "
                    "without being normalised",
    )


RULE = Rule(
    id="GPU008",
    name="device-request-bypass",
    severity=Severity.ERROR,
    summary="CDI annotations or nvidia-container-devices mounts request GPUs around the scheduler.",
    doc=__doc__ or "",
    check=check,
    security_severity="8.0",
    admission=admission,
)
