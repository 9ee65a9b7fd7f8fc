"""GPU infrastructure recognised by its role: what a pod does on the node, not its image name.

A pod that registers with the kubelet (a device plugin, a DRA kubelet plugin),
plugs into the container runtime (an NRI plugin), writes CDI specs, or writes
the NVIDIA driver onto the host (a driver installer) has to reach the node in
ways gpulint reports on user workloads. Each role has a signature made of
hostPath mounts only such a component needs. Which rules a role is exempt from
is declared by each rule (`Rule.exempt_roles`), as few as the built-in
allowlist's components of that kind (data/system_components.yaml) are exempt
from: never the request-validity rules, never the container-runtime rule
(GPU002), never CDI/device-request injection (GPU008).

A pod whose own containers request GPUs is a workload, never infrastructure:
a device plugin does not ask the scheduler for the devices it advertises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from gpulint.api import SystemRole
from gpulint.knowledge.gpu import pod_requests_gpu
from gpulint.knowledge.hostpaths import is_within, normalize
from gpulint.model.workload import PodSpec, Workload

# Node directories a driver installer writes the NVIDIA driver into: the GPU
# Operator's driver root, the classic install prefix, GKE's (and minikube's)
# install directory, and the prefix some cloud images use.
DRIVER_DIRS = ("/run/nvidia", "/usr/local/nvidia", "/home/kubernetes/bin/nvidia", "/opt/nvidia")


@dataclass(frozen=True, repr=False)
class Role:
    """What a pod is recognised as, and the mount that shows it."""

    name: SystemRole          # what rules name in `exempt_roles`
    evidence: str             # "its kubelet device-plugin mount"

    @property
    def reason(self) -> str:
        """`device plugin, by its kubelet device-plugin mount` (the suppression names it)."""
        return f"{self.name}, by {self.evidence}"


DEVICE_PLUGIN = Role(SystemRole.DEVICE_PLUGIN, "its kubelet device-plugin mount")
DRA_REGISTRATION = Role(SystemRole.DRA_PLUGIN, "its kubelet plugin-registration mount")
DRA_PLUGINS = Role(SystemRole.DRA_PLUGIN, "its kubelet plugins mount")
NRI_PLUGIN = Role(SystemRole.NRI_PLUGIN, "its NRI socket mount")
CDI_WRITER = Role(SystemRole.CDI_WRITER, "its CDI spec directory mount")
INSTALLER_ROOT = Role(SystemRole.DRIVER_INSTALLER, "its NVIDIA driver directory and host root mounts")
INSTALLER_DEV = Role(SystemRole.DRIVER_INSTALLER, "its NVIDIA driver directory and host /dev mounts")

# An image built to manage GPUs: it asks the NVIDIA runtime for the MIG configuration
# or monitoring capability (NVIDIA_MIG_CONFIG_DEVICES / NVIDIA_MIG_MONITOR_DEVICES,
# which need CAP_SYS_ADMIN and which only management tools such as a MIG manager or
# DCGM set). Its NVIDIA_VISIBLE_DEVICES=all is what it needs, not a default it leaks.
MIG_CONFIG_IMAGE = Role(SystemRole.MANAGEMENT_IMAGE, "its NVIDIA_MIG_CONFIG_DEVICES ENV")
MIG_MONITOR_IMAGE = Role(SystemRole.MANAGEMENT_IMAGE, "its NVIDIA_MIG_MONITOR_DEVICES ENV")
_MANAGEMENT_ENV = (("NVIDIA_MIG_CONFIG_DEVICES", MIG_CONFIG_IMAGE), ("NVIDIA_MIG_MONITOR_DEVICES", MIG_MONITOR_IMAGE))

# (node directory, role), first match wins; paths in their /run form.
_MOUNT_ROLES: tuple[tuple[str, Role], ...] = (
    ("/var/lib/kubelet/device-plugins", DEVICE_PLUGIN),
    ("/var/lib/kubelet/plugins_registry", DRA_REGISTRATION),
    ("/var/lib/kubelet/plugins", DRA_PLUGINS),
    ("/run/nri", NRI_PLUGIN),
    ("/run/cdi", CDI_WRITER),
    ("/etc/cdi", CDI_WRITER),
)


def _run_form(path: str) -> str:
    return "/run" + path[len("/var/run"):] if is_within(path, "/var/run") else path


def mounted_host_paths(pod: PodSpec) -> list[str]:
    """Normalised node paths of the pod's hostPath volumes that one of its containers mounts."""
    mounted = {mount.name for container in pod.containers for mount in container.volume_mounts}
    paths = []
    for volume in pod.volumes:
        host_path = volume.host_path
        if host_path is not None and volume.name in mounted:
            path = _run_form(normalize(host_path))
            if path.startswith("/") and path not in paths:
                paths.append(path)
    return paths


def pod_roles(workload: Workload, pod: PodSpec, settings: Mapping[str, Any]) -> tuple[Role, ...]:
    """The infrastructure roles `pod` shows, most specific first; () for a workload.

    `settings` are the scan's GPU settings (which resources are GPUs).
    """
    paths = mounted_host_paths(pod)
    if not paths or pod_requests_gpu(pod, settings):
        return ()
    roles: list[Role] = []
    for directory, role in _MOUNT_ROLES:
        if role not in roles and any(is_within(path, directory) for path in paths):
            roles.append(role)
    if workload.kind == "DaemonSet" and any(is_within(path, d) for path in paths for d in DRIVER_DIRS):
        if "/" in paths:
            roles.append(INSTALLER_ROOT)
        elif "/dev" in paths:
            roles.append(INSTALLER_DEV)
    return tuple(roles)


def image_role(env: Mapping[str, str]) -> Role | None:
    """The role an image built from a Dockerfile shows by its ENV (`env`: name -> value), or None."""
    for name, role in _MANAGEMENT_ENV:
        value = env.get(name, "").strip()
        if value and value.lower() != "void":
            return role
    return None


def role_for(exempt: frozenset[SystemRole], roles: tuple[Role, ...]) -> Role | None:
    """The first of `roles` that is one of `exempt` (a rule's `exempt_roles`)."""
    return next((role for role in roles if role.name in exempt), None)



# The mount signatures, for their admission form (gpulint/admission/exemptions.py).
MOUNT_ROLES = _MOUNT_ROLES
