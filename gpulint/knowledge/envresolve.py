"""Where a container's environment variable really comes from.

Kubernetes builds a container's environment from `envFrom` sources first (in
order, a later source overriding an earlier one), then `env` entries (the last
entry of a name wins, and any `env` entry overrides `envFrom`). An `envFrom`
source with a `prefix` provides `prefix + key` for each of its keys. This module
applies those rules against the ConfigMaps and Secrets of the whole scan
(`gpulint.model.index`), so that rules agree on the effective value of a variable
such as NVIDIA_VISIBLE_DEVICES and on which sources cannot be checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulint.knowledge.envexpand import expanded_value
from gpulint.lazypattern import lazy
from gpulint.model.workload import Container, EnvFrom, EnvVar, PodSpec, Workload
from gpulint.record import record, set_field

if TYPE_CHECKING:
    from gpulint.model.index import ConfigIndex, ConfigSource

LITERAL = "literal"        # env: value (or no value: the empty string)
VALUE_FROM = "valueFrom"   # env: valueFrom
ENV_FROM = "envFrom"       # envFrom of a ConfigMap/Secret in the scan

_SOURCE_WORDS = {"configMap": "ConfigMap", "secret": "Secret"}
_FIELD_RE = lazy(r"metadata\.(annotations|labels)\[['\"]?([^'\"\]]+)['\"]?\]\Z")


# Not frozen, as the model's views (model/workload.py): built per container and variable asked
# about; compared by identity, as those are.
@record
class EnvSetting:
    """What sets the variable, and its value when the scan shows it."""

    __slots__ = ("via", "value", "path", "origin", "var", "env_from", "ref_kind", "source", "key", "secret")
    via: str                         # LITERAL, VALUE_FROM or ENV_FROM
    value: str | None                # the effective value, None when the scan cannot tell
    path: tuple                      # the env entry or envFrom entry that sets it
    origin: str                      # human description: 'ConfigMap "gpu-env" key "X"', 'fieldRef ...'
    var: EnvVar | None
    env_from: EnvFrom | None
    ref_kind: str | None             # "configMap"/"secret" when it references one
    source: "ConfigSource | None"    # that ConfigMap/Secret, when it is in the scan
    key: str | None                  # its key
    secret: bool                     # the value comes from a Secret (keep it out of messages)

    def __init__(self, via: str, value: str | None, path: tuple, origin: str, var: EnvVar | None = None,
                 env_from: EnvFrom | None = None, ref_kind: str | None = None, source: "ConfigSource | None" = None,
                 key: str | None = None, secret: bool = False) -> None:
        self.via = via
        self.value = value
        self.path = path
        self.origin = origin
        self.var = var
        self.env_from = env_from
        self.ref_kind = ref_kind
        self.source = source
        self.key = key
        self.secret = secret

    @property
    def external(self) -> bool:
        """It references a ConfigMap/Secret that is not in the scan."""
        return self.ref_kind is not None and self.source is None


@record(frozen=True)
class EnvResolution:
    """What sets an environment variable, as far as the scan can see."""
    __slots__ = ("setting", "unverifiable")
    setting: EnvSetting | None               # None: nothing the scan can see sets the variable
    unverifiable: tuple[EnvFrom, ...]        # envFrom sources outside the scan that could still set it

    def __init__(self, setting: EnvSetting | None, unverifiable: tuple[EnvFrom, ...] = ()) -> None:
        set_field(self, "setting", setting)
        set_field(self, "unverifiable", unverifiable)

    @property
    def known_unset(self) -> bool:
        return self.setting is None and not self.unverifiable


# What nothing sets resolves to (one object: it is frozen).
UNSET = EnvResolution(None)


def resolve(name: str, container: Container, pod: PodSpec, namespace: str | None,
            index: "ConfigIndex") -> EnvResolution:
    """The effective setting of variable `name` in `container` (`pod` is its own
    pod, `namespace` its workload's). Computed once per container, name and
    index: several rules ask about NVIDIA_VISIBLE_DEVICES."""
    key = ("envresolve.resolve", name)
    memo = container.memo.get(key)
    if memo is None or memo[0] is not index:
        memo = container.memo[key] = (index, _resolve(name, container, pod, namespace, index))
    return memo[1]


def env_setters(workload: Workload, name: str) -> dict[Container, PodSpec]:
    """The containers of the workload (-> their pod, in the order of `workload.containers()`)
    that have an `env` entry `name` or any `envFrom`: `resolve` finds `name` set in no other.
    Listed once per workload and name, so that a rule walks only these (GPU003, GPU004 and
    GPU005 ask about NVIDIA_VISIBLE_DEVICES; most containers have neither)."""
    key = ("envresolve.env_setters", name)
    found = workload.memo.get(key)
    if found is None:
        found = workload.memo[key] = {}
        for pod, container in workload.containers():
            if container.env_from:
                found[container] = pod
                continue
            for var in container.env:
                if var.name == name:
                    found[container] = pod
                    break
    return found


def _resolve(name: str, container: Container, pod: PodSpec, namespace: str | None,
             index: "ConfigIndex") -> EnvResolution:
    var = container.env_value(name)
    if var is not None:
        return EnvResolution(_from_env(var, container, pod, namespace, index))

    if not container.env_from:
        return UNSET   # most variables of most containers
    setting: EnvSetting | None = None
    pending: list[EnvFrom] = []
    for item in container.env_from:
        if not item.name or not name.startswith(item.prefix):
            continue  # a source without a name is invalid and provides nothing
        key = name[len(item.prefix):]
        source = index.lookup(item.source, namespace, item.name)
        if source is None:
            pending.append(item)
            continue
        entry = source.entries.get(key)
        if entry is None or _section(entry.path) == "binaryData":
            continue
        # A later source overrides everything before it, known or not.
        setting = EnvSetting(
            ENV_FROM, entry.value, item.path, _describe_source(item.source, item.name, key, item.prefix),
            env_from=item, ref_kind=item.source, source=source, key=key, secret=item.source == "secret")
        pending = []
    return EnvResolution(setting, tuple(pending))


def _from_env(var: EnvVar, container: Container, pod: PodSpec, namespace: str | None,
              index: "ConfigIndex") -> EnvSetting:
    if var.value_from is None:
        # None: it references a variable the manifest does not show (`$(NAME)`, see envexpand.py)
        return EnvSetting(LITERAL, expanded_value(container, var), var.path, "env value", var=var)
    value_from = var.value_from
    for source_kind, ref_key in (("configMap", "configMapKeyRef"), ("secret", "secretKeyRef")):
        ref = value_from.get(ref_key)
        if isinstance(ref, dict):
            name, key = str(ref.get("name", "")), str(ref.get("key", ""))
            origin = _describe_source(source_kind, name, key, "")
            source = index.lookup(source_kind, namespace, name) if name else None
            entry = source.entries.get(key) if source is not None else None
            value = entry.value if entry is not None and _section(entry.path) != "binaryData" else None
            return EnvSetting(VALUE_FROM, value, var.path, origin, var=var, ref_kind=source_kind,
                              source=source, key=key, secret=source_kind == "secret")
    field = value_from.get("fieldRef")
    if isinstance(field, dict):
        field_path = str(field.get("fieldPath", ""))
        return EnvSetting(VALUE_FROM, _pod_field(field_path, pod), var.path, f"fieldRef {field_path}", var=var)
    resource = value_from.get("resourceFieldRef")
    if isinstance(resource, dict):
        return EnvSetting(VALUE_FROM, None, var.path, f"resourceFieldRef {resource.get('resource', '')}", var=var)
    kinds = ", ".join(str(k) for k in value_from) or "an empty valueFrom"
    return EnvSetting(VALUE_FROM, None, var.path, kinds, var=var)


def _pod_field(field_path: str, pod: PodSpec) -> str | None:
    """A downward-API value the manifest itself fixes: a pod template annotation or label."""
    match = _FIELD_RE.match(field_path)
    if match is None:
        return None
    values = pod.annotations if match.group(1) == "annotations" else pod.labels
    value = values.get(match.group(2))
    return value if isinstance(value, str) else None


def _describe_source(kind: str, name: str, key: str, prefix: str) -> str:
    text = f'{_SOURCE_WORDS.get(kind, kind)} "{name}" key "{key}"'
    if prefix:
        text += f' (prefix "{prefix}")'
    return text


def describe_env_from(item: EnvFrom) -> str:
    text = f'{_SOURCE_WORDS.get(item.source, item.source)} "{item.name}"'
    if item.prefix:
        text += f' (prefix "{item.prefix}")'
    return text


def _section(path: tuple) -> str:
    return str(path[-2]) if len(path) >= 2 else ""
