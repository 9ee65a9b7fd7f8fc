"""The exported policy: ValidatingAdmissionPolicy + binding, or a Kyverno ClusterPolicy, as data.

One validation per exported rule, built from the rule's `admission` form
(api.Admission) and the exemptions in force. A validation's expression is true
when the object is allowed, so it is the negation of the rule's condition:

    !variables.containers.exists(c, <condition on c> && !<c is exempt>)
    !(<condition on the pod> && !<every container is exempt, or the pod's role is>)
    !variables.hostVolumes.exists(v, <condition on v> && !<its first mounting container is exempt>)

Rules whose configured severity is below `fail-on` are bound with Warn (a second
policy and binding), so that the cluster refuses what CI fails on and warns about
the rest, as the linter does.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from gpulint.admission.exemptions import (
    config_exemptions,
    role_exemptions,
    system_component,
    system_components,
)
from gpulint.api import Admission, Rule, Severity
from gpulint.config.settings import Exemption
from gpulint.knowledge.celforms import POD_KINDS, cel_string, has_pod_spec, knowledge, shared_variables
from gpulint.record import record, set_field
from gpulint.suppress.systemcomponents import SystemComponent

NAME = "gpulint-gpu-scheduling"
EXEMPT_LABEL = "gpulint.io/exempt"
ACTIONS = {"deny": "Deny", "warn": "Warn", "audit": "Audit"}
FORMATS = ("vap", "kyverno")

# The resources the policy matches: Pods (and `kubectl debug`'s ephemeral containers) and
# every built-in kind with a pod template.
RESOURCE_RULES = (
    ("", ("pods", "pods/ephemeralcontainers", "podtemplates", "replicationcontrollers")),
    ("apps", ("daemonsets", "deployments", "replicasets", "statefulsets")),
    ("batch", ("cronjobs", "jobs")),
)


@record(eq=True, frozen=True, repr=True)
class Exported:
    """A rule as exported: its form and severity."""

    __slots__ = ("rule", "form", "severity")
    rule: Rule
    form: Admission
    severity: Severity

    def __init__(self, rule: Rule, form: Admission, severity: Severity) -> None:
        set_field(self, "rule", rule)
        set_field(self, "form", form)
        set_field(self, "severity", severity)


@record(eq=True, repr=True)
class Plan:
    """What the export is made from: the configuration in force."""

    __slots__ = ("rules", "options", "severities", "settings", "exemptions", "components", "roles", "fail_on")
    rules: Sequence[Rule]                                 # the enabled rules
    options: Mapping[str, Mapping[str, Any]]              # per rule id, configured
    severities: Mapping[str, Severity]
    settings: Mapping[str, Any]
    exemptions: Sequence[Exemption]
    components: Sequence[SystemComponent]                 # the allowlist in force
    roles: bool                                           # recognition by role (default exemptions)
    fail_on: str

    def __init__(self, rules: Sequence[Rule], options: Mapping[str, Mapping[str, Any]] | None = None,
                 severities: Mapping[str, Severity] | None = None, settings: Mapping[str, Any] | None = None,
                 exemptions: Sequence[Exemption] = (), components: Sequence[SystemComponent] = (),
                 roles: bool = True, fail_on: str = "warning") -> None:
        self.rules = rules
        self.options = {} if options is None else options
        self.severities = {} if severities is None else severities
        self.settings = {} if settings is None else settings
        self.exemptions = exemptions
        self.components = components
        self.roles = roles
        self.fail_on = fail_on

    def exported(self) -> list[Exported]:
        out = []
        for rule in sorted(self.rules, key=lambda r: r.id):
            if rule.admission is None:
                continue
            form = rule.admission({**rule.options, **self.options.get(rule.id, {})})
            if form is not None:
                out.append(Exported(rule, form, self.severities.get(rule.id, rule.severity)))
        return out

    def left_out(self) -> list[Rule]:
        return [r for r in sorted(self.rules, key=lambda r: r.id) if r.admission is None]


def variables(plan: Plan, exported: Sequence[Exported]) -> list[dict[str, str]]:
    """The policy's variables: the shared ones, the rules' own, the exemptions' (in dependency order)."""
    pairs = shared_variables(knowledge(plan.settings))
    seen = {name for name, _ in pairs}
    for item in exported:
        for name, expression in item.form.variables:
            if name in seen:
                if dict(pairs)[name] != expression:
                    raise ValueError(f"{item.rule.id}: variable {name} defined twice, differently")
                continue
            seen.add(name)
            pairs.append((name, expression))
    ids = [item.rule.id for item in exported]
    pairs.append(("systemComponents", system_components(plan.components, ids)))
    pairs.append(("roleExemptions", role_exemptions(plan.rules) if plan.roles else "[]"))
    return [{"name": name, "expression": expression} for name, expression in pairs]


def _container_exempt(plan: Plan, rule_id: str) -> str:
    """CEL over `c`: the finding on container `c` would be suppressed (system component, role, configuration)."""
    parts = [f"({system_component(rule_id)})", f"{cel_string(rule_id)} in variables.roleExemptions"]
    return " || ".join(parts)


def validation(plan: Plan, item: Exported) -> dict[str, str]:
    rule, form = item.rule, item.form
    head = f"{rule.id} {rule.name}: "
    exempt = _container_exempt(plan, rule.id)
    configured = config_exemptions(plan.exemptions, rule.id, container=True)
    container_exempt = f"{exempt} || {configured}" if configured else exempt
    every = f"(size(variables.containers) > 0 && variables.containers.all(c, {exempt}))"
    pod_configured = config_exemptions(plan.exemptions, rule.id, container=False)
    pod_exempt = f"{every} || {pod_configured}" if pod_configured else every
    # (violation, CEL naming it or None): the message names the first container or volume that breaks it.
    parts: list[tuple[str, str | None]] = []
    if form.container is not None:
        hit = f"({form.container}) && !({container_exempt})"
        parts.append((f"variables.containers.exists(c, {hit})",
                      f"{cel_string(head + 'container ')} + variables.containers.filter(c, {hit})[0].name + "
                      f"{cel_string(' ' + form.message)}"))
    if form.volume is not None:
        mounters = ("variables.containers.filter(c, has(c.volumeMounts) && "
                    "c.volumeMounts.exists(m, m.name == v.name))")
        decided = f"(size({mounters}) > 0 ? [{mounters}[0]].all(c, {container_exempt}) : ({pod_exempt}))"
        hit = f"({form.volume}) && !{decided}"
        parts.append((f"variables.hostVolumes.exists(v, {hit})",
                      f"{cel_string(head + 'hostPath ')} + variables.hostVolumes.filter(v, {hit})[0].hostPath.path + "
                      f"{cel_string(': the pod ' + form.message)}"))
    if form.pod is not None:
        parts.append((f"(({form.pod}) && !({pod_exempt}))", None))
    out = {"expression": "!(" + " || ".join(violation for violation, _named in parts) + ")"}
    out["message"] = head + ("a container " if form.container is not None else "the pod ") + form.message
    if any(named is not None for _violation, named in parts):
        message = cel_string(head + "the pod " + form.message)   # reached by a pod-level violation only
        for violation, named in reversed(parts):
            if named is not None:
                message = f"{violation} ? {named} : {message}"
        out["messageExpression"] = message
    return out


def _rank(name: str) -> int:
    return Severity(name).rank if name in ("error", "warning", "info") else 0


def groups(plan: Plan, action: str) -> list[tuple[str, list[Exported], list[str]]]:
    """(policy name, rules, validation actions): the rules at or above `fail-on` get `action`, the
    others Warn (Audit when the action is audit)."""
    exported = plan.exported()
    threshold = _rank(plan.fail_on)
    main = [item for item in exported if item.severity.rank >= threshold]
    advisory = [item for item in exported if item.severity.rank < threshold]
    out = []
    if main:
        out.append((NAME, main, _actions(action)))
    if advisory:
        out.append((f"{NAME}-advisory", advisory, _actions("audit" if action == "audit" else "warn")))
    return out


def _actions(action: str) -> list[str]:
    # Deny alone shows the user nothing before the refusal; Audit records it for the cluster admin too.
    return {"deny": ["Deny"], "warn": ["Warn", "Audit"], "audit": ["Audit"]}[action]


def _labels() -> dict[str, str]:
    return {"app.kubernetes.io/managed-by": "gpulint"}


def vap_documents(plan: Plan, action: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for name, items, actions in groups(plan, action):
        policy = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name, "labels": _labels()},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                         "resources": list(resources)}
                        for group, resources in RESOURCE_RULES
                    ],
                },
                "matchConditions": [{"name": "has-pod-spec", "expression": has_pod_spec()}],
                "variables": variables(plan, items),
                "validations": [validation(plan, item) for item in items],
            },
        }
        binding = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name, "labels": _labels()},
            "spec": {
                "policyName": name,
                "validationActions": actions,
                "matchResources": {"namespaceSelector": {"matchExpressions": [
                    {"key": EXEMPT_LABEL, "operator": "NotIn", "values": ["true"]}]}},
            },
        }
        docs += [policy, binding]
    return docs


def kyverno_documents(plan: Plan, action: str) -> list[dict[str, Any]]:
    """A Kyverno ClusterPolicy with one CEL rule per exported rule (Kyverno has no policy-wide
    variables, so each rule carries the variables it shares with the others)."""
    rules = []
    warn = False
    for _name, items, actions in groups(plan, action):
        enforce = "Deny" in actions
        warn = warn or "Warn" in actions
        shared = variables(plan, items)
        for item in items:
            rules.append({
                "name": f"{item.rule.id.lower()}-{item.rule.name}",
                "match": {"any": [{"resources": {"kinds": [*POD_KINDS, "Pod/ephemeralcontainers"],
                                                 "operations": ["CREATE", "UPDATE"]}}]},
                "exclude": {"any": [{"resources": {"namespaceSelector": {"matchLabels": {EXEMPT_LABEL: "true"}}}}]},
                "celPreconditions": [{"name": "has-pod-spec", "expression": has_pod_spec()}],
                "validate": {
                    "failureAction": "Enforce" if enforce else "Audit",
                    # A copy per rule: one shared list would be written as a YAML anchor and aliases.
                    "cel": {"variables": [dict(v) for v in shared], "expressions": [validation(plan, item)]},
                },
            })
    spec: dict[str, Any] = {"background": True, "rules": rules}
    if warn:
        spec["emitWarning"] = True
    return [{
        "apiVersion": "kyverno.io/v1",
        "kind": "ClusterPolicy",
        "metadata": {
            "name": NAME,
            "labels": _labels(),
            # Each built-in kind is matched explicitly: no rules generated for controllers.
            "annotations": {"pod-policies.kyverno.io/autogen-controllers": "none"},
        },
        "spec": spec,
    }]


def documents(plan: Plan, output_format: str, action: str) -> list[dict[str, Any]]:
    if output_format not in FORMATS:
        raise ValueError(f"unknown format {output_format!r}")
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    return vap_documents(plan, action) if output_format == "vap" else kyverno_documents(plan, action)
