"""Typed views of workloads: Workload -> PodSpec -> Container.

Rules read these views and never walk raw dicts. Every view carries `path`, the
document path of the node it describes, so a rule can point a finding at the
exact key or list entry. Values of the wrong type are not guessed at: the view
leaves the field empty and records a `TypeProblem`, which the engine reports as
GPU000 (a typo in a type can hide a bypass, so it must be visible).
"""

from __future__ import annotations

from typing import Any, Iterator

from gpulint.model.objects import KubeObject, ObjectRef
from gpulint.model.shell import basename
from gpulint.record import record, set_field

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh", "busybox"})

ROLE_CONTAINER = "container"
ROLE_INIT = "init"
ROLE_EPHEMERAL = "ephemeral"


@record(frozen=True)
class TypeProblem:
    """A field whose value has the wrong type; reported as GPU000."""

    __slots__ = ("path", "message")
    path: tuple
    message: str

    def __init__(self, path: tuple, message: str) -> None:
        set_field(self, "path", path)
        set_field(self, "message", message)


class Problems(list):
    """Collects TypeProblems while views are built."""

    def expect(self, value: Any, kind: type | tuple, path: tuple, what: str) -> Any:
        """Return `value` when it has the expected type (or is absent), else None."""
        # bool is an int subclass, but `true` is no integer or quantity to Kubernetes.
        if value is None or isinstance(value, kind) and not (isinstance(value, bool) and not _takes_bool(kind)):
            return value
        self.append(TypeProblem(path, f"{what} must be {_type_name(kind)}, not {_type_name(type(value))}"))
        return None


def _takes_bool(kind: type | tuple) -> bool:
    return bool in kind if isinstance(kind, tuple) else kind is bool


def _type_name(kind: type | tuple) -> str:
    if isinstance(kind, tuple):
        return " or ".join(_type_name(k) for k in kind)
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(kind, kind.__name__)


# The parts of a container below are built for every container of a scan, so they are not
# frozen: a frozen class's __init__ sets each field through object.__setattr__ (about three
# times the cost; -1.7 % of a cold scan's instructions). Nothing assigns to them once built
# (rules only read views). Like most classes of the scan path they are compared by identity
# (records without `eq`): nothing compares or hashes them by value.
@record
class EnvVar:
    """One entry of a container's `env`."""
    __slots__ = ("name", "value", "value_from", "path")
    name: str
    value: Any               # the literal value (str in valid manifests), None when absent
    value_from: dict | None  # valueFrom, when set
    path: tuple              # the list entry

    def __init__(self, name: str, value: Any, value_from: dict | None, path: tuple) -> None:
        self.name = name
        self.value = value
        self.value_from = value_from
        self.path = path


@record
class EnvFrom:
    """One entry of a container's `envFrom`."""
    __slots__ = ("source", "name", "prefix", "optional", "path")
    source: str              # "configMap" or "secret"
    name: str
    prefix: str
    optional: bool
    path: tuple              # the list entry

    def __init__(self, source: str, name: str, prefix: str, optional: bool, path: tuple) -> None:
        self.source = source
        self.name = name
        self.prefix = prefix
        self.optional = optional
        self.path = path


@record
class Resources:
    """A container's `resources`."""
    __slots__ = ("limits", "requests", "claims", "path", "null_limits", "null_requests")
    limits: dict             # resource name -> quantity as written
    requests: dict
    claims: list
    path: tuple              # the `resources` mapping (may not exist)
    # Names written without a value (`nvidia.com/gpu:`, e.g. an unfilled template
    # placeholder): kept apart so `limits`/`requests` hold only quantities.
    null_limits: tuple
    null_requests: tuple

    def __init__(self, limits: dict, requests: dict, claims: list, path: tuple, null_limits: tuple = (),
                 null_requests: tuple = ()) -> None:
        self.limits = limits
        self.requests = requests
        self.claims = claims
        self.path = path
        self.null_limits = null_limits
        self.null_requests = null_requests

    def limits_path(self, name: str | None = None) -> tuple:
        return self.path + (("limits", name) if name is not None else ("limits",))

    def requests_path(self, name: str | None = None) -> tuple:
        return self.path + (("requests", name) if name is not None else ("requests",))


@record
class Exec:
    """An argv the container runs: its main process, a hook or an exec probe."""

    __slots__ = ("argv", "paths", "origin")
    argv: tuple              # strings only
    paths: tuple             # document path of each argv element
    origin: str              # "command", "lifecycle.postStart", "livenessProbe", "script", ...

    def __init__(self, argv: tuple, paths: tuple, origin: str) -> None:
        self.argv = argv
        self.paths = paths
        self.origin = origin


@record
class Script:
    """Shell (or other) source text run by the container, e.g. `sh -c '<text>'`."""

    __slots__ = ("text", "path", "origin", "interpreter")
    text: str
    path: tuple              # the string scalar holding the text
    origin: str
    interpreter: str         # "sh", "bash", "python", ... ("" when unknown)

    def __init__(self, text: str, path: tuple, origin: str, interpreter: str) -> None:
        self.text = text
        self.path = path
        self.origin = origin
        self.interpreter = interpreter


@record
class VolumeMount:
    """One entry of a container's `volumeMounts`."""
    __slots__ = ("name", "mount_path", "path", "read_only")
    name: str
    mount_path: str
    path: tuple
    read_only: bool          # `readOnly: true`: the container cannot write below mount_path

    def __init__(self, name: str, mount_path: str, path: tuple, read_only: bool = False) -> None:
        self.name = name
        self.mount_path = mount_path
        self.path = path
        self.read_only = read_only


@record
class Volume:
    """One entry of a pod spec's `volumes`."""
    __slots__ = ("name", "kind", "source", "path")
    name: str
    kind: str                # "hostPath", "configMap", "secret", "emptyDir", ... ("" when none)
    source: dict             # the volume source mapping
    path: tuple              # the list entry

    def __init__(self, name: str, kind: str, source: dict, path: tuple) -> None:
        self.name = name
        self.kind = kind
        self.source = source
        self.path = path

    @property
    def host_path(self) -> str | None:
        if self.kind == "hostPath" and isinstance(self.source.get("path"), str):
            return self.source["path"]
        return None

    @property
    def host_path_path(self) -> tuple:
        """Document path of the `path:` key under `hostPath`."""
        return self.path + ("hostPath", "path")


@record
class Container:
    """A container (or init or ephemeral container) as the rules read it."""
    __slots__ = ("role", "name", "image", "env", "env_from", "resources", "privileged", "security_context",
                 "command", "args", "execs", "scripts", "volume_mounts", "path", "memo", "origin", "image_at",
                 "image_origin", "patches", "patched", "resources_from")
    role: str
    name: str
    image: str | None
    env: list[EnvVar]
    env_from: list[EnvFrom]
    resources: Resources
    privileged: bool | None
    security_context: dict
    command: list | None
    args: list | None
    execs: list[Exec]
    scripts: list[Script]
    volume_mounts: list[VolumeMount]
    path: tuple
    # Facts derived from the container that several rules ask for (its commands,
    # its resource entries...), computed once by the helper that owns each key.
    memo: dict
    # The object whose document `path` refers to when it is not the workload's own (the
    # string of a pod-spec patch, parsed as a document: gpulint.model.podpatch).
    origin: Any
    # Where the image comes from when it is not this mapping's `image` (a custom-resource
    # component running its resource's image, a patch container its base container's).
    image_at: tuple | None
    image_origin: Any
    # Containers of pod-spec patches merged into this one by name (their env applies too),
    # and for a patch container, the container it patches.
    patches: list
    patched: Any
    # Who decides the container's resources when its own are only defaults ("" when it does):
    # a KServe serving runtime's `kserve-container` runs with the InferenceService's.
    resources_from: str

    def __init__(self, role: str, name: str, image: str | None, env: list[EnvVar], env_from: list[EnvFrom],
                 resources: Resources, privileged: bool | None, security_context: dict, command: list | None,
                 args: list | None, execs: list[Exec], scripts: list[Script], volume_mounts: list[VolumeMount],
                 path: tuple, memo: dict | None = None, origin: Any = None, image_at: tuple | None = None,
                 image_origin: Any = None, patches: list | None = None, patched: Any = None,
                 resources_from: str = "") -> None:
        self.role = role
        self.name = name
        self.image = image
        self.env = env
        self.env_from = env_from
        self.resources = resources
        self.privileged = privileged
        self.security_context = security_context
        self.command = command
        self.args = args
        self.execs = execs
        self.scripts = scripts
        self.volume_mounts = volume_mounts
        self.path = path
        self.memo = {} if memo is None else memo
        self.origin = origin
        self.image_at = image_at
        self.image_origin = image_origin
        self.patches = [] if patches is None else patches
        self.patched = patched
        self.resources_from = resources_from

    def key_path(self, *items: Any) -> tuple:
        return self.path + items

    @property
    def image_path(self) -> tuple:
        """Document path of the image reference (in `image_origin` when that is set)."""
        return self.image_at if self.image_at is not None else self.path + ("image",)

    @property
    def gpu_limits(self) -> dict:
        return self.resources.limits

    def env_value(self, name: str) -> EnvVar | None:
        """The entry that wins for `name` (Kubernetes: the last one)."""
        found = None
        for var in self.env:
            if var.name == name:
                found = var
        return found


@record
class PodSpec:
    """A pod spec and its containers as the rules read them."""
    __slots__ = ("path", "label", "host_pid", "host_network", "host_ipc", "runtime_class_name", "node_selector",
                 "affinity", "tolerations", "volumes", "annotations", "labels", "metadata_path", "resource_claims",
                 "containers", "raw", "operator_resources", "operator_resources_path")
    path: tuple                       # the pod spec mapping (or Argo template)
    label: str                        # human description, e.g. "spec.template.spec"
    host_pid: bool
    host_network: bool
    host_ipc: bool
    runtime_class_name: str | None
    node_selector: dict
    affinity: dict
    tolerations: list
    volumes: list[Volume]
    annotations: dict                 # pod template annotations
    labels: dict
    metadata_path: tuple | None       # pod template metadata, when there is one
    resource_claims: list
    containers: list[Container]
    raw: dict
    # Resources a custom resource declares for the component whose pods its operator
    # creates (`services.<name>.resources.limits.gpu`, `resourcesPerNode`), name -> quantity
    # as written, limits and requests together; the operator puts them on the containers.
    operator_resources: dict
    operator_resources_path: tuple | None

    def __init__(self, path: tuple, label: str, host_pid: bool, host_network: bool, host_ipc: bool,
                 runtime_class_name: str | None, node_selector: dict, affinity: dict, tolerations: list,
                 volumes: list[Volume], annotations: dict, labels: dict, metadata_path: tuple | None,
                 resource_claims: list, containers: list[Container], raw: dict | None = None,
                 operator_resources: dict | None = None, operator_resources_path: tuple | None = None) -> None:
        self.path = path
        self.label = label
        self.host_pid = host_pid
        self.host_network = host_network
        self.host_ipc = host_ipc
        self.runtime_class_name = runtime_class_name
        self.node_selector = node_selector
        self.affinity = affinity
        self.tolerations = tolerations
        self.volumes = volumes
        self.annotations = annotations
        self.labels = labels
        self.metadata_path = metadata_path
        self.resource_claims = resource_claims
        self.containers = containers
        self.raw = {} if raw is None else raw
        self.operator_resources = {} if operator_resources is None else operator_resources
        self.operator_resources_path = operator_resources_path

    def volume(self, name: str) -> Volume | None:
        for volume in self.volumes:
            if volume.name == name:
                return volume
        return None

    def field_path(self, name: str) -> tuple:
        return self.path + (name,)


@record
class Workload:
    """An object as rules see it: its pod specs, or for a Node (no pod specs) its `node` view."""

    __slots__ = ("obj", "pod_specs", "problems", "node", "_pairs", "memo")
    obj: KubeObject
    pod_specs: list[PodSpec]
    problems: list[TypeProblem]
    node: Any         # gpulint.model.nodes.NodeView for a Node object
    # (pod, container) pairs, listed once: every rule walks them.
    _pairs: list[tuple[PodSpec, Container]] | None
    # Facts derived from the workload that are asked for per finding (its ignore
    # annotations...), computed once by the helper that owns each key.
    memo: dict

    def __init__(self, obj: KubeObject, pod_specs: list[PodSpec], problems: list[TypeProblem], node: Any = None,
                 _pairs: list[tuple[PodSpec, Container]] | None = None, memo: dict | None = None) -> None:
        self.obj = obj
        self.pod_specs = pod_specs
        self.problems = problems
        self.node = node
        self._pairs = _pairs
        self.memo = {} if memo is None else memo

    @property
    def ref(self) -> ObjectRef:
        return self.obj.ref

    @property
    def kind(self) -> str:
        return self.obj.ref.kind

    @property
    def name(self) -> str:
        return self.obj.ref.name

    @property
    def namespace(self) -> str | None:
        return self.obj.ref.namespace

    @property
    def annotations(self) -> dict:
        meta = self.obj.data.get("metadata")
        ann = meta.get("annotations") if isinstance(meta, dict) else None
        return ann if isinstance(ann, dict) else {}

    @property
    def labels(self) -> dict:
        meta = self.obj.data.get("metadata")
        labels = meta.get("labels") if isinstance(meta, dict) else None
        return labels if isinstance(labels, dict) else {}

    def containers(self) -> Iterator[tuple[PodSpec, Container]]:
        if self._pairs is None:
            self._pairs = [(pod, container) for pod in self.pod_specs for container in pod.containers]
        return iter(self._pairs)


# --- building views ---------------------------------------------------------


_CONTAINER_LISTS = (("initContainers", ROLE_INIT), ("containers", ROLE_CONTAINER),
                    ("ephemeralContainers", ROLE_EPHEMERAL), ("sidecars", ROLE_CONTAINER))
_CONTAINERS_ONLY = (("containers", ROLE_CONTAINER),)
_OTHER_CONTAINER_LISTS = frozenset(key for key, _role in _CONTAINER_LISTS) - {"containers"}


def build_pod_spec(obj: KubeObject, rel: tuple, label: str, problems: Problems,
                   extra_containers: list[tuple[tuple, dict, str, str]] | None = None,
                   fallback: dict | None = None, fallback_rel: tuple | None = None) -> PodSpec | None:
    """View of the pod spec at `rel` (a path inside the object).

    `extra_containers` adds container-like mappings kept outside `containers`
    (Argo `container`/`script`, KServe `predictor.model`) as (path, mapping,
    script origin, name the controller gives it when the mapping has none). `fallback` is an
    enclosing mapping whose pod-level fields apply when the spec lacks them
    (an Argo Workflow spec for its templates).
    """
    holder, spec = _at_with_parent(obj.data, rel)
    if not isinstance(spec, dict):
        return None
    base = obj.base + rel

    # (`type(x) is T or problems.expect(...)`: the usual well-typed value skips
    # building the path and message a problem would need.)
    containers: list[Container] = []
    # (Most pod specs have `containers` alone: the other lists are looked up only when there.)
    for key, role in _CONTAINER_LISTS if not _OTHER_CONTAINER_LISTS.isdisjoint(spec) else _CONTAINERS_ONLY:
        items = spec.get(key)
        if items is None:
            continue
        if type(items) is not list:
            items = problems.expect(items, list, base + (key,), key)
        for i, item in enumerate(items or ()):
            path = base + (key, i)
            if type(item) is dict or problems.expect(item, dict, path, f"{key}[{i}]") is not None:
                containers.append(build_container(item, path, role, problems))
    for path, item, origin, default_name in extra_containers or ():
        container = build_container(item, path, ROLE_CONTAINER, problems, script_origin=origin)
        container.name = container.name or default_name
        containers.append(container)

    volumes: list[Volume] = []
    raw_volumes = spec.get("volumes")
    if raw_volumes is not None:
        _volumes(raw_volumes, base + ("volumes",), problems, volumes)
    fallback_path = obj.base + fallback_rel if fallback is not None and fallback_rel is not None else None
    if fallback_path is not None:
        raw_volumes = fallback.get("volumes")   # type: ignore[union-attr]
        if raw_volumes is not None:
            _volumes(raw_volumes, fallback_path + ("volumes",), problems, volumes)

    # A pod template's metadata sits beside its `spec`; Argo templates keep the pod's beside its containers.
    if rel and rel[-1] == "spec":
        meta = holder.get("metadata")   # (the walk to `spec` went through this mapping)
        meta_path = base[:-1] + ("metadata",)
    else:
        meta = spec.get("metadata")
        meta_path = base + ("metadata",)
    if isinstance(meta, dict):
        annotations = meta.get("annotations")
        labels = meta.get("labels")
    else:
        meta = annotations = labels = meta_path = None

    annotations = annotations if isinstance(annotations, dict) else {}
    labels = labels if isinstance(labels, dict) else {}
    fields = _pod_fields(spec, base, problems, fallback, fallback_path)
    if not fields:
        # (Most pod specs set none of the fields _pod_fields reads: their defaults, without a lookup each.)
        return PodSpec(base, label, False, False, False, None, {}, {}, [], volumes, annotations, labels, meta_path,
                       [], containers, spec)
    get = fields.get
    # (Positional, in field order: see build_container.)
    return PodSpec(
        base, label,
        get("hostPID") is True,
        get("hostNetwork") is True,
        get("hostIPC") is True,
        get("runtimeClassName"),
        get("nodeSelector") or {},
        get("affinity") or {},
        get("tolerations") or [],
        volumes,
        annotations,
        labels,
        meta_path,
        get("resourceClaims") or [],
        containers,
        spec,
    )


def _volumes(raw_volumes: Any, vpath: tuple, problems: Problems, volumes: list[Volume]) -> None:
    """Add the entries of a pod spec's `volumes` list (at `vpath`) to `volumes`."""
    if type(raw_volumes) is not list:
        raw_volumes = problems.expect(raw_volumes, list, vpath, "volumes") or ()
    for i, item in enumerate(raw_volumes):
        path = vpath + (i,)
        if type(item) is not dict and problems.expect(item, dict, path, f"volumes[{i}]") is None:
            continue
        kind = ""
        for key, value in item.items():
            if key == "name" or value is None:
                continue
            if type(value) is dict:
                kind = kind or key
            else:  # `hostPath: /dev/nvidia0`: the API server rejects it, and it would hide the path
                problems.expect(value, dict, path + (key,), f"volumes[{i}].{key}")
        source = item.get(kind) or {}
        if kind == "hostPath" and source.get("path") is not None and type(source["path"]) is not str:
            problems.expect(source["path"], str, path + (kind, "path"), f"volumes[{i}].hostPath.path")
        volumes.append(Volume(str(item.get("name", "")), kind, source, path))


# The pod-level fields a PodSpec reads, with their type, in the order their problems are listed.
_POD_FIELDS = (("nodeSelector", dict), ("hostPID", bool), ("hostNetwork", bool), ("hostIPC", bool),
               ("runtimeClassName", str), ("affinity", dict), ("tolerations", list), ("resourceClaims", list))
_POD_FIELD_NAMES = frozenset(name for name, _kind in _POD_FIELDS)


def _pod_fields(spec: dict, base: tuple, problems: Problems, fallback: dict | None,
                fallback_path: tuple | None) -> dict:
    """The pod-level fields of `spec` (else of `fallback`, at `fallback_path`) that have their
    type, by name. (One loop, not a call per field: most pod specs set one or two of them.)"""
    found: dict = {}
    if _POD_FIELD_NAMES.isdisjoint(spec) and (fallback_path is None or _POD_FIELD_NAMES.isdisjoint(fallback or ())):
        return found
    for name, kind in _POD_FIELDS:
        if name in spec:
            value, where = spec[name], base
        elif fallback is not None and fallback_path is not None and name in fallback:
            value, where = fallback[name], fallback_path
        else:
            continue
        if type(value) is not kind:
            value = problems.expect(value, kind, where + (name,), name)
        found[name] = value
        if name == "nodeSelector" and value:
            for key, item in value.items():
                if item is not None and type(item) is not str:  # `nvidia.com/gpu.present: true` is rejected
                    problems.expect(item, str, where + (name, key), f"nodeSelector[{key}]")
    return found


def build_container(data: dict, path: tuple, role: str, problems: Problems,
                    script_origin: str = "") -> Container:
    name = data.get("name")
    image = data.get("image")
    if image is not None and type(image) is not str:
        image = problems.expect(image, str, path + ("image",), "image")

    env: list[EnvVar] = []
    items = data.get("env")
    if items is not None and type(items) is not list:
        items = problems.expect(items, list, path + ("env",), "env")
    for i, item in enumerate(items or ()):
        entry = path + ("env", i)
        if type(item) is not dict and problems.expect(item, dict, entry, f"env[{i}]") is None:
            continue
        var_name = item.get("name")
        if var_name is not None and type(var_name) is not str:
            var_name = problems.expect(var_name, str, entry + ("name",), "env name")
        value = item.get("value")
        if value is not None and not isinstance(value, str):
            problems.expect(value, str, entry + ("value",), "env value")
        value_from = item.get("valueFrom")
        if value_from is not None and type(value_from) is not dict:
            value_from = problems.expect(value_from, dict, entry + ("valueFrom",), "valueFrom")
        env.append(EnvVar(var_name or "", value, value_from, entry))

    env_from: list[EnvFrom] = []
    items = data.get("envFrom")   # (most containers have none)
    if items is not None and type(items) is not list:
        items = problems.expect(items, list, path + ("envFrom",), "envFrom")
    for i, item in enumerate(items) if items else ():
        entry = path + ("envFrom", i)
        if type(item) is not dict and problems.expect(item, dict, entry, f"envFrom[{i}]") is None:
            continue
        prefix = item.get("prefix")
        if prefix is not None and type(prefix) is not str:
            prefix = problems.expect(prefix, str, entry + ("prefix",), "envFrom prefix")
        prefix = prefix or ""
        for source, key in (("configMap", "configMapRef"), ("secret", "secretRef")):
            ref = item.get(key)
            if ref is None:
                continue
            if type(ref) is not dict:
                ref = problems.expect(ref, dict, entry + (key,), key)
            if ref is not None:
                env_from.append(EnvFrom(source, str(ref.get("name", "")), prefix,
                                        ref.get("optional") is True, entry))

    resources = _resources(data.get("resources"), path + ("resources",), problems)

    security = data.get("securityContext")
    if type(security) is not dict:
        security = {} if security is None else \
            problems.expect(security, dict, path + ("securityContext",), "securityContext") or {}
    privileged = security.get("privileged")
    if privileged is not None and type(privileged) is not bool:
        privileged = problems.expect(privileged, bool, path + ("securityContext", "privileged"), "privileged")

    command = _string_list(data.get("command"), path, "command", problems)
    args = _string_list(data.get("args"), path, "args", problems)
    execs, scripts = _execs(data, path, command, args, problems, script_origin)

    mounts: list[VolumeMount] = []
    items = data.get("volumeMounts")
    if items is not None and type(items) is not list:
        items = problems.expect(items, list, path + ("volumeMounts",), "volumeMounts")
    for i, item in enumerate(items or ()):
        entry = path + ("volumeMounts", i)
        if type(item) is not dict and problems.expect(item, dict, entry, f"volumeMounts[{i}]") is None:
            continue
        mounts.append(VolumeMount(str(item.get("name", "")), str(item.get("mountPath", "")), entry,
                                  item.get("readOnly") is True))

    # (Positional: with fourteen keywords the call cost twice the __init__ itself.)
    return Container(role, str(name) if name is not None else "", image, env, env_from, resources, privileged,
                     security, command, args, execs, scripts, mounts, path)


def _resources(raw: Any, path: tuple, problems: Problems) -> Resources:
    # (An absent mapping or list is no problem: taken as empty without asking `problems`.)
    if type(raw) is not dict:
        raw = {} if raw is None else problems.expect(raw, dict, path, "resources") or {}
    # The usual sections, absent or holding only quantities, without calling _quantities: a
    # section of quantities is the mapping as written, as other views hold their mappings. (The
    # values checked by a loop: on Python 3.11 `issuperset(map(type, ...))` builds a set.)
    found: list = []   # limits, their names without a value, requests, theirs
    for key in ("limits", "requests"):
        section = raw.get(key)
        nulls: tuple = ()
        if type(section) is dict:
            for quantity in section.values():
                if type(quantity) not in _QUANTITY_TYPES:
                    section, nulls = _quantities(section, path, key, problems)
                    break
        elif section is None:
            section = {}
        else:
            section, nulls = _quantities(section, path, key, problems)
        found.append(section)
        found.append(nulls)
    limits, null_limits, requests, null_requests = found
    claims = raw.get("claims")
    if type(claims) is not list:
        claims = [] if claims is None else problems.expect(claims, list, path + ("claims",), "resources.claims") or []
    return Resources(limits, requests, claims, path, null_limits, null_requests)


_QUANTITY_TYPES = frozenset({str, int, float})   # (not bool: `true` is no quantity)


def _quantities(section: Any, path: tuple, key: str, problems: Problems) -> tuple[dict, tuple]:
    """`resources.<key>`: its quantities by name, and the names written without a value."""
    if section is None:
        return {}, ()
    if type(section) is not dict:
        problems.expect(section, dict, path + (key,), f"resources.{key}")
        return {}, ()
    clean = {}
    null_names = []
    for name, quantity in section.items():
        kind = type(quantity)
        if kind is str or kind is int or kind is float:
            clean[name] = quantity
        elif quantity is None:
            null_names.append(str(name))
        elif problems.expect(quantity, (str, int, float), path + (key, name), f"{key}[{name}]") is not None:
            clean[name] = quantity
    return clean, tuple(null_names)


def _string_list(raw: Any, parent: tuple, key: str, problems: Problems, what: str | None = None) -> list | None:
    """The strings of list `parent.key` (`what` names it in problems; default `key`)."""
    if raw is None:
        return None
    if type(raw) is list:
        # Only strings, the usual case: the list as written, as other views hold their mappings.
        # (A loop: on Python 3.11 `issuperset(map(type, raw))` builds a set, which costs more for
        # the few words of a command.)
        for item in raw:
            if type(item) is not str:
                break
        else:
            return raw
    what = what or key
    items = raw if type(raw) is list else problems.expect(raw, list, parent + (key,), what)
    if items is None:
        return None
    out = []
    for i, item in enumerate(items):
        if type(item) is str:
            out.append(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            # The API server rejects a number here (`command: [sleep, 10]`); the text is still read.
            problems.expect(item, str, parent + (key, i), f"{what}[{i}]")
            out.append(str(item))
        else:
            problems.expect(item, str, parent + (key, i), f"{what}[{i}]")
            out.append("")
    return out


# The path suffix of each word of `command` and `args` (longer lists are rare: made one by one).
_ARGV_AT_MAX = 32
_COMMAND_AT = tuple(("command", i) for i in range(_ARGV_AT_MAX))
_ARGS_AT = tuple(("args", i) for i in range(_ARGV_AT_MAX))


def _execs(data: dict, path: tuple, command: list | None, args: list | None,
           problems: Problems, script_origin: str) -> tuple[list[Exec], list[Script]]:
    execs: list[Exec] = []
    if command or args:
        words = len(command) if command else 0
        more = len(args) if args else 0
        if words <= _ARGV_AT_MAX and more <= _ARGV_AT_MAX:
            ats = _COMMAND_AT[:words] + _ARGS_AT[:more]
        else:
            ats = tuple([("command", i) for i in range(words)] + [("args", i) for i in range(more)])
        # (One concatenation per word, its suffix made once: a loop over `range` with a tuple made
        # per word, or `map(path.__add__, ...)`, costs more for the few words of a command.)
        main_paths = []
        for at in ats:
            main_paths.append(path + at)
        execs.append(Exec(tuple((command or []) + (args or [])), tuple(main_paths), "command"))

    lifecycle = data.get("lifecycle")
    if lifecycle is not None:
        if type(lifecycle) is not dict:
            lifecycle = problems.expect(lifecycle, dict, path + ("lifecycle",), "lifecycle") or {}
        for hook in ("postStart", "preStop"):
            handler = lifecycle.get(hook)
            if isinstance(handler, dict):
                _exec_handler(handler, path + ("lifecycle", hook), f"lifecycle.{hook}", execs, problems)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        handler = data.get(probe)
        if isinstance(handler, dict) and "exec" in handler:  # most probes are httpGet/tcpSocket
            _exec_handler(handler, path + (probe,), probe, execs, problems)

    scripts: list[Script] = []
    for item in execs:
        # (Most programs are neither a shell nor a wrapper of one: shell_script would say None.)
        if item.argv[0].rpartition("/")[2] in _SHELLS_AND_WRAPPERS:
            script = shell_script(item)
            if script is not None:
                scripts.append(script)
    script = data.get("script")
    if isinstance(script, str):
        # Tekton-style `script:` (any container found by shape): run by its shebang's interpreter, else sh.
        scripts.append(Script(script, path + ("script",), "container script", _shebang(script) or "sh"))
    elif script is not None:
        problems.expect(script, str, path + ("script",), "script")
    if script_origin and isinstance(data.get("source"), str):
        # Argo `script`: `source` is written to a file and run by `command`.
        interpreter = basename(command[0]) if command else ""
        scripts.append(Script(data["source"], path + ("source",), script_origin, interpreter))
    return execs, scripts


def _shebang(text: str) -> str:
    """`#!/usr/bin/env bash` -> `bash`; "" without a `#!` line."""
    if not text.startswith("#!"):
        return ""
    words = text[2:].split("\n", 1)[0].split()
    while words and basename(words[0]) in ("env", "busybox"):
        words = [w for w in words[1:] if not w.startswith("-")]
    return basename(words[0]) if words else ""


def _exec_handler(handler: dict, path: tuple, origin: str, execs: list[Exec], problems: Problems) -> None:
    exec_ = handler.get("exec")
    if not isinstance(exec_, dict):
        return
    argv = _string_list(exec_.get("command"), path + ("exec",), "command", problems, f"{origin}.exec.command")
    if argv:
        execs.append(Exec(tuple(argv), tuple(path + ("exec", "command", i) for i in range(len(argv))), origin))


_SCRIPT_WRAPPERS = frozenset({"env", "busybox", "exec", "nice", "tini", "dumb-init", "--"})
_SHELLS_AND_WRAPPERS = SHELLS | _SCRIPT_WRAPPERS   # what an argv `shell_script` reads starts with
_PLAIN_SHELLS = SHELLS - _SCRIPT_WRAPPERS            # (busybox is read as a wrapper first)


def shell_script(item: Exec) -> Script | None:
    """The script of `sh -c SCRIPT` (also `/bin/bash -ec`, `env bash -c`, `busybox sh -c`)."""
    argv = item.argv
    n = len(argv)
    if not n:
        return None
    start = 0  # the shell, after the wrappers
    shell = argv[0].rpartition("/")[2]   # (basename, inline: called for every shell command)
    if n > 2 and argv[1] == "-c" and argv[2] != "--" and shell in _PLAIN_SHELLS:
        return Script(argv[2], item.paths[2], item.origin, shell)   # `sh -c SCRIPT`, the usual form
    while shell in _SCRIPT_WRAPPERS:
        start += 1
        if start == n:
            return None
        shell = argv[start].rpartition("/")[2]
    if shell not in SHELLS:
        return None
    for i in range(start + 1, n):
        arg = argv[i]
        if arg[:1] == "-" and arg[1:2] != "-" and "c" in arg:
            script_at = i + 1
            if script_at < n and argv[script_at] == "--":  # `bash -lc -- SCRIPT` (KubeRay)
                script_at += 1
            if script_at < n:
                return Script(argv[script_at], item.paths[script_at], item.origin, shell)
            return None
        if not arg.startswith("-"):
            return None
    return None


def at_path(data: Any, rel: tuple | None) -> Any:
    """The node at `rel` inside `data` (None when the path does not exist)."""
    return _at(data, rel)


def _at_with_parent(data: Any, rel: tuple) -> tuple[Any, Any]:
    """(the node holding the last step of `rel`, the node at `rel`) inside `data`, as `_at` walks."""
    parent = None
    for item in rel:
        parent = data
        if isinstance(data, dict) and isinstance(item, str):
            data = data.get(item)
        elif isinstance(data, list) and isinstance(item, int) and 0 <= item < len(data):
            data = data[item]
        else:
            return parent, None
    return parent, data


def _at(data: Any, rel: tuple | None) -> Any:
    return None if rel is None else _at_with_parent(data, rel)[1]
