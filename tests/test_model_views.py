"""The typed views (model/workload.py): what a container's fields hold, and the type problems
(GPU000) a field of the wrong type records, absent fields recording none."""

from __future__ import annotations

import pytest

from gpulint.model.workload import Problems, build_container

PATH = ("spec", "containers", 0)


@pytest.mark.parametrize("data, limits, requests, nulls, claims, problems", [
    ({}, {}, {}, ((), ()), [], []),
    ({"resources": None}, {}, {}, ((), ()), [], []),
    ({"resources": {}}, {}, {}, ((), ()), [], []),
    ({"resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2", "memory": 1.5}, "requests": {"cpu": "1"}}},
     {"nvidia.com/gpu": 1, "cpu": "2", "memory": 1.5}, {"cpu": "1"}, ((), ()), [], []),
    ({"resources": {"limits": {"nvidia.com/gpu": None}, "requests": {"a": None, "b": "1"}}},
     {}, {"b": "1"}, (("nvidia.com/gpu",), ("a",)), [], []),
    ({"resources": {"limits": {"nvidia.com/gpu": True, "x": [1], "cpu": 1}, "claims": [{"name": "gpu"}]}},
     {"cpu": 1}, {}, ((), ()), [{"name": "gpu"}],
     [(PATH + ("resources", "limits", "nvidia.com/gpu"),
       "limits[nvidia.com/gpu] must be a string or an integer or a number, not a boolean"),
      (PATH + ("resources", "limits", "x"), "limits[x] must be a string or an integer or a number, not a list")]),
    ({"resources": {"limits": [1], "requests": "1", "claims": {"name": "gpu"}}}, {}, {}, ((), ()), [],
     [(PATH + ("resources", "limits"), "resources.limits must be a mapping, not a list"),
      (PATH + ("resources", "requests"), "resources.requests must be a mapping, not a string"),
      (PATH + ("resources", "claims"), "resources.claims must be a list, not a mapping")]),
    ({"resources": "nvidia.com/gpu: 1"}, {}, {}, ((), ()), [],
     [(PATH + ("resources",), "resources must be a mapping, not a string")]),
])
def test_resources(data: dict, limits: dict, requests: dict, nulls: tuple, claims: list, problems: list) -> None:
    found = Problems()
    resources = build_container({"name": "c", "image": "x", **data}, PATH, "container", found).resources
    assert (resources.limits, resources.requests, (resources.null_limits, resources.null_requests),
            resources.claims, resources.path) == (limits, requests, nulls, claims, PATH + ("resources",))
    assert [(p.path, p.message) for p in found] == problems


@pytest.mark.parametrize("security, privileged, problems", [
    (None, None, []),
    ({"privileged": True}, True, []),
    ({"privileged": "true"}, None,
     [(PATH + ("securityContext", "privileged"), "privileged must be a boolean, not a string")]),
    ([{"privileged": True}], None, [(PATH + ("securityContext",), "securityContext must be a mapping, not a list")]),
])
def test_security_context(security: object, privileged: bool | None, problems: list) -> None:
    found = Problems()
    container = build_container({"name": "c", "image": "x", "securityContext": security}, PATH, "container", found)
    assert container.privileged == privileged
    assert container.security_context == (security if isinstance(security, dict) else {})
    assert [(p.path, p.message) for p in found] == problems


def _pod(spec: dict, fallback: dict | None = None) -> tuple:
    from gpulint.model.objects import KubeObject, ObjectRef
    from gpulint.model.workload import build_pod_spec

    data = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "spec": {**(fallback or {}), "templates": [spec]}}
    ref = ObjectRef("argoproj.io/v1alpha1", "Workflow", "w", None)
    obj = KubeObject("f.yaml", None, (), data, ref, None, None)  # type: ignore[arg-type]
    found = Problems()
    pod = build_pod_spec(obj, ("spec", "templates", 0), "spec.templates[0]", found,
                         fallback=data["spec"] if fallback is not None else None,
                         fallback_rel=("spec",) if fallback is not None else None)
    assert pod is not None
    return ((pod.host_pid, pod.host_network, pod.host_ipc, pod.runtime_class_name, pod.node_selector, pod.affinity,
             pod.tolerations, pod.resource_claims), [(p.path, p.message) for p in found])


SPEC = ("spec", "templates", 0)
NONE_SET = (False, False, False, None, {}, {}, [], [])


@pytest.mark.parametrize("spec, fallback, fields, problems", [
    ({"containers": []}, None, NONE_SET, []),
    ({"containers": []}, {"hostPID": True}, (True, False, False, None, {}, {}, [], []), []),
    ({"hostPID": False}, {"hostPID": True, "nodeSelector": {"a": "b"}},
     (False, False, False, None, {"a": "b"}, {}, [], []), []),
    ({"hostNetwork": True, "hostIPC": True, "runtimeClassName": "nvidia", "affinity": {"x": 1},
      "tolerations": [{"key": "k"}], "resourceClaims": [{"name": "gpu"}], "nodeSelector": {"gpu": "yes"}}, None,
     (False, True, True, "nvidia", {"gpu": "yes"}, {"x": 1}, [{"key": "k"}], [{"name": "gpu"}]), []),
    ({"hostPID": "true", "nodeSelector": {"nvidia.com/gpu.present": True, "b": None, "c": 1},
      "tolerations": {"key": "k"}, "runtimeClassName": 1}, None,
     (False, False, False, None, {"nvidia.com/gpu.present": True, "b": None, "c": 1}, {}, [], []),
     [(SPEC + ("nodeSelector", "nvidia.com/gpu.present"), "nodeSelector[nvidia.com/gpu.present] must be a string, "
                                                           "not a boolean"),
      (SPEC + ("nodeSelector", "c"), "nodeSelector[c] must be a string, not an integer"),
      (SPEC + ("hostPID",), "hostPID must be a boolean, not a string"),
      (SPEC + ("runtimeClassName",), "runtimeClassName must be a string, not an integer"),
      (SPEC + ("tolerations",), "tolerations must be a list, not a mapping")]),
    ({}, {"nodeSelector": {"a": False}, "hostIPC": "yes", "affinity": []},
     (False, False, False, None, {"a": False}, {}, [], []),
     [(("spec", "nodeSelector", "a"), "nodeSelector[a] must be a string, not a boolean"),
      (("spec", "hostIPC"), "hostIPC must be a boolean, not a string"),
      (("spec", "affinity"), "affinity must be a mapping, not a list")]),
])
def test_pod_level_fields(spec: dict, fallback: dict | None, fields: tuple, problems: list) -> None:
    """Pod-level fields of the spec, else of the enclosing mapping (an Argo Workflow's spec for its
    templates), with their type problems in order (the nodeSelector's values right after it)."""
    got_fields, got_problems = _pod(spec, fallback)
    assert got_fields == fields
    assert got_problems == problems
