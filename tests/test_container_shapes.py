"""Containers found by shape in custom resources the model does not know (podspecs)."""

from __future__ import annotations

from conftest import FIXTURES

from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import objects_in
from gpulint.model.podspecs import workload_of
from gpulint.model.workload import Workload


def _workloads() -> dict[str, Workload | None]:
    text = (FIXTURES / "workloads" / "container-shapes.yaml").read_text(encoding="utf-8")
    out = {}
    for doc in load_documents(text):
        assert isinstance(doc, Document)
        for obj in objects_in("shapes.yaml", doc):
            out[obj.ref.name] = workload_of(obj)
    return out


def test_singular_key_container_takes_the_enclosing_pod_fields() -> None:
    workload = _workloads()["gpu-runners"]
    assert workload is not None
    [pod] = workload.pod_specs
    assert pod.path == ("spec", "template", "spec")  # the mapping with nodeSelector
    assert pod.node_selector == {"nvidia.com/gpu.present": "true"}
    [runner] = pod.containers
    assert (runner.name, runner.path, runner.privileged) == ("runner", ("spec", "template", "spec", "runner"), True)
    assert runner.resources.limits == {"nvidia.com/gpu": 8}


def test_tekton_task_steps_step_template_and_sidecars_are_one_pod() -> None:
    workload = _workloads()["gpu-smoke"]
    assert workload is not None
    [pod] = workload.pod_specs
    assert pod.path == ("spec",)
    assert [(c.name, c.path) for c in pod.containers] == [
        ("dind", ("spec", "sidecars", 0)),             # read by the pod spec itself
        ("stepTemplate", ("spec", "stepTemplate")),
        ("smoke", ("spec", "steps", 0)),
    ]
    [volume] = pod.volumes
    assert volume.host_path == "/var/run/docker.sock"
    smoke = pod.containers[2]
    [script] = smoke.scripts
    assert (script.path, script.origin, script.interpreter) == (("spec", "steps", 0, "script"), "container script", "sh")
    assert "docker run --rm --gpus all" in script.text


def test_worker_in_a_nested_mapping_and_image_lists_are_not_containers() -> None:
    workloads = _workloads()
    worker = workloads["llm"]
    assert worker is not None
    [pod] = worker.pod_specs
    assert pod.path == ("spec", "deployment")
    assert [c.name for c in pod.containers] == ["worker"]
    assert workloads["mirror"] is None


def _workloads_of(path: str) -> dict[str, Workload | None]:
    text = (FIXTURES / path).read_text(encoding="utf-8")
    out = {}
    for doc in load_documents(text):
        assert isinstance(doc, Document)
        for obj in objects_in(path, doc):
            out[obj.ref.name] = workload_of(obj)
    return out


def test_a_components_declared_resources_belong_to_the_pods_its_operator_builds() -> None:
    """NVIDIA Dynamo declares a service's GPUs beside its pod spec (`resources.limits.gpu`),
    Kubeflow Trainer in the trainer itself (`resourcesPerNode`): the operator puts them on
    the containers, so the model notes them on the pod spec."""
    found = _workloads_of("rules/GPU005/good-evidence.yaml")
    dynamo, trainer = found["operator-requests"], found["per-node"]
    assert dynamo is not None and trainer is not None
    [pod] = dynamo.pod_specs
    assert pod.operator_resources_path == ("spec", "services", "Worker", "resources")
    assert pod.operator_resources == {"gpu": "2"}
    [pod] = trainer.pod_specs
    assert pod.operator_resources_path == ("spec", "trainer", "resourcesPerNode")
    assert pod.operator_resources == {"nvidia.com/gpu": 4}
    # A built-in kind's own container resources are not an operator's.
    components = found["components"]
    assert components is not None and components.pod_specs[0].operator_resources_path is None
