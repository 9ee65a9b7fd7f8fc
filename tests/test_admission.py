"""`gpulint policy export`: the policy is valid, deterministic, follows the configuration, and agrees with the linter.

The differential test evaluates the exported policy (tests/admission_harness.py)
on every object the scan sees in fixtures/ and ../shared/corpus and compares,
rule by rule, "the policy refuses it" with "gpulint reports an active finding".
Every disagreement must be one of DIFFERENCES, each of which docs/admission.md
lists and each of which the fixtures exercise.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import cel
import jsonschema
import pytest
from admission_harness import Verdict, as_admitted, compile_kyverno, compile_vap, evaluate, matched
from admission_linter import Seen, scan_objects
from conftest import FIXTURES, ROOT, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpulint.admission.policy import EXEMPT_LABEL, Plan, documents
from gpulint.admission.render import export_text
from gpulint.cli.policycmd import plan_from_config
from gpulint.knowledge import celforms
from gpulint.knowledge.gpu import GRANTS, classify_visible_devices, settings_with
from gpulint.knowledge.hostpaths import container_runtime_access, gpu_host_access, gpu_related_path
from gpulint.knowledge.quantity import parse_quantity
from gpulint.scan.registry import load_rules
from gpulint.suppress.systemcomponents import builtin_components

SCHEMAS = Path(__file__).parent / "schemas" / "kubernetes"
DOC = ROOT / "docs" / "admission.md"


def default_plan() -> Plan:
    rules = [r for r in load_rules().values() if r.enabled_by_default]
    return Plan(rules, settings=settings_with(), components=builtin_components())


def compiled(plan: Plan, output_format: str = "vap", action: str = "deny") -> list:
    docs = documents(plan, output_format, action)
    if output_format == "vap":
        return [compile_vap(d) for d in docs if d["kind"] == "ValidatingAdmissionPolicy"]
    return [compile_kyverno(rule) for d in docs for rule in d["spec"]["rules"]]


def expressions(docs: list[dict]) -> list[str]:
    found = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expression", "messageExpression"):
                    found.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(docs)
    return found


# --- the objects are valid and the expressions compile --------------------------------


@pytest.mark.parametrize("action", ["deny", "warn", "audit"])
def test_every_object_validates_against_its_kubernetes_schema(action: str) -> None:
    docs = documents(default_plan(), "vap", action)
    assert [d["kind"] for d in docs] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    for doc in docs:
        schema = json.loads((SCHEMAS / f"{doc['kind'].lower()}-admissionregistration-v1.json").read_text())
        jsonschema.Draft202012Validator(schema).validate(doc)


def test_the_schema_check_can_fail() -> None:
    policy = documents(default_plan(), "vap", "deny")[0]
    policy["spec"]["validations"][0]["messageExpresion"] = "typo"
    schema = json.loads((SCHEMAS / "validatingadmissionpolicy-admissionregistration-v1.json").read_text())
    with pytest.raises(jsonschema.ValidationError, match="messageExpresion"):
        jsonschema.Draft202012Validator(schema).validate(policy)


@pytest.mark.parametrize("output_format", ["vap", "kyverno"])
def test_every_expression_compiles_and_a_clean_pod_is_admitted(output_format: str) -> None:
    docs = documents(default_plan(), output_format, "deny")
    found = expressions(docs)
    assert len(found) > 20
    for expression in found:
        cel.compile(expression)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mnist"},
           "spec": {"containers": [{"name": "train", "image": "registry.example.com/mnist:1",
                                    "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    verdict = evaluate(compiled(default_plan(), output_format), pod, "default")
    assert verdict == Verdict({})


def test_one_validation_per_exported_rule_naming_rule_container_and_fix() -> None:
    plan = default_plan()
    policy = documents(plan, "vap", "deny")[0]
    ids = [e.rule.id for e in plan.exported()]
    assert ids == ["GPU001", "GPU002", "GPU003", "GPU004", "GPU005", "GPU006", "GPU007", "GPU008"]
    assert [v["message"].split()[0] for v in policy["spec"]["validations"]] == ids
    pod = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {
               "initContainers": [{"name": "setup", "image": "busybox"}],
               "containers": [{"name": "train", "image": "registry.example.com/app:1",
                               "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}}}}
    verdict = evaluate(compiled(plan), pod, "ml")
    assert verdict.denied == {"GPU003": "GPU003 visible-devices-env: container train sets NVIDIA_VISIBLE_DEVICES "
                                         "in env to a value that exposes GPUs without the scheduler knowing; "
                                         "request nvidia.com/gpu in resources.limits instead "
                                         "(NVIDIA_VISIBLE_DEVICES=void hides GPUs)"}


@pytest.mark.parametrize("kind,wrap", [
    ("Pod", lambda spec: {"spec": spec}),
    ("PodTemplate", lambda spec: {"template": {"spec": spec}}),
    ("ReplicationController", lambda spec: {"spec": {"template": {"spec": spec}}}),
    ("ReplicaSet", lambda spec: {"spec": {"template": {"spec": spec}}}),
    ("Deployment", lambda spec: {"spec": {"template": {"spec": spec}}}),
    ("StatefulSet", lambda spec: {"spec": {"template": {"spec": spec}}}),
    ("DaemonSet", lambda spec: {"spec": {"template": {"spec": spec}}}),
    ("Job", lambda spec: {"spec": {"template": {"spec": spec}}}),
    ("CronJob", lambda spec: {"spec": {"jobTemplate": {"spec": {"template": {"spec": spec}}}}}),
])
def test_every_pod_template_kind_is_covered_ephemeral_containers_too(kind: str, wrap: Callable) -> None:
    spec = {"containers": [{"name": "app", "image": "registry.example.com/app:1"}],
            "ephemeralContainers": [{"name": "debugger", "image": "registry.example.com/debug:1",
                                     "securityContext": {"privileged": True},
                                     "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "0"}]}]}
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}, **wrap(spec)}
    verdict = evaluate(compiled(default_plan()), obj, "default")
    assert sorted(verdict.denied) == ["GPU003", "GPU006"]
    assert "container debugger" in verdict.denied["GPU003"]


# --- the CEL forms agree with the Python knowledge ---------------------------------------


def _matches(regex: str, text: str) -> bool:
    return cel.evaluate(f"x.matches({celforms.cel_string(regex)})", {"x": text})


def _host(form, lists: dict, path: str) -> bool:
    """A host-path form (`celforms.gpu_host_path`, `container_runtime_path`) evaluated on `path`."""
    return cel.evaluate(form("x"), {"x": path, "variables": {"knowledge": lists}})


_DEVICES = st.lists(st.sampled_from(["all", "void", "none", "0", "1", " ", "", "GPU-ab12", "nvidia.com/gpu=0",
                                     "VOID", "none ", " void"]), max_size=4).map(",".join)


@settings(max_examples=300, deadline=None)
@given(_DEVICES)
def test_visible_devices_classification_agrees(value: str) -> None:
    grants = cel.evaluate(celforms.grants_devices("x"), {"x": value})
    assert grants == (classify_visible_devices(value) == GRANTS), value


_PATH = st.lists(st.sampled_from(["", "dev", "nvidia0", "nvidiactl", "char", "run", "var", "nvidia", "driver",
                                  "usr", "local", "lib", "libnvidia-ml.so.1", "docker.sock", "containerd",
                                  "containerd.sock", "docker", "opt", "home", "kubernetes", "bin", "nvidia-smi",
                                  "k3s", "crio", "crio.sock", "user", "1000", "podman", "podman.sock", "log",
                                  "nvidia-docker", "nvidia_driver", "nvidia-535", "lib64", "x86_64-linux-gnu",
                                  "etc", "proc", "kubelet", "containers", "libcuda.so.1", "data", "toolkit"]),
                 min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))


@settings(max_examples=500, deadline=None)
@given(_PATH)
def test_host_path_forms_agree(path: str) -> None:
    lists = celforms.knowledge({})
    assert _host(celforms.gpu_host_path, lists, path) == (gpu_host_access(path) is not None), path
    assert _host(celforms.container_runtime_path, lists, path) == (container_runtime_access(path) is not None), path
    assert _matches(lists["nvidiaPaths"], path) == gpu_related_path(path), path


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["0", "1", "0.0", "0m", "500m", "0Gi", "2", "+0", "-0", "0e3", ".0", "1e0", "10", "00"]))
def test_zero_quantity_agrees(quantity: str) -> None:
    positive = cel.evaluate(celforms.asks("c", "true"), {"c": {"resources": {"limits": {"x": quantity}}}})
    assert positive == (parse_quantity(quantity) != 0), quantity


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["nvidia.com/gpu=0", "nvidia.com/gpu=all", " nvidia.com/gpu = 1 ", "vendor.com/x=1",
                                 "management.nvidia.com/gpu=all", "nvidia.com/gpu=", "nvidia.com", "evilnvidia.com/g=1",
                                 "", " "]), max_size=3).map(",".join))
def test_cdi_annotation_form_agrees(value: str) -> None:
    from gpulint.rules.gpu008_device_request_bypass import CDI_NVIDIA_RE, nvidia_cdi_devices

    assert _matches(CDI_NVIDIA_RE, value) == bool(nvidia_cdi_devices(value)), value


# --- the differential test ----------------------------------------------------------------


def _containers(data: dict) -> list[dict]:
    spec = _spec(data)
    return [c for key in ("initContainers", "containers", "ephemeralContainers")
            for c in (spec.get(key) or []) if isinstance(c, dict)]


def _spec(data: dict) -> dict:
    kind = data.get("kind")
    if kind == "Pod":
        spec = data.get("spec")
    elif kind == "PodTemplate":
        spec = (data.get("template") or {}).get("spec")
    elif kind == "CronJob":
        spec = ((((data.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")
    else:
        spec = ((data.get("spec") or {}).get("template") or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _last_visible_devices(container: dict) -> dict | None:
    entries = [e for e in container.get("env") or [] if isinstance(e, dict) and e.get("name") == "NVIDIA_VISIBLE_DEVICES"]
    return entries[-1] if entries else None


def _placeholder_image(seen: Seen, rule: str) -> bool:
    """An operator's template whose images are placeholders, exempt by its labels in the linter."""
    return any(r.startswith("system component") for r in seen.suppressed.get(rule, ())) and any(
        not re.fullmatch(r"[\w./:@-]+", str(c.get("image", ""))) or str(c.get("image", "")).isupper()
        for c in _containers(seen.data))


def _hostpath_dot_segment(seen: Seen, rule: str) -> bool:
    return any(re.search(celforms.DOT_SEGMENT_RE, str((v.get("hostPath") or {}).get("path", "")))
               for v in _spec(seen.data).get("volumes") or [] if isinstance(v, dict))


def _commands_only(seen: Seen, rule: str) -> bool:
    return all(not m.startswith("hostPath ") for m in seen.rules.get(rule, ()))


def _reference_in_value(seen: Seen, rule: str) -> bool:
    return any("$(" in str((_last_visible_devices(c) or {}).get("value", "")) for c in _containers(seen.data))


def _value_in_config_object(seen: Seen, rule: str) -> bool:
    return any((_last_visible_devices(c) or {}).get("valueFrom") or (not _last_visible_devices(c) and c.get("envFrom"))
               for c in _containers(seen.data))


def _signals_out_of_reach(seen: Seen, rule: str) -> bool:
    """Every GPU signal the linter names is one a policy does not read: a generic node label (selector or
    affinity) whose value names NVIDIA hardware without saying nvidia (`h100`, a GPU instance type)."""
    for message in seen.rules.get(rule, ()):
        inside = (re.search(r"GPU container \((.*)\) (?:gives|makes)", message)
                  or re.search(r"the pod targets GPU nodes \((.*)\)\)", message))
        if inside is None:
            return False
        for signal in inside.group(1).split("; "):
            if not (("nodeSelector" in signal or "node affinity" in signal) and "=" in signal
                    and "nvidia" not in signal.lower()):
                return False
    return True


def _dra_claim_of_other_vendor(seen: Seen, rule: str) -> bool:
    return any((c.get("resources") or {}).get("claims") for c in _containers(seen.data))


def _node_agent_role(seen: Seen, rule: str) -> bool:
    """A role the linter recognises from what a node agent declares or writes (knowledge/roles.py:
    pod-resources on GPU nodes, device information, MIG strategy or monitoring, a toolkit command,
    the runtime's configuration, a device plugin's runtime access); the policy reads mounts only."""
    from gpulint.knowledge import roles

    agents = (roles.POD_RESOURCES_AGENT, roles.DEVICE_DISCOVERER, roles.DEVICE_INFO_WRITER,
              roles.MIG_STRATEGY_AGENT, roles.RUNTIME_HOOK, roles.MANAGEMENT_AGENT, roles.CDI_BY_COMMAND,
              roles.TOOLKIT_PACKAGES, roles.DRIVER_PACKAGES,
              roles.DISCOVERER_RUNTIME, roles.DEVICE_MANAGER_RUNTIME)
    reasons = {"system component: " + role.reason for role in agents}
    return any(r in reasons for r in seen.suppressed.get(rule, ()))


def _runtime_state_read_only(seen: Seen, rule: str) -> bool:
    """A runtime state directory the linter judges by its mounts (read-only, or the log tree): the
    policy judges the volume."""
    return any(re.match(r"/+var/+lib/+(?:docker|containerd)(?:/|$)", str((v.get("hostPath") or {}).get("path", "")))
               for v in _spec(seen.data).get("volumes") or [] if isinstance(v, dict))


def _scheduler_gpu_resource(seen: Seen, rule: str) -> bool:
    """A scheduler's own GPU resource (gpu.scheduler_gpu_resource needs edit distances to the known domains)."""
    from gpulint.knowledge.gpu import DEFAULT_SETTINGS, scheduler_gpu_resource

    known = tuple(DEFAULT_SETTINGS["gpu-resources"])
    return any(scheduler_gpu_resource(str(name), known)
               for c in _containers(seen.data) for section in ("limits", "requests")
               for name in ((c.get("resources") or {}).get(section) or {}))


def _not_admissible(seen: Seen, rule: str) -> bool:
    """The API server refuses the object before any policy runs: wrong types, an unrendered template."""
    return bool({"GPU000", "GPU011"} & set(seen.rules)) or "___" in str(seen.data.get("metadata"))


# name -> (rule ids, the policy refuses (True) or only the linter reports (False), explanation)
DIFFERENCES: dict[str, tuple[tuple[str, ...], bool, Callable[[Seen, str], bool]]] = {
    "commands": (("GPU001", "GPU002"), False, _commands_only),
    "dot-segments": (("GPU001", "GPU002"), True, _hostpath_dot_segment),
    "env-references": (("GPU003",), True, _reference_in_value),
    "config-objects": (("GPU004", "GPU005", "GPU007"), True, _value_in_config_object),
    "unread-signals": (("GPU004", "GPU006"), False, _signals_out_of_reach),
    "dra-device-classes": (("GPU006",), True, _dra_claim_of_other_vendor),
    "placeholder-images": (("GPU001", "GPU003", "GPU006"), True, _placeholder_image),
    "node-agent-roles": (("GPU001", "GPU002", "GPU003", "GPU005", "GPU006"), True, _node_agent_role),
    "runtime-state-mounts": (("GPU002",), True, _runtime_state_read_only),
    "scheduler-gpu-resources": (("GPU005",), True, _scheduler_gpu_resource),
}


def differential(objects: list[Seen], policies: list, covered: list[str]) -> tuple[list, set[str], int]:
    """(unexplained disagreements, explanations used, objects compared)."""
    unexplained, used, compared = [], set(), 0
    for seen in objects:
        if not matched(seen.data):
            continue
        verdict = evaluate(policies, seen.data, seen.namespace)
        if verdict.error is not None:
            if _not_admissible(seen, ""):
                used.add("not-admissible")
                continue
            unexplained.append((seen.file, seen.data.get("kind"), verdict.error))
            continue
        compared += 1
        for rule in covered:
            denies, reports = rule in verdict.denied, rule in seen.rules
            if denies == reports:
                continue
            name = next((name for name, (rules, refuses, explains) in DIFFERENCES.items()
                         if rule in rules and refuses == denies and explains(seen, rule)), None)
            if name is None:
                unexplained.append((seen.file, seen.data.get("kind"), (seen.data.get("metadata") or {}).get("name"),
                                    rule, "policy refuses" if denies else "linter reports",
                                    verdict.denied.get(rule) or seen.rules[rule]))
            else:
                used.add(name)
    return unexplained, used, compared


@pytest.fixture(scope="module")
def fixture_objects() -> list[Seen]:
    objects, repeated = scan_objects([str(FIXTURES)])
    assert repeated == 0
    return objects


@pytest.mark.parametrize("output_format", ["vap", "kyverno"])
def test_policy_and_linter_agree_on_every_fixture_object(fixture_objects: list[Seen], output_format: str) -> None:
    plan = default_plan()
    covered = [e.rule.id for e in plan.exported()]
    unexplained, used, compared = differential(fixture_objects, compiled(plan, output_format), covered)
    assert unexplained == []
    assert compared > 200
    # Every documented difference is exercised by a fixture (or, below, by an object made for it), so
    # each is tested, not assumed.
    assert used == set(DIFFERENCES) - {"unread-signals"} | {"not-admissible"}


def test_node_labels_that_name_nvidia_hardware_without_the_word_are_the_linters(tmp_path: Path) -> None:
    manifest = tmp_path / "h100.yaml"
    manifest.write_text("""apiVersion: v1
kind: Pod
metadata: {name: h100}
spec:
  nodeSelector: {accelerator: h100}
  containers:
  - name: main
    image: registry.example.com/tool:1
    securityContext: {privileged: true}
---
apiVersion: v1
kind: Pod
metadata: {name: p4d}
spec:
  nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}
  containers:
  - name: main
    image: registry.example.com/tool:1
    securityContext: {privileged: true}
---
apiVersion: v1
kind: Pod
metadata: {name: env-from}
spec:
  nodeSelector: {accelerator: h100}
  containers:
  - name: main
    image: registry.example.com/tool:1
    envFrom:
    - configMapRef: {name: settings-elsewhere}
""", encoding="utf-8")
    objects, _repeated = scan_objects([str(manifest)])
    assert [sorted(seen.rules) for seen in objects] == [["GPU006"], ["GPU006"], ["GPU004"]]
    plan = default_plan()
    unexplained, used, compared = differential(objects, compiled(plan), [e.rule.id for e in plan.exported()])
    assert (unexplained, used, compared) == ([], {"unread-signals"}, 3)


def test_the_differential_test_can_fail(fixture_objects: list[Seen]) -> None:
    plan = default_plan()
    covered = [e.rule.id for e in plan.exported()]
    weakened = compiled(plan)
    weakened[0].validations = [(rid, cel.compile("true") if rid == "GPU008" else program, message)
                               for rid, program, message in weakened[0].validations]
    unexplained, _used, _compared = differential(fixture_objects, weakened, covered)
    assert unexplained and {item[3] for item in unexplained} == {"GPU008"}


def test_policy_and_linter_agree_on_the_corpus(corpus: Path) -> None:
    objects, _repeated = scan_objects([str(corpus)])
    plan = default_plan()
    covered = [e.rule.id for e in plan.exported()]
    unexplained, used, compared = differential(objects, compiled(plan), covered)
    print(f"\n{compared} corpus objects compared; differences used: {sorted(used)}")
    assert unexplained == []
    assert compared > 100


def test_every_difference_is_in_the_coverage_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name in [*DIFFERENCES, "not-admissible"]:
        assert f"`{name}`" in text, name
    for exported in default_plan().exported():
        assert f"| {exported.rule.id} " in text


# --- system components are never blocked ----------------------------------------------------


def test_system_components_in_their_namespaces_are_admitted(fixture_objects: list[Seen]) -> None:
    """Every object of fixtures/exemptions whose findings the linter suppresses as a system component
    (device plugin, GPU Operator, DCGM, gpushare, DRA kubelet plugin, driver installers, ...)."""
    policies = compiled(default_plan())
    checked = 0
    for seen in fixture_objects:
        if "fixtures/exemptions/" not in seen.file or not matched(seen.data) or seen.rules:
            continue
        if any(_placeholder_image(seen, rule) for rule in seen.suppressed):
            continue   # an operator's template: never applied as written
        if any(_node_agent_role(seen, rule) for rule in seen.suppressed):
            continue   # a role the policy does not read (`node-agent-roles`)
        namespace = seen.namespace or "gpu-operator"
        verdict = evaluate(policies, seen.data, namespace)
        assert verdict == Verdict({}), (seen.file, seen.data["metadata"]["name"], verdict)
        checked += 1
    assert checked >= 10


def test_no_default_exemptions_blocks_the_device_plugin(fixture_objects: list[Seen]) -> None:
    plan = default_plan()
    plan.components, plan.roles = (), False
    plugin = next(s for s in fixture_objects if s.file.endswith("nvidia-device-plugin.yaml")
                  and s.data["metadata"]["name"] == "nvidia-device-plugin-daemonset")
    assert sorted(evaluate(compiled(plan), plugin.data, "kube-system").denied) == ["GPU003", "GPU006"]
    assert evaluate(compiled(default_plan()), plugin.data, "kube-system").denied == {}


def test_look_alike_images_are_not_exempt(fixture_objects: list[Seen]) -> None:
    lookalikes = [s for s in fixture_objects if s.file.endswith("lookalikes.yaml") and matched(s.data)]
    assert lookalikes
    for seen in lookalikes:
        assert set(evaluate(compiled(default_plan()), seen.data, "default").denied) == \
            set(seen.rules) & {e.rule.id for e in default_plan().exported()}


# --- the configuration and the command line ---------------------------------------------------


def _write_config(tmp_path: Path, text: str) -> str:
    path = tmp_path / ".gpulint.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


PRIVILEGED_GPU_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                      "spec": {"containers": [{"name": "tool", "image": "registry.example.com/tool:1",
                                               "securityContext": {"privileged": True},
                                               "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}}


def test_a_rule_ignored_in_the_configuration_leaves_the_export(tmp_path: Path) -> None:
    config = _write_config(tmp_path, "ignore: [GPU003]\n")
    plan, shown = plan_from_config(load_rules(), config)
    assert "GPU003" not in [e.rule.id for e in plan.exported()]
    assert shown == config
    assert sorted(evaluate(compiled(plan), PRIVILEGED_GPU_POD, "default").denied) == ["GPU006"]


def test_an_exemption_in_the_configuration_becomes_a_condition(tmp_path: Path) -> None:
    config = _write_config(tmp_path, """exemptions:
  - reason: the GPU tools team's debug pods
    rules: [GPU006]
    namespace: gpu-tools
  - reason: one image, everywhere
    image: docker.io/vendor/gpu-probe*
  - reason: a file, which admission never sees
    path: legacy/*
""")
    plan, _shown = plan_from_config(load_rules(), config)
    policies = compiled(plan)
    assert sorted(evaluate(policies, PRIVILEGED_GPU_POD, "gpu-tools").denied) == ["GPU003"]
    assert sorted(evaluate(policies, PRIVILEGED_GPU_POD, "default").denied) == ["GPU003", "GPU006"]
    probe = json.loads(json.dumps(PRIVILEGED_GPU_POD))
    probe["spec"]["containers"][0]["image"] = "vendor/gpu-probe:2"
    assert evaluate(policies, probe, "default").denied == {}
    text = export_text(plan, documents(plan, "vap", "deny"), "vap", "deny", "x")
    assert "# Exemptions by path, which admission cannot decide, not exported: 1" in text


def test_a_severity_below_fail_on_is_bound_with_warn(tmp_path: Path) -> None:
    config = _write_config(tmp_path, "rules:\n  GPU003:\n    severity: info\n")
    plan, _shown = plan_from_config(load_rules(), config)
    docs = documents(plan, "vap", "deny")
    bindings = {d["metadata"]["name"]: d["spec"]["validationActions"] for d in docs
                if d["kind"] == "ValidatingAdmissionPolicyBinding"}
    assert bindings == {"gpulint-gpu-scheduling": ["Deny"], "gpulint-gpu-scheduling-advisory": ["Warn", "Audit"]}
    advisory = next(d for d in docs if d["metadata"]["name"] == "gpulint-gpu-scheduling-advisory"
                    and d["kind"] == "ValidatingAdmissionPolicy")
    assert [v["message"].split()[0] for v in advisory["spec"]["validations"]] == ["GPU003"]


@pytest.mark.parametrize("action,actions,kyverno", [
    ("deny", ["Deny"], "Enforce"), ("warn", ["Warn", "Audit"], "Audit"), ("audit", ["Audit"], "Audit")])
def test_action_sets_the_binding(action: str, actions: list[str], kyverno: str) -> None:
    docs = documents(default_plan(), "vap", action)
    binding = docs[1]
    assert binding["spec"]["validationActions"] == actions
    assert binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"] == [
        {"key": EXEMPT_LABEL, "operator": "NotIn", "values": ["true"]}]
    policy = documents(default_plan(), "kyverno", action)[0]
    assert {r["validate"]["failureAction"] for r in policy["spec"]["rules"]} == {kyverno}
    assert policy["spec"].get("emitWarning", False) == (action == "warn")


def test_cli_export_is_byte_identical_and_parses(tmp_path: Path) -> None:
    first = run_cli("policy", "export")
    second = run_cli("policy", "export", "--format", "vap", "--action", "deny")
    assert first[0] == 0 and first == second
    out = tmp_path / "policy.yaml"
    assert run_cli("policy", "export", "--format", "kyverno", "--action", "warn", "-o", str(out))[0] == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Generated by gpulint ")
    assert "&id" not in text and "*id" not in text   # no YAML anchors: every tool reads it
    assert text == run_cli("policy", "export", "--format", "kyverno", "--action", "warn")[1]
    docs = list(YAML(typ="safe").load_all(first[1]))
    assert docs == documents(plan_from_config(load_rules(), None)[0], "vap", "deny")


def test_cli_rejects_bad_options() -> None:
    code, _out, err = run_cli("policy", "export", "--format", "opa")
    assert code == 2 and "--format: 'opa' is not one of vap, kyverno" in err
    code, _out, err = run_cli("policy", "export", "--action", "block")
    assert code == 2 and "--action: 'block' is not one of deny, warn, audit" in err


def test_nulls_are_dropped_as_the_api_server_does() -> None:
    assert as_admitted({"a": None, "b": [{"c": None, "d": 1}]}) == {"b": [{"d": 1}]}


def test_ack_example_pod_is_admitted_and_its_bypass_refused() -> None:
    """The canonical clean manifest of ACK's documentation (POLICY.md §1), and the same Pod with the variable."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tensorflow-mnist"},
           "spec": {"containers": [{"name": "tensorflow-mnist",
                                    "image": "registry.cn-beijing.aliyuncs.com/acs/tensorflow-mnist-sample:v1.5",
                                    "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    policies = compiled(default_plan())
    assert evaluate(policies, pod, "default") == Verdict({})
    pod["spec"]["containers"][0]["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    assert list(evaluate(policies, pod, "default").denied) == ["GPU003"]


_HOSTS = ["", "docker.io/", "index.docker.io/", "nvcr.io/", "NVCR.io/", "registry.example.com/", "ghcr.io/",
          "localhost:5000/", "registry.cn-hangzhou.aliyuncs.com/"]
_PATHS = ["nvidia/cuda", "nvidia/k8s-device-plugin", "nvidia/gpu-operator", "nim/meta/llama3", "library/ubuntu",
          "ubuntu", "pytorch/pytorch", "tensorflow/tensorflow", "rayproject/ray", "rayproject/ray-ml",
          "vllm/vllm-openai", "ollama/ollama", "acme/tritonserver", "acme/ai-dynamo-vllm-runtime", "acme/tensorrt-llm/release",
          "acme/mindspore-gpu", "acme/gpu-operator", "acme/nvidia_gpu_exporter", "rocm/pytorch", "acme/cuda-app",
          "acme/app-cuda12.1", "acme/intel-gpu-plugin", "nvidia/cloud-native/gpu-operator-validator", "acme/GPU-Tool",
          "acs/k8s-gpushare-plugin", "acme/app"]
_TAGS = ["", ":latest", ":2.13.0-gpu", ":gpu", ":cu118", ":12.4.1-base-ubuntu22.04", ":2.9.0-cpu", ":v0.6.0-rocm",
         ":2.40.0-py310-cu121", ":1.0", ":rocm6.1", ":cpu", "@sha256:" + "a" * 64, ":1.0@sha256:" + "b" * 64]


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(_HOSTS), st.sampled_from(_PATHS), st.sampled_from(_TAGS))
def test_gpu_image_form_agrees(host: str, path: str, tag: str) -> None:
    from gpulint.knowledge.gpu import image_visible_devices_default

    image = host + path + tag
    lists = celforms.knowledge({"gpu-images": ["docker.io/acme/app:1.*"]})
    context = {"c": {"image": image}, "variables": {"knowledge": lists, "imageRules": cel.evaluate(
        celforms.image_rules(), {})}}
    rule = image_visible_devices_default(image, {"gpu-images": ["docker.io/acme/app:1.*"]})
    assert cel.evaluate(celforms.gpu_image("c"), context) == (rule is not None and rule.sets == "all"), image


_ODD_PATH = st.lists(st.sampled_from(["", ".", "..", "dev", "nvidia0", "run", "var", "nvidia", "driver", "docker.sock",
                                      "containerd", "lib", "usr", "local", "etc"]),
                     min_size=1, max_size=6).map(lambda parts: "/" + "/".join(parts) + "")


@settings(max_examples=500, deadline=None)
@given(_ODD_PATH)
def test_host_path_forms_are_sound_on_paths_written_oddly(path: str) -> None:
    """`//`, trailing `/`, `.` and `..`: whatever the linter reports, the policy refuses (it cannot normalise,
    so a path with `.` or `..` components is refused whatever it names: the `dot-segments` difference)."""
    lists = celforms.knowledge({})
    dotted = _matches(celforms.DOT_SEGMENT_RE, path)
    for form, linter in ((celforms.gpu_host_path, gpu_host_access),
                         (celforms.container_runtime_path, container_runtime_access)):
        refused = _host(form, lists, path) or dotted
        reported = linter(path) is not None
        assert refused if reported else (refused == dotted), path


def test_cli_without_default_exemptions_says_so() -> None:
    code, out, _err = run_cli("policy", "export", "--no-default-exemptions")
    assert code == 0
    assert "# Default exemptions off: system components and their roles are not exempt\n" in out
    def variables(text: str) -> dict[str, str]:
        policy = next(YAML(typ="safe").load_all(text))
        return {v["name"]: v["expression"] for v in policy["spec"]["variables"]}

    off, on = variables(out), variables(run_cli("policy", "export")[1])
    assert off["roleExemptions"] == "[]" and on["roleExemptions"] != "[]"
    assert off["systemComponents"] == "[]" and "nvidia/k8s-device-plugin" in on["systemComponents"]


NVIDIA_DRA_KUBELET_PLUGIN = """apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-dra-driver-gpu-kubelet-plugin
  namespace: nvidia-dra-driver-gpu
spec:
  selector:
    matchLabels: {app: nvidia-dra-driver-gpu-kubelet-plugin}
  template:
    metadata:
      labels: {app: nvidia-dra-driver-gpu-kubelet-plugin}
    spec:
      containers:
      - name: gpus
        image: nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.0
        securityContext: {privileged: true}
        env:
        - {name: NVIDIA_VISIBLE_DEVICES, value: void}
        volumeMounts:
        - {name: plugins-registry, mountPath: /var/lib/kubelet/plugins_registry}
        - {name: plugins, mountPath: /var/lib/kubelet/plugins, mountPropagation: Bidirectional}
        - {name: cdi, mountPath: /var/run/cdi}
        - {name: driver-root, mountPath: /driver-root, readOnly: true}
      volumes:
      - {name: plugins-registry, hostPath: {path: /var/lib/kubelet/plugins_registry}}
      - {name: plugins, hostPath: {path: /var/lib/kubelet/plugins}}
      - {name: cdi, hostPath: {path: /var/run/cdi}}
      - {name: driver-root, hostPath: {path: /run/nvidia/driver}}
"""


def test_the_nvidia_dra_driver_in_its_namespace_is_admitted(tmp_path: Path) -> None:
    """The DRA driver's kubelet plugin (privileged, the driver root, the kubelet plugin directories):
    the linter suppresses its findings by its role, and the policy admits it."""
    manifest = tmp_path / "dra.yaml"
    manifest.write_text(NVIDIA_DRA_KUBELET_PLUGIN, encoding="utf-8")
    [seen], _repeated = scan_objects([str(manifest)])
    assert seen.rules == {} and sorted(seen.suppressed) == ["GPU001", "GPU006"]
    assert evaluate(compiled(default_plan()), seen.data, "nvidia-dra-driver-gpu") == Verdict({})
    plan = default_plan()
    plan.components, plan.roles = (), False
    assert sorted(evaluate(compiled(plan), seen.data, "nvidia-dra-driver-gpu").denied) == ["GPU001", "GPU006"]


def test_a_host_path_refusal_names_the_path() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "a", "image": "registry.example.com/a:1",
                                    "volumeMounts": [{"name": "sock", "mountPath": "/var/run/docker.sock"}]}],
                    "volumes": [{"name": "sock", "hostPath": {"path": "/var/run/docker.sock"}}]}}
    verdict = evaluate(compiled(default_plan()), pod, "default")
    assert list(verdict.denied) == ["GPU002"]
    assert verdict.denied["GPU002"].startswith("GPU002 container-engine-cli: hostPath /var/run/docker.sock: the pod "
                                               "has a hostPath volume of the node's container runtime")


def test_a_rule_option_in_the_configuration_changes_its_form(tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "a", "image": "registry.example.com/a:1",
                                    "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "none"}]}]}}
    assert evaluate(compiled(default_plan()), pod, "default").denied == {}
    config = _write_config(tmp_path, "rules:\n  GPU003:\n    options:\n      none-is-hidden: false\n")
    plan, _shown = plan_from_config(load_rules(), config)
    assert list(evaluate(compiled(plan), pod, "default").denied) == ["GPU003"]
