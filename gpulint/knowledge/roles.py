"""GPU infrastructure recognised by its role: what a pod does on the node, not its image name.

A pod that registers with the kubelet (a device plugin, a DRA kubelet plugin),
plugs into the container runtime (an NRI plugin), writes CDI specs, or writes
the NVIDIA driver onto the host (a driver installer) has to reach the node in
ways gpulint reports on user workloads. Each role has a signature made of
hostPath mounts only such a component needs, and each is exempt from as few
rule families as the built-in allowlist's components of that kind
(data/system_components.yaml): never the request-validity rules, never the
container-runtime rule (GPU002), never CDI/device-request injection (GPU008).

A pod whose own containers request GPUs is a workload, never infrastructure:
a device plugin does not ask the scheduler for the devices it advertises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from gpulint.knowledge.gpu import pod_requests_gpu
from gpulint.knowledge.hostpaths import is_within, normalize
from gpulint.model.workload import PodSpec, Workload

# Exemptions per role, each the rule families every built-in component of that
# kind is exempt from (the intersection, so a role is never wider than a name):
#   device plugins (NVIDIA, GKE, ACK gpushare, HAMi)      GPU001 GPU003 GPU005 GPU006
#   DRA kubelet plugins (NVIDIA DRA driver for GPUs)      GPU001 GPU003 GPU005 GPU006
#   CDI spec writers (NVIDIA container toolkit)           GPU001 GPU003 GPU005 GPU006
#   NRI plugins (device injectors: host devices only)     GPU001 GPU005 GPU006
#   driver installers (NVIDIA driver, GKE installer)      GPU001 GPU006
_PLUGIN_EXEMPT = frozenset({"GPU001", "GPU003", "GPU005", "GPU006"})
_NRI_EXEMPT = frozenset({"GPU001", "GPU005", "GPU006"})
_INSTALLER_EXEMPT = frozenset({"GPU001", "GPU006"})

# Node directories a driver installer writes the NVIDIA driver into: the GPU
# Operator's driver root, the classic install prefix, GKE's (and minikube's)
# install directory, and the prefix some cloud images use.
DRIVER_DIRS = ("/run/nvidia", "/usr/local/nvidia", "/home/kubernetes/bin/nvidia", "/opt/nvidia")


@dataclass(frozen=True, repr=False)
class Role:
    """What a pod is recognised as, and the mount that shows it."""

    name: str                 # "device plugin"
    evidence: str             # "its kubelet device-plugin mount"
    exempt: frozenset[str]    # rule ids

    @property
    def reason(self) -> str:
        """`device plugin, by its kubelet device-plugin mount` (the suppression names it)."""
        return f"{self.name}, by {self.evidence}"


DEVICE_PLUGIN = Role("device plugin", "its kubelet device-plugin mount", _PLUGIN_EXEMPT)
DRA_REGISTRATION = Role("DRA kubelet plugin", "its kubelet plugin-registration mount", _PLUGIN_EXEMPT)
DRA_PLUGINS = Role("DRA kubelet plugin", "its kubelet plugins mount", _PLUGIN_EXEMPT)
NRI_PLUGIN = Role("NRI plugin", "its NRI socket mount", _NRI_EXEMPT)
CDI_WRITER = Role("CDI spec writer", "its CDI spec directory mount", _PLUGIN_EXEMPT)
INSTALLER_ROOT = Role("driver installer", "its NVIDIA driver directory and host root mounts", _INSTALLER_EXEMPT)
INSTALLER_DEV = Role("driver installer", "its NVIDIA driver directory and host /dev mounts", _INSTALLER_EXEMPT)

# An image built to manage GPUs: it asks the NVIDIA runtime for the MIG configuration
# or monitoring capability (NVIDIA_MIG_CONFIG_DEVICES / NVIDIA_MIG_MONITOR_DEVICES,
# which need CAP_SYS_ADMIN and which only management tools such as a MIG manager or
# DCGM set). Its NVIDIA_VISIBLE_DEVICES=all is what it needs, not a default it leaks.
_MANAGEMENT_EXEMPT = frozenset({"GPU005"})
MIG_CONFIG_IMAGE = Role("GPU management image", "its NVIDIA_MIG_CONFIG_DEVICES ENV", _MANAGEMENT_EXEMPT)
MIG_MONITOR_IMAGE = Role("GPU management image", "its NVIDIA_MIG_MONITOR_DEVICES ENV", _MANAGEMENT_EXEMPT)
_MANAGEMENT_ENV = (("NVIDIA_MIG_CONFIG_DEVICES", MIG_CONFIG_IMAGE), ("NVIDIA_MIG_MONITOR_DEVICES", MIG_MONITOR_IMAGE))

# Every rule some role is exempt from (others need not look for roles at all).
ROLE_RULES = _PLUGIN_EXEMPT | _NRI_EXEMPT | _INSTALLER_EXEMPT | _MANAGEMENT_EXEMPT

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


def role_for(rule_id: str, roles: tuple[Role, ...]) -> Role | None:
    """The first of `roles` exempt from `rule_id`."""
    return next((role for role in roles if rule_id in role.exempt), None)



# The mount signatures, for their admission form (gpulint/admission/exemptions.py).
MOUNT_ROLES = _MOUNT_ROLES
