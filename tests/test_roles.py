"""GPU infrastructure recognised by its role (knowledge/roles.py) and suppressed as a system component."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli, scan_json
from expectations import read

from gpulint.knowledge.gpu import settings_with
from gpulint.knowledge.roles import (
    CDI_WRITER,
    DEVICE_PLUGIN,
    DRA_PLUGINS,
    DRA_REGISTRATION,
    INSTALLER_DEV,
    INSTALLER_ROOT,
    NRI_PLUGIN,
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
    assert {(f["suppression"]["kind"], f["suppression"]["reason"]) for f in suppressed} == {
        ("system-component", REASONS[name])}


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
    ({"a": "/var/lib/kubelet/device-plugins"}, (DEVICE_PLUGIN,)),
    ({"a": "/var/lib/kubelet/device-plugins/kubelet.sock"}, (DEVICE_PLUGIN,)),
    ({"a": "//var/lib/kubelet/./device-plugins/"}, (DEVICE_PLUGIN,)),
    ({"a": "/var/lib/kubelet/plugins_registry", "b": "/var/lib/kubelet/plugins"}, (DRA_REGISTRATION, DRA_PLUGINS)),
    ({"a": "/run/nri"}, (NRI_PLUGIN,)),
    ({"a": "/var/run/nri/nri.sock"}, (NRI_PLUGIN,)),
    ({"a": "/etc/cdi"}, (CDI_WRITER,)),
    ({"a": "/var/run/cdi"}, (CDI_WRITER,)),
    ({"a": "/run/nvidia", "b": "/"}, (INSTALLER_ROOT,)),
    ({"a": "/usr/local/nvidia/lib64", "b": "/dev"}, (INSTALLER_DEV,)),
    ({"a": "/var/lib/kubelet/device-plugins", "b": "/etc/cdi"}, (DEVICE_PLUGIN, CDI_WRITER)),
    # Not a signature: the parent directories, a driver directory alone, /dev alone.
    ({"a": "/var/lib/kubelet"}, ()),
    ({"a": "/var/lib/kubelet/pod-resources"}, ()),
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
    """Every role is exempt from rule families only, never GPU002/GPU008 or request validity."""
    from gpulint.scan.registry import load_rules

    roles = (DEVICE_PLUGIN, DRA_REGISTRATION, DRA_PLUGINS, NRI_PLUGIN, CDI_WRITER, INSTALLER_ROOT, INSTALLER_DEV)
    listed = set().union(*(c.exempt for c in builtin_components()))
    rules = load_rules()
    for role in roles:
        exempt = {rule.id for rule in rules.values() if role.name in rule.exempt_roles}
        assert exempt and exempt <= listed - {"GPU002", "GPU008"}, role.name
        assert all(rule.startswith("GPU00") for rule in exempt)
    # Which rules each role is exempt from, as the rules declare it (Rule.exempt_roles).
    assert {role.name.value: sorted(rule.id for rule in rules.values() if role.name in rule.exempt_roles)
            for role in roles} == {
        "device plugin": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "DRA kubelet plugin": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "NRI plugin": ["GPU001", "GPU005", "GPU006"],
        "CDI spec writer": ["GPU001", "GPU003", "GPU005", "GPU006"],
        "driver installer": ["GPU001", "GPU006"],
    }


def test_suppressed_roles_leave_a_clean_exit(tmp_path: Path) -> None:
    """The whole role directory: only expected findings, exit code by the active ones."""
    code, report = scan_json(str(ROLES))
    active = sorted((Path(f["path"]).name, f["rule"], f["line"]) for f in report["findings"] if not f["suppressed"])
    assert code == 1
    assert active == sorted(("not-infrastructure.yaml", rule, line)
                            for rule, line, _col in read(ROLES / "not-infrastructure.yaml").active)
