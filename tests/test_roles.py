"""GPU infrastructure recognised by its role (knowledge/roles.py) and suppressed as a system component."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli, scan_json
from expectations import read

from gpulint.knowledge.gpu import settings_with
from gpulint.knowledge.roles import (
    CDI_BY_COMMAND,
    CDI_WRITER,
    DEVICE_DISCOVERER,
    DEVICE_INFO_WRITER,
    DEVICE_MANAGER_RUNTIME,
    DISCOVERER_RUNTIME,
    DEVICE_PLUGIN,
    DRA_PLUGINS,
    DRA_REGISTRATION,
    INSTALLER_DEV,
    INSTALLER_ROOT,
    MANAGEMENT_AGENT,
    MIG_STRATEGY_AGENT,
    NRI_PLUGIN,
    POD_RESOURCES_AGENT,
    RUNTIME_HOOK,
    pod_roles,
)
from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import objects_in
from gpulint.model.podspecs import workload_of
from gpulint.suppress.systemcomponents import builtin_components

ROLES = FIXTURES / "exemptions" / "roles"
REASONS = {
    "device-plugin.yaml": "system component: device plugin, by its kubelet device-plugin mount",
    "dra-kubelet-plugin.yaml": "system component: DRA kubelet plugin, by its kubelet plugin-registration mount",
    "nri-plugin.yaml": "system component: NRI plugin, by its NRI socket mount",
    "cdi-spec-writer.yaml": "system component: CDI spec writer, by its CDI spec directory mount",
    "driver-installer-root.yaml":
        "system component: driver installer, by its NVIDIA driver directory and host root mounts",
    "driver-installer-dev.yaml":
        "system component: driver installer, by its NVIDIA driver directory and host /dev mounts",
    "mig-manager.Dockerfile": "system component: GPU management image, by its NVIDIA_MIG_CONFIG_DEVICES ENV",
    "utility-only.Dockerfile":
        "system component: GPU management image, by its NVIDIA_DRIVER_CAPABILITIES=utility ENV (NVML only, no CUDA)",
    "gpu-node-agent.yaml": "system component: GPU node agent, by its kubelet pod-resources mount on GPU nodes",
    "device-discoverer.yaml":
        "system component: device discoverer, by its node-feature-discovery feature-file mount",
    "mig-strategy.yaml": "system component: GPU device manager, by its MIG strategy setting on a node agent",
    "runtime-hook.yaml":
        "system component: runtime hook installer, by its writable container-runtime configuration mount",
    "device-manager-runtime.yaml":
        "system component: device plugin on a node agent, by its kubelet device-plugin mount, "
        "which maps containers to devices through the runtime",
    "management-agent.yaml": "system component: GPU management agent, by its "
                             "NVIDIA_MIG_MONITOR_DEVICES/NVIDIA_MIG_CONFIG_DEVICES env on a node agent",
    "device-info-agent.yaml": {
        "GPU001": "system component: device discoverer, by its device-information directory mount",
        "GPU002": "system component: device discoverer on a node agent, by its device-information mount, "
                  "which maps containers to devices through the runtime"},
    "cdi-by-command.yaml":
        "system component: CDI spec writer, by its container toolkit command (`*-ctk cdi generate`) on a node agent",
}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_each_role_is_suppressed_with_its_reason(name: str) -> None:
    path = str(ROLES / name)
    expected = read(ROLES / name)
    assert expected.suppressed and not expected.active
    code, report = scan_json(path)
    assert code == 0
    suppressed = [f for f in report["findings"] if f["suppressed"]]
    assert sorted((f["rule"], f["line"], f["column"]) for f in suppressed) == expected.suppressed
    reasons = REASONS[name]   # one reason for the file, or one per rule
    assert {(f["rule"], f["suppression"]["kind"], f["suppression"]["reason"]) for f in suppressed} == {
        (f["rule"], "system-component", reasons if isinstance(reasons, str) else reasons[f["rule"]])
        for f in suppressed}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_no_default_exemptions_reports_every_role(name: str) -> None:
    expected = read(ROLES / name)
    code, report = scan_json("--no-default-exemptions", str(ROLES / name))
    assert code == 1
    assert report["summary"]["suppressed"] == 0
    assert sorted((f["rule"], f["line"], f["column"]) for f in report["findings"]) == expected.suppressed


def test_show_suppressed_lists_the_role() -> None:
    path = str(ROLES / "device-plugin.yaml")
    code, out, _err = run_cli("scan", path)
    assert code == 0 and "3 suppressed (--show-suppressed to list)" in out
    code, out, _err = run_cli("scan", "--show-suppressed", path)
    assert code == 0
    assert out.count("[suppressed (system-component): " + REASONS["device-plugin.yaml"] + "]") == 3


def _roles(text: str) -> list[tuple]:
    docs = [d for d in load_documents(text) if isinstance(d, Document)]
    workload = workload_of(next(objects_in("t.yaml", docs[0])))
    assert workload is not None
    return [pod_roles(workload, pod, settings_with()) for pod in workload.pod_specs]


def _daemonset(volumes: dict[str, str], limits: str = "{}") -> str:
    mounts = "".join(f"        - {{name: {n}, mountPath: /m/{n}}}\n" for n in volumes)
    declared = "".join(f"      - {{name: {n}, hostPath: {{path: '{p}'}}}}\n" for n, p in volumes.items())
    return ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: c\n        image: registry.example.com/x:1\n"
            f"        resources: {{limits: {limits}}}\n        volumeMounts:\n{mounts}      volumes:\n{declared}")


@pytest.mark.parametrize("volumes, roles", [
    ({"a": "/var/lib/kubelet/device-plugins"}, (DEVICE_PLUGIN, DEVICE_MANAGER_RUNTIME)),
    ({"a": "/var/lib/kubelet/device-plugins/kubelet.sock"}, (DEVICE_PLUGIN, DEVICE_MANAGER_RUNTIME)),
    ({"a": "//var/lib/kubelet/./device-plugins/"}, (DEVICE_PLUGIN, DEVICE_MANAGER_RUNTIME)),
    ({"a": "/var/lib/kubelet/plugins_registry", "b": "/var/lib/kubelet/plugins"}, (DRA_REGISTRATION, DRA_PLUGINS)),
    ({"a": "/run/nri"}, (NRI_PLUGIN,)),
    ({"a": "/var/run/nri/nri.sock"}, (NRI_PLUGIN,)),
    ({"a": "/etc/cdi"}, (CDI_WRITER,)),
    ({"a": "/var/run/cdi"}, (CDI_WRITER,)),
    ({"a": "/run/nvidia", "b": "/"}, (INSTALLER_ROOT,)),
    ({"a": "/usr/local/nvidia/lib64", "b": "/dev"}, (INSTALLER_DEV,)),
    ({"a": "/var/lib/kubelet/device-plugins", "b": "/etc/cdi"}, (DEVICE_PLUGIN, CDI_WRITER, DEVICE_MANAGER_RUNTIME)),
    ({"a": "/etc/kubernetes/node-feature-discovery/features.d"}, (DEVICE_DISCOVERER, DISCOVERER_RUNTIME)),
    ({"a": "/var/run/koordlet/xpu-device-infos"}, (DEVICE_INFO_WRITER, DISCOVERER_RUNTIME)),
    ({"a": "/var/lib/device-info"}, (DEVICE_INFO_WRITER, DISCOVERER_RUNTIME)),
    ({"a": "/var/lib/deviceinformation-cache"}, ()),
    ({"a": "/var/lib/kubelet/pod-resources", "b": "/dev/nvidia0"}, (POD_RESOURCES_AGENT,)),
    ({"a": "/var/lib/kubelet/pod-resources", "b": "/usr/local/nvidia-docker/volumes/nvidia_driver/1"},
     (POD_RESOURCES_AGENT,)),
    ({"a": "/etc/containerd"}, (RUNTIME_HOOK,)),
    ({"a": "/usr/share/containers/oci/hooks.d"}, (RUNTIME_HOOK,)),
    ({"a": "/etc/runtime/hookserver.d/"}, (RUNTIME_HOOK,)),
    ({"a": "/etc/runtime"}, ()),
    # Not a signature: the parent directories, a driver directory alone, /dev alone.
    ({"a": "/var/lib/kubelet"}, ()),
    ({"a": "/var/lib/kubelet/pod-resources"}, ()),         # on any node: monitoring, not GPUs
    ({"a": "/var/lib/kubelet/pod-resources", "b": "/dev"}, ()),
    ({"a": "/etc/kubernetes/node-feature-discovery"}, ()),  # NFD's configuration, not its feature files
    ({"a": "/usr/local/nvidia"}, ()),
    ({"a": "/dev"}, ()),
    ({"a": "/run"}, ()),
    ({"a": "/var/lib/kubelet/device-plugins-backup"}, ()),
])
def test_role_signatures(volumes: dict[str, str], roles: tuple) -> None:
    assert _roles(_daemonset(volumes)) == [roles]


@pytest.mark.parametrize("limits", ["{nvidia.com/gpu: 1}", "{nvidia.com/mig-1g.10gb: 2}"])
def test_a_pod_requesting_gpus_has_no_role(limits: str) -> None:
    assert _roles(_daemonset({"a": "/var/lib/kubelet/device-plugins"}, limits)) == [()]
    assert _roles(_daemonset({"a": "/run/nvidia", "b": "/"}, limits)) == [()]


def test_roles_are_never_wider_than_the_list() -> None:
    """Every role is exempt from rule families only, never GPU008 or request validity, and from GPU002
    only when its listed components reach the runtime (the container toolkit, HAMi's plugin and monitor)."""
    from gpulint.scan.registry import load_rules

    roles = (DEVICE_PLUGIN, DRA_REGISTRATION, DRA_PLUGINS, NRI_PLUGIN, CDI_WRITER, INSTALLER_ROOT, INSTALLER_DEV,
             POD_RESOURCES_AGENT, DEVICE_DISCOVERER, MIG_STRATEGY_AGENT, CDI_BY_COMMAND)
    listed = set().union(*(c.exempt for c in builtin_components()))
    rules = load_rules()
    for role in roles:
        exempt = {rule.id for rule in rules.values() if role.name in rule.exempt_roles}
        assert exempt and exempt <= listed - {"GPU002", "GPU008"}, role.name
        assert all(rule.startswith("GPU00") for rule in exempt)

    def exempt_from(role):
        return {rule.id for rule in rules.values() if role.name in rule.exempt_roles}

    toolkit = next(c for c in builtin_components() if c.name == "NVIDIA container toolkit")
    assert exempt_from(RUNTIME_HOOK) <= toolkit.exempt
    hami = next(c for c in builtin_components() if c.name.startswith("HAMi"))
    for role in (DEVICE_MANAGER_RUNTIME, DISCOVERER_RUNTIME, MANAGEMENT_AGENT):   # vGPU managers and monitors
        assert exempt_from(role) <= hami.exempt, role.name
    # Which rules each role is exempt from, as the rules declare it (Rule.exempt_roles).
    assert {role.name.value: sorted(exempt_from(role)) for role in (*roles, RUNTIME_HOOK, MANAGEMENT_AGENT,
                                                                     DEVICE_MANAGER_RUNTIME, DISCOVERER_RUNTIME)} == {
        "device plugin": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "DRA kubelet plugin": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "NRI plugin": ["GPU001", "GPU005", "GPU006"],
        "CDI spec writer": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "driver installer": ["GPU001", "GPU006"],
        "GPU node agent": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "device discoverer": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "GPU device manager": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "runtime hook installer": ["GPU001", "GPU002", "GPU003", "GPU005", "GPU006"],
        "GPU management agent": ["GPU001", "GPU002", "GPU003", "GPU005", "GPU006"],
        "device plugin on a node agent": ["GPU002"],
        "device discoverer on a node agent": ["GPU002"],
    }


@pytest.mark.parametrize("path", ["/etc/containerd", "/etc/kubernetes/node-feature-discovery/features.d",
                                  "/var/run/koordlet/xpu-device-infos"])
def test_a_read_only_mount_writes_nothing(path: str) -> None:
    """A runtime's configuration or device information read, not written, shows no role (the
    NFD worker reads the feature files GPU feature discovery writes)."""
    text = _daemonset({"a": path}).replace("mountPath: /m/a}", "mountPath: /m/a, readOnly: true}")
    assert _roles(text) == [()]


def test_mig_strategy_makes_a_node_agent_a_device_manager() -> None:
    text = _daemonset({"a": "/usr/local/nvidia"}).replace(
        "        resources:", "        env: [{name: MIG_STRATEGY, value: mixed}]\n        resources:")
    assert [role.name.value for role in _roles(text)[0]] == ["GPU device manager"]
    assert _roles(text.replace("kind: DaemonSet", "kind: Deployment")) == [()]


def test_only_a_node_agent_shows_a_role_without_a_node_mount() -> None:
    """pod_roles skips a pod that is no DaemonSet and mounts no node path: its roles all need one.
    A DaemonSet shows roles without any (its MIG strategy); any other pod by its mounts alone."""
    text = _daemonset({}).replace(
        "        resources:", "        env: [{name: MIG_STRATEGY, value: mixed}]\n        resources:")
    assert _roles(text) == [(MIG_STRATEGY_AGENT,)]
    assert _roles(text.replace("kind: DaemonSet", "kind: Deployment")) == [()]
    plugin = _daemonset({"a": "/var/lib/kubelet/device-plugins", "b": "/etc/containerd"})
    assert _roles(plugin.replace("kind: DaemonSet", "kind: Deployment")) == [(DEVICE_PLUGIN, RUNTIME_HOOK)]
    unmounted = plugin.replace("        - {name: a, mountPath: /m/a}\n        - {name: b, mountPath: /m/b}\n", "")
    assert _roles(unmounted.replace("kind: DaemonSet", "kind: Deployment")) == [()]


def test_an_active_finding_on_a_node_agent_says_how_to_exempt_it() -> None:
    """One line naming the rule, the object and a reason to fill in; none on a workload."""
    code, report = scan_json(str(ROLES / "not-infrastructure.yaml"))
    assert code == 1
    hints = {(f["rule"], f["line"]): f["message"].partition(" [GPU infrastructure")[2]
             for f in report["findings"] if not f["suppressed"]}
    assert hints[("GPU002", 97)] == (" (device plugin)? exempt it in .gpulint.yaml: exemptions: [{rules: [GPU002], "
                                     "kind: Deployment, name: plugin-with-runtime-socket, reason: \"<why it needs "
                                     "this>\"}]]")
    assert hints[("GPU001", 70)] == (" (node agent)? exempt it in .gpulint.yaml: exemptions: [{rules: [GPU001], "
                                     "kind: DaemonSet, name: unmounted, reason: \"<why it needs this>\"}]]")
    assert hints[("GPU001", 43)] == ""     # a Deployment without a role: a workload


def test_a_daemonset_that_does_not_work_on_the_node_gets_no_hint(tmp_path: Path) -> None:
    """A burn-in DaemonSet setting NVIDIA_VISIBLE_DEVICES mounts nothing of the node: a bypass to
    fix, not infrastructure to exempt."""
    path = tmp_path / "burn.yaml"
    path.write_text("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: burn}\nspec:\n  template:\n"
                    "    spec:\n      containers:\n      - name: burn\n        image: registry.example.com/burn:1\n"
                    "        env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n")
    _code, report = scan_json("--no-cache", str(path))
    [finding] = report["findings"]
    assert finding["rule"] == "GPU003" and "exempt it" not in finding["message"]
    code, report = scan_json(str(FIXTURES / "rules" / "GPU002" / "bad-runtime-sockets.yaml"))
    unmounted = next(f["message"] for f in report["findings"] if f["line"] == 93)
    assert "no container mounts it yet, remove it" in unmounted and "exempt it" not in unmounted
    assert all("\n" not in f["message"] for f in report["findings"])


def test_suppressed_roles_leave_a_clean_exit(tmp_path: Path) -> None:
    """The whole role directory: only expected findings, exit code by the active ones."""
    code, report = scan_json(str(ROLES))
    active = sorted((Path(f["path"]).name, f["rule"], f["line"]) for f in report["findings"] if not f["suppressed"])
    assert code == 1
    assert active == sorted(("not-infrastructure.yaml", rule, line)
                            for rule, line, _col in read(ROLES / "not-infrastructure.yaml").active)


def test_the_hinted_exemption_suppresses_the_finding(tmp_path: Path) -> None:
    """The line the hint gives, pasted into .gpulint.yaml as it stands (the reason filled in)."""
    _code, report = scan_json(str(ROLES / "not-infrastructure.yaml"))
    message = next(f["message"] for f in report["findings"] if (f["rule"], f["line"]) == ("GPU002", 97))
    line = message.partition("exempt it in .gpulint.yaml: ")[2][:-1]
    config = tmp_path / ".gpulint.yaml"
    config.write_text(line.replace("<why it needs this>", "our device plugin restarts the runtime") + "\n")
    _code, report = scan_json("--config", str(config), str(ROLES / "not-infrastructure.yaml"))
    finding = next(f for f in report["findings"] if (f["rule"], f["line"]) == ("GPU002", 97))
    assert finding["suppressed"] and finding["suppression"]["kind"] == "config"
