"""GPU infrastructure recognised by its role: what a pod does on the node, not its image name.

A pod that registers with the kubelet (a device plugin, a DRA kubelet plugin),
plugs into the container runtime (an NRI plugin), writes CDI specs, or writes
the NVIDIA driver onto the host (a driver installer) has to reach the node in
ways gpulint reports on user workloads. Each role has a signature made of
what only such a component mounts or declares. Which rules a role is exempt
from is declared by each rule (`Rule.exempt_roles`), as few as the built-in
allowlist's components of that kind (data/system_components.yaml) are exempt
from: never the request-validity rules, never CDI/device-request injection
(GPU008).

Node agents (DaemonSets) that manage GPUs for a scheduler, whatever the vendor,
are also recognised by what they mount and declare: the kubelet pod-resources
socket on GPU nodes (exporters, allocation accounting), node-feature-discovery
feature files or a device-information directory (device discoverers), a MIG
strategy (the device plugin, GPU feature discovery), MIG monitoring or
configuration (GPU monitors), a container toolkit's `cdi generate` command.

The container-runtime rule (GPU002) exempts only roles whose listed components
need the runtime: a pod writing the runtime's configuration or OCI hooks (a
runtime hook installer, as the container toolkit, which reloads the runtime
through its socket), and node agents that register or discover devices or
monitor them (vGPU managers and monitors, as HAMi's, map containers to devices
through the runtime).

A pod whose own containers request GPUs is a workload, never infrastructure:
a device plugin does not ask the scheduler for the devices it advertises.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

from gpulint.api import SystemRole
from gpulint.knowledge.gpu import gpu_node_targeting, pod_requests_gpu
from gpulint.knowledge.hostpaths import is_driver_tree, is_within, normalize
from gpulint.lazypattern import lazy
from gpulint.model.workload import PodSpec, Workload
from gpulint.record import record, set_field


@record(eq=True, frozen=True)
class Role:
    """What a pod is recognised as, and the evidence that shows it."""

    __slots__ = ("name", "evidence")
    name: SystemRole          # what rules name in `exempt_roles`
    evidence: str             # "its kubelet device-plugin mount"

    def __init__(self, name: SystemRole, evidence: str) -> None:
        set_field(self, "name", name)
        set_field(self, "evidence", evidence)

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
# Node agents (DaemonSets) that manage GPUs: exporters and device managers read the kubelet's
# pod-resources API on GPU nodes; device discoverers write node-feature-discovery feature
# files or a device-information directory; the device plugin and GPU feature discovery take a
# MIG strategy.
POD_RESOURCES_AGENT = Role(SystemRole.GPU_NODE_AGENT, "its kubelet pod-resources mount on GPU nodes")
DEVICE_DISCOVERER = Role(SystemRole.DEVICE_DISCOVERER, "its node-feature-discovery feature-file mount")
DEVICE_INFO_WRITER = Role(SystemRole.DEVICE_DISCOVERER, "its device-information directory mount")
MIG_STRATEGY_AGENT = Role(SystemRole.DEVICE_MANAGER, "its MIG strategy setting on a node agent")
RUNTIME_HOOK = Role(SystemRole.RUNTIME_HOOK, "its writable container-runtime configuration mount")
# A node agent whose container asks the runtime for MIG monitoring or configuration (which
# needs CAP_SYS_ADMIN; only GPU management components set it): a GPU monitor such as the vGPU
# monitor of HAMi, which also reads the runtime to map containers to vGPUs, as the listed one.
MANAGEMENT_AGENT = Role(SystemRole.MANAGEMENT_AGENT, "its NVIDIA_MIG_MONITOR_DEVICES/NVIDIA_MIG_CONFIG_DEVICES env "
                        "on a node agent")
# A node agent that enters the host (its root mounted, or its processes shared) and installs
# NVIDIA's packages there with the node's package manager: a toolkit or a driver installer
# written by hand (a cloud's setup DaemonSet), whatever its image.
TOOLKIT_PACKAGES = Role(SystemRole.RUNTIME_HOOK, "its installation of NVIDIA's container toolkit packages "
                        "on the node")
DRIVER_PACKAGES = Role(SystemRole.DRIVER_INSTALLER, "its installation of NVIDIA driver packages on the node")
CDI_BY_COMMAND = Role(SystemRole.CDI_WRITER, "its container toolkit command (`*-ctk cdi generate`) on a node agent")
# A device plugin or discoverer that is a node agent may read the container runtime to map
# containers to the devices it handed out (vGPU managers: HAMi, Volcano vGPU, TKE gpu-manager,
# koordinator's koordlet); the listed components of that kind are exempt from GPU002 too.
DISCOVERER_RUNTIME = Role(SystemRole.NODE_AGENT_DISCOVERER, "its device-information mount, which maps "
                          "containers to devices through the runtime")
DEVICE_MANAGER_RUNTIME = Role(SystemRole.NODE_AGENT_PLUGIN, "its kubelet device-plugin mount, which maps "
                              "containers to devices through the runtime")

# An image built to manage GPUs: it asks the NVIDIA runtime for the MIG configuration
# or monitoring capability (NVIDIA_MIG_CONFIG_DEVICES / NVIDIA_MIG_MONITOR_DEVICES,
# which need CAP_SYS_ADMIN and which only management tools such as a MIG manager or
# DCGM set). Its NVIDIA_VISIBLE_DEVICES=all is what it needs, not a default it leaks.
MIG_CONFIG_IMAGE = Role(SystemRole.MANAGEMENT_IMAGE, "its NVIDIA_MIG_CONFIG_DEVICES ENV")
MIG_MONITOR_IMAGE = Role(SystemRole.MANAGEMENT_IMAGE, "its NVIDIA_MIG_MONITOR_DEVICES ENV")
_MANAGEMENT_ENV = (("NVIDIA_MIG_CONFIG_DEVICES", MIG_CONFIG_IMAGE), ("NVIDIA_MIG_MONITOR_DEVICES", MIG_MONITOR_IMAGE))
# An image that asks the runtime for the `utility` driver capability alone gets NVML and
# nvidia-smi, no CUDA: it enumerates and manages GPUs (device plugins, DRA drivers, vGPU
# managers build theirs so) and cannot compute on the GPUs it sees.
UTILITY_ONLY_IMAGE = Role(SystemRole.MANAGEMENT_IMAGE, "its NVIDIA_DRIVER_CAPABILITIES=utility ENV (NVML only, no CUDA)")

# (node directory, role), first match wins; paths in their /run form.
_MOUNT_ROLES: tuple[tuple[str, Role], ...] = (
    ("/var/lib/kubelet/device-plugins", DEVICE_PLUGIN),
    ("/var/lib/kubelet/plugins_registry", DRA_REGISTRATION),
    ("/var/lib/kubelet/plugins", DRA_PLUGINS),
    ("/run/nri", NRI_PLUGIN),
    ("/run/cdi", CDI_WRITER),
    ("/etc/cdi", CDI_WRITER),
)
# Where GPU feature discovery writes the features node-feature-discovery publishes as labels.
_NFD_FEATURES = "/etc/kubernetes/node-feature-discovery/features.d"
# Where container runtimes read their configuration and OCI hook definitions: a pod that
# can write one of them changes how every container of the node is created.
_RUNTIME_CONFIG_DIRS = ("/etc/containerd", "/etc/docker", "/etc/crio", "/etc/containers",
                        "/etc/nvidia-container-runtime", "/usr/share/containers/oci/hooks.d",
                        "/etc/k0s/containerd.d", "/var/lib/rancher/k3s/agent/etc/containerd")
# Hook registration directories of any runtime or runtime proxy (OCI `hooks.d`, a runtime hook
# server's `hookserver.d`, as koordinator's runtime proxy reads), wherever they are kept.
_HOOK_DIR_RE = re.compile(r"hook(?:server)?s?\.d\Z")
_POD_RESOURCES = "/var/lib/kubelet/pod-resources"
# A node directory named for device information (`xpu-device-infos`, `device_info`): where node
# agents of a GPU scheduler share the inventory a device discoverer writes (koordinator).
_DEVICE_INFO_RE = re.compile(r"device[-_]?infos?(?:$|[-_.])", re.IGNORECASE)


def _run_form(path: str) -> str:
    return "/run" + path[len("/var/run"):] if is_within(path, "/var/run") else path


def mounted_host_paths(pod: PodSpec, writable: bool = False) -> list[str]:
    """Normalised node paths of the pod's hostPath volumes that one of its containers mounts
    (`writable`: without `readOnly`)."""
    host_volumes = [volume for volume in pod.volumes if volume.host_path is not None]
    if not host_volumes:
        return []   # most pods: no mount to look at
    mounted = {mount.name for container in pod.containers for mount in container.volume_mounts
               if not (writable and mount.read_only)}
    paths = []
    for volume in host_volumes:
        host_path = volume.host_path
        if volume.name in mounted:
            path = _run_form(normalize(host_path))
            if path.startswith("/") and path not in paths:
                paths.append(path)
    return paths


def _manages(var: Any) -> bool:
    """Whether an env entry asks for a management capability (set, and not `void`)."""
    if var is None:
        return False
    if var.value_from is not None:
        return True
    value = str(var.value or "").strip()
    return bool(value) and value.lower() != "void"


def _declares_mig_strategy(pod: PodSpec) -> bool:
    """Whether a container takes a MIG strategy (`MIG_STRATEGY` env, `--mig-strategy` flag):
    only GPU device managers (the device plugin, GPU feature discovery) do."""
    for container in pod.containers:
        var = container.env_value("MIG_STRATEGY")
        if var is not None and (var.value or var.value_from is not None):
            return True
        for arg in (container.command or []) + (container.args or []):
            if isinstance(arg, str) and arg.lstrip("-").startswith("mig-strategy") and arg.startswith("--"):
                return True
    return False


def pod_roles(workload: Workload, pod: PodSpec, settings: Mapping[str, Any]) -> tuple[Role, ...]:
    """The infrastructure roles `pod` shows, most specific first; () for a workload.

    `settings` are the scan's GPU settings (which resources are GPUs).
    """
    paths = mounted_host_paths(pod)
    if not paths and workload.kind != "DaemonSet":
        return ()   # a pod that is no node agent shows a role only by a node path it mounts
    if pod_requests_gpu(pod, settings):
        return ()
    roles: list[Role] = []
    for directory, role in _MOUNT_ROLES:
        if role not in roles and any(is_within(path, directory) for path in paths):
            roles.append(role)
    # Device information is written (a reader, such as the NFD worker reading features.d, is none).
    writable = mounted_host_paths(pod, writable=True)
    if any(is_within(path, _NFD_FEATURES) for path in writable):
        roles.append(DEVICE_DISCOVERER)
    elif any(_DEVICE_INFO_RE.search(part) for path in writable for part in path.split("/")):
        roles.append(DEVICE_INFO_WRITER)
    if any(is_within(path, directory) for path in writable for directory in _RUNTIME_CONFIG_DIRS) \
            or any(_HOOK_DIR_RE.search(part) for path in writable for part in path.split("/")):
        roles.append(RUNTIME_HOOK)
    if workload.kind != "DaemonSet":
        return tuple(roles)
    # Node agents (a pod on every node it selects):
    if DEVICE_PLUGIN in roles:
        roles.append(DEVICE_MANAGER_RUNTIME)
    elif DEVICE_DISCOVERER in roles or DEVICE_INFO_WRITER in roles:
        roles.append(DISCOVERER_RUNTIME)
    if any(is_driver_tree(path) for path in paths):
        if "/" in paths:
            roles.append(INSTALLER_ROOT)
        elif "/dev" in paths:
            roles.append(INSTALLER_DEV)
    # GPU nodes: selected or tolerated as such, or an NVIDIA device or driver mounted.
    on_gpu_nodes = gpu_node_targeting(pod, settings) is not None or any(
        path.startswith("/dev/nvidia") or is_driver_tree(path) for path in paths)
    if on_gpu_nodes and any(is_within(path, _POD_RESOURCES) for path in paths):
        roles.append(POD_RESOURCES_AGENT)
    if _declares_mig_strategy(pod):
        roles.append(MIG_STRATEGY_AGENT)
    if any(_manages(container.env_value(name)) for container in pod.containers for name, _role in _MANAGEMENT_ENV):
        roles.append(MANAGEMENT_AGENT)
    if CDI_WRITER not in roles and _runs_toolkit_command(pod):
        roles.append(CDI_BY_COMMAND)
    if "/" in paths or pod.host_pid:
        installs = _installed_packages(pod)
        if "toolkit" in installs and RUNTIME_HOOK not in roles:
            roles.append(TOOLKIT_PACKAGES)
        if "driver" in installs and INSTALLER_ROOT not in roles:
            roles.append(DRIVER_PACKAGES)
    return tuple(roles)


# A container toolkit's CLI generating CDI specs or configuring the runtime (`nvidia-ctk cdi
# generate`, `nvidia-ctk runtime configure`; other vendors' toolkits follow the `<vendor>-ctk`
# naming), anywhere in a container's commands and scripts (also inside `nsenter ... sh -c`).
_TOOLKIT_COMMAND_RE = lazy(r"(?:^|[\s;&|(/\"'`])[a-z][a-z0-9]*-ctk\s+(?:cdi\s+generate|runtime\s+configure)\b")


def _command_texts(pod: PodSpec) -> Iterator[str]:
    """Every argument its containers run and every script they run, as written."""
    for container in pod.containers:
        for run in container.execs:
            yield from run.argv
        for script in container.scripts:
            yield script.text


def _runs_toolkit_command(pod: PodSpec) -> bool:
    return any(_TOOLKIT_COMMAND_RE.search(text) for text in _command_texts(pod) if "-ctk" in text)


# A package manager installing NVIDIA's packages: the container toolkit (libnvidia-container,
# nvidia-container-toolkit, the older nvidia-container-runtime) or the driver (nvidia-driver-*,
# cuda-drivers, the fabric manager), in one command of a script.
_INSTALL_RE = lazy(r"\b(?:apt-get|apt|yum|dnf|microdnf|tdnf|zypper)\b[^;&|\n]*?\binstall\b[^;&|\n]*?"
                   r"(?:^|[\s=])(?:(?P<toolkit>nvidia-container-toolkit|libnvidia-container|nvidia-container-runtime)"
                   r"|(?P<driver>nvidia-driver|cuda-drivers|nvidia-fabricmanager|nvidia-open))")


def _installed_packages(pod: PodSpec) -> set[str]:
    """`toolkit` and/or `driver`: the NVIDIA packages a container's commands install."""
    found: set[str] = set()
    for text in _command_texts(pod):
        if "install" not in text or ("nvidia" not in text and "cuda-drivers" not in text):
            continue
        for match in _INSTALL_RE.finditer(text.replace("\\\n", " ")):
            found.add("toolkit" if match.group("toolkit") else "driver")
    return found


def image_role(env: Mapping[str, str]) -> Role | None:
    """The role an image built from a Dockerfile shows by its ENV (`env`: name -> value), or None."""
    for name, role in _MANAGEMENT_ENV:
        value = env.get(name, "").strip()
        if value and value.lower() != "void":
            return role
    capabilities = {c.strip().lower() for c in env.get("NVIDIA_DRIVER_CAPABILITIES", "").split(",") if c.strip()}
    if capabilities == {"utility"}:
        return UTILITY_ONLY_IMAGE
    return None


def role_for(exempt: frozenset[SystemRole], roles: tuple[Role, ...]) -> Role | None:
    """The first of `roles` that is one of `exempt` (a rule's `exempt_roles`)."""
    return next((role for role in roles if role.name in exempt), None)



# The mount signatures, for their admission form (gpulint/admission/exemptions.py).
MOUNT_ROLES = _MOUNT_ROLES
# The admission form (admission/exemptions.py) cannot test a path's structure the way
# hostpaths.nvidia_tree does; it recognises a driver installer by the NVIDIA trees nodes use:
# the GPU Operator's driver root, the classic prefix, GKE's and COS's directories, /opt/nvidia.
DRIVER_DIRS = ("/run/nvidia", "/usr/local/nvidia", "/home/kubernetes/bin/nvidia", "/opt/nvidia", "/var/lib/nvidia")
