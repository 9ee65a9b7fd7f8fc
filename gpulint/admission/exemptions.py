"""The linter's exemptions as CEL: system components, their roles, the configuration's `exemptions:`.

- System components (data/system_components.yaml) match by image repository.
  A policy cannot split an image reference, so each component's repository
  patterns become one regular expression over the reference as written (an
  optional Docker Hub host and `library/`, then any tag and digest), per rule id.
- Roles (knowledge/roles.py) are recognised from the hostPath volumes the pod mounts.
- A configuration exemption becomes a condition on the request's namespace, the
  object's kind and name, the container's name and image. One with a `path`
  cannot be decided at admission (there is no file) and is not exported.

Containers whose image is a placeholder are matched by pod labels in the linter
(`templates`); such an image cannot run, so the policy has no use for them.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from gpulint.api import Rule
from gpulint.config.settings import Exemption
from gpulint.knowledge.celforms import TAG_DIGEST, alternatives, cel_list, cel_string, glob_regex, repository_regex, within_regex
from gpulint.knowledge.roles import DRIVER_DIRS, INSTALLER_DEV, MOUNT_ROLES, Role
from gpulint.suppress.systemcomponents import SystemComponent

# The namespace of the request, read from the namespace object: `namespace` is a reserved word in CEL,
# and a name Kubernetes escapes in objects' fields (`__namespace__`); the namespace's own name is plain.
NAMESPACE = "(namespaceObject != null ? namespaceObject.metadata.name : \"\")"


def system_components(components: Sequence[SystemComponent], rule_ids: Sequence[str]) -> str:
    """CEL: the components exempt from one of `rule_ids`, each once: its images as one regular expression,
    the rules it is exempt from, its namespaces (empty: any) and whether its image is also a GPU
    workload's base (then it is exempt only in pods that request no GPU)."""
    entries = []
    for component in components:
        exempt = sorted(set(component.exempt) & set(rule_ids))
        if not exempt or not component.images:
            continue
        repositories = "|".join(sorted({repository_regex(image, tags="") for image in component.images}))
        images = f"^(?:{repositories}){TAG_DIGEST}$"
        entries.append(f"{{\"images\": {cel_string(images)}, \"exempt\": {cel_list(exempt)}, "
                       f"\"namespaces\": {cel_list(component.namespaces)}, "
                       f"\"workloadBase\": {'true' if component.workload_base else 'false'}}}")
    return "[" + ", ".join(entries) + "]"


def system_component(rule_id: str) -> str:
    """CEL over `c`: its image is a system component exempt from `rule_id` here."""
    return (f"has(c.image) && variables.systemComponents.exists(s, {cel_string(rule_id)} in s.exempt && "
            f"(size(s.namespaces) == 0 || {NAMESPACE} in s.namespaces) && "
            "(!s.workloadBase || !variables.podRequestsGpu) && c.image.matches(s.images))")


def role_exemptions(rules: Iterable[Rule]) -> str:
    """CEL: the rule ids the pod's roles exempt it from (a list), from the hostPath volumes it mounts;
    which rules a role exempts, `rules` declare (Rule.exempt_roles)."""
    rules = list(rules)

    def exempt(role: Role) -> list[str]:
        return sorted(rule.id for rule in rules if role.name in rule.exempt_roles)

    parts = []
    for directory, role in MOUNT_ROLES:
        regex = "^" + within_regex(directory) + "$"
        parts.append(f"(variables.mountedHostPaths.exists(p, p.matches({cel_string(regex)})) ? "
                     f"{cel_list(exempt(role))} : [])")
    drivers = alternatives(within_regex(d) for d in DRIVER_DIRS)
    host = "^/+$|^/+dev/*$"
    parts.append(f'(object.kind == "DaemonSet" && ' f"variables.mountedHostPaths.exists(p, p.matches({cel_string(drivers)})) "
                 f"&& variables.mountedHostPaths.exists(p, p.matches({cel_string(host)})) ? "
                 f"{cel_list(exempt(INSTALLER_DEV))} : [])")
    return "variables.podRequestsGpu ? [] : " + " + ".join(parts)


# --- configuration exemptions --------------------------------------------------------


def _globs(patterns: Iterable[str]) -> str:
    return "^(?:" + "|".join(sorted(glob_regex(p) for p in patterns)) + ")$"


def image_globs(patterns: Iterable[str]) -> str:
    """Image globs matched as written and in the normalised form (`docker.io/...`), as the linter does:
    a glob on `docker.io/x/*` also matches `x/...` as written, and `docker.io/library/x` matches `x`."""
    forms = set()
    for pattern in patterns:
        forms.add(glob_regex(pattern))
        for hub in ("docker.io/library/", "docker.io/"):
            if pattern.startswith(hub):
                forms.add("(?:(?i:docker\\.io|index\\.docker\\.io)/)?" + ("(?:library/)?" if hub.endswith("library/") else "")
                          + glob_regex(pattern[len(hub):]))
                break
    return "^(?:" + "|".join(sorted(forms)) + ")$"


def exportable(exemption: Exemption) -> bool:
    """Whether an exemption can be decided at admission: it names no files."""
    return exemption.path is None


def exemption_condition(exemption: Exemption, container: bool) -> str | None:
    """CEL: the exemption holds for a finding on container `c` (`container`), or on the pod.
    None when it can never hold there (a `container` matcher on a pod finding)."""
    if not exportable(exemption):
        return None
    clauses = []
    if exemption.namespace is not None:
        clauses.append(f"{NAMESPACE}.matches({cel_string(_globs(exemption.namespace))})")
    if exemption.kind is not None:
        clauses.append(f"object.kind.matches({cel_string(_globs(exemption.kind))})")
    if exemption.name is not None:
        clauses.append(f"(has(object.metadata.name) && object.metadata.name.matches({cel_string(_globs(exemption.name))}))")
    if exemption.container is not None:
        if not container:
            return None
        clauses.append(f"c.name.matches({cel_string(_globs(exemption.container))})")
    if exemption.image is not None:
        regex = cel_string(image_globs(exemption.image))
        clauses.append(f"(has(c.image) && c.image.matches({regex}))" if container else
                       f"variables.containers.exists(c, has(c.image) && c.image.matches({regex}))")
    return "(" + " && ".join(clauses) + ")" if clauses else "true"


def config_exemptions(exemptions: Sequence[Exemption], rule_id: str, container: bool) -> str:
    conditions = [exemption_condition(e, container) for e in exemptions
                  if e.rules is None or rule_id in e.rules]
    return " || ".join(c for c in conditions if c is not None)

