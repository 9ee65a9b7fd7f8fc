"""The system-component allowlist: GPU stack components whose findings are suppressed.

Device plugins, GPU Operator operands, DCGM, ACK gpushare and HAMi legitimately
run privileged, set NVIDIA_VISIBLE_DEVICES=all and mount driver paths (POLICY.md
§6). Their findings are reported as suppressed with the reason
"system component: <name>", never dropped. The built-in list is
`data/system_components.yaml`; a configuration adds entries (mirrors, in-house
components) through `system_component_suppressor(extra_entries=...)`.

Components whose image is in no list are recognised by their role
(knowledge/roles.py: a device plugin by its kubelet device-plugin mount, a
driver installer by its driver-directory and host-root mounts, ...), with the
reason "system component: <role>, by <evidence>". Roles are part of the
built-in exemptions: `--no-default-exemptions` turns them off with the list.

Matching is by full image repository, registry included, so that a look-alike
(`evil/k8s-device-plugin`, `nvcr.io.evil.com/nvidia/k8s-device-plugin`) is
never exempt. Labels only identify operator-owned templates whose images are
placeholders: such a container cannot run as written, so exempting it cannot
hide a runnable bypass.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping, Sequence

from gpulint.api import RULE_ID_RE, Rule
from gpulint.knowledge.gpu import pod_requests_gpu, settings_with
from gpulint.knowledge.roles import Role, image_role, mounted_host_paths, pod_roles, role_for
from gpulint.model.workload import Container, PodSpec, Workload
from gpulint.record import record, set_field
from gpulint.results.findings import Finding, Suppression
from gpulint.results.scanning import SuppressionContext

KIND = "system-component"
DOCKER_HUB = "docker.io"


class ExemptionError(ValueError):
    """An allowlist entry is malformed; the message names the entry and the field."""


# --- image references ----------------------------------------------------------
# Grammar of distribution/reference (what container runtimes accept).

_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_RE = re.compile(rf"(?:{_DOMAIN_LABEL}(?:\.{_DOMAIN_LABEL})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?\Z")
_REMAINDER_RE = re.compile(
    rf"(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?\Z"
)


def _split_domain(reference: str) -> tuple[str, str]:
    """(registry host, rest); Docker's rule: the first component is a host when it
    contains '.' or ':', is 'localhost', or has upper case letters."""
    first, sep, rest = reference.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost" or first.lower() != first):
        domain = first.lower()
        return (DOCKER_HUB if domain == "index.docker.io" else domain), rest
    return DOCKER_HUB, reference


@functools.lru_cache(maxsize=4096)
def image_repository(image: str) -> str | None:
    """`nvidia/cuda:12@sha256:..` -> `docker.io/nvidia/cuda`; None when `image` is not a
    valid reference (a placeholder such as "FILLED BY THE OPERATOR" or `{{ .Values.image }}`)."""
    domain, rest = _split_domain(image)
    if not _DOMAIN_RE.match(domain):
        return None
    match = _REMAINDER_RE.match(rest)
    if match is None:
        return None
    path = match.group("path")
    if domain == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    return f"{domain}/{path}"


def _compile_pattern(pattern: str) -> tuple[str, str | None]:
    """A repository glob -> (its literal text up to the first wildcard, regex source or
    None when it has no wildcard). `*`/`?` never cross '/', and never '.' in the host.

    The regex is compiled on first use (re's cache keeps it), and only for a repository
    that starts with the literal prefix: a scan compares most repositories with most of
    the built-in components' patterns, and all of them are parsed at start.
    """
    if "@" in pattern or ":" in pattern.rpartition("/")[2]:
        raise ValueError("a pattern names a repository: drop the tag or digest")
    domain, rest = _split_domain(pattern.strip())
    if not rest or rest.startswith("/") or rest.endswith("/") or "//" in rest:
        raise ValueError("expected registry/namespace/name")
    if domain == DOCKER_HUB and "/" not in rest:
        rest = f"library/{rest}"
    whole = f"{domain}/{rest}"
    wild = min((i for i in (whole.find("*"), whole.find("?")) if i >= 0), default=None)
    if wild is None:
        return whole, None

    def translate(text: str, star: str, one: str) -> str:
        # re.escape writes every `*` and `?` as `\*`, `\?` (and a backslash as `\\`): escaping the
        # whole text once, not char by char (the built-in list's patterns are parsed at every start).
        return re.escape(text).replace("\\*", star).replace("\\?", one)

    source = translate(domain, r"[^/.]*", r"[^/.]") + "/" + translate(rest, r"[^/]*", r"[^/]") + r"\Z"
    return whole[:wild], source


# --- the allowlist ---------------------------------------------------------------


@record(frozen=True)
class SystemComponent:
    """A known system component and the rules it is exempt from."""
    __slots__ = ("name", "images", "exempt", "source", "templates", "namespaces", "workload_base", "_patterns")
    name: str
    images: tuple[str, ...]                    # repository patterns as written
    exempt: frozenset[str]                     # rule ids
    source: str
    templates: tuple[Mapping[str, str], ...]   # pod label sets (placeholder images only)
    namespaces: tuple[str, ...]                # when set, the object must declare one of them
    # The image is also the base of GPU workloads: the entry holds only in pods that
    # request no GPUs (knowledge/roles.py: such a pod is a workload, not infrastructure).
    workload_base: bool
    # (literal prefix, regex source or None: the whole pattern is literal), per image pattern
    _patterns: tuple[tuple[str, str | None], ...]

    def __init__(self, name: str, images: tuple[str, ...], exempt: frozenset[str], source: str = "",
                 templates: tuple[Mapping[str, str], ...] = (), namespaces: tuple[str, ...] = (),
                 workload_base: bool = False, _patterns: tuple[tuple[str, str | None], ...] = ()) -> None:
        set_field(self, "name", name)
        set_field(self, "images", images)
        set_field(self, "exempt", exempt)
        set_field(self, "source", source)
        set_field(self, "templates", templates)
        set_field(self, "namespaces", namespaces)
        set_field(self, "workload_base", workload_base)
        set_field(self, "_patterns", _patterns)

    def matches_repository(self, repository: str) -> bool:
        for literal, source in self._patterns:
            if source is None:
                if repository == literal:
                    return True
            elif repository.startswith(literal) and re.match(source, repository):
                return True
        return False

    def matches_template(self, labels: Mapping[str, Any]) -> bool:
        return any(all(k in labels and str(labels[k]) == v for k, v in wanted.items())
                   for wanted in self.templates)


def parse_components(entries: Any, origin: str = "configuration") -> list[SystemComponent]:
    """Validate allowlist entries (the built-in file's or a configuration's)."""
    if not isinstance(entries, list):
        raise ExemptionError(f"{origin}: system components must be a list of entries")
    return [_parse_entry(entry, f"{origin}: system component #{i + 1}") for i, entry in enumerate(entries)]


def _parse_entry(entry: Any, where: str) -> SystemComponent:
    if not isinstance(entry, dict):
        raise ExemptionError(f"{where}: must be a mapping with name, images and exempt")
    unknown = sorted(set(entry) - {"name", "images", "templates", "exempt", "source", "namespaces",
                                   "workload-base"})
    if unknown:
        raise ExemptionError(f"{where}: unknown field(s) {', '.join(unknown)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ExemptionError(f"{where}: `name` must be a non-empty string")
    where = f"{where} ({name})"

    images = _string_list(entry.get("images"), where, "images")
    patterns = []
    for image in images:
        try:
            patterns.append(_compile_pattern(image))
        except ValueError as error:
            raise ExemptionError(f"{where}: image pattern {image!r}: {error}") from None

    templates = entry.get("templates") or []
    if not isinstance(templates, list) or not all(
            isinstance(t, dict) and t and all(isinstance(k, str) and isinstance(v, str) for k, v in t.items())
            for t in templates):
        raise ExemptionError(f"{where}: `templates` must be a list of non-empty label mappings (string: string)")
    if not images and not templates:
        raise ExemptionError(f"{where}: needs `images` (or `templates`)")

    exempt = _string_list(entry.get("exempt"), where, "exempt")
    if not exempt:
        raise ExemptionError(f"{where}: `exempt` must list the rule ids it is exempt from")
    bad = [rule for rule in exempt if not RULE_ID_RE.match(rule)]
    if bad:
        raise ExemptionError(f"{where}: `exempt` takes rule ids like GPU006, not {', '.join(map(repr, bad))}")

    source = entry.get("source", "")
    if not isinstance(source, str):
        raise ExemptionError(f"{where}: `source` must be a string")
    namespaces = _string_list(entry.get("namespaces"), where, "namespaces")
    workload_base = entry.get("workload-base", False)
    if not isinstance(workload_base, bool):
        raise ExemptionError(f"{where}: `workload-base` must be true or false")
    return SystemComponent(name.strip(), tuple(images), frozenset(exempt), source.strip(),
                           tuple(dict(t) for t in templates), tuple(namespaces), workload_base,
                           tuple(patterns))


def _string_list(value: Any, where: str, key: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ExemptionError(f"{where}: `{key}` must be a list of strings")
    return [v.strip() for v in value]


@functools.lru_cache(maxsize=1)
def builtin_components() -> tuple[SystemComponent, ...]:
    """The shipped allowlist (knowledge/data/system_components.yaml)."""
    from gpulint.load.packaged import read_text

    from gpulint.load.yamlload import Document, load_documents

    text = read_text("gpulint.knowledge", "data/system_components.yaml")
    for doc in load_documents(text):
        if isinstance(doc, Document) and isinstance(doc.data, dict):
            return tuple(parse_components(doc.data.get("components"), "gpulint/knowledge/data/system_components.yaml"))
    raise RuntimeError("gpulint/knowledge/data/system_components.yaml is unreadable")


# --- the suppressor ----------------------------------------------------------------


class SystemComponentSuppressor:
    """Suppresses a finding when every container it concerns is an exempt component.

    A finding about one container is decided by that container; a pod-level
    finding (a hostPath volume, hostPID) by every container of the workload, so
    that one recognised image cannot cover a pod that also runs something else.
    """

    kind = KIND

    def __init__(self, components: Sequence[SystemComponent], *, roles: bool = False,
                 settings: Mapping[str, Any] | None = None, builtin: bool = False,
                 rules: Mapping[str, Rule] | None = None) -> None:
        # `builtin`: the shipped components come first, read when a finding first asks
        # (a scan answered from the result cache asks nothing).
        self._given = tuple(components)
        self._builtin = builtin
        self._components: tuple[SystemComponent, ...] | None = None
        # Recognise unlisted components by their role (knowledge/roles.py); `settings`
        # say which resources are GPUs (a pod requesting GPUs has no role).
        self.roles = roles
        # Per rule id, the roles its rule exempts (Rule.exempt_roles); only those rules look for roles.
        self._exempt_roles = {rule_id: rule.exempt_roles for rule_id, rule in (rules or {}).items()
                              if rule.exempt_roles}
        self._settings = settings if settings is not None else settings_with()
        # Derived from `components` only (so the same in every process): per rule id
        # the components exempt from it; per repository the components it matches.
        self._exempt: dict[str, tuple[SystemComponent, ...]] = {}
        self._matching: dict[str, frozenset[int]] = {}
        # Per (rule id, namespace, image repository): the component exempt from the rule, or
        # None. A pure function of those three when the image is a valid reference.
        self._by_image: dict[tuple[str, str | None, str], SystemComponent | None] = {}
        # The roles of the pods of the workload last asked about, and what its exemption hint names:
        # the findings of one workload come one after another, each asking the same.
        self._workload: Workload | None = None
        self._pod_roles: dict[int, tuple[PodSpec, tuple[Role, ...]]] = {}
        self._hint_what: str | None = None

    @property
    def components(self) -> tuple[SystemComponent, ...]:
        if self._components is None:
            self._components = (*builtin_components(), *self._given) if self._builtin else self._given
        return self._components

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> Suppression | None:
        workload = ctx.workload
        if workload is None:
            return self._decide_image(finding, ctx)
        if not (self.components or self.roles):
            return None
        rule_id = finding.rule_id
        candidates = self._exempt.get(rule_id)
        if candidates is None:
            candidates = self._exempt[rule_id] = tuple(c for c in self.components if rule_id in c.exempt)
        exempt_roles = self._exempt_roles.get(rule_id) if self.roles else None
        if not candidates and not exempt_roles:
            return None
        container = ctx.container
        verdict = self._decide(rule_id, candidates, exempt_roles, workload, container)
        # (Not for a finding about no container: a volume nothing mounts is to be removed.)
        # (Only for the rules GPU infrastructure is exempt from: those that exempt some role.)
        if verdict is None and exempt_roles and container is not None:
            what = self._what(workload)
            if what:
                finding.message += _hint(rule_id, workload, what)
        return verdict

    def _decide_image(self, finding: Finding, ctx: SuppressionContext) -> Suppression | None:
        """A Dockerfile's finding: exempt when the image it builds shows a role the rule exempts."""
        if ctx.image_env is None or not self.roles:
            return None
        role = image_role(ctx.image_env)
        if role is not None and role.name in self._exempt_roles.get(finding.rule_id, ()):
            return Suppression(KIND, "system component: " + role.reason)
        return None

    def _decide(self, rule_id: str, candidates: tuple[SystemComponent, ...], exempt_roles: Any,
                workload: Workload, container: Container | None) -> Suppression | None:
        """The verdict on a finding of `rule_id` about `container` (None: every container of the workload)."""
        targets = _targets(workload, container)
        if not targets:
            return None
        names: list[str] = []
        for pod, target in targets:
            name = None
            if candidates:
                component = self._exempt_component(rule_id, candidates, workload, pod, target)
                if component is not None and component.workload_base and pod_requests_gpu(pod, self._settings):
                    component = None
                name = component.name if component is not None else None
            if name is None and exempt_roles:
                roles = self._roles(workload, pod)
                role = role_for(exempt_roles, roles) if roles else None
                name = role.reason if role is not None else None
            if name is None:
                return None
            if name not in names:
                names.append(name)
        return Suppression(KIND, "system component: " + ", ".join(names))

    def _roles(self, workload: Workload, pod: PodSpec) -> tuple[Role, ...]:
        """pod_roles(workload, pod), worked out once per pod of the workload last asked about."""
        self._about(workload)
        known = self._pod_roles.get(id(pod))
        if known is None or known[0] is not pod:
            known = self._pod_roles[id(pod)] = (pod, pod_roles(workload, pod, self._settings))
        return known[1]

    def _what(self, workload: Workload) -> str:
        """_infrastructure(workload), worked out once for the workload last asked about."""
        self._about(workload)
        if self._hint_what is None:
            self._hint_what = _infrastructure(workload, self._settings, self._roles)
        return self._hint_what

    def _about(self, workload: Workload) -> None:
        if workload is not self._workload:   # (the memo holds the workload: its id is not reused)
            self._workload, self._pod_roles, self._hint_what = workload, {}, None

    def _exempt_component(self, rule_id: str, candidates: tuple[SystemComponent, ...], workload: Workload,
                          pod: PodSpec, container: Container) -> SystemComponent | None:
        """_component_of among `candidates` (the components exempt from `rule_id`), cached by image."""
        repository = image_repository(container.image) if container.image else None
        if repository is None:
            return _component_of(workload, pod, container, candidates, self._matches)
        key = (rule_id, workload.namespace, repository)
        if key not in self._by_image:
            self._by_image[key] = _component_of(workload, pod, container, candidates, self._matches)
        return self._by_image[key]

    def component_of(self, workload: Workload, pod: PodSpec, container: Container) -> SystemComponent | None:
        """The first component `container` is recognised as (whatever it is exempt from)."""
        return _component_of(workload, pod, container, self.components, self._matches)

    def _matches(self, component: SystemComponent, repository: str) -> bool:
        """component.matches_repository(repository), answered once per repository (by the
        identity of the components, which this suppressor holds)."""
        matching = self._matching.get(repository)
        if matching is None:
            matching = self._matching[repository] = frozenset(
                id(c) for c in self.components if c.matches_repository(repository))
        return id(component) in matching


def exemption_hint(rule_id: str, workload: Workload, settings: Mapping[str, Any],
                   what_of: Any = None) -> str:
    """For an active finding on what looks like GPU infrastructure (a pod with a role this rule
    does not exempt, or a node agent: a DaemonSet requesting no GPUs), one line saying how to
    exempt it in .gpulint.yaml; "" otherwise. `what_of(workload)`: _infrastructure, or a memo of it."""
    what = what_of(workload) if what_of is not None else _infrastructure(workload, settings)
    return _hint(rule_id, workload, what) if what else ""


def _hint(rule_id: str, workload: Workload, what: str) -> str:
    """exemption_hint's line for infrastructure that looks like `what`."""
    where = f"kind: {workload.kind}, name: {workload.name}" if workload.name else f"kind: {workload.kind}"
    return (f" [GPU infrastructure ({what})? exempt it in .gpulint.yaml: "
            f"exemptions: [{{rules: [{rule_id}], {where}, reason: \"<why it needs this>\"}}]]")


def _infrastructure(workload: Workload, settings: Mapping[str, Any], roles_of: Any = None) -> str:
    """What GPU infrastructure `workload` looks like: its first pod role, "node agent", or ""."""
    for pod in workload.pod_specs:
        roles = roles_of(workload, pod) if roles_of is not None else pod_roles(workload, pod, settings)
        if roles:
            return roles[0].name
    return "node agent" if _node_agent(workload, settings) else ""


_NODE_CRITICAL = frozenset({"system-node-critical", "system-cluster-critical"})


def _node_agent(workload: Workload, settings: Mapping[str, Any]) -> bool:
    """A DaemonSet requesting no GPUs that works on the node itself (a mounted hostPath, the
    host's PID or network namespace, a node-critical priority): what infrastructure looks like.
    (A DaemonSet that merely runs everywhere, a GPU burn-in setting NVIDIA_VISIBLE_DEVICES, is not.)"""
    if workload.kind != "DaemonSet" or any(pod_requests_gpu(pod, settings) for pod in workload.pod_specs):
        return False
    return any(mounted_host_paths(pod) or pod.host_pid or pod.host_network
               or pod.raw.get("priorityClassName") in _NODE_CRITICAL for pod in workload.pod_specs)


def _targets(workload: Workload, container: Container | None) -> list[tuple[PodSpec, Container]]:
    pairs = list(workload.containers())
    if container is None:
        return pairs
    return [(pod, c) for pod, c in pairs if c is container]


def _component_of(workload: Workload, pod: PodSpec, container: Container,
                  candidates: Iterable[SystemComponent],
                  matches: Any = SystemComponent.matches_repository) -> SystemComponent | None:
    # Kubernetes rejects surrounding blanks, so they make a placeholder too: no strip().
    repository = image_repository(container.image) if container.image else None
    for component in candidates:
        if component.namespaces and workload.namespace not in component.namespaces:
            continue
        if repository is not None:
            if matches(component, repository):
                return component
        elif component.templates and (component.matches_template(pod.labels)
                                      or component.matches_template(workload.labels)):
            return component
    return None


def system_component_suppressor(extra_entries: Any = None, *, builtin: bool = True,
                                origin: str = "configuration",
                                settings: Mapping[str, Any] | None = None,
                                rules: Mapping[str, Rule] | None = None) -> SystemComponentSuppressor:
    """The allowlist suppressor: the built-in components and recognition by role
    (unless `builtin` is False, i.e. `--no-default-exemptions`) followed by
    `extra_entries` from a configuration, validated here (ExemptionError names the
    bad entry). `settings`: the scan's GPU settings (default: the built-in ones);
    `rules`: the scan's rules by id, whose `exempt_roles` say which roles they exempt."""
    extra = parse_components(extra_entries, origin) if extra_entries is not None else []   # checked now
    return SystemComponentSuppressor(extra, roles=builtin, settings=settings, builtin=builtin, rules=rules)
