"""An unrendered template warns only where its unknown parts could hide a GPU bypass (load/unknowns.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, scan_json

from gpulint.load import unrendered
from gpulint.load.unknowns import Unknown, verdict_unknown

TEMPLATES = FIXTURES / "templates"

POD = """apiVersion: v1
kind: Pod
metadata:
  name: {{ .Name }}
spec:
  containers:
  - name: app
    image: busybox:1.36
"""


def _unknown(body: str) -> Unknown | None:
    return verdict_unknown(POD + body)


# --- where the unknown sits ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "expected"), [
    ("    securityContext:\n      privileged: {{ .Priv }}\n",
     Unknown(10, 19, "spec.containers[].securityContext.privileged")),
    ("    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: {{ .Gpus }}\n",
     Unknown(11, 14, "spec.containers[].env[].value")),
    ("    env:\n    {{- toYaml .Env | nindent 4 }}\n", Unknown(10, 5, "spec.containers[].env", emits=True)),
    ("    {{- toYaml .Extra | nindent 4 }}\n", Unknown(9, 5, "spec.containers[]", emits=True)),
    ("    args: [--level, {{ .Level }}]\n", Unknown(9, 21, "spec.containers[].args")),
    ("    command:\n    - {{ .Cmd }}\n", Unknown(10, 7, "spec.containers[].command[]", emits=True)),
    ("    resources:\n      limits:\n        nvidia.com/gpu: {{ .Gpus }}\n",
     Unknown(11, 25, "spec.containers[].resources.limits.nvidia.com/gpu")),
    ("  runtimeClassName: {{ .Runtime }}\n", Unknown(9, 21, "spec.runtimeClassName")),
    ("  volumes:\n  - name: host\n    hostPath:\n      path: {{ .Dir }}\n",
     Unknown(12, 13, "spec.volumes[].hostPath.path")),
])
def test_an_unknown_in_a_verdict_field_is_named(body: str, expected: Unknown) -> None:
    assert _unknown(body) == expected


@pytest.mark.parametrize("body", [
    "    ports:\n    - containerPort: {{ .Port }}\n",
    "    env:\n    - name: LOG_LEVEL\n      value: {{ .Level }}\n",          # a known, harmless variable
    "    image: {{ .Registry }}/library/nginx:{{ .Tag }}\n",              # the repository is literal
    "  - name: second\n    image: {{ .Image }}\n",    # an image decides only GPU005's heuristic: counted
    "  volumes:\n  - name: {{ .Name }}\n    configMap:\n      name: {{ .Config }}\n",
    "  nodeSelector:\n    {{- toYaml .Selector | nindent 4 }}\n",
    "  {{- if .Debug }}\n  hostNetwork: true\n  {{- end }}\n",               # control: renders no text
    "    {{/* a comment */}}\n",
    "    resources:\n      requests:\n        cpu: {{ .Cpu }}\n        memory: {{ .Memory }}\n",   # native resources
    "    command: [run, -v, $(LEVEL)]\n    env:\n    - name: LEVEL\n      value: {{ .Level }}\n",
])
def test_an_unknown_elsewhere_is_not_a_risk(body: str) -> None:
    assert _unknown(body) is None


def test_an_env_value_another_variable_expands_is_a_risk() -> None:
    body = ("    env:\n    - name: GPUS\n      value: {{ .Gpus }}\n"
            "    - name: NVIDIA_VISIBLE_DEVICES\n      value: $(GPUS)\n")
    assert _unknown(body) == Unknown(11, 14, "spec.containers[].env[].value")


def test_the_image_of_a_container_requesting_a_gpu_cannot_hide_a_default() -> None:
    body = "  - name: second\n    image: {{ .Image }}\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    assert _unknown(body) is None


def test_the_image_of_a_container_with_a_dra_claim_cannot_hide_a_default() -> None:
    body = "  - name: second\n    image: {{ .Image }}\n    resources:\n      claims:\n      - name: gpu\n"
    assert _unknown(body) is None


def test_the_image_of_a_container_setting_the_variable_itself_cannot_hide_a_default() -> None:
    body = ("  - name: second\n    image: {{ .Image }}\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n"
            "      value: void\n")
    assert _unknown(body) is None


def test_an_unknown_gpu_quantity_or_resource_name_is_a_risk() -> None:
    assert _unknown("    resources:\n      limits:\n        {{ .Name }}: 1\n") == Unknown(
        11, 9, "spec.containers[].resources.limits", emits=True)


def test_rbac_resources_and_deployment_metadata_are_not_container_fields() -> None:
    role = "kind: Role\nmetadata:\n  name: r\n  annotations:\n    {{- toYaml .A | nindent 4 }}\nrules:\n" \
           "- apiGroups: [\"\"]\n  resources: [{{ .Resource }}]\n  verbs: [get]\n"
    assert verdict_unknown(role) is None
    pod_template = "kind: Deployment\nspec:\n  template:\n    metadata:\n      annotations:\n" \
                   "        {{- toYaml .PodAnnotations | nindent 8 }}\n"
    assert verdict_unknown(pod_template) == Unknown(6, 9, "spec.template.metadata.annotations", emits=True)


def test_an_indentless_list_emitted_under_its_key_belongs_to_it() -> None:
    body = "    env:\n    {{- range .Env }}\n    - name: {{ .Name }}\n      value: {{ .Value }}\n    {{- end }}\n"
    assert _unknown(body) == Unknown(11, 13, "spec.containers[].env[].name")


# --- which template language ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "syntax", "helm"), [
    ("a: {{ .Values.x }}\n", unrendered.GO, True),
    ("a: {{ include \"x\" . }}\n", unrendered.GO, True),
    ("a: {{.Name}}\nb: {{ printf \"%d\" .Index }}\n", unrendered.GO, False),
    ("a: {{ name }}\nb: {{ item.tag | default('latest') }}\n", unrendered.JINJA, False),
    ("{% if x %}\na: {{ .Name }}\n{% endif %}\n", unrendered.JINJA, False),
    ("a: ${NAME}\n%{ for k in ks ~}\n", unrendered.DOLLAR, False),
])
def test_templates_are_told_apart(text: str, syntax: str, helm: bool) -> None:
    assert unrendered.syntax(text) == syntax
    assert unrendered.uses_helm(text) is helm


def test_jinja_blocks_are_masked_like_go_actions() -> None:
    text = "{% if gpu %}\na: 1\n{# note #}\n"
    assert [text[start:end] for start, end in unrendered.actions(text)] == ["{% if gpu %}", "{# note #}"]
    masked, _placeholders = unrendered.mask(text)
    assert masked == "\na: 1\n\n"


# --- what the user sees -----------------------------------------------------------------------------------


def _gpu011(path: Path) -> tuple[int, list[tuple[str, str, int, int]], str]:
    code, report = scan_json(str(path))
    found = [(f["rule"], f["severity"], f["line"], f["column"]) for f in report["findings"]]
    return code, found, report["findings"][0]["message"]


def test_a_tools_test_spec_is_info_and_exits_zero() -> None:
    code, found, message = _gpu011(TEMPLATES / "go-test-spec.yaml")
    assert (code, found) == (0, [("GPU011", "info", 6, 10)])
    assert message.startswith("unrendered Go template (`{{ ... }}`, not Helm")
    assert "no action fills a field that decides GPU access" in message


def test_an_ansible_template_is_called_jinja_and_exits_zero() -> None:
    code, found, message = _gpu011(TEMPLATES / "ansible-deployment.yaml")
    assert (code, found) == (0, [("GPU011", "info", 6, 10)])
    assert message.startswith("unrendered Jinja template") and "Ansible" in message


def test_a_templated_env_list_is_a_warning_at_it() -> None:
    code, found, message = _gpu011(TEMPLATES / "ansible-gpu-env.yaml")
    assert (code, found) == (1, [("GPU011", "warning", 14, 5)])
    assert "what it renders into `spec.containers[].env` is unknown" in message


def test_a_templated_privileged_flag_is_a_warning_naming_it() -> None:
    code, found, message = _gpu011(TEMPLATES / "go-privileged.yaml")
    assert (code, found) == (1, [("GPU011", "warning", 14, 19)])
    assert "the value of `spec.containers[].securityContext.privileged` is unknown" in message


def test_one_finding_per_file_at_the_first_risk_of_any_document(tmp_path: Path) -> None:
    quiet = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Name }}\n"
    risky = POD + "    securityContext:\n      privileged: {{ .Priv }}\n"
    path = tmp_path / "two.yaml"
    path.write_text(quiet + "---\n" + risky + "---\n" + risky)
    code, report = scan_json(str(path))
    assert (code, [(f["rule"], f["severity"], f["line"], f["column"]) for f in report["findings"]]) == (
        1, [("GPU011", "warning", 15, 19)])


def test_an_unreadable_template_warns_only_when_it_holds_containers(tmp_path: Path) -> None:
    config = tmp_path / "cm.yaml"
    config.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\ndata:\n"
                      "  {{ .Key }}: v\n    nested: {{ .Broken\n")
    code, report = scan_json(str(config))
    assert (code, [(f["severity"], f["line"]) for f in report["findings"]]) == (0, [("info", 4)])
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD + "    ports:\n    - containerPort: {{ .Port\n")
    code, report = scan_json(str(pod))
    (finding,) = report["findings"]
    assert (code, finding["severity"], finding["line"]) == (1, "warning", 4)  # where the parser first stopped
    assert "the containers of its unread documents could hide a GPU bypass" in finding["message"]


def test_a_configured_severity_still_wins(tmp_path: Path) -> None:
    (tmp_path / ".gpulint.yaml").write_text("rules:\n  GPU011:\n    severity: error\n")
    template = tmp_path / "spec.yaml"
    template.write_text((TEMPLATES / "go-test-spec.yaml").read_text())
    code, report = scan_json("--config", str(tmp_path / ".gpulint.yaml"), str(template))
    assert (code, report["findings"][0]["severity"]) == (1, "error")


def test_past_a_bound_the_actions_are_not_placed_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.load import unknowns

    monkeypatch.setattr(unknowns, "MAX_ACTIONS", 3)
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n" + "".join(f"  k{i}: {{{{ .V{i} }}}}\n" for i in range(5))
    found = verdict_unknown(text)
    assert found == Unknown(7, 7, "")   # the fourth output action
    assert found.describe() == "what its actions render (too many to place one by one)"


def test_the_unknowns_of_gpu_infrastructure_are_info_while_roles_exempt_it() -> None:
    path = TEMPLATES / "go-device-plugin.yaml"
    code, found, message = _gpu011(path)
    assert (code, found) == (0, [("GPU011", "info", 6, 10)])
    assert "its pods are GPU infrastructure (by what they mount), whose findings are exempt" in message
    code, report = scan_json("--no-default-exemptions", str(path))
    assert (code, [(f["severity"], f["line"], f["column"]) for f in report["findings"]]) == (1, [("warning", 14, 23)])
