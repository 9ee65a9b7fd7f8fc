"""The knowledge rules share, written as CEL for admission (ValidatingAdmissionPolicy, Kyverno).

A rule's admission form (`Rule.admission`, gpulint/admission/) is a CEL
condition over one object; the facts it rests on come from here, built from
the same lists the linter uses (gpu.py, hostpaths.py, vendors.py), so that a
list extended in the knowledge or the configuration changes both. Regular
expressions are RE2 (what Kubernetes' `matches()` runs): no back-references,
no look-around, `$` at the end of the text.

The exporter defines these variables once per policy (rules refer to them, never
repeat them):

- `variables.spec`: the pod spec (a Pod's, or the template's of a workload);
- `variables.meta`: the pod's metadata (a Pod's, or the template's);
- `variables.containers`: initContainers, containers and ephemeralContainers;
- `variables.podRequestsGpu`: whether some container requests GPUs the
  scheduler accounts for (`requests_gpu`), or a GPU-share annotation does;
- `variables.hostVolumes`, `variables.hostPaths`: the pod's hostPath volumes, their paths;
- `variables.mountedHostPaths`: those some container mounts;
- `variables.knowledge`: a map of the lists below, as regular expressions.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from fnmatch import fnmatchcase

from gpulint.knowledge.gpu import (
    COMPONENT_WORDS,
    CUDA_WORDS,
    GPU_WORDS,
    VISIBLE_DEVICES,
    ImageRule,
    builtin_image_rules,
    DRA_EXTENDED_PREFIX,
    GPU_INSTANCE_TYPES,
    NGC_RELEASE_TAG,
    SHARE_ANNOTATION_SHAPE,
    ngc_families,
    ngc_mirror_names,
    setting,
)
from gpulint.knowledge.hostpaths import (
    DEVICE_DIRS,
    NOT_TREES,
    RUNTIME_LOG_DIRS,
    SOFTWARE_PARENTS,
    RUNTIME_RUN_DIRS,
    RUNTIME_STATE_DIRS,
    RUNTIME_SOCKETS,
)
from gpulint.knowledge.vendors import GENERIC_ACCELERATOR_KEYS, OTHER_ACCELERATOR_RESOURCES, OTHER_IMAGE_WORDS

NO_MATCH = "^$a"  # a regular expression no text matches (an empty list)
_META = frozenset(".^$*+?()[]{}|\\")


def escape(text: str) -> str:
    """`text` as an RE2 literal (only metacharacters escaped, so expressions stay readable)."""
    return "".join("\\" + ch if ch in _META else ch for ch in text)


def cel_string(text: str) -> str:
    """A CEL string literal of `text`: raw (`r"..."`) when it holds backslashes (regular
    expressions stay as written), else double-quoted with escapes (YAML then quotes it with '...')."""
    if "\\" in text and '"' not in text and "\n" not in text:
        return f'r"{text}"'
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def cel_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(cel_string(item) for item in items) + "]"


def glob_regex(glob: str, star: str = ".*", one: str = ".") -> str:
    """A shell glob (fnmatch: `*`, `?`, `[seq]`, `[!seq]`) as an RE2 fragment, unanchored."""
    out, i = [], 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(star)
        elif ch == "?":
            out.append(one)
        elif ch == "[":
            end = glob.find("]", i + 2 if glob[i + 1:i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(escape(ch))
            else:
                body = glob[i + 1:end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("]", "\\]")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        else:
            out.append(escape(ch))
        i += 1
    return "".join(out)


def globs_regex(globs: Iterable[str]) -> str:
    """Globs as one anchored RE2 expression (matches a whole name)."""
    parts = sorted({glob_regex(g) for g in globs})
    return "^(?:" + "|".join(parts) + ")$" if parts else NO_MATCH


def alternatives(regexes: Iterable[str]) -> str:
    parts = [r for r in regexes if r != NO_MATCH]
    return "^(?:" + "|".join(f"(?:{r})" for r in parts) + ")$" if parts else NO_MATCH


# --- image references ----------------------------------------------------------------

DOCKER_HUB_HOSTS = ("docker.io", "index.docker.io")
# What may follow a repository in a reference: a tag, a digest (distribution/reference).
TAG_DIGEST = r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?"


def repository_regex(pattern: str, star: str = "[^/]*", tags: str = TAG_DIGEST, host_star: str = "[^/.]*") -> str:
    """A repository pattern (`nvcr.io/nvidia/x`, `docker.io/nvidia/x`, `registry.cn-*.aliyuncs.com/acs/x`)
    as a regex over image references as written: Docker Hub's host and `library/` may be left out, the
    host's case does not matter, then `tags` (by default any tag and digest). `*` does not cross `/`
    (the allowlist's rule), nor `.` in the host, unless `star` and `host_star` say otherwise."""
    domain, _, rest = pattern.strip().partition("/")
    domain = domain.lower()
    one = "[^/]" if star == "[^/]*" else "[^:@]"
    body = glob_regex(rest, star=star, one=one)
    if domain in DOCKER_HUB_HOSTS:
        if "/" not in rest:
            rest = f"library/{rest}"
            body = glob_regex(rest, star=star, one=one)
        if rest.startswith("library/"):
            body = "(?:library/)?" + glob_regex(rest[len("library/"):], star=star, one=one)
        host = "(?:(?i:docker\\.io|index\\.docker\\.io)/)?"
    else:
        host = "(?i:" + glob_regex(domain, star=host_star, one=host_star[:-1]) + ")/"
    return host + body + tags


# --- images that default NVIDIA_VISIBLE_DEVICES (image_visible_devices_default) ----------

_DIGEST = r"(?:@.*)?"  # parse_image: whatever follows the first @
_TAG_GLOB = {"star": "[^/:@]*", "one": "[^/:@]"}


def _tags_regex(tags: Sequence[str]) -> str:
    return "(?:" + "|".join(sorted(glob_regex(t, **_TAG_GLOB) for t in tags)) + ")"


def image_rule_regexes(rule: ImageRule) -> tuple[str, str]:
    """(matches, excepted) of a data/gpu_images.yaml entry: the rule holds for a reference that matches
    the first and not the second. Its glob covers `registry/repository` (`*` crosses `/`, as fnmatch);
    `tags` and `except-tags` are matched against the tag a pull resolves (`latest` when none is written);
    a reference pinned by digest alone matches no rule that names tags."""
    star = "[^:@]*"
    if not rule.tags and not rule.except_tags:
        return alternatives([repository_regex(rule.match, star, host_star="[^/]*", tags=f"(?::[^/:@]*)?{_DIGEST}")]), NO_MATCH
    untagged = repository_regex(rule.match, star, host_star="[^/]*", tags="")            # no tag, no digest: `latest`
    tagged = repository_regex(rule.match, star, host_star="[^/]*", tags=f":{_tags_regex(rule.tags or ['*'])}{_DIGEST}")
    forms = [tagged] + ([untagged] if not rule.tags or any(fnmatchcase("latest", t) for t in rule.tags) else [])
    excepted = NO_MATCH
    if rule.except_tags:
        bad = [repository_regex(rule.match, star, host_star="[^/]*", tags=f":{_tags_regex(rule.except_tags)}{_DIGEST}")]
        if any(fnmatchcase("latest", t) for t in rule.except_tags):
            bad.append(untagged)
        excepted = alternatives(bad)
    return alternatives(forms), excepted


def _word(core: str, before: str, after: str, outside: str = "/:@") -> str:
    """`core` as a word of one part of a reference (a path component, the tag): the text around it in the
    part, if any, ends (starts) with a character not in `before` (`after`); a part holds no `outside`."""
    return (f"(?:[^{outside}]*[^{before}{outside}])?(?:{core})(?:[^{after}{outside}][^{outside}]*)?")


def _in_name(word: str) -> str:
    """In the repository's last component (the image's name)."""
    return f"(?:^|/){word}(?::[^/:@]*)?(?:@.*)?$"


def _in_tag(word: str) -> str:
    return f":{word}(?:@.*)?$"


def _in_component(word: str) -> str:
    return f"(?:^|/){word}(?:[/:@]|$)"


def image_evidence() -> dict[str, str]:
    """`image_by_evidence` as regular expressions over references as written (all case-insensitive but the
    NGC test, as the linter's)."""
    cuda = _word(CUDA_WORDS, "a-z0-9", "a-z")
    gpu = _word(GPU_WORDS, "a-z0-9", "a-z")
    component = _word(f"(?:{COMPONENT_WORDS})s?", "a-z", "a-z")
    vendor = _word("|".join(words for words, _vendor in OTHER_IMAGE_WORDS), "a-z0-9", "a-z")
    mirrors = "|".join(sorted(escape(name) for name in ngc_mirror_names()))
    return {
        "imageNgc": ngc_regex(),
        "imageCuda": f"(?i:{_in_name(cuda)}|{_in_tag(cuda)})",
        "imageVendor": f"(?i:{_in_component(vendor)}|{_in_tag(vendor)})",
        "imageMirror": f"(?:^|/)(?:{mirrors})(?::[^/:@]*)?{_DIGEST}$",
        "imageCpuTag": f"(?i::{_word('cpu', 'a-z', 'a-z')}(?:@.*)?$)",
        "imageGpu": f"(?i:{_in_name(gpu)}|{_in_tag(gpu)})",
        "imageComponent": f"(?i:{_in_name(component)})",
        # What parse_image refuses: a template, blanks.
        "imageNotReference": r"^\s*$|[\s{}$<>]",
    }


def ngc_regex() -> str:
    """`image_by_evidence` on NGC: a NIM microservice, an image of a CUDA family (data/gpu_images.yaml
    `ngc-families`: the path under nvcr.io/nvidia/, or its last component), an NGC release tag."""
    families = ngc_families()
    paths = "|".join(sorted(escape(f) for f in families if "/" in f))
    names = "|".join(sorted(escape(f) for f in families if "/" not in f))
    ngc = "^(?i:nvcr\\.io)/"
    return alternatives([
        f"{ngc}nim/.*",
        f"{ngc}nvidia/(?:{paths})(?::[^/:@]*)?{_DIGEST}",
        f"{ngc}nvidia/(?:[^:@]*/)?(?:{names})(?::[^/:@]*)?{_DIGEST}",
        f"{ngc}nvidia/[^:@]*:{NGC_RELEASE_TAG}{_DIGEST}",
    ]).replace("^(?:(?:^", "^(?:(?:")


def image_rules() -> str:
    """CEL: the list of [matches, excepted] of the data/gpu_images.yaml entries that set `all`."""
    pairs = [image_rule_regexes(rule) for rule in builtin_image_rules() if rule.sets == "all"]
    return "[" + ", ".join(f"[{cel_string(m)}, {cel_string(e)}]" for m, e in pairs) + "]"


def configured_images_regex(patterns: Sequence[str]) -> str:
    """The `gpu-images` setting: globs over the reference as written or normalised (`docker.io/...`)."""
    forms = set()
    for pattern in patterns:
        forms.add(glob_regex(pattern))
        for hub in ("docker.io/library/", "docker.io/"):
            if pattern.startswith(hub):
                optional = "(?:library/)?" if hub.endswith("library/") else ""
                forms.add("(?:(?i:docker\\.io|index\\.docker\\.io)/)?" + optional + glob_regex(pattern[len(hub):]))
                break
    return alternatives(sorted(forms))


def gpu_image(container: str) -> str:
    """CEL: the container's image sets NVIDIA_VISIBLE_DEVICES=all by default (`image_visible_devices_default`
    says `all`): a configured pattern, else a listed image unless a listed image sets void, else evidence."""
    image = f"{container}.image"
    k = "variables.knowledge"
    evidence = (f"{image}.matches({k}.imageNgc) || {image}.matches({k}.imageCuda) || "
                f"(!{image}.matches({k}.imageVendor) && (({image}.matches({k}.imageMirror) && "
                f"!{image}.matches({k}.imageCpuTag)) || "
                f"({image}.matches({k}.imageGpu) && !{image}.matches({k}.imageComponent))))")
    listed = f"variables.imageRules.exists(r, {image}.matches(r[0]) && !{image}.matches(r[1]))"
    return (f"(has({image}) && !{image}.matches({k}.imageNotReference) && ({image}.matches({k}.configuredImages) "
            f"|| (!{image}.matches({k}.voidImages) && ({listed} || {evidence}))))")


def void_images_regex() -> str:
    """Images known to set NVIDIA_VISIBLE_DEVICES=void whatever their tag (data/gpu_images.yaml)."""
    return alternatives(repository_regex(rule.match) for rule in builtin_image_rules()
                        if rule.sets == "void" and not rule.tags and not rule.except_tags)


# --- NVIDIA_VISIBLE_DEVICES (classify_visible_devices) ---------------------------

# A value hides GPUs when it is blank or one of its comma-separated tokens is `void`;
# it injects no GPU when every non-blank token is `none`.
VOID_RE = r"^[\s,]*$|(?:^|,)\s*void\s*(?:,|$)"
_NONE_RE = r"^[\s,]*none\s*(?:,[\s,]*(?:none\s*)?)*$"


def grants_devices(value: str, none_hides: bool = True) -> str:
    """CEL: whether NVIDIA_VISIBLE_DEVICES=`value` (a CEL string expression) exposes GPUs."""
    grants = f"!{value}.matches({cel_string(VOID_RE)})"
    if none_hides:
        grants += f" && !{value}.matches({cel_string(_NONE_RE)})"
    return grants


def hides_devices(value: str) -> str:
    """CEL: whether the value hides GPUs (void, empty or none): GPU007's `_may_see_gpus` is false."""
    return f"({value}.matches({cel_string(VOID_RE)}) || {value}.matches({cel_string(_NONE_RE)}))"


def sets_variable(container: str) -> str:
    """CEL: `container` has an `env` entry named NVIDIA_VISIBLE_DEVICES."""
    return f"(has({container}.env) && {container}.env.exists(e, e.name == {cel_string(VISIBLE_DEVICES)}))"


def last_entry(container: str, condition: str) -> str:
    """CEL: the entry of NVIDIA_VISIBLE_DEVICES that takes effect (the last, as in Kubernetes and
    `Container.env_value`), bound to `e`, meets `condition`; false when there is none."""
    named = f"{container}.env.filter(e, e.name == {cel_string(VISIBLE_DEVICES)})"
    return f"({sets_variable(container)} && [{named}[size({named}) - 1]].all(e, {condition}))"


# --- GPU requests (requests_gpu, nvidia_request) ----------------------------------

# A quantity that is zero ("0", "0.0", "0m", "0Gi", "0e3"): not a request.
_ZERO_RE = r"^[+-]?(?:0+\.?0*|\.0+)(?:[eE][+-]?[0-9]+|[a-zA-Z]*)$"


def _positive(quantity: str) -> str:
    """CEL: a quantity that is not zero (an unreadable one counts, as `_asks_gpus` reads it)."""
    zero = (f"((type({quantity}) == int && {quantity} == 0) || (type({quantity}) == double && {quantity} == 0.0)"
            f" || (type({quantity}) == string && {quantity}.matches({cel_string(_ZERO_RE)})))")
    return f"!{zero}"


def asks(container: str, key_condition: str) -> str:
    """CEL: whether `container` has a resource `k` meeting `key_condition` (CEL over `k`)
    with a positive quantity in its limits or requests."""
    parts = []
    for section in ("limits", "requests"):
        where = f"{container}.resources.{section}"
        parts.append(f"(has({where}) && {where}.exists(k, {key_condition} && {_positive(where + '[k]')}))")
    return f"(has({container}.resources) && ({' || '.join(parts)}))"


def requests_gpu(container: str) -> str:
    """CEL: `requests_gpu` without the pod's share annotations (variables.podRequestsGpu has them); a
    KEP-5004 DRA extended resource is a device request too (a scheduler's own GPU resource, which
    needs the edit distance to the known domains, is the linter's)."""
    claims = f"(has({container}.resources) && has({container}.resources.claims) && size({container}.resources.claims) > 0)"
    keys = "(k.matches(variables.knowledge.gpuResources) || k.matches(variables.knowledge.draExtendedResources))"
    return f"({asks(container, keys)} || {claims})"


_NVIDIA_KEY = "k.matches(variables.knowledge.gpuResources) && !k.matches(variables.knowledge.otherResources)"


def nvidia_request(container: str) -> str:
    """CEL: `nvidia_request`: a GPU resource of no other vendor, a DRA claim or a share annotation."""
    claims = f"(has({container}.resources) && has({container}.resources.claims) && size({container}.resources.claims) > 0)"
    return (f"({asks(container, _NVIDIA_KEY)} || {claims} "
            "|| variables.shareAnnotation)")


_SAYS_NVIDIA = '"(?i)nvidia"'


def targets_gpu_nodes() -> str:
    """CEL: the pod lands on NVIDIA GPU nodes (`gpu_node_targeting`) by an NVIDIA label key, or a generic
    key whose value says nvidia, in its nodeSelector or node affinity (required or preferred terms, any
    operator but NotIn and DoesNotExist), or by a toleration of an NVIDIA taint. Values that name NVIDIA
    hardware without the word (`h100`, GPU instance types) are the linter's only."""
    selector = "variables.spec.nodeSelector"
    node = "variables.spec.affinity.nodeAffinity"
    required = f"{node}.requiredDuringSchedulingIgnoredDuringExecution"
    preferred = f"{node}.preferredDuringSchedulingIgnoredDuringExecution"

    def term(t: str) -> str:
        expression = ('has(e.key) && !(has(e.operator) && e.operator in ["NotIn", "DoesNotExist"]) && '
                      "(e.key.matches(variables.knowledge.gpuNodeLabels) || "
                      "(e.key.matches(variables.knowledge.genericAcceleratorLabels) && has(e.values) && "
                      f"e.values.exists(x, type(x) == string && x.matches({_SAYS_NVIDIA}))))")
        return " || ".join(f"(has({t}.{section}) && {t}.{section}.exists(e, {expression}))"
                           for section in ("matchExpressions", "matchFields"))

    affinity = (f"(has(variables.spec.affinity) && has(variables.spec.affinity.nodeAffinity) && "
                f"((has({required}) && has({required}.nodeSelectorTerms) && "
                f"{required}.nodeSelectorTerms.exists(t, {term('t')})) || "
                f"(has({preferred}) && {preferred}.exists(p, has(p.preference) && ({term('p.preference')})))))")
    return (f"(has({selector}) && {selector}.exists(k, k.matches(variables.knowledge.gpuNodeLabels) || "
            f"(k.matches(variables.knowledge.genericAcceleratorLabels) && type({selector}[k]) == string "
            f"&& {selector}[k].matches({_SAYS_NVIDIA})))) || {affinity} || (has(variables.spec.tolerations) && "
            "variables.spec.tolerations.exists(t, has(t.key) && t.key.matches(variables.knowledge.gpuTolerations)))")


def share_annotation() -> str:
    """CEL: the pod carries a GPU-share annotation (KAI, HAMi, or one shaped like them)."""
    k = "variables.knowledge"
    return ("(has(variables.meta.annotations) && "
            f"variables.meta.annotations.exists(k, k.matches({k}.gpuRequestAnnotations) || "
            f"k.matches({k}.shareAnnotationShape)))")


def serverless_gpu_instance() -> str:
    """CEL: the pod runs on a serverless GPU instance of its own (gpu.serverless_gpu_instance)."""
    k = "variables.knowledge"
    return ("(has(variables.meta.annotations) && "
            f"variables.meta.annotations.exists(k, k.matches({k}.instanceSpecsKey) && "
            f"string(variables.meta.annotations[k]).matches({k}.gpuInstanceTypes)))")


# --- host paths (gpu_host_access, container_runtime_access, gpu_related_path) ----------

_SEP = "/+"


def path_regex(path: str) -> str:
    """`/run/nvidia` -> a regex for the path as written: repeated slashes, `/var/run` for `/run`."""
    parts = [escape(p) for p in path.split("/") if p]
    head = "/+"
    if parts and parts[0] == "run":
        head, parts = "/+(?:var/+)?", ["run", *parts[1:]]
    return head + _SEP.join(parts)


def within_regex(path: str) -> str:
    return path_regex(path) + "(?:/.*)?"


# A path with a `.` or `..` component: normalisation would be needed to judge it, and
# a policy cannot normalise, so the admission forms treat it as the strict case.
DOT_SEGMENT_RE = r"(?:^|/)\.\.?(?:/|$)"


def gpu_host_path_regex() -> str:
    """Node paths `gpu_host_access` reports whatever area they are in: the root, `/dev`, NVIDIA
    device nodes, `/dev/char`, the GPU Operator's driver root."""
    forms = ["/+", "/+dev/*", "/+dev/+nvidia.*", "/+(?:var/+)?run/+nvidia/*", within_regex("/run/nvidia/driver")]
    forms += [within_regex(directory) for directory in DEVICE_DIRS]
    return alternatives(forms)


def driver_file_regex() -> str:
    """`hostpaths._DRIVER_FILE_RE` on the path's last component (outside /proc and /sys)."""
    return r"^(?:.*/)?(?:libnvidia-[^/]+|libcuda\.so[^/]*|nvidia-smi)/*$"


def nvidia_tree_regex() -> str:
    """`hostpaths.nvidia_tree` without its areas (`no_tree_regex` says where no tree is)."""
    tree_name = (r"(?i:nvidia[-_](?:\d+(?:\.\d+)*|drivers?|docker|container(?:[-_](?:toolkit|runtime))?|"
                 r"toolkit|current|legacy))")
    parents = "|".join(escape(p) for p in SOFTWARE_PARENTS) + r"|[^/]*-linux-gnu"
    child = r"(?:lib(?:32|64|x32)?|bin|sbin|drivers?|toolkit|current|\d+(?:\.\d+)*)"
    return alternatives([
        f"(?:.*/)?{tree_name}(?:/.*)?",
        f"(?:.*/)?(?i:{parents})/+(?i:nvidia)(?:/.*)?",
        "/+var/+lib/+(?i:nvidia)(?:/.*)?",
        f"(?:.*/)?(?i:nvidia)/+{child}(?:/.*)?",
    ])


def no_tree_regex() -> str:
    """Areas that hold no NVIDIA tree (`hostpaths._NOT_TREES`), and daemons' state under /run."""
    return alternatives([within_regex(area) for area in NOT_TREES] + [within_regex("/run")])


def gpu_host_path(path: str) -> str:
    """CEL: `gpu_host_access` reports the node path `path` (an expression) as written."""
    k = "variables.knowledge"
    return (f"({path}.matches({k}.gpuHostPaths) || "
            f"({path}.matches({k}.driverFiles) && !{path}.matches({k}.procSysPaths)) || "
            f"({path}.matches({k}.nvidiaTrees) && !{path}.matches({k}.noTreePaths)))")


def container_runtime_path(path: str) -> str:
    """CEL: `container_runtime_access` reports `path` (mounted writable: a policy judges the volume)."""
    k = "variables.knowledge"
    return f"({path}.matches({k}.runtimePaths) && !{path}.matches({k}.runtimeLogPaths))"


def runtime_path_regex() -> str:
    """Node paths `container_runtime_access` reports: a runtime socket, a directory holding one
    (but not `/`), a runtime state directory, a rootless engine socket."""
    forms = set()
    for socket in RUNTIME_SOCKETS:
        parts = [p for p in socket.split("/") if p]
        for end in range(1, len(parts) + 1):
            forms.add(path_regex("/" + "/".join(parts[:end])) + "/*")
    forms.update(within_regex(directory) for directory in RUNTIME_RUN_DIRS + RUNTIME_STATE_DIRS)
    forms.add(r"/+(?:var/+)?run/+user/+[^/]+/+(?:docker\.sock|podman(?:/+podman\.sock)?)")
    return alternatives(sorted(forms))


_NVIDIA_PART = r"(?i:(?:lib)?nvidia|libcuda)"


def nvidia_path_regex() -> str:
    """`gpu_related_path`: a path component that starts with an NVIDIA name."""
    return f"^(?:.*/)?{_NVIDIA_PART}[^/]*(?:/.*)?$"


# --- the knowledge map ------------------------------------------------------------------


def knowledge(settings: Mapping[str, Any]) -> dict[str, str]:
    """The lists as regular expressions, keyed by the name rules use (`variables.knowledge.X`)."""
    others = tuple(OTHER_ACCELERATOR_RESOURCES)
    gpu_resources = setting(settings, "gpu-resources")
    return {
        "gpuResources": globs_regex(gpu_resources),
        "otherResources": globs_regex(others),
        "gpuRequestAnnotations": globs_regex(setting(settings, "gpu-request-annotations")),
        "runtimeClasses": globs_regex(setting(settings, "runtime-classes")),
        "gpuNodeLabels": globs_regex(setting(settings, "gpu-node-labels")),
        "genericAcceleratorLabels": globs_regex(GENERIC_ACCELERATOR_KEYS),
        "gpuTolerations": globs_regex(setting(settings, "gpu-tolerations")),
        "draExtendedResources": "^" + escape(DRA_EXTENDED_PREFIX) + r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$",
        "shareAnnotationShape": SHARE_ANNOTATION_SHAPE,
        "instanceSpecsKey": r"(?:^|/)eci-use-specs$",
        "gpuInstanceTypes": GPU_INSTANCE_TYPES,
        "gpuHostPaths": gpu_host_path_regex(),
        "driverFiles": driver_file_regex(),
        "procSysPaths": alternatives([within_regex("/proc"), within_regex("/sys")]),
        "nvidiaTrees": nvidia_tree_regex(),
        "noTreePaths": no_tree_regex(),
        "runtimePaths": runtime_path_regex(),
        "runtimeLogPaths": alternatives(within_regex(d) for d in RUNTIME_LOG_DIRS),
        "nvidiaPaths": nvidia_path_regex(),
        "voidImages": void_images_regex(),
        "configuredImages": configured_images_regex(setting(settings, "gpu-images")),
        **image_evidence(),
    }


# --- the variables every admission form may use ---------------------------------------

# Where a kind keeps its pod template (model/podspecs.py, for the built-in kinds).
_TEMPLATE = {"PodTemplate": "object.template", "CronJob": "object.spec.jobTemplate.spec.template"}
POD_KINDS = ("Pod", "PodTemplate", "ReplicationController", "ReplicaSet", "Deployment", "StatefulSet",
             "DaemonSet", "Job", "CronJob")


def _per_kind(pod: str, template: str) -> str:
    """CEL choosing `pod` for a Pod, else `template` applied to the kind's pod template."""
    out = template.format("object.spec.template")
    for kind, where in _TEMPLATE.items():
        out = f"object.kind == {cel_string(kind)} ? {template.format(where)} : {out}"
    return f'object.kind == "Pod" ? {pod} : {out}'


def has_pod_spec() -> str:
    """CEL: the object has a pod spec (a ReplicationController's template is optional)."""
    return _per_kind("has(object.spec)", "has({0}) && has({0}.spec)")


def shared_variables(lists: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, CEL) of the variables described at the top of this module, in evaluation order."""
    mapping = "{" + ", ".join(f"{cel_string(k)}: {cel_string(v)}" for k, v in lists.items()) + "}"
    sections = ("initContainers", "containers", "ephemeralContainers")   # the model's order
    containers = " + ".join(f"(has(variables.spec.{s}) ? variables.spec.{s} : [])" for s in sections)
    return [
        ("knowledge", mapping),
        ("spec", _per_kind("object.spec", "{0}.spec")),
        ("meta", _per_kind("object.metadata", "(has({0}.metadata) ? {0}.metadata : {{}})")),
        ("containers", containers),
        ("hostVolumes", "has(variables.spec.volumes) ? variables.spec.volumes.filter(v, has(v.hostPath)) : []"),
        ("hostPaths", "variables.hostVolumes.map(v, v.hostPath.path)"),
        # The one loop inside a loop inside a loop: hostPath volumes (a handful) x containers x mounts.
        ("mountedHostPaths", "variables.hostVolumes.filter(v, variables.containers.exists(c, "
                             "has(c.volumeMounts) && c.volumeMounts.exists(m, m.name == v.name))).map(v, v.hostPath.path)"),
        ("shareAnnotation", share_annotation()),
        ("podRequestsGpu", f"variables.containers.exists(c, {requests_gpu('c')}) || variables.shareAnnotation "
                           f"|| {serverless_gpu_instance()}"),
        ("imageRules", image_rules()),
        ("nvidiaRuntime", "has(variables.spec.runtimeClassName) && "
                          "variables.spec.runtimeClassName.matches(variables.knowledge.runtimeClasses)"),
    ]
