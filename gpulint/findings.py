"""What a scan produces: findings placed in files, and per-file outcomes."""

from __future__ import annotations

from gpulint.api import Severity
from gpulint.locations import Span
from gpulint.objects import ObjectRef
from gpulint.record import field, record

INVALID_INPUT = "GPU000"

# Outcome of one input, so the summary always accounts for every file.
STATUS_SCANNED = "scanned"            # read and parsed (possibly with GPU000 findings)
STATUS_NOT_KUBERNETES = "not_kubernetes"
STATUS_BINARY = "binary"
STATUS_ERROR = "error"                # could not be read or decoded at all
STATUS_CHART = "helm_chart"           # an unrendered Helm chart directory
STATUSES = (STATUS_SCANNED, STATUS_NOT_KUBERNETES, STATUS_BINARY, STATUS_ERROR, STATUS_CHART)


@record(frozen=True)
class Suppression:
    kind: str       # "system-component", "annotation", "inline", "config", "baseline"
    reason: str


@record(frozen=True)
class MappedLocation:
    """Where a finding on generated output comes from in a file a human edits.

    `role` is "template" (the Helm template line), "values" (the values.yaml key
    that supplied the value) or "origin" (the Kustomize base/overlay file).
    """

    role: str
    file: str
    span: Span
    description: str = ""


@record(slots=True)  # a large scan keeps every finding until the report is written
class Finding:
    rule_id: str
    rule_name: str
    severity: Severity
    message: str
    file: str                       # as given on the command line
    span: Span
    obj: ObjectRef | None = None
    container: str | None = None
    field_path: str = ""            # stable path inside the object, e.g. spec.containers[name=a].env[name=X]
    source: dict | None = None      # {"template": ...} (Helm) or {"origin": ...} (Kustomize)
    suppressed: Suppression | None = None
    # Template/values/origin locations, most specific first; `file`/`span` stay
    # the position in the input actually read (e.g. the rendered output).
    mapped: list[MappedLocation] = field(default_factory=list)

    def sort_key(self) -> tuple:
        return (self.file, self.span.line, self.span.column, self.rule_id, self.message)


@record
class FileReport:
    file: str
    status: str
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0
    objects: int = 0
    workloads: int = 0
