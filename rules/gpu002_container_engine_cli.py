"""
## What it does
Finds containers that create containers themselves with a container engine
CLI, and pods that mount a node's container runtime:

- `docker`, `podman`, `nerdctl`, `nvidia-docker` running `run`, `create`,
  `container run|create`, `compose up|run|create` (also `docker-compose`,
  `podman-compose`, `podman kube play`); `ctr run`, `ctr containers create`
  (`ctr -n k8s.io run` too); `crictl run|runp|create`. The message names the GPU
  flags passed: `--gpus ...`, `--device nvidia.com/gpu=...` or `/dev/nvidia*`,
  `--runtime nvidia`, `-e/--env NVIDIA_VISIBLE_DEVICES=...` (not `void`),
  `--privileged`, a `-v /dev/nvidia*` bind mount.
- hostPath mounts of a runtime socket or of a directory holding one
  (`/var/run/docker.sock`, `/run/containerd/containerd.sock`,
  `/run/k3s/containerd/containerd.sock`, `/run/podman/podman.sock`,
  `/var/run/crio/crio.sock`, `/var/run`, `/run/containerd`, `/run/docker`...),
  whatever the mount's `readOnly` (a read-only socket still connects), and
  runtime state directories (`/var/lib/docker`, `/var/lib/containerd`) mounted
  writable. Judged by what the mount exposes: a read-only state mount (cAdvisor)
  starts nothing, and the container log tree `/var/lib/docker/containers` that
  log shippers read holds log files, no socket.

GPU infrastructure that must reach the runtime is recognised by its role and
reported suppressed: a pod writing the runtime's configuration or OCI hooks (a
runtime hook installer, as the container toolkit), and node agents (DaemonSets)
that register devices with the kubelet, discover devices or ask for MIG
monitoring (vGPU managers and monitors map containers to devices through the
runtime). Other findings on what looks like infrastructure end with the
one-line exemption to add to `.gpulint.yaml` (see docs/evidence.md).

Commands are found in command/args, `sh -c`/`bash -c` scripts (every command
after `;`, `&&`, `||`, `|`, newlines, inside `if`/`for`/`case`, `$(...)`,
nested `sh -c`), lifecycle hooks, exec probes, Argo `script.source` (when its
interpreter is a shell or unset) and shell scripts the container mounts from a
ConfigMap or Secret of the scan (reported in the ConfigMap's file). Each
argv or script is reported once, at its first offending command.

Not reported: words inside an `echo` argument or any other quoted string
(data, not commands), `docker` as an image name, and engine commands that
create no container (`build`, `pull`, `push`, `ps`, `logs`, `images`, `exec`,
`start`, `stop`, `rm`, `inspect`): they neither start a workload nor hand out
GPUs. The host root `/` is left to GPU001.

Severity: creating a container is an error, with or without GPU flags (the
policy prohibits creating containers with an engine CLI on GPU nodes). A
runtime socket mount is an error when the pod shows a GPU signal (it requests
or targets GPUs, uses the NVIDIA runtime class, sets `NVIDIA_VISIBLE_DEVICES`,
runs a GPU image, or runs an engine CLI itself) and a warning otherwise (e.g. a
monitoring agent reading container metadata), as is a socket volume no
container mounts.

## Why is this bad
Policy item 2 ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)): creating containers or requesting GPUs with
`docker`, `podman` or `nerdctl` (e.g. `docker run --gpus all`,
`docker run -e NVIDIA_VISIBLE_DEVICES=all`) is prohibited. A container the
node's runtime starts behind Kubernetes' back is invisible to the scheduler: it
can take any or every GPU of the node, the scheduler over-allocates the node,
several workloads fight over one card, and they fail. GPUs injected by the
runtime hook this way also lose access with "Failed to initialize NVML: Unknown
Error" (NVIDIA/nvidia-container-toolkit#48). A mounted runtime socket is what
makes this possible from inside a pod.

## Example
```yaml
containers:
- name: launcher
  image: docker:24-cli
  command: ["sh", "-c", "docker run --gpus all registry.example.com/train:1.0"]
  volumeMounts:
  - {name: docker, mountPath: /var/run/docker.sock}
volumes:
- name: docker
  hostPath:
    path: /var/run/docker.sock
```

## Use instead
Run the workload as a Pod (or Job) and let the scheduler assign the GPU:
```yaml
containers:
- name: train
  image: registry.example.com/train:1.0
  resources:
    limits:
      nvidia.com/gpu: 1
```

## Fix
None: the command is part of the program the container runs; running its work as
pods that request GPUs is a change of design.

## References
- ACK, "Use the default Kubernetes GPU scheduling", prohibited operation 2: https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy, item 2: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- NVIDIA container toolkit, Docker specialized configurations (`--gpus`, `NVIDIA_VISIBLE_DEVICES`): https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from gpulint.api import Admission, Rule, RuleContext, Severity, SystemRole, ValueAt, Violation
from gpulint.knowledge.celforms import DOT_SEGMENT_RE, cel_string, container_runtime_path
from gpulint.knowledge.commands import RunCommand, workload_commands_named
from gpulint.knowledge.gpu import (
    GRANTS,
    VISIBLE_DEVICES,
    classify_visible_devices,
    gpu_signals,
    other_vendor_of,
)
from gpulint.knowledge.hostpaths import container_runtime_access, host_path_volumes
from gpulint.model.shell import basename
from gpulint.model.workload import Container, PodSpec, Workload
from gpulint.record import record, set_field

_ENGINES = {"docker": "docker", "nvidia-docker": "docker", "podman": "docker", "nerdctl": "docker",
            "docker-compose": "compose", "podman-compose": "compose", "ctr": "ctr", "crictl": "crictl"}
# The programs `engine_run` reads; the commands of any other program are not even built.
_ENGINE_NAMES = frozenset(_ENGINES)
# Global options (before the subcommand) that take a value, over all engines.
_GLOBAL_WITH_VALUE = frozenset({
    "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert",
    "--tlskey", "--url", "--connection", "--root", "--runroot", "--cgroup-manager", "--storage-driver",
    "--storage-opt", "--identity", "--events-backend", "--tmpdir", "--conmon", "--module",
    "--network-cmd-path", "--hooks-dir", "--runtime", "-n", "--namespace", "-a", "--address",
    "--snapshotter", "--data-root", "--cni-path", "--cni-netconfpath", "--hosts-dir", "--timeout",
    "--connect-timeout", "-r", "--runtime-endpoint", "-i", "--image-endpoint", "-t",
})
_COMPOSE_WITH_VALUE = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file",
                                 "--project-directory", "--ansi", "--progress", "--parallel"})
_COMPOSE_CREATES = frozenset({"up", "run", "create"})
# Options of `run`/`create` that take no value (anything else starting with `-` takes one).
_RUN_FLAGS = frozenset({
    "--rm", "-d", "--detach", "-i", "--interactive", "-t", "--tty", "--privileged", "--init", "-P",
    "--publish-all", "--read-only", "--sig-proxy", "--no-healthcheck", "--oom-kill-disable",
    "--disable-content-trust", "-q", "--quiet", "--help", "--net-host", "--cni", "--null-io",
    "--privileged-without-host-devices", "--allow-new-privs", "--no-pivot", "--replace", "--rmi",
})
_SHORT_FLAG_LETTERS = frozenset("ditPq")
_FIX = "request nvidia.com/gpu in resources.limits instead"


@record(frozen=True)
class EngineRun:
    """A container engine command that creates a container."""

    __slots__ = ("display", "gpu_flags")
    display: str                    # "docker run", "ctr containers create"
    gpu_flags: tuple[str, ...]      # "--gpus all", "-e NVIDIA_VISIBLE_DEVICES=0"...

    def __init__(self, display: str, gpu_flags: tuple[str, ...]) -> None:
        set_field(self, "display", display)
        set_field(self, "gpu_flags", gpu_flags)


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    # Per source (argv or script), its first engine run and how many there are. Workload-wide:
    # containers sharing a mounted script report it once, for the first container.
    counts: dict[tuple, int] = {}
    first: dict[tuple, tuple[RunCommand, EngineRun, Container]] = {}
    for _pod, container, command in workload_commands_named(workload, ctx.index, _ENGINE_NAMES):
        run = engine_run(command.argv)
        if run is None:
            continue
        if command.source not in first:
            first[command.source] = (command, run, container)
            counts[command.source] = 0
        if first[command.source][2] is container:
            counts[command.source] += 1
    for source, (command, run, container) in first.items():
        yield Violation(_message(command, run, counts[source] - 1), command.where, container,
                        located_in=command.located_in)
    runs_engine = bool(first)

    for item in host_path_volumes(workload):
        writable = not item.mounts or any(not mount.read_only for _pod, _container, mount in item.mounts)
        what = container_runtime_access(item.host_path, writable)
        if what is None:
            continue
        where = ValueAt(item.volume.host_path_path)
        if not item.mounts:
            yield Violation(f"hostPath {item.host_path} would expose {what}; no container mounts it yet, "
                            "remove it", where, severity=Severity.WARNING)
            continue
        signal = "it runs a container engine" if runs_engine else _gpu_signal(item.pods, ctx)
        severity = None if signal else Severity.WARNING
        because = f" (the pod {signal})" if signal else ""
        vendor = other_vendor_of(workload, ctx.settings, ctx.index)
        advice = (f"run {vendor} work as Pods requesting its device plugin's resource instead" if vendor
                  else "run GPU work as Pods with nvidia.com/gpu in resources.limits instead")
        yield Violation(f"hostPath {item.host_path} exposes {what}: anything in the pod can start "
                        f"containers with GPUs the scheduler does not see{because}; {advice}",
                        where, item.mounts[0][1], severity=severity)


def _message(command: RunCommand, run: EngineRun, more: int) -> str:
    extra = f" and {more} more engine command{'s' if more > 1 else ''}" if more else ""
    where = f" ({command.described_origin}{extra})"
    if run.gpu_flags:
        return (f"{run.display} {' '.join(run.gpu_flags)} creates a container with GPUs the scheduler "
                f"does not see{where}; {_FIX}")
    return (f"{run.display} creates a container outside the scheduler, which the node's runtime can "
            f"hand any GPU{where}; run it as a Kubernetes workload and {_FIX}")


def engine_run(argv: Sequence[str]) -> EngineRun | None:
    """The container `argv` creates with an engine CLI, or None."""
    if not argv:
        return None
    program = basename(argv[0])
    family = _ENGINES.get(program)
    if family is None:
        return None
    i = 1
    if family != "compose":  # compose options are read with its subcommand
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in _GLOBAL_WITH_VALUE else 1
    found = _subcommand(family, list(argv[i:]))
    if found is None:
        return None
    subcommand, options = found
    if "--help" in options:
        return None
    flags = _gpu_flags(argv[1:i]) + _gpu_flags(options)
    return EngineRun(" ".join([program, *subcommand]), tuple(flags))


def _subcommand(family: str, words: list[str]) -> tuple[list[str], list[str]] | None:
    """(the subcommand words, the words after them) when they create a container."""
    first = words[0] if words else ""
    second = words[1] if len(words) > 1 else ""
    if family == "compose":
        return _compose(words, 0)
    if family == "docker":
        if first in ("run", "create"):
            return [first], words[1:]
        if first == "container" and second in ("run", "create"):
            return [first, second], words[2:]
        if first == "compose":
            return _compose(words, 1)
        if (first, second) in (("kube", "play"), ("play", "kube")):
            return [first, second], words[2:]
        return None
    if family == "ctr":
        if first == "run":
            return [first], words[1:]
        if first in ("c", "container", "containers") and second == "create":
            return [first, second], words[2:]
        return None
    if family == "crictl" and first in ("run", "runp", "create"):
        return [first], words[1:]
    return None


def _compose(words: list[str], start: int) -> tuple[list[str], list[str]] | None:
    """`[docker] compose [-f FILE...] up|run|create`."""
    i = start
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _COMPOSE_WITH_VALUE else 1
    if i < len(words) and words[i] in _COMPOSE_CREATES:
        return words[:start] + [words[i]], words[i + 1:]
    return None


def _options(words: Sequence[str]) -> Iterator[tuple[str, str | None]]:
    """(option, value) pairs up to the image name."""
    i = 0
    while i < len(words):
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else None
        if word == "--" or not word.startswith("-") or word == "-":
            return
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if eq:
                yield name, value
            elif name in _RUN_FLAGS:
                yield name, None
            else:
                yield name, following
                i += 1
        elif len(word) > 2 and all(c in _SHORT_FLAG_LETTERS for c in word[1:]):
            for letter in word[1:]:
                yield f"-{letter}", None
        elif word in _RUN_FLAGS:
            yield word, None
        elif len(word) > 2:
            yield word[:2], word[2:].lstrip("=")
        else:
            yield word, following
            i += 1
        i += 1


def _gpu_flags(words: Sequence[str]) -> list[str]:
    flags = []
    for name, value in _options(words):
        value = value or ""
        if name == "--gpus":
            flags.append(f"--gpus {value}".rstrip())
        elif name == "--device" and (value.startswith(("nvidia.com/gpu", "/dev/nvidia"))):
            flags.append(f"--device {value}")
        elif name in ("--runtime", "--runc-binary") and "nvidia" in value:
            flags.append(f"{name} {value}")
        elif name in ("-e", "--env"):
            key, eq, devices = value.partition("=")
            if key == VISIBLE_DEVICES and eq and classify_visible_devices(devices) == GRANTS:
                flags.append(f"{name} {value}")
        elif name == "--privileged":
            flags.append("--privileged")
        elif name in ("-v", "--volume") and value.split(":", 1)[0].startswith("/dev/nvidia"):
            flags.append(f"{name} {value}")
    return flags


def _gpu_signal(pods: list[PodSpec], ctx: RuleContext) -> str | None:
    """Why the pod is GPU-related (the first signal of its first GPU-related container), or None."""
    for pod in pods:
        for container in pod.containers:
            signals = gpu_signals(pod, container, ctx.settings, ctx.index)
            if signals:
                return f"{container.name or 'a container'}: {signals[0]}"
    return None


def admission(options: Mapping[str, Any]) -> Admission:
    return Admission(
        "has a hostPath volume of the node's container runtime (its socket, a directory holding it, or its "
        "state directory): anything in the pod can start containers with GPUs the scheduler does not see; "
        "run GPU work as Pods with nvidia.com/gpu in resources.limits instead",
        volume=(f"{container_runtime_path('v.hostPath.path')} || "
                f"v.hostPath.path.matches({cel_string(DOT_SEGMENT_RE)})"),
        enforced="hostPath volumes of runtime sockets, the directories holding them and runtime state "
                 "directories, mounted or not, whatever the pod's GPU signals",
        linter_only="container engine commands (docker run, ctr run, ...) in argv, scripts or mounted "
                    "ConfigMaps",
    )


RULE = Rule(
    id="GPU002",
    name="container-engine-cli",
    severity=Severity.ERROR,
    summary="A container creates containers with docker/podman/nerdctl/ctr, or mounts the node's container runtime.",
    doc=__doc__ or "",
    check=check,
    security_severity="8.0",
    admission=admission,
    # Roles whose listed components reach the runtime: the container toolkit, HAMi's monitor.
    exempt_roles=frozenset({SystemRole.RUNTIME_HOOK, SystemRole.MANAGEMENT_AGENT, SystemRole.NODE_AGENT_PLUGIN,
                            SystemRole.NODE_AGENT_DISCOVERER}),
)
