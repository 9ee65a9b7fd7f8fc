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


@pytest.mark.parametrize("argv, script", [
    (["sh", "-c", "echo a"], ("echo a", 2, "sh")),
    (["/bin/bash", "-c", "echo a", "x"], ("echo a", 2, "bash")),
    (["sh", "-c", "--", "echo a"], ("echo a", 3, "sh")),
    (["sh", "-ec", "echo a"], ("echo a", 2, "sh")),
    (["busybox", "sh", "-c", "echo a"], ("echo a", 3, "sh")),
    (["env", "bash", "-c", "echo a"], ("echo a", 3, "bash")),
    (["busybox", "-c", "echo a"], None),   # busybox is a wrapper: `-c` is no shell
    (["python", "-c", "print(1)"], None),
    (["sh", "-c"], None),
    (["sh", "run.sh", "-c", "x"], None),
])
def test_shell_scripts(argv: list, script: tuple | None) -> None:
    """The script of `sh -c SCRIPT` and its spellings, at its own argv word."""
    container = build_container({"name": "c", "image": "x", "command": argv}, PATH, "container", Problems())
    found = [(s.text, s.path, s.interpreter) for s in container.scripts]
    assert found == ([] if script is None else [(script[0], PATH + ("command", script[1]), script[2])])


def test_argv_paths() -> None:
    """Each word of command and args has its own path, however many words there are."""
    words = [f"w{i}" for i in range(40)]
    container = build_container({"name": "c", "image": "x", "command": ["run", "a"], "args": words}, PATH,
                                "container", Problems())
    (main,) = container.execs
    assert main.argv == ("run", "a", *words)
    assert main.paths == (PATH + ("command", 0), PATH + ("command", 1), *(PATH + ("args", i) for i in range(40)))


def _built_pod(data: dict, rel: tuple) -> object:
    from gpulint.model.objects import KubeObject, ObjectRef
    from gpulint.model.workload import build_pod_spec

    obj = KubeObject("f.yaml", None, ("items", 0), data, ObjectRef("v1", "X", "x", None),  # type: ignore[arg-type]
                     None, None)
    return build_pod_spec(obj, rel, "label", Problems())


@pytest.mark.parametrize("data, rel, meta_path, annotations", [
    ({"spec": {"template": {"metadata": {"annotations": {"a": "b"}}, "spec": {"containers": []}}}},
     ("spec", "template", "spec"), ("items", 0, "spec", "template", "metadata"), {"a": "b"}),
    ({"spec": {"template": {"spec": {"containers": []}}}}, ("spec", "template", "spec"), None, {}),
    ({"spec": {"template": {"metadata": "x", "spec": {"containers": []}}}}, ("spec", "template", "spec"), None, {}),
    ({"spec": {"template": {"metadata": {}, "spec": {"containers": []}}}},
     ("spec", "template", "spec"), ("items", 0, "spec", "template", "metadata"), {}),
    ({"t": [{"metadata": {"annotations": {"a": 1}}, "containers": []}]}, ("t", 0), ("items", 0, "t", 0, "metadata"),
     {"a": 1}),
    ({"t": [{"containers": []}]}, ("t", 0), None, {}),
    ({"spec": {"containers": [], "metadata": {"annotations": {"a": "b"}}}}, ("spec",), None, {}),
])
def test_pod_metadata(data: dict, rel: tuple, meta_path: tuple | None, annotations: dict) -> None:
    """A pod template's metadata sits beside its `spec`; a template without a `spec` key keeps it inside."""
    pod = _built_pod(data, rel)
    assert (pod.metadata_path, pod.annotations) == (meta_path, annotations)  # type: ignore[attr-defined]


def test_container_lists_in_order() -> None:
    spec = {"sidecars": [{"name": "s"}], "containers": [{"name": "c"}], "ephemeralContainers": [{"name": "e"}],
            "initContainers": [{"name": "i"}]}
    pod = _built_pod({"spec": spec}, ("spec",))
    assert [(c.name, c.role, c.path) for c in pod.containers] == [  # type: ignore[attr-defined]
        ("i", "init", ("items", 0, "spec", "initContainers", 0)), ("c", "container", ("items", 0, "spec", "containers", 0)),
        ("e", "ephemeral", ("items", 0, "spec", "ephemeralContainers", 0)),
        ("s", "container", ("items", 0, "spec", "sidecars", 0))]
    only = _built_pod({"spec": {"containers": [{"name": "c"}]}}, ("spec",))
    assert [c.name for c in only.containers] == ["c"]  # type: ignore[attr-defined]
    assert _built_pod({"spec": {"template": ["x"]}}, ("spec", "template", "spec")) is None
