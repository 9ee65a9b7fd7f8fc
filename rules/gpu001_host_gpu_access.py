"""
## What it does
Finds pods that reach the node's GPUs or NVIDIA driver directly instead of
through the scheduler:

- hostPath volumes of NVIDIA GPU device nodes (`/dev/nvidia*`, `/dev/nvidia-caps`,
  `/dev/nvidiactl`, `/dev/nvidia-uvm*`), `/dev/char`, the whole `/dev`, the
  host root `/`, and NVIDIA driver and toolkit trees, recognised by the names
  NVIDIA's installers give their directories wherever the node keeps them: a
  bare `nvidia` directory below a software prefix or holding `lib64`/`bin`
  (`/usr/local/nvidia`, `/opt/nvidia`, `/var/lib/nvidia`,
  `/home/kubernetes/bin/nvidia`, `/mnt/disks/nvidia/lib64`), a versioned or
  driver/toolkit directory (`/usr/lib/nvidia-535`,
  `/var/lib/nvidia-docker/volumes/nvidia_driver/375.66`, a copy under
  `/usr/local/nvidia-docker/…`, `nvidia-container-toolkit`), the GPU Operator's
  `/run/nvidia` and `/run/nvidia/driver...`, and driver files (`libnvidia-*`,
  `libcuda.so*`, `nvidia-smi`). A path that merely contains the word
  (`/data/nvidia-models`, `/data/nvidia/datasets`, `/var/log/nvidia-installer`,
  `/etc/nvidia-container-runtime`) is not a driver tree;
- commands that enter the node: `nsenter` into PID 1 (`-t 1`, `--target 1`,
  `--mount=/proc/1/ns/mnt`) in a pod with `hostPID: true`, or into a host
  `/proc` mounted by hostPath; `chroot` into a hostPath mount of the host root
  (`chroot /host`) or into `/proc/1/root` with `hostPID: true`. Commands are
  found in command/args, `sh -c` scripts, lifecycle hooks, exec probes, Argo
  `script.source` and shell scripts mounted from a ConfigMap; each script or
  argv is reported once, at its first such command.

Paths are normalised first (`//dev/nvidia0/`, `/dev/../`). A hostPath volume
that no container mounts grants nothing yet: it is reported as a warning (it is
one `volumeMounts` entry away from the node). A mount's `subPath` is not taken
into account.

Not reported: the device-plugin and pod-resources sockets
(`/var/lib/kubelet/device-plugins`, `/var/lib/kubelet/pod-resources`),
`/var/run/cdi`, `/run/nvidia/validations`, `/run/nvidia/mps`, `/sys`, `/proc`,
generic host directories (`/usr`, `/lib`, `/etc/...`, `/var/log`) and emptyDir
volumes; `nsenter -t 1` without `hostPID` (it enters the container's own init).

Scope: NVIDIA GPUs. Other vendors' device nodes (`/dev/dri`, `/dev/kfd`,
`/dev/vfio`, `/dev/accel`, `/dev/neuron*`) are not reported, by design: they
reach no NVIDIA GPU, the same paths serve video, display and VM passthrough,
so without a vendor's evidence a finding would cry wolf, and the only useful
advice would be vendor-specific. Whole-node access (`/`, `/dev`, entering the
host) is reported whatever the vendor; when the workload shows another
vendor's evidence (e.g. it requests `amd.com/gpu`, tolerates
`aws.amazon.com/neuron` or runs an image of its software stack, `rocm/…`) the advice names that vendor's device plugin instead of
`nvidia.com/gpu`.
GPU Operator and device-plugin components need this access: they are
recognised by the system-component allowlist, or by their role when their
image is in no list (a pod mounting the kubelet's device-plugin or plugin
directories, the NRI socket, the CDI spec directories, node-feature-discovery
feature files or a device-information directory, or writing the runtime's
configuration; a node agent (DaemonSet) on GPU nodes reading the kubelet's
pod-resources, taking a MIG strategy or MIG monitoring, running a container
toolkit's `cdi generate`, or mounting an NVIDIA driver tree with the host root
or `/dev`, i.e. a driver installer: see docs/evidence.md), and reported as
suppressed. A pod whose containers request GPUs is a workload, never such a
component. An active finding on what looks like infrastructure (a pod with a
role, or a DaemonSet requesting no GPUs that mounts the node) ends with the one-line exemption to
add to `.gpulint.yaml`.

## Why is this bad
Policy item 1 ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)): running GPU applications directly on the node is
prohibited. A container that opens `/dev/nvidia*` itself, loads the host driver
or runs programs in the node's namespaces uses GPUs the scheduler never
allocated: the node is over-allocated, several Pods end up fighting over one
card's memory, and workloads fail. Devices the runtime did not set up are also
unknown to runc: access breaks with "Failed to initialize NVML: Unknown Error"
after a `systemctl daemon-reload` (NVIDIA/nvidia-container-toolkit#48,
NVIDIA/nvidia-docker#1730). Entering the host (`nsenter -t 1`, `chroot /host`)
escapes every per-container limit at once.

## Example
```yaml
spec:
  hostPID: true
  containers:
  - name: train
    image: registry.example.com/train:1.0
    command: ["nsenter", "-t", "1", "-m", "--", "/opt/train.sh"]
    volumeMounts:
    - {name: nvidia0, mountPath: /dev/nvidia0}
  volumes:
  - name: nvidia0
    hostPath:
      path: /dev/nvidia0
```

## Use instead
```yaml
spec:
  containers:
  - name: train
    image: registry.example.com/train:1.0
    command: ["/opt/train.sh"]
    resources:
      limits:
        nvidia.com/gpu: 1
```
The device plugin then mounts the allocated GPU and the driver libraries.

## Fix
None: what replaces a device or driver mount (how many GPUs to request, whether the
workload needs the host at all) is a decision about the workload, not a rewrite of the manifest.

## References
- ACK, "Use the default Kubernetes GPU scheduling", prohibited operation 1: https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy, item 1: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- Kubernetes, hostPath volumes: https://kubernetes.io/docs/concepts/storage/volumes/#hostpath
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from gpulint.api import Admission, Rule, RuleContext, Severity, SystemRole, ValueAt, Violation
from gpulint.knowledge.celforms import DOT_SEGMENT_RE, cel_string, gpu_host_path
from gpulint.knowledge.commands import RunCommand, workload_commands_named
from gpulint.knowledge.gpu import accelerator_fix
from gpulint.knowledge.hostpaths import (
    gpu_host_access,
    host_path_volumes,
    is_within,
    node_path_of,
    normalize,
)
from gpulint.model.workload import Container, PodSpec, Workload

# nsenter options naming a namespace file (`-m/proc/1/ns/mnt`, `--mount=...`).
_NS_SHORT = frozenset("muinpUCT")
_NS_LONG = ("--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time")


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    fix = ""  # the advice, worked out once a finding needs it
    for item in host_path_volumes(workload):
        what = gpu_host_access(item.host_path)
        if what is None:
            continue
        where = ValueAt(item.volume.host_path_path)
        if item.mounts:
            fix = fix or accelerator_fix(workload, ctx.settings, ctx.index)
            yield Violation(f"hostPath {item.host_path} exposes {what}; the container can use GPUs the "
                            f"scheduler never allocated; {fix}", where, item.mounts[0][1])
        else:
            yield Violation(f"hostPath {item.host_path} would expose {what}; no container mounts it yet, "
                            "remove it", where, severity=Severity.WARNING)
    reported: set[tuple] = set()  # workload-wide: containers sharing a mounted script report it once
    for pod, container, command in workload_commands_named(workload, ctx.index, _ENTERING_NAMES):
        how = enters_host(command, pod, container)
        if how is not None and command.source not in reported:
            reported.add(command.source)
            fix = fix or accelerator_fix(workload, ctx.settings, ctx.index)
            yield Violation(f"{how} runs programs on the node itself, outside the scheduler "
                            f"({command.described_origin}); {fix}", command.where, container,
                            located_in=command.located_in)


def enters_host(command: RunCommand, pod: PodSpec, container: Container) -> str | None:
    """A description of how `command` enters the node, or None."""
    reads = _ENTERING.get(command.name)
    return reads(command.argv[1:], pod, container) if reads is not None else None


def _nsenter(args: tuple[str, ...], pod: PodSpec, container: Container) -> str | None:
    target: str | None = None
    ns_files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        value_next = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-t", "--target"):
            target, i = value_next, i + 2
            continue
        if arg.startswith("--target="):
            target = arg.partition("=")[2]
        elif arg.startswith(_NS_LONG) and "=" in arg:
            ns_files.append(arg.partition("=")[2])
        elif arg.startswith("-") and not arg.startswith("--"):
            for j, letter in enumerate(arg[1:], start=1):
                rest = arg[j + 1:]
                if letter == "t":
                    if rest:
                        target = rest
                    else:
                        target, i = value_next, i + 1
                    break
                if letter in _NS_SHORT and rest:
                    ns_files.append(rest)
                    break
                if letter in "SGrw":  # options with a value: the rest of the word
                    break
        elif not arg.startswith("-"):
            break  # the program nsenter runs
        i += 1
    if target == "1" and pod.host_pid:
        return "nsenter --target 1 with hostPID: true"
    for ns_file in ns_files:
        if _host_init_path(ns_file, pod, container, "/proc/1/ns"):
            return f"nsenter into {ns_file}"
    return None


def _chroot(args: tuple[str, ...], pod: PodSpec, container: Container) -> str | None:
    root = next((a for a in args if not a.startswith("-")), None)
    if root is None:
        return None
    if _host_init_path(root, pod, container, "/proc/1/root"):
        return f"chroot {root}"
    node_path = node_path_of(pod, container, root)
    if node_path == "/":
        return f"chroot {root} (the node's root filesystem)"
    return None


# The programs `enters_host` reads, and how; `check` has the commands of no other program built.
_ENTERING = {"nsenter": _nsenter, "chroot": _chroot}
_ENTERING_NAMES = frozenset(_ENTERING)


def _host_init_path(path: str, pod: PodSpec, container: Container, under: str) -> bool:
    """Whether `path` names the node's PID 1 `under` (/proc/1/ns, /proc/1/root)."""
    if pod.host_pid and is_within(normalize(path), under):
        return True
    node_path = node_path_of(pod, container, path)
    return node_path is not None and is_within(node_path, under)


def admission(options: Mapping[str, Any]) -> Admission:
    return Admission(
        "has a hostPath volume of the node's GPU devices, NVIDIA driver, /dev or / (or a path with . or .. "
        "that a policy cannot normalise): the pod can use GPUs the scheduler never allocated; remove it and "
        "request nvidia.com/gpu in resources.limits instead",
        volume=(f"{gpu_host_path('v.hostPath.path')} || "
                f"v.hostPath.path.matches({cel_string(DOT_SEGMENT_RE)})"),
        enforced="hostPath volumes of GPU devices, driver paths, /dev, /dev/char and /, mounted or not",
        linter_only="commands that enter the node (nsenter, chroot), in argv, scripts or mounted ConfigMaps; "
                    "a hostPath with . or .. components is refused without being normalised",
    )


RULE = Rule(
    id="GPU001",
    name="host-gpu-access",
    severity=Severity.ERROR,
    summary="The pod reaches the node's GPUs or NVIDIA driver directly (hostPath devices/driver, entering the host).",
    doc=__doc__ or "",
    check=check,
    security_severity="8.5",
    admission=admission,
    # Roles whose built-in components (data/system_components.yaml) are all exempt from this rule.
    exempt_roles=frozenset({SystemRole.DEVICE_PLUGIN, SystemRole.DRA_PLUGIN, SystemRole.CDI_WRITER,
                            SystemRole.NRI_PLUGIN, SystemRole.DRIVER_INSTALLER, SystemRole.GPU_NODE_AGENT, SystemRole.DEVICE_DISCOVERER, SystemRole.DEVICE_MANAGER,
                            SystemRole.RUNTIME_HOOK, SystemRole.MANAGEMENT_AGENT}),
)
