"""What a scan produces: findings placed in files, and per-file outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

from gpulint.api import Severity
from gpulint.load.locations import Span
from gpulint.model.objects import KubeObject, ObjectRef

# Outcome of one input, so the summary always accounts for every file.
STATUS_SCANNED = "scanned"            # read and parsed (possibly with GPU000 findings)
STATUS_NOT_KUBERNETES = "not_kubernetes"
# Does not parse and shows no sign of a Kubernetes object (a tsconfig.json, a CI config): no finding.
STATUS_UNPARSEABLE = "not_kubernetes_unparseable"
STATUS_TEMPLATE = "unrendered_template"  # a template outside a chart, its literal text checked (GPU011)
STATUS_BINARY = "binary"
STATUS_ERROR = "error"                # could not be read or decoded at all
STATUS_CHART = "helm_chart"           # an unrendered Helm chart directory
STATUS_OUTSIDE_ROOT = "outside_root"  # a symlink leaving the scanned directory: not followed (GPU099)
STATUS_IGNORED = "ignored"            # a file or directory git ignores, passed over by a walk (not entered)
STATUSES = (STATUS_SCANNED, STATUS_NOT_KUBERNETES, STATUS_UNPARSEABLE, STATUS_TEMPLATE, STATUS_BINARY,
            STATUS_ERROR, STATUS_CHART, STATUS_OUTSIDE_ROOT, STATUS_IGNORED)


@dataclass(frozen=True, repr=False, eq=False)
class Suppression:
    """Why a finding is suppressed."""
    kind: str       # "system-component", "annotation", "inline", "config", "baseline"
    reason: str


@dataclass(frozen=True, repr=False, eq=False)
class MappedLocation:
    """Where a finding on generated output comes from in a file a human edits.

    `role` is "template" (the Helm template line), "values" (the values.yaml key
    that supplied the value) or "origin" (the Kustomize base/overlay file).
    """

    role: str
    file: str
    span: Span
    description: str = ""
    # A values key's one-line scalar: its own span and text as written (quotes included), for a fix there.
    scalar: Span | None = None
    written: str | None = None
    # A values key: its path in that file, and whether the file was given (--values, a chart's
    # ci/*-values.yaml render) rather than the chart's own values.yaml, inside the repository.
    key_path: tuple | None = None
    given: bool = False


@dataclass(frozen=True, repr=False, eq=False)
class TextEdit:
    """Replace `span` of the finding's file (1-based, end column exclusive; an empty span inserts)
    with `text`. Columns count characters, as the finding's own span does."""

    span: Span
    text: str


@dataclass(frozen=True, repr=False, eq=False)
class FindingFix:
    """A rule's fix turned into text edits of the finding's file (gpulint/fix/resolve.py)."""

    title: str
    applicability: str       # api.Applicability's value: "safe" or "unsafe"
    edits: tuple[TextEdit, ...]
    file: str | None = None  # the file the edits are in when not the finding's (a Helm values file)
    # A values-file fix: the rule's edits by path of the rendered document, which a render of the
    # edited values must reproduce (gpulint/fix/valuesedits.py).
    rendered: tuple = ()


class FindingSource(NamedTuple):
    """The file of the repository an object of rendered output was written in.

    `role` is "template" (the Helm template named by `# Source:`) or "origin"
    (the Kustomize resource or patch file named by its origin annotation).
    """

    role: str
    path: str

    def as_dict(self) -> dict[str, str]:
        """As JSON and SARIF write it: `{"template": path}` or `{"origin": path}`."""
        return {self.role: self.path}


class RenderedFrom(NamedTuple):
    """The chart or kustomization whose rendered output a finding is in.

    `target` is its directory as given; `values` names the values it was
    rendered with besides its defaults ("" for its defaults). Reports place
    such a finding at a file of the repository, never at `name`.
    """

    target: str
    values: str = ""

    @classmethod
    def of(cls, display: str, values_label: str | None = None) -> "RenderedFrom":
        """The render of `display` with its defaults (`values_label` None) or with other values."""
        return cls(display.rstrip("/") or "/", "" if values_label is None else values_label or "no extra values")

    @property
    def name(self) -> str:
        """The name a finding's `file` carries: `charts/app (rendered)`,
        `charts/app (rendered with ci/gpu-values.yaml)`."""
        return f"{self.target} (rendered with {self.values})" if self.values else f"{self.target} (rendered)"


@dataclass(slots=True, repr=False, eq=False)  # a large scan keeps every finding until the report is written
class Finding:
    """One finding of a rule, located in a file."""
    rule_id: str
    rule_name: str
    severity: Severity
    message: str
    file: str                       # as given on the command line
    span: Span
    obj: ObjectRef | None = None
    container: str | None = None
    field_path: str = ""            # stable path inside the object, e.g. spec.containers[name=a].env[name=X]
    source: FindingSource | None = None   # the template (Helm) or origin file (Kustomize) of the object
    suppressed: Suppression | None = None
    # Template/values/origin locations, most specific first; `file`/`span` stay
    # the position in the input actually read (e.g. the rendered output).
    mapped: list[MappedLocation] = field(default_factory=list)
    rendered: RenderedFrom | None = None   # set when `file` is the rendered output of a chart or kustomization
    fix: FindingFix | None = None
    no_fix: str | None = None       # why a finding whose rule has a fix has none here

    def sort_key(self) -> tuple:
        return (self.file, self.span.line, self.span.column, self.rule_id, self.message)


@dataclass(repr=False, eq=False)
class FileReport:
    """What the scan of one file found."""
    file: str
    status: str
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0
    objects: int = 0
    workloads: int = 0


def stable_path(obj: KubeObject, path: Iterable) -> str:
    """A path that survives reordering: list entries with a name use the name."""
    data: Any = obj.data
    out = ""
    for item in (path if type(path) is tuple else tuple(path))[len(obj.base):]:
        if type(item) is str:   # (most of a path: a key, below a mapping)
            out = f"{out}.{item}" if out else item
            data = data.get(item) if isinstance(data, dict) else None
        elif isinstance(item, int):
            entry = data[item] if isinstance(data, list) and item < len(data) else None
            name = entry.get("name") if isinstance(entry, dict) else None
            out += f"[name={name}]" if isinstance(name, str) and name else f"[{item}]"
            data = entry
        else:
            out += f".{item}" if out else str(item)
            data = data.get(item) if isinstance(data, dict) else None
    return out


def internal_error_message(display: str, error: BaseException) -> str:
    """One line naming the input and the exception (the CLI adds the issue-report hint)."""
    detail = " ".join(str(error).split())
    if isinstance(error, RecursionError):
        detail = "maximum recursion depth exceeded"
    return f"{display}: internal error: {type(error).__name__}" + (f": {detail}" if detail else "")
