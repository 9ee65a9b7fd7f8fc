"""GPU resource names: which are known, which the request rules validate, which
only look like a GPU, and which known name a typo was meant to be.

The known names are the `gpu-resources` setting (POLICY.md §5, configurable);
`overcommittable-resources` marks those whose requests may differ from limits
(e.g. ACS GPU-HPN shared GPUs), which the request/limit rules then skip.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from gpulint.knowledge.gpu import (
    DEFAULT_SETTINGS,
    Globs,
    dra_extended_class,
    edit_distance,
    globs_re,
    is_glob,
    per_gpu_settings,
    scheduler_gpu_resource,
)
from gpulint.knowledge.vendors import other_vendor_resource
from gpulint.lazypattern import lazy
from gpulint.record import record, set_field

if TYPE_CHECKING:
    from decimal import Decimal

    from gpulint.model.workload import Container, Workload

# Names Kubernetes once had and removed; still copied from old tutorials.
LEGACY_NAMES: dict[str, tuple[str, str]] = {
    "alpha.kubernetes.io/nvidia-gpu": ("nvidia.com/gpu", "removed in Kubernetes 1.10"),
}

# Documentation-only domains (RFC 2606): `example.com/gpu` in a sample is a
# placeholder, not a typo of a real resource.
_PLACEHOLDER_DOMAIN_RE = lazy(r"(?:^|\.)example\.(?:com|org|net)\Z|(?:^|\.)(?:example|test|invalid)\Z")

# Extended resource names the API server accepts (IsQualifiedName on `domain/name`).
_DNS_SUBDOMAIN_RE = lazy(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED_NAME_RE = lazy(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")


# Compared by the configured names only; the compiled globs and the answers are not compared.
@record(eq=True, frozen=True, compare=("gpu", "overcommittable", "concrete"))
class ResourceNames:
    """The configured GPU resource names, compiled once per distinct configuration."""

    __slots__ = ("gpu", "overcommittable", "concrete", "_gpu_re", "_over_re", "_validated", "_known",
                 "_unknown_gpu", "_written", "_hash")
    gpu: tuple[str, ...]              # `gpu-resources` globs
    overcommittable: tuple[str, ...]  # `overcommittable-resources` globs
    concrete: tuple[str, ...]         # plain names among both (candidates for suggestions)
    _gpu_re: Globs | None
    _over_re: Globs | None
    # Answers per resource name: a scan asks about the same few names in every container.
    _validated: dict[str, bool]
    _known: dict[str, bool]
    _unknown_gpu: dict[str, bool]
    # Answers per container's resource names together (most containers write the same
    # few, `cpu` and `memory`): whether any is validated, whether any is unknown but GPU-like.
    _written: dict[tuple, tuple[bool, bool]]
    _hash: int                        # not a parameter: computed from the names

    def __init__(self, gpu: tuple[str, ...], overcommittable: tuple[str, ...], concrete: tuple[str, ...],
                 _gpu_re: Globs | None = None, _over_re: Globs | None = None,
                 _validated: dict[str, bool] | None = None, _known: dict[str, bool] | None = None,
                 _unknown_gpu: dict[str, bool] | None = None,
                 _written: dict[tuple, tuple[bool, bool]] | None = None) -> None:
        set_field(self, "gpu", gpu)
        set_field(self, "overcommittable", overcommittable)
        set_field(self, "concrete", concrete)
        set_field(self, "_gpu_re", _gpu_re)
        set_field(self, "_over_re", _over_re)
        set_field(self, "_validated", {} if _validated is None else _validated)
        set_field(self, "_known", {} if _known is None else _known)
        set_field(self, "_unknown_gpu", {} if _unknown_gpu is None else _unknown_gpu)
        set_field(self, "_written", {} if _written is None else _written)
        set_field(self, "_hash", hash((gpu, overcommittable, concrete)))

    def __hash__(self) -> int:
        # Computed once: names key per-container memos and caches, asked per container.
        return self._hash

    def is_gpu(self, name: str) -> bool:
        return self._gpu_re is not None and self._gpu_re.match(name) is not None

    def is_overcommittable(self, name: str) -> bool:
        return self._over_re is not None and self._over_re.match(name) is not None

    def is_validated(self, name: str) -> bool:
        """Whether the request/limit rules (GPU101-GPU103) check this resource:
        a known GPU resource that the config does not mark overcommittable."""
        found = self._validated.get(name)
        if found is None:
            found = _remember(self._validated, name, self.is_gpu(name) and not self.is_overcommittable(name))
        return found

    def is_known(self, name: str) -> bool:
        found = self._known.get(name)
        if found is None:
            found = _remember(self._known, name, self.is_gpu(name) or self.is_overcommittable(name)
                              or other_vendor_resource(name) is not None or dra_extended_class(name) is not None
                              or scheduler_gpu_resource(name, self.gpu + self.overcommittable))
        return found

    def is_unknown_gpu_like(self, name: str) -> bool:
        """Whether `name` looks like a GPU resource (`looks_like_gpu`) but is not a known one
        nor a documentation placeholder (GPU104 reports it unless its config ignores it)."""
        found = self._unknown_gpu.get(name)
        if found is None:
            found = _remember(self._unknown_gpu, name, not (
                self.is_known(name) or is_placeholder_name(name) or not looks_like_gpu(name, self)))
        return found

    def written_kinds(self, names: tuple[str, ...]) -> tuple[bool, bool]:
        """(whether any of `names` `is_validated`, whether any `is_unknown_gpu_like`): a container
        whose names are neither has no entry GPU101-GPU104 read."""
        found = self._written.get(names)
        if found is None:
            found = (any(self.is_validated(name) for name in names),
                     any(self.is_unknown_gpu_like(name) for name in names))
            if len(self._written) >= _NAME_CACHE_LIMIT:
                self._written.clear()
            self._written[names] = found
        return found


_NAME_CACHE_LIMIT = 4096  # a scan of hostile input must not grow the per-name answers without bound


def _remember(cache: dict[str, bool], name: str, answer: bool) -> bool:
    if len(cache) >= _NAME_CACHE_LIMIT:
        cache.clear()
    cache[name] = answer
    return answer


@per_gpu_settings   # four rules ask per workload
def resource_names(settings: Mapping[str, Any]) -> ResourceNames:
    gpu = settings.get("gpu-resources")
    over = settings.get("overcommittable-resources")
    return _resource_names(tuple(gpu if gpu is not None else DEFAULT_SETTINGS["gpu-resources"]),
                           tuple(over if over is not None else DEFAULT_SETTINGS["overcommittable-resources"]))


@functools.lru_cache(maxsize=64)
def _resource_names(gpu: tuple[str, ...], overcommittable: tuple[str, ...]) -> ResourceNames:
    concrete: list[str] = []
    for name in gpu + overcommittable:
        if not is_glob(name) and name not in concrete:
            concrete.append(name)
    return ResourceNames(gpu, overcommittable, tuple(concrete), globs_re(gpu), globs_re(overcommittable))


def is_placeholder_name(name: str) -> bool:
    domain = name.rpartition("/")[0].lower()
    return bool(domain) and _PLACEHOLDER_DOMAIN_RE.search(domain) is not None


# A whole value that is a template variable (`${GPUS}`, `$GPUS`, `{{ .Values.gpus }}`,
# `<number-of-gpus>`) or a placeholder token replaced by hand or sed (`PLACEHOLDER_NUM_GPUS`,
# `__GPUS__`: capitals joined by underscores, which no quantity is): the value is filled in later.
_TEMPLATE_VALUE_RE = lazy(r"\s*(?:\$\{[^{}]+\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|<[^<>]+>"
                          r"|_*[A-Z][A-Z0-9]*(?:_+[A-Z0-9]+)+_*|__[A-Za-z][A-Za-z0-9_]*__)\s*\Z")


def is_template_value(value: object) -> bool:
    return isinstance(value, str) and _TEMPLATE_VALUE_RE.match(value) is not None


def looks_like_gpu(name: str, names: ResourceNames) -> bool:
    """Whether an (unknown) resource name was plausibly meant as a GPU resource.

    It contains `gpu` in any case (`nvidia.com/gpus`, `nvidia/GPU`), is a
    NVIDIA MIG-style name (`nvidia.com/mig...`), a removed legacy name, or is
    within two edits of a known name (`nvidia.com/gup`). Other extended
    resources (`hugepages-*`, `rdma/*`, `nvidia.com/hostdev`, `smarter-devices/*`,
    `aws.amazon.com/neuron`) share none of these traits.
    """
    lower = name.lower()
    if "gpu" in lower or lower in LEGACY_NAMES:
        return True
    if "/" not in lower and not api_rejects_name(lower):
        return False  # cpu, memory, ephemeral-storage, hugepages-*
    domain, _, local = lower.rpartition("/")
    if domain == "nvidia.com" and local.startswith("mig"):
        return True
    return _near_a_known_name(lower, names.concrete)


@functools.lru_cache(maxsize=4096)
def _near_a_known_name(lower: str, known_names: tuple[str, ...]) -> bool:
    # Cached: the same few resource names recur in every container of a scan.
    for known in known_names:
        known = known.lower()
        if len(known) >= 8 and abs(len(known) - len(lower)) <= 2 and edit_distance(lower, known) <= 2:
            return True
    return False


def api_rejects_name(name: str) -> bool:
    """Whether the API server refuses `name` as a container resource name
    (`validateContainerResourceName`): a bare name must be a standard resource,
    a prefixed one a qualified name with a lowercase DNS-subdomain prefix."""
    if "/" not in name:
        return not (name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-"))
    prefix, _, local = name.partition("/")
    if len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix):
        return True
    return len(local) > 63 or not _QUALIFIED_NAME_RE.match(local)


def suggestions(name: str, names: ResourceNames, limit: int = 2) -> list[str]:
    """Known names `name` was probably meant to be, best first (possibly none).

    A name within two edits wins (`aliyun.com/gpumem` -> `aliyun.com/gpu-mem`);
    then one with the same local part (`nvidia/gpu` -> `nvidia.com/gpu`; a bare
    `gpu` takes the first such name of the setting); then any name within the
    threshold. Within a tier the fewest edits win, then the same domain.
    """
    lower = name.lower()
    if lower in LEGACY_NAMES:
        return [LEGACY_NAMES[lower][0]]
    if lower != name and names.is_known(lower):
        return [lower]  # only the case is wrong (`nvidia.com/GPU`)
    domain, _, local = lower.rpartition("/")
    threshold = max(3, len(lower) // 2)
    scored: list[tuple[tuple[int, int, bool, int], str]] = []
    for index, known in enumerate(names.concrete + _repaired_globs(lower, names)):
        k_domain, _, k_local = known.lower().rpartition("/")
        distance = edit_distance(lower, known.lower())
        same_local = k_local == local
        if not same_local and distance > threshold:
            continue
        tier = 0 if distance <= 2 else 1 if same_local else 2
        closeness = index if tier == 1 and not domain else distance
        scored.append(((tier, closeness, k_domain != domain, index), known))
    if not scored:
        return []
    scored.sort()
    best = scored[0][0][:2]
    out: list[str] = []
    for rank, known in scored:
        if rank[:2] == best and known not in out:
            out.append(known)
    return out[:limit]


def _repaired_globs(lower: str, names: ResourceNames) -> tuple[str, ...]:
    """For known patterns `PREFIX*` that `lower` almost starts with, the name with
    its prefix corrected (`nvidia.com/mig1g.5gb` -> `nvidia.com/mig-1g.5gb`)."""
    out = []
    for pattern in names.gpu + names.overcommittable:
        prefix = pattern[:-1]
        if not pattern.endswith("*") or is_glob(prefix):
            continue
        common = 0
        while common < min(len(lower), len(prefix)) and lower[common] == prefix[common].lower():
            common += 1
        rest = lower[common:]
        if rest and common >= max(len(prefix) - 2, len(prefix) // 2):
            out.append(prefix + rest)
    return tuple(out)


# --- values the sharing schedulers accept ------------------------------------


@record(frozen=True)
class ShareRange:
    """Values a GPU-share resource accepts besides 0 (which requests nothing)."""

    __slots__ = ("minimum", "maximum", "step", "what")
    minimum: int
    maximum: int
    step: int
    what: str

    def __init__(self, minimum: int, maximum: int, step: int, what: str) -> None:
        set_field(self, "minimum", minimum)
        set_field(self, "maximum", maximum)
        set_field(self, "step", step)
        set_field(self, "what", what)

    def accepts(self, amount: Decimal) -> bool:
        if amount == 0:
            return True
        return self.minimum <= amount <= self.maximum and amount % self.step == 0

    def describe(self) -> str:
        if self.step == 1:
            return f"from {self.minimum} to {self.maximum}"
        return f"a multiple of {self.step} from {self.minimum} to {self.maximum}"


# Percentages: ACK cGPU compute share (POLICY.md §5), HAMi core and memory shares.
SHARE_RANGES: dict[str, ShareRange] = {
    "aliyun.com/gpu-core.percentage": ShareRange(5, 100, 5, "ACK cGPU compute percentage"),
    "nvidia.com/gpucores": ShareRange(1, 100, 1, "HAMi compute percentage"),
    "nvidia.com/gpumem-percentage": ShareRange(1, 100, 1, "HAMi memory percentage"),
}


# --- a container's resource entries ------------------------------------------

LIMITS = "limits"
REQUESTS = "requests"


# Entry and Pair are not frozen, as the model's views (model/workload.py): built per container;
# compared by identity, as those are.
@record
class Entry:
    """One resource as written in a container's limits or requests."""

    __slots__ = ("name", "section", "value", "path")
    name: str
    section: str        # LIMITS or REQUESTS
    value: object       # the quantity as written; None for a key without a value
    path: tuple         # document path of the key

    def __init__(self, name: str, section: str, value: object, path: tuple) -> None:
        self.name = name
        self.section = section
        self.value = value
        self.path = path


@record
class Pair:
    """A resource's limit and request entries (either may be absent)."""

    __slots__ = ("name", "limit", "request")
    name: str
    limit: Entry | None
    request: Entry | None

    def __init__(self, name: str, limit: Entry | None, request: Entry | None) -> None:
        self.name = name
        self.limit = limit
        self.request = request


def entries(container: "Container") -> list[Entry]:
    """Every resource key of the container, limits first, in document order.

    Keys whose value has the wrong type (a list, a mapping) are absent: the
    model reports them as GPU000. Computed once per container (five rules ask).
    """
    found = container.memo.get("resources.entries")
    if found is None:
        found = container.memo["resources.entries"] = _entries(container)
    return found


def _entries(container: "Container") -> list[Entry]:
    return list(entries_named(container, None))


def entries_named(container: "Container", keep: Callable[[str], bool] | None) -> Iterator[Entry]:
    """The entries of `entries(container)` whose name `keep` accepts (all for None), in
    the same order. Not memoized: it builds Entry objects only for the names kept, so a
    rule after a few names in every container skips building the rest."""
    res = container.resources
    for section, written, nulls in ((LIMITS, res.limits, res.null_limits),
                                    (REQUESTS, res.requests, res.null_requests)):
        section_path = res.path + (section,)  # == res.limits_path() / res.requests_path()
        for name, value in written.items():
            text = str(name)
            if keep is None or keep(text):
                yield Entry(text, section, value, section_path + (name,))
        for name in nulls:
            if keep is None or keep(name):
                yield Entry(name, section, None, section_path + (name,))


def unknown_gpu_like_entries(container: "Container", names: ResourceNames) -> Iterator[Entry]:
    """`entries_named(container, names.is_unknown_gpu_like)` (GPU104's entries)."""
    if not names.written_kinds(_written_names(container))[1]:
        return iter(())   # most containers: cpu and memory
    return entries_named(container, names.is_unknown_gpu_like)


def _written_names(container: "Container") -> tuple[str, ...]:
    """Every resource name of the container as its entries spell it, limits then requests
    (the key of `ResourceNames.written_kinds`)."""
    res = container.resources
    return tuple(map(str, (*res.limits, *res.requests))) + res.null_limits + res.null_requests


def validated_pairs(container: "Container", names: ResourceNames) -> list[Pair]:
    """The limit/request pairs of the resources GPU101-GPU103 check (see `is_validated`)."""
    if not names.written_kinds(_written_names(container))[0]:
        return []   # most containers: cpu and memory
    return _validated_pairs(container, names)


def _validated_pairs(container: "Container", names: ResourceNames) -> list[Pair]:
    pairs: dict[str, Pair] = {}
    for entry in entries_named(container, names.is_validated):
        pair = pairs.get(entry.name)
        if entry.section == LIMITS:
            pair = Pair(entry.name, entry, pair.request if pair is not None else None)
        else:
            pair = Pair(entry.name, pair.limit if pair is not None else None, entry)
        pairs[entry.name] = pair
    return list(pairs.values())


def validated_pairs_of(workload: "Workload", settings: Mapping[str, Any]) -> tuple[tuple["Container", list[Pair]], ...]:
    """(container, its `validated_pairs`) for each container of the workload that has any, in
    the order of `workload.containers()` (GPU101-GPU103: most workloads have none)."""
    return _resource_facts(workload, settings)[1]


def unknown_gpu_like_entries_of(workload: "Workload",
                                settings: Mapping[str, Any]) -> tuple[tuple["Container", list[Entry]], ...]:
    """(container, its `unknown_gpu_like_entries`) for each container of the workload that has
    any, in the order of `workload.containers()` (GPU104)."""
    return _resource_facts(workload, settings)[2]


def _resource_facts(workload: "Workload", settings: Mapping[str, Any]) -> tuple:
    """(settings, `validated_pairs_of`, `unknown_gpu_like_entries_of`): each container's
    resource names judged once per workload and settings, not once per rule (four ask)."""
    found = workload.memo.get("resources.facts")
    if found is None or found[0] is not settings:
        names = resource_names(settings)
        validated = []
        unknown = []
        for _pod, container in workload.containers():
            any_validated, any_unknown = names.written_kinds(_written_names(container))
            if any_validated:
                pairs = _validated_pairs(container, names)
                if pairs:
                    validated.append((container, pairs))
            if any_unknown:
                unknown.append((container, list(entries_named(container, names.is_unknown_gpu_like))))
        found = workload.memo["resources.facts"] = (settings, tuple(validated), tuple(unknown))
    return found


def written(value: object) -> str:
    """A quantity as the user wrote it, for messages: `0.5`, `500m`, `-1`, `""`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value if value.strip() else f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
