"""Evaluate an exported policy the way the API server (or Kyverno) does, with a CEL engine from PyPI.

`common-expression-language` (import `cel`) evaluates CEL over Python data. The
policies use only standard CEL (`matches`, `startsWith`, `contains`, `exists`,
`all`, `filter`, `map`, `has`, `size`, `type`) and raw strings, no Kubernetes
library function, so nothing needs to be added to the engine.

A policy here is what both formats share: match conditions, variables (in
order, each may use the earlier ones) and validations (expression true: allowed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import cel

BUILTIN_GROUPS = ("", "apps", "batch", "extensions")
POD_KINDS = ("Pod", "PodTemplate", "ReplicationController", "ReplicaSet", "Deployment", "StatefulSet",
             "DaemonSet", "Job", "CronJob")


@dataclass
class Compiled:
    conditions: list[tuple[str, Any]]
    variables: list[tuple[str, Any]]
    validations: list[tuple[str, Any, Any]]     # (rule id, expression, messageExpression or None)
    messages: dict[str, str] = field(default_factory=dict)


def rule_of(message: str) -> str:
    return message.split(" ", 1)[0]


def compile_vap(policy: dict) -> Compiled:
    spec = policy["spec"]
    return _compile(spec.get("matchConditions", []), spec["variables"], spec["validations"])


def compile_kyverno(rule: dict) -> Compiled:
    cel_part = rule["validate"]["cel"]
    return _compile(rule.get("celPreconditions", []), cel_part["variables"], cel_part["expressions"])


def _compile(conditions: list, variables: list, validations: list) -> Compiled:
    out = Compiled([(c["name"], cel.compile(c["expression"])) for c in conditions],
                   [(v["name"], cel.compile(v["expression"])) for v in variables], [])
    for item in validations:
        rid = rule_of(item["message"])
        message = item.get("messageExpression")
        out.validations.append((rid, cel.compile(item["expression"]), cel.compile(message) if message else None))
        out.messages[rid] = item["message"]
    return out


def matched(obj: Any) -> bool:
    """Whether the policy's resource rules match the object (a built-in pod-template kind)."""
    if not isinstance(obj, dict) or obj.get("kind") not in POD_KINDS:
        return False
    api = obj.get("apiVersion")
    group = api.rpartition("/")[0] if isinstance(api, str) else None
    return group in BUILTIN_GROUPS


@dataclass
class Verdict:
    denied: dict[str, str]          # rule id -> message
    error: str | None = None        # evaluation failed (failurePolicy Fail: the request is refused)
    skipped: bool = False           # a match condition was false


def as_admitted(value: Any) -> Any:
    """The object as admission sees it: the API server decodes manifests into typed objects, so a
    field written as null (`envFrom:` with nothing after it) is absent."""
    if isinstance(value, dict):
        return {k: as_admitted(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [as_admitted(v) for v in value]
    return value


def evaluate(policies: Iterable[Compiled], obj: dict, namespace: str) -> Verdict:
    verdict = Verdict({})
    obj = as_admitted(obj)
    for policy in policies:
        context = {"object": obj, "namespaceObject": {"metadata": {"name": namespace}}, "variables": {}}
        try:
            if not all(program.execute(context) for _name, program in policy.conditions):
                verdict.skipped = True
                continue
            values: dict[str, Any] = {}
            for name, program in policy.variables:
                values[name] = program.execute({**context, "variables": values})
            context["variables"] = values
            for rid, program, message in policy.validations:
                if program.execute(context) is not True:
                    verdict.denied[rid] = message.execute(context) if message is not None else policy.messages[rid]
        except Exception as error:  # an evaluation error: the API server refuses (failurePolicy Fail)
            verdict.error = f"{type(error).__name__}: {error}"
    return verdict
