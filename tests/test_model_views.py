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
