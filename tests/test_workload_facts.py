"""Facts the rules share per workload (resources, commands, env setters, hostPath volumes): each
agrees with the per-container answer it stands for, and the shortcuts of the common path
(nothing to report) leave the containers that matter in, in order."""

from __future__ import annotations

from gpulint.knowledge.commands import commands_named, workload_commands_named
from gpulint.knowledge.envresolve import UNSET, env_setters, resolve
from gpulint.knowledge.gpu import VISIBLE_DEVICES, gpu_node_targeting, requests_gpu, settings_with
from gpulint.knowledge.hostpaths import host_path_volumes
from gpulint.knowledge.resources import (
    resource_names,
    unknown_gpu_like_entries,
    unknown_gpu_like_entries_of,
    validated_pairs,
    validated_pairs_of,
)
from gpulint.load.yamlload import Document, load_documents
from gpulint.model.index import ConfigIndex
from gpulint.model.objects import objects_in
from gpulint.model.podspecs import workload_of
from gpulint.model.workload import Workload

_JOB = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: scripts, namespace: ml}
data:
  run.sh: |
    chroot /host true
---
apiVersion: v1
kind: ConfigMap
metadata: {name: env, namespace: ml}
data:
  NVIDIA_VISIBLE_DEVICES: all
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ml}
spec:
  template:
    spec:
      initContainers:
      - name: plain
        image: busybox
        command: [sh, -c, "echo hi"]
        resources: {limits: {cpu: "1", memory: 1Gi}}
      containers:
      - name: typo
        image: busybox
        command: [python, -m, train]
        env: [{name: A, value: "1"}, {name: NVIDIA_VISIBLE_DEVICES, value: all}]
        resources: {limits: {nvidia.com/gup: 1, cpu: "1"}}
      - name: gpu
        image: busybox
        command: [nsenter, -t, "1", --, sh]
        envFrom: [{configMapRef: {name: env}}]
        resources: {limits: {nvidia.com/gpu: 2}, requests: {nvidia.com/gpu: 1, cpu: "1"}}
        volumeMounts: [{name: scripts, mountPath: /s}, {name: shadowed, mountPath: /t}, {name: dev, mountPath: /d}]
      - name: other
        image: busybox
        args: [serve]
        resources: {requests: {nvidia.com/gpu: 1}}
        volumeMounts: [{name: scripts, mountPath: /s}]
      volumes:
      - {name: scripts, configMap: {name: scripts}}
      - {name: shadowed, emptyDir: {}}
      - {name: shadowed, configMap: {name: scripts}}
      - {name: dev, hostPath: {path: /dev/nvidia0}}
"""


def _workload(text: str = _JOB) -> tuple[Workload, ConfigIndex]:
    objects = [obj for doc in load_documents(text) if isinstance(doc, Document) for obj in objects_in("j.yaml", doc)]
    index = ConfigIndex()
    workload = None
    for obj in objects:
        if obj.ref.kind == "ConfigMap":
            index.add(obj)
        else:
            workload = workload_of(obj)
    assert workload is not None
    return workload, index


def test_resource_facts_are_the_containers_answers_in_order() -> None:
    workload, _index = _workload()
    settings = settings_with()
    names = resource_names(settings)
    validated = validated_pairs_of(workload, settings)
    assert [(c.name, [(p.name, p.limit is not None, p.request is not None) for p in pairs])
            for c, pairs in validated] == [("gpu", [("nvidia.com/gpu", True, True)]),
                                           ("other", [("nvidia.com/gpu", False, True)])]
    assert [(c, [p.name for p in pairs]) for c, pairs in validated] == [
        (c, [p.name for p in validated_pairs(c, names)]) for _pod, c in workload.containers()
        if validated_pairs(c, names)]
    unknown = unknown_gpu_like_entries_of(workload, settings)
    assert [(c.name, [(e.name, e.section, e.path) for e in entries]) for c, entries in unknown] == [
        ("typo", [("nvidia.com/gup", "limits",
                   ("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gup"))])]
    assert [e.name for e in unknown_gpu_like_entries(unknown[0][0], names)] == ["nvidia.com/gup"]
    assert validated_pairs_of(workload, settings) is validated   # once per workload and settings
    # Other settings: judged again (nvidia.com/gpu overcommittable is not validated).
    assert validated_pairs_of(workload, settings_with({"overcommittable-resources": ["nvidia.com/gpu"]})) == ()


def test_workload_commands_named_is_each_containers_commands_in_turn() -> None:
    workload, index = _workload()
    for names in ({"nsenter", "chroot"}, {"chroot"}, {"sh", "echo"}, {"python"}, {"docker"}, set()):
        expected = [(pod, container, command.argv, command.source)
                    for pod, container in workload.containers()
                    for command in commands_named(workload, pod, container, index, frozenset(names))]
        found = [(pod, container, command.argv, command.source)
                 for pod, container, command in workload_commands_named(workload, index, frozenset(names))]
        assert found == expected
    chroots = [(container.name, command.origin)
               for _pod, container, command in workload_commands_named(workload, index, frozenset({"chroot"}))]
    # The script is mounted at /s by both containers; the volume `shadowed` is an emptyDir
    # first (Kubernetes reads the first volume of a name), so nothing at /t is a script.
    assert chroots == [("gpu", "ConfigMap scripts, key run.sh"), ("other", "ConfigMap scripts, key run.sh")]
    assert list(workload_commands_named(workload, index, frozenset({"docker"}))) == []


def test_env_setters_leave_out_only_containers_resolve_finds_unset() -> None:
    workload, index = _workload()
    setters = env_setters(workload, VISIBLE_DEVICES)
    assert [container.name for container in setters] == ["typo", "gpu"]
    for pod, container in workload.containers():
        resolution = resolve(VISIBLE_DEVICES, container, pod, workload.namespace, index)
        assert (container in setters) == (resolution is not UNSET)
        if container in setters:
            assert setters[container] is pod
    assert [container.name for container in env_setters(workload, "A")] == ["typo", "gpu"]   # envFrom may set any
    assert env_setters(workload, VISIBLE_DEVICES) is setters


def test_host_path_volumes_listed_once_per_workload() -> None:
    workload, _index = _workload()
    volumes = host_path_volumes(workload)
    assert [(v.host_path, [(c.name, m.mount_path) for _p, c, m in v.mounts]) for v in volumes] == [
        ("/dev/nvidia0", [("gpu", "/d")])]
    assert host_path_volumes(workload) is volumes


def test_requests_and_targeting_without_pod_fields() -> None:
    workload, _index = _workload()
    settings = settings_with()
    assert [(c.name, requests_gpu(c, p, settings)) for p, c in workload.containers()] == [
        ("plain", False), ("typo", False), ("gpu", True), ("other", True)]
    pod = workload.pod_specs[0]
    assert gpu_node_targeting(pod, settings) is None
    annotated, _index = _workload(_JOB.replace("  template:\n    spec:\n",
                                               "  template:\n    metadata:\n      annotations: {gpu-fraction: '0.5'}\n"
                                               "    spec:\n      nodeSelector: {nvidia.com/gpu.present: 'true'}\n"))
    pod = annotated.pod_specs[0]
    assert gpu_node_targeting(pod, settings) == "nodeSelector nvidia.com/gpu.present"
    assert [(c.name, requests_gpu(c, p, settings)) for p, c in annotated.containers()] == [
        ("plain", True), ("typo", True), ("gpu", True), ("other", True)]
