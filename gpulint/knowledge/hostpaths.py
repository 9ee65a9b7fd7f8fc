"""Node paths a pod reaches through hostPath volumes (POLICY.md §4).

Shared facts: which node paths give direct access to the GPUs or the NVIDIA
driver, which expose a container runtime, and which container path lands where
on the node. Paths are compared after normalisation (`//`, trailing `/`, `..`),
and `/var/run` is read as `/run` (a symlink to it on every current distribution).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from gpulint.model.workload import Container, PodSpec, Volume, VolumeMount, Workload


def normalize(path: str) -> str:
    """`//dev/./nvidia0/` -> `/dev/nvidia0`; `/dev/../` -> `/`."""
    path = path.strip()
    if not path:
        return path
    path = posixpath.normpath(path)
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return path


def is_within(path: str, directory: str) -> bool:
    """Whether normalised `path` is `directory` or lies below it."""
    return path == directory or directory == "/" or path.startswith(directory + "/")


def _run_form(path: str) -> str:
    return "/run" + path[len("/var/run"):] if is_within(path, "/var/run") else path


# --- GPU devices and the NVIDIA driver on the node -----------------------------

# (test, description) in order; the first match describes the path.
# Other vendors' device nodes (/dev/dri, /dev/kfd, /dev/vfio, /dev/accel, /dev/neuron*)
# are not here: they reach no NVIDIA GPU (gpulint.knowledge.vendors).
_DEVICE_DIRS = (
    ("/dev/char", "the node's character devices, GPUs included"),
    ("/usr/local/nvidia", "the node's NVIDIA driver"),
    ("/run/nvidia/driver", "the node's NVIDIA driver"),
    ("/opt/nvidia", "the node's NVIDIA driver"),   # the install prefix of CoreOS/Flatcar driver installers
)


def gpu_host_access(path: str) -> str | None:
    """What a hostPath of `path` exposes of the node's GPUs, or None.

    Only the NVIDIA GPU devices, the whole `/dev` (and `/dev/char`), the host
    root and NVIDIA driver paths count; other vendors' device nodes do not. Generic host directories that may hold NVIDIA files (`/usr`,
    `/lib`, `/var`), the device-plugin and pod-resources sockets, `/var/run/cdi`,
    `/run/nvidia/validations`, `/run/nvidia/mps`, `/sys` and `/proc` do not.
    """
    path = _run_form(normalize(path))
    if path == "/":
        return "the node's root filesystem, GPU devices and NVIDIA driver included"
    if path == "/dev":
        return "every device of the node, GPUs included"
    if path.startswith("/dev/nvidia"):
        return "the node's NVIDIA GPU devices"
    for directory, description in _DEVICE_DIRS:
        if is_within(path, directory):
            return description
    if path == "/run/nvidia":
        return "the NVIDIA driver root the GPU Operator publishes on the node"
    if path.startswith("/home/kubernetes/bin/nvidia"):
        return "the node's NVIDIA driver"
    name = posixpath.basename(path)
    if "libnvidia-" in name or name == "nvidia-smi":
        return "a file of the node's NVIDIA driver"
    return None


# Path components that only NVIDIA device nodes and driver files have:
# /dev/nvidia0, /dev/nvidia-caps, /run/nvidia, /usr/local/nvidia,
# /home/kubernetes/bin/nvidia (GKE), libnvidia-ml.so.1, libcuda.so, nvidia-smi.
_NVIDIA_PATH_PART_RE = re.compile(r"(?:lib)?nvidia|libcuda", re.IGNORECASE)


def gpu_related_path(path: str) -> bool:
    """Whether a hostPath looks NVIDIA-GPU related: an NVIDIA device node or driver path.

    Broader than `gpu_host_access` (any path component named after the vendor
    counts) and without the whole-node paths `/` and `/dev`: it answers "is
    this container about GPUs?" (a signal for other rules), not "does this
    mount grant GPUs?".
    """
    parts = [p for p in path.split("/") if p]
    return any(_NVIDIA_PATH_PART_RE.match(part) for part in parts)


# --- container runtimes on the node ---------------------------------------------

_RUNTIME_SOCKETS = {
    "/run/docker.sock": "Docker",
    "/run/containerd/containerd.sock": "containerd",
    "/run/k3s/containerd/containerd.sock": "k3s containerd",
    "/run/podman/podman.sock": "Podman",
    "/run/crio/crio.sock": "CRI-O",
    "/run/dockershim.sock": "dockershim",
    "/run/cri-dockerd.sock": "cri-dockerd",
}
# Runtime state directories: below them are the runtime's sockets and its containers.
_RUNTIME_DIRS = {
    "/run/docker": "Docker",
    "/run/containerd": "containerd",
    "/run/k3s/containerd": "k3s containerd",
    "/run/podman": "Podman",
    "/run/crio": "CRI-O",
    "/var/lib/docker": "Docker",
    "/var/lib/containerd": "containerd",
}
_ROOTLESS_RE = re.compile(r"/run/user/[^/]+/(?:docker\.sock|podman(?:/podman\.sock)?)\Z")


def container_runtime_access(path: str) -> str | None:
    """Which node container runtime a hostPath of `path` exposes, or None.

    The socket itself, a directory holding it (`/run`, `/var/run`,
    `/run/containerd`), or a runtime's state directory. The host root `/` is
    left to the host-access check.
    """
    path = _run_form(normalize(path))
    if path == "/" or not path.startswith("/"):
        return None
    for socket, runtime in _RUNTIME_SOCKETS.items():
        if path == socket:
            return f"the {runtime} socket"
        if is_within(socket, path):
            return f"the {runtime} socket (under {path})"
    for directory, runtime in _RUNTIME_DIRS.items():
        if is_within(path, directory):
            return f"the {runtime} runtime state"
    if _ROOTLESS_RE.match(path):
        return "a rootless container engine socket"
    return None


# --- volumes and mounts ----------------------------------------------------------


@dataclass(repr=False)
class HostPathVolume:
    """A hostPath volume of a workload and every container that mounts it."""

    volume: Volume
    host_path: str                                   # normalised
    mounts: list[tuple[PodSpec, Container, VolumeMount]] = field(default_factory=list)
    pods: list[PodSpec] = field(default_factory=list)  # pod specs that declare it


def host_path_volumes(workload: Workload) -> list[HostPathVolume]:
    """hostPath volumes, once each even when several pod specs share them (Argo)."""
    found: dict[tuple, HostPathVolume] = {}
    for pod in workload.pod_specs:
        for volume in pod.volumes:
            if volume.host_path is None:
                continue
            entry = found.get(volume.path)
            if entry is None:
                entry = found[volume.path] = HostPathVolume(volume, normalize(volume.host_path))
            entry.pods.append(pod)
            for container in pod.containers:
                for mount in container.volume_mounts:
                    if mount.name == volume.name:
                        entry.mounts.append((pod, container, mount))
    return list(found.values())


def node_path_of(pod: PodSpec, container: Container, container_path: str) -> str | None:
    """The node path `container_path` refers to, when it lies in one of the container's hostPath mounts."""
    path = normalize(container_path)
    if not path.startswith("/"):
        return None
    best: tuple[str, str] | None = None
    for mount in container.volume_mounts:
        volume = pod.volume(mount.name)
        if volume is None or volume.host_path is None:
            continue
        mount_path = normalize(mount.mount_path)
        if is_within(path, mount_path) and (best is None or len(mount_path) > len(best[0])):
            best = (mount_path, volume.host_path)
    if best is None:
        return None
    rest = path[len(best[0]):] if best[0] != "/" else path
    return normalize(best[1] + "/" + rest)


# The tables above, for their admission form (knowledge/celforms.py).
DEVICE_DIRS = tuple(directory for directory, _what in _DEVICE_DIRS)
RUNTIME_SOCKETS = tuple(_RUNTIME_SOCKETS)
RUNTIME_DIRS = tuple(_RUNTIME_DIRS)
