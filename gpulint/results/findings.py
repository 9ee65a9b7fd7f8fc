"""What a scan produces: findings placed in files, and per-file outcomes."""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple

from gpulint.api import Severity
from gpulint.load.locations import Span
from gpulint.model.objects import KubeObject, ObjectRef
from gpulint.record import record, set_field

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


@record(frozen=True)
class Suppression:
    """Why a finding is suppressed."""
    __slots__ = ("kind", "reason")
    kind: str       # "system-component", "annotation", "inline", "config", "baseline"
    reason: str

    def __init__(self, kind: str, reason: str) -> None:
        set_field(self, "kind", kind)
        set_field(self, "reason", reason)


@record(frozen=True)
class MappedLocation:
    """Where a finding on generated output comes from in a file a human edits.

    `role` is "template" (the Helm template line), "values" (the values.yaml key
    that supplied the value) or "origin" (the Kustomize base/overlay file).
    """

    __slots__ = ("role", "file", "span", "description", "scalar", "written", "key_path", "given")
    role: str
    file: str
    span: Span
    description: str
    # A values key's one-line scalar: its own span and text as written (quotes included), for a fix there.
    scalar: Span | None
    written: str | None
    # A values key: its path in that file, and whether the file was given (--values, a chart's
    # ci/*-values.yaml render) rather than the chart's own values.yaml, inside the repository.
    key_path: tuple | None
    given: bool

    def __init__(self, role: str, file: str, span: Span, description: str = "", scalar: Span | None = None,
                 written: str | None = None, key_path: tuple | None = None, given: bool = False) -> None:
        set_field(self, "role", role)
        set_field(self, "file", file)
        set_field(self, "span", span)
        set_field(self, "description", description)
        set_field(self, "scalar", scalar)
        set_field(self, "written", written)
        set_field(self, "key_path", key_path)
        set_field(self, "given", given)


@record(frozen=True)
class TextEdit:
    """Replace `span` of the finding's file (1-based, end column exclusive; an empty span inserts)
    with `text`. Columns count characters, as the finding's own span does."""

    __slots__ = ("span", "text")
    span: Span
    text: str

    def __init__(self, span: Span, text: str) -> None:
        set_field(self, "span", span)
        set_field(self, "text", text)


@record(frozen=True)
class FindingFix:
    """A rule's fix turned into text edits of the finding's file (gpulint/fix/resolve.py)."""

    __slots__ = ("title", "applicability", "edits", "file", "rendered")
    title: str
    applicability: str       # api.Applicability's value: "safe" or "unsafe"
    edits: tuple[TextEdit, ...]
    file: str | None         # the file the edits are in when not the finding's (a Helm values file)
    # A values-file fix: the rule's edits by path of the rendered document, which a render of the
    # edited values must reproduce (gpulint/fix/valuesedits.py).
    rendered: tuple

    def __init__(self, title: str, applicability: str, edits: tuple[TextEdit, ...], file: str | None = None,
                 rendered: tuple = ()) -> None:
        set_field(self, "title", title)
        set_field(self, "applicability", applicability)
        set_field(self, "edits", edits)
        set_field(self, "file", file)
        set_field(self, "rendered", rendered)


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


@record  # slots: a large scan keeps every finding until the report is written
class Finding:
    """One finding of a rule, located in a file."""
    __slots__ = ("rule_id", "rule_name", "severity", "message", "file", "span", "obj", "container", "field_path",
                 "source", "suppressed", "mapped", "rendered", "fix", "no_fix")
    rule_id: str
    rule_name: str
    severity: Severity
    message: str
    file: str                       # as given on the command line
    span: Span
    obj: ObjectRef | None
    container: str | None
    field_path: str                 # stable path inside the object, e.g. spec.containers[name=a].env[name=X]
    source: FindingSource | None    # the template (Helm) or origin file (Kustomize) of the object
    suppressed: Suppression | None
    # Template/values/origin locations, most specific first; `file`/`span` stay
    # the position in the input actually read (e.g. the rendered output).
    mapped: list[MappedLocation]    # None given: []
    rendered: RenderedFrom | None   # set when `file` is the rendered output of a chart or kustomization
    fix: FindingFix | None
    no_fix: str | None              # why a finding whose rule has a fix has none here

    def __init__(self, rule_id: str, rule_name: str, severity: Severity, message: str, file: str, span: Span,
                 obj: ObjectRef | None = None, container: str | None = None, field_path: str = "",
                 source: FindingSource | None = None, suppressed: Suppression | None = None,
                 mapped: list[MappedLocation] | None = None, rendered: RenderedFrom | None = None,
                 fix: FindingFix | None = None, no_fix: str | None = None) -> None:
        self.rule_id = rule_id
        self.rule_name = rule_name
        self.severity = severity
        self.message = message
        self.file = file
        self.span = span
        self.obj = obj
        self.container = container
        self.field_path = field_path
        self.source = source
        self.suppressed = suppressed
        self.mapped = [] if mapped is None else mapped
        self.rendered = rendered
        self.fix = fix
        self.no_fix = no_fix

    def sort_key(self) -> tuple:
        return (self.file, self.span.line, self.span.column, self.rule_id, self.message)


@record
class FileReport:
    """What the scan of one file found."""
    __slots__ = ("file", "status", "findings", "documents", "objects", "workloads")
    file: str
    status: str
    findings: list[Finding]   # None given: []
    documents: int
    objects: int
    workloads: int

    def __init__(self, file: str, status: str, findings: list[Finding] | None = None, documents: int = 0,
                 objects: int = 0, workloads: int = 0) -> None:
        self.file = file
        self.status = status
        self.findings = [] if findings is None else findings
        self.documents = documents
        self.objects = objects
        self.workloads = workloads


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
