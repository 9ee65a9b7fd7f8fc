"""Node paths a pod reaches through hostPath volumes (POLICY.md §4).

Shared facts: which node paths give direct access to the GPUs or the NVIDIA
driver, which expose a container runtime, and which container path lands where
on the node. Paths are compared after normalisation (`//`, trailing `/`, `..`),
and `/var/run` is read as `/run` (a symlink to it on every current distribution).
"""

from __future__ import annotations

import posixpath
import re

from gpulint.lazypattern import lazy
from gpulint.model.workload import Container, PodSpec, Volume, VolumeMount, Workload
from gpulint.record import record


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

# Whole-node device trees; other vendors' device nodes (/dev/dri, /dev/kfd, /dev/vfio,
# /dev/accel, /dev/neuron*) are not here: they reach no NVIDIA GPU (gpulint.knowledge.vendors).
_DEVICE_DIRS = (
    ("/dev/char", "the node's character devices, GPUs included"),
)

# NVIDIA driver and toolkit trees are recognised by the names NVIDIA's installers give
# their directories, wherever a node keeps them (/usr/local/nvidia, /opt/nvidia, GKE's
# /home/kubernetes/bin/nvidia, nvidia-docker 1.0's /var/lib/nvidia-docker/volumes/
# nvidia_driver/<version>, Ubuntu's /usr/lib/nvidia-<version>, a copy under
# /usr/local/nvidia-docker/...), not by a list of prefixes. A directory component is
#  - a tree by its own name: `nvidia` joined by `-`/`_` to a driver version
#    (`nvidia-535`) or to a word only NVIDIA's driver and toolkit packages use
#    (`nvidia_driver`, `nvidia-docker`, `nvidia-container-toolkit`);
#  - a bare `nvidia` directory when it is a software tree: right below a software
#    prefix (/usr, /usr/local, /opt, a `lib*`, multiarch `*-linux-gnu` or `bin` directory,
#    /var/lib, /run) or
#    holding one (`.../nvidia/lib64`, `.../nvidia/bin`, `.../nvidia/driver`).
# A name that merely contains the word (`/data/nvidia-models`, `/data/nvidia/datasets`)
# is data, not a tree.
_TREE_NAME_RE = lazy(
    r"nvidia[-_](?:\d+(?:\.\d+)*|drivers?|docker|container(?:[-_](?:toolkit|runtime))?|toolkit|current|legacy)\Z",
    re.IGNORECASE)
_SOFTWARE_PARENTS = frozenset({"usr", "local", "opt", "bin", "sbin", "lib", "lib32", "lib64", "libx32"})
_SOFTWARE_CHILD_RE = lazy(r"(?:lib(?:32|64|x32)?|bin|sbin|drivers?|toolkit|current|\d+(?:\.\d+)*)\Z")
# Node areas that hold no software trees, whatever their components are called: kernel
# views, logs, the kubelet's state (device-plugin sockets), configuration.
_NOT_TREES = ("/proc", "/sys", "/var/log", "/var/lib/kubelet", "/etc", "/lib/modules", "/usr/lib/modules",
              "/lib/firmware", "/usr/lib/firmware", "/dev")
# Driver files, wherever they sit: libnvidia-ml.so.1, libcuda.so.1, nvidia-smi.
_DRIVER_FILE_RE = lazy(r"libnvidia-.+|libcuda\.so(?:\..*)?|nvidia-smi\Z")


def nvidia_tree(path: str) -> str | None:
    """The component of normalised `path` that makes it (or an ancestor) an NVIDIA driver or
    toolkit tree of the node, or None."""
    if any(is_within(path, area) for area in _NOT_TREES):
        return None
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["run"]:
        # /run holds daemons' state: /run/nvidia is the GPU Operator's driver root only as a
        # whole or below `driver` (not validations/, mps/, toolkit/ pid files).
        return "nvidia" if parts[1:2] == ["nvidia"] and parts[2:3] in ([], ["driver"]) else None
    found: list[str] = []
    for i, part in enumerate(parts):
        if _TREE_NAME_RE.match(part):
            found.append(part)
        elif part.lower() == "nvidia":
            parent = parts[i - 1].lower() if i else ""
            child = parts[i + 1] if i + 1 < len(parts) else ""
            if parent in _SOFTWARE_PARENTS or parent.endswith("-linux-gnu") or parts[:i] == ["var", "lib"] \
                    or _SOFTWARE_CHILD_RE.match(child):
                found.append(part)
    # The most telling component: the driver inside an nvidia-docker volume tree.
    return next((part for part in found if "driver" in part.lower()), found[0] if found else None)


def gpu_host_access(path: str) -> str | None:
    """What a hostPath of `path` exposes of the node's GPUs, or None.

    Only the NVIDIA GPU devices, the whole `/dev` (and `/dev/char`), the host
    root, NVIDIA driver and toolkit trees (by structure: `nvidia_tree`) and driver
    files count; other vendors' device nodes do not. Generic host directories that
    may hold NVIDIA files (`/usr`, `/lib`, `/var`), the device-plugin and
    pod-resources sockets, `/var/run/cdi`, `/run/nvidia/validations`,
    `/run/nvidia/mps`, `/sys` and `/proc` do not.
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
    if not any(is_within(path, area) for area in ("/proc", "/sys")) \
            and _DRIVER_FILE_RE.match(posixpath.basename(path)):
        return "a file of the node's NVIDIA driver"
    tree = nvidia_tree(path)
    if tree is None:
        return None
    word = tree[len("nvidia") + 1:].lower()
    if not word or "driver" in word or word[0].isdigit() or word in ("current", "legacy"):
        return "the node's NVIDIA driver"
    return f"the node's {tree} tree (NVIDIA driver or toolkit files)"


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
# Runtime directories under /run hold the runtime's sockets (its API, its shims',
# plugins'), which a read-only mount still lets a process connect to.
_RUNTIME_RUN_DIRS = {
    "/run/docker": "Docker",
    "/run/containerd": "containerd",
    "/run/k3s/containerd": "k3s containerd",
    "/run/podman": "Podman",
    "/run/crio": "CRI-O",
}
# Runtime state on disk (images, snapshots, container configs): a container that can write
# it can change what the runtime starts; reading it starts nothing (cAdvisor mounts
# /var/lib/docker read-only).
_RUNTIME_STATE_DIRS = {
    "/var/lib/docker": "Docker",
    "/var/lib/containerd": "containerd",
}
# Container log trees inside the runtime state: what log shippers (Fluent Bit, Promtail,
# Filebeat) read. They hold log files and per-container metadata, no socket, nothing the
# running daemon acts on.
_RUNTIME_LOG_DIRS = ("/var/lib/docker/containers",)
_ROOTLESS_RE = re.compile(r"/run/user/[^/]+/(?:docker\.sock|podman(?:/podman\.sock)?)\Z")


def container_runtime_access(path: str, writable: bool = True) -> str | None:
    """Which node container runtime a hostPath of `path` exposes, or None.

    The socket itself, a directory holding it (`/run`, `/var/run`,
    `/run/containerd`) whatever the mount's `readOnly`, or a runtime's state
    directory when a container can write it (`writable`); never its container log
    files. The host root `/` is left to the host-access check.
    """
    path = _run_form(normalize(path))
    if path == "/" or not path.startswith("/"):
        return None
    for socket, runtime in _RUNTIME_SOCKETS.items():
        if path == socket:
            return f"the {runtime} socket"
        if is_within(socket, path):
            return f"the {runtime} socket (under {path})"
    for directory, runtime in _RUNTIME_RUN_DIRS.items():
        if is_within(path, directory):
            return f"the {runtime} runtime state"
    if any(is_within(path, directory) for directory in _RUNTIME_LOG_DIRS):
        return None
    for directory, runtime in _RUNTIME_STATE_DIRS.items():
        if is_within(path, directory) and writable:
            return f"the {runtime} runtime state, writable"
    if _ROOTLESS_RE.match(path):
        return "a rootless container engine socket"
    return None


def is_driver_tree(path: str) -> bool:
    """Whether normalised `path` is an NVIDIA driver or toolkit tree a driver installer writes
    (the GPU Operator's /run/nvidia driver root, or `nvidia_tree`)."""
    path = _run_form(path)
    return path == "/run/nvidia" or nvidia_tree(path) is not None


# --- volumes and mounts ----------------------------------------------------------


@record
class HostPathVolume:
    """A hostPath volume of a workload and every container that mounts it."""

    __slots__ = ("volume", "host_path", "mounts", "pods")
    volume: Volume
    host_path: str                                   # normalised
    mounts: list[tuple[PodSpec, Container, VolumeMount]]
    pods: list[PodSpec]                              # pod specs that declare it

    def __init__(self, volume: Volume, host_path: str,
                 mounts: list[tuple[PodSpec, Container, VolumeMount]] | None = None,
                 pods: list[PodSpec] | None = None) -> None:
        self.volume = volume
        self.host_path = host_path
        self.mounts = [] if mounts is None else mounts
        self.pods = [] if pods is None else pods


def host_path_volumes(workload: Workload) -> tuple[HostPathVolume, ...]:
    """hostPath volumes, once each even when several pod specs share them (Argo). Listed once
    per workload (GPU001 and GPU002 both ask): callers only read them."""
    found = workload.memo.get("hostpaths.host_path_volumes")
    if found is None:
        found = workload.memo["hostpaths.host_path_volumes"] = _host_path_volumes(workload)
    return found


def _host_path_volumes(workload: Workload) -> tuple[HostPathVolume, ...]:
    found: dict[tuple, HostPathVolume] = {}
    for pod in workload.pod_specs:
        for volume in pod.volumes:
            if volume.kind != "hostPath" or volume.host_path is None:
                continue   # (the kind first: most volumes are of another kind)
            entry = found.get(volume.path)
            if entry is None:
                entry = found[volume.path] = HostPathVolume(volume, normalize(volume.host_path))
            entry.pods.append(pod)
            for container in pod.containers:
                for mount in container.volume_mounts:
                    if mount.name == volume.name:
                        entry.mounts.append((pod, container, mount))
    return tuple(found.values())


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
RUNTIME_RUN_DIRS = tuple(_RUNTIME_RUN_DIRS)
RUNTIME_STATE_DIRS = tuple(_RUNTIME_STATE_DIRS)
RUNTIME_LOG_DIRS = _RUNTIME_LOG_DIRS
NOT_TREES = _NOT_TREES
SOFTWARE_PARENTS = tuple(sorted(_SOFTWARE_PARENTS))
