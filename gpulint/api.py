"""The rule API: what a rule module declares and what its check yields.

A rule module (built-in under `rules/`, or any third-party module) defines

    RULE = Rule(id="GPU0NN", name="bad-pattern", severity=Severity.ERROR,
                summary="...", doc=__doc__, check=check)

where `doc` is Markdown with the headings What it does / Why is this bad /
Example / Use instead / Fix / References, and `check(workload, ctx)` yields
`Violation`s. A violation may carry a `Fix`: edits by document path that the
fix stage (gpulint/fix/) turns into text edits of the file the user wrote. Rules are registered only through the `gpulint.rules` entry-point
group. A rule keeps no state: everything it needs comes in through its arguments.

Besides workloads (`check`) and Dockerfiles (`check_dockerfile`), a rule may
check what the scan meets in its input (input-level rules, GPU0xx): input that
cannot be read (`check_input`), a chart or kustomization that cannot be rendered
(`check_render`), an unrendered template (`check_template`), an input that is
not read (`check_unread`), a suppression comment (`check_directive`) and a
suppression that suppressed nothing (`check_suppression`). Findings of the rules
with the last two hooks are about suppressions: a suppression comment never
silences them. Each hook gets a typed event and yields `Violation`s at
`LineAt` positions; for these, a violation's `severity` is the default for that
case, and a severity configured for the rule still wins.
"""

from __future__ import annotations

import enum
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NamedTuple, Union

from gpulint.record import record, set_field

if TYPE_CHECKING:
    from gpulint.load.dockerfile import Dockerfile
    from gpulint.model.index import ConfigIndex
    from gpulint.model.objects import KubeObject
    from gpulint.model.workload import Container, Workload


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 1, "warning": 2, "error": 3}[self.value]


DOC_HEADINGS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix", "References")
# A plugin written before fixes existed has no "Fix" heading; the built-in rules all do (tests/test_cli.py).
REQUIRED_DOC_HEADINGS = tuple(heading for heading in DOC_HEADINGS if heading != "Fix")
RULE_ID_RE = re.compile(r"GPU[01]\d\d\Z")
RULE_NAME_RE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")


# --- where a violation points ----------------------------------------------


@record(eq=True, frozen=True)
class KeyAt:
    """The mapping key at the end of `path` (e.g. the `privileged` key)."""

    __slots__ = ("path",)
    path: tuple

    def __init__(self, path: tuple) -> None:
        set_field(self, "path", path)


@record(eq=True, frozen=True)
class ValueAt:
    """The node at `path`: a scalar value, a list entry, a mapping."""

    __slots__ = ("path",)
    path: tuple

    def __init__(self, path: tuple) -> None:
        set_field(self, "path", path)


@record(eq=True, frozen=True)
class TextAt:
    """Characters `start:end` of the string scalar at `path` (e.g. a command in a script)."""

    __slots__ = ("path", "start", "end")
    path: tuple
    start: int
    end: int

    def __init__(self, path: tuple, start: int, end: int) -> None:
        set_field(self, "path", path)
        set_field(self, "start", start)
        set_field(self, "end", end)


@record(eq=True, frozen=True)
class LineAt:
    """A position in a file that has no data tree (Dockerfiles); 1-based, end exclusive."""

    __slots__ = ("line", "column", "end_line", "end_column")
    line: int
    column: int
    end_line: int
    end_column: int

    def __init__(self, line: int, column: int, end_line: int, end_column: int) -> None:
        set_field(self, "line", line)
        set_field(self, "column", column)
        set_field(self, "end_line", end_line)
        set_field(self, "end_column", end_column)


Where = Union[KeyAt, ValueAt, TextAt, LineAt]


class SystemRole(str, enum.Enum):
    """What a pod or image is recognised as by its role on the node (knowledge/roles.py).

    A rule names the roles whose findings of it are system components' (`Rule.exempt_roles`):
    those are reported as suppressed, never dropped."""

    DEVICE_PLUGIN = "device plugin"
    DRA_PLUGIN = "DRA kubelet plugin"
    NRI_PLUGIN = "NRI plugin"
    CDI_WRITER = "CDI spec writer"
    DRIVER_INSTALLER = "driver installer"
    MANAGEMENT_IMAGE = "GPU management image"
    # Node agents recognised by what they mount and declare (docs/evidence.md).
    GPU_NODE_AGENT = "GPU node agent"
    DEVICE_DISCOVERER = "device discoverer"
    DEVICE_MANAGER = "GPU device manager"
    RUNTIME_HOOK = "runtime hook installer"
    MANAGEMENT_AGENT = "GPU management agent"
    # Device plugins and discoverers on a node agent, which map containers to devices through the runtime.
    NODE_AGENT_PLUGIN = "device plugin on a node agent"
    NODE_AGENT_DISCOVERER = "device discoverer on a node agent"

    def __str__(self) -> str:
        return self.value


# --- what an input-level rule checks ----------------------------------------
# Named tuples (immutable, compared by value, unpacked as tuples by the rules that read them).


class InputProblem(NamedTuple):
    """Input that cannot be read as Kubernetes manifests: a syntax error, undecodable text,
    a duplicate key, a value of the wrong type, an unreadable file (`check_input`)."""

    message: str
    where: LineAt
    severity: "Severity | None" = None   # another than the rule's (info: a link to nothing, nothing to hide)


class RenderProblem(NamedTuple):
    """A chart or kustomization that cannot be rendered as it is (`check_render`). `severity`:
    the renderer's judgement when it is not the rule's (info: nothing went unchecked)."""

    message: str
    where: LineAt
    severity: Severity | None = None


# What a finding about a template read as literal text says was checked (GPU010, GPU011).
LITERAL_NOTE = "only its literal text was checked, each action read as a placeholder"


class TemplateDocument(NamedTuple):
    """A document of an unrendered template that failed to load as it is."""

    line: int
    column: int
    message: str
    literal_checked: bool    # read with its actions masked as placeholders, and checked so
    # The first action that could hide a GPU bypass (load/unknowns.py): where, and what of it is unknown.
    unknown: "tuple[int, int, str] | None" = None
    holds_containers: bool = False   # its text shows containers (what it hides when it cannot be read)
    infrastructure: bool = False     # its literal pods are GPU infrastructure whose findings roles exempt


class UnrenderedTemplate(NamedTuple):
    """A file outside any chart holding template actions (`check_template`): its documents that
    failed to load, in order; `syntax` "go" (`{{ }}`) or "dollar" (`${}`); `helm`: it uses Helm's
    objects."""

    file: str
    documents: tuple[TemplateDocument, ...]
    syntax: str | None
    helm: bool


class UnreadInput(NamedTuple):
    """An input the scan does not open (`check_unread`): a symlink out of the scanned directory
    (`target`: its text) or a kernel filesystem directory (`target` None)."""

    file: str
    target: str | None


class SuppressionComment(NamedTuple):
    """A `# gpulint: ignore[...] reason` comment (`check_directive`): `text` as written, the codes
    it names and its reason ("" when it gives none)."""

    text: str
    where: LineAt
    codes: tuple[str, ...]
    reason: str


class UnusedSuppression(NamedTuple):
    """A suppression some of whose codes suppressed nothing (`check_suppression`): `directive` names
    it as a message would (`` `# gpulint: ignore[GPU003] why` ``, `gpulint.io/ignore (Pod ml/x)`);
    `unused`: those codes, each with why (`GPU003 (no such finding here)`)."""

    directive: str
    where: LineAt
    unused: tuple[str, ...]


# --- how a violation is repaired --------------------------------------------


class Applicability(str, enum.Enum):
    """SAFE: the manifest means the same to the scheduler and the workload, only made valid or
    explicit (`--fix` applies it). UNSAFE: behaviour changes, e.g. which GPUs a container sees
    (only with `--unsafe-fixes`)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@record(eq=True, frozen=True)
class CopyOf:
    """A value written exactly as the scalar at `path` is (a limit copied from its request keeps
    its quoting)."""

    __slots__ = ("path",)
    path: tuple

    def __init__(self, path: tuple) -> None:
        set_field(self, "path", path)


@record(eq=True, frozen=True)
class Edit:
    """One change by document path; the fix stage turns it into a text edit of the file.

    `set`: the scalar at `path` gets `value`; `rename`: the key at the end of
    `path` becomes `value`; `delete`: the mapping entry or list item at `path`
    goes (a mapping or list left empty goes with it); `add`: the entry at `path`
    (its last item a key) is added with `value`, with the mappings missing on
    the way; `append`: `value` becomes the last item of the list at `path`
    (made when missing). Values are plain data (str, int, bool, dict, list) or
    a `CopyOf`.
    """

    __slots__ = ("op", "path", "value")
    op: str
    path: tuple
    value: Any

    def __init__(self, op: str, path: tuple, value: Any = None) -> None:
        set_field(self, "op", op)
        set_field(self, "path", path)
        set_field(self, "value", value)

    @classmethod
    def set(cls, path: tuple, value: Any) -> "Edit":
        return cls("set", tuple(path), value)

    @classmethod
    def rename(cls, path: tuple, key: str) -> "Edit":
        return cls("rename", tuple(path), key)

    @classmethod
    def delete(cls, path: tuple) -> "Edit":
        return cls("delete", tuple(path))

    @classmethod
    def add(cls, path: tuple, value: Any) -> "Edit":
        return cls("add", tuple(path), value)

    @classmethod
    def append(cls, path: tuple, value: Any) -> "Edit":
        return cls("append", tuple(path), value)


@record(eq=True, frozen=True)
class Fix:
    """A repair of one violation: every edit is applied, or none."""

    __slots__ = ("title", "applicability", "edits")
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]

    def __init__(self, title: str, applicability: Applicability, edits: tuple[Edit, ...]) -> None:
        set_field(self, "title", title)
        set_field(self, "applicability", applicability)
        set_field(self, "edits", edits)


@record(eq=True, frozen=True)
class Violation:
    """What a rule's check yields: a message and the node it is about.

    `container` names the container involved (the engine adds the object).
    `severity` overrides the rule's default for this one violation (e.g. an
    unverifiable reference reported lower than a certain one). `located_in` is
    the object `where` refers to when it is not the workload itself (e.g. the
    ConfigMap holding a script the workload runs). `fix` repairs it; `no_fix`
    says why a violation that usually has one has none here.
    """

    __slots__ = ("message", "where", "container", "severity", "located_in", "fix", "no_fix")
    message: str
    where: Where
    container: "Container | None"
    severity: Severity | None
    located_in: "KubeObject | None"
    fix: Fix | None
    no_fix: str | None

    def __init__(self, message: str, where: Where, container: "Container | None" = None,
                 severity: Severity | None = None, located_in: "KubeObject | None" = None,
                 fix: Fix | None = None, no_fix: str | None = None) -> None:
        # A container parsed from a string (a pod-spec patch) has its paths in that string's
        # document: a violation about it is located there unless the rule says otherwise.
        if located_in is None and container is not None and container.origin is not None:
            located_in = container.origin
        # Edits land where the document says; a patch read from its value (an escaped or folded
        # string) has no positions of the file to edit at.
        patch_of = getattr(located_in, "patch_of", None)
        if fix is not None and patch_of is not None and not patch_of[2]:
            fix = None
            no_fix = "the patch string is escaped or folded: edit it by hand"
        set_field(self, "message", message)
        set_field(self, "where", where)
        set_field(self, "container", container)
        set_field(self, "severity", severity)
        set_field(self, "located_in", located_in)
        set_field(self, "fix", fix)
        set_field(self, "no_fix", no_fix)


@record(eq=True)
class RuleContext:
    """What a check may consult besides the workload itself."""

    __slots__ = ("options", "index", "settings")
    options: Mapping[str, Any]
    index: "ConfigIndex"
    settings: Mapping[str, Any]

    def __init__(self, options: Mapping[str, Any], index: "ConfigIndex",
                 settings: Mapping[str, Any] | None = None) -> None:
        self.options = options
        self.index = index
        self.settings = {} if settings is None else settings

    def option(self, name: str) -> Any:
        return self.options[name]


WorkloadCheck = Callable[["Workload", RuleContext], Iterable[Violation]]
DockerfileCheck = Callable[["Dockerfile", RuleContext], Iterable[Violation]]
InputCheck = Callable[[InputProblem, RuleContext], Iterable[Violation]]
RenderCheck = Callable[[RenderProblem, RuleContext], Iterable[Violation]]
TemplateCheck = Callable[[UnrenderedTemplate, RuleContext], Iterable[Violation]]
UnreadCheck = Callable[[UnreadInput, RuleContext], Iterable[Violation]]
DirectiveCheck = Callable[[SuppressionComment, RuleContext], Iterable[Violation]]
SuppressionCheck = Callable[[UnusedSuppression, RuleContext], Iterable[Violation]]


@record(eq=True, frozen=True, repr=True)
class Admission:
    """A rule's form at the cluster's door (`gpulint policy export`, gpulint/admission/).

    CEL conditions, true when one object (a Pod or a pod-template workload)
    breaks the rule: `container` over one container `c`, `volume` over one
    hostPath volume `v` (its finding belongs to the first container mounting it,
    or to the pod when none does), `pod` over the whole pod; any of them. They use the variables of gpulint/knowledge/celforms.py
    (`variables.containers`, `variables.spec`, `variables.knowledge.*`, ...) and
    the rule's own `variables` (name, CEL). `message` is the linter's finding
    and fix in its words; the exporter adds the rule id, the container's name and
    the exemptions. `enforced` and `linter_only` say, for the coverage table
    (docs/admission.md), what admission can and cannot decide from the object.
    """

    __slots__ = ("message", "container", "pod", "volume", "variables", "enforced", "linter_only")
    message: str
    container: str | None
    pod: str | None
    volume: str | None
    variables: tuple[tuple[str, str], ...]
    enforced: str
    linter_only: str

    def __init__(self, message: str, container: str | None = None, pod: str | None = None,
                 volume: str | None = None, variables: tuple[tuple[str, str], ...] = (), enforced: str = "",
                 linter_only: str = "") -> None:
        set_field(self, "message", message)
        set_field(self, "container", container)
        set_field(self, "pod", pod)
        set_field(self, "volume", volume)
        set_field(self, "variables", variables)
        set_field(self, "enforced", enforced)
        set_field(self, "linter_only", linter_only)


# A rule's admission form for its options (defaults merged with the configuration's), or
# None when the options leave nothing to enforce.
AdmissionForm = Callable[[Mapping[str, Any]], "Admission | None"]


@record(eq=True, frozen=True)
class Rule:
    """A registered rule: its identity, documentation and check."""
    __slots__ = ("id", "name", "severity", "summary", "doc", "check", "check_dockerfile", "check_input",
                 "check_render", "check_template", "check_unread", "check_suppression", "check_directive",
                 "enabled_by_default", "kept_when_selecting_others", "exempt_roles", "options", "tags",
                 "precision", "security_severity", "admission")
    id: str
    name: str
    severity: Severity
    summary: str
    doc: str
    check: WorkloadCheck | None
    check_dockerfile: DockerfileCheck | None
    # Input-level hooks (see the module docstring).
    check_input: InputCheck | None
    check_render: RenderCheck | None
    check_template: TemplateCheck | None
    check_unread: UnreadCheck | None
    check_suppression: SuppressionCheck | None
    check_directive: DirectiveCheck | None
    enabled_by_default: bool
    # On unless a layer of the selection ignores or disables it: selecting other rules
    # (`--select GPU003`) leaves it on, so that nothing unread goes unsaid (GPU000, GPU010).
    kept_when_selecting_others: bool
    # The system-component roles whose findings of this rule are suppressed (knowledge/roles.py).
    exempt_roles: frozenset[SystemRole]
    options: Mapping[str, Any]   # None given: {}
    # For SARIF / GitHub code scanning.
    tags: tuple[str, ...]
    precision: str
    security_severity: str | None
    # Its form at admission (gpulint policy export); None: only the linter checks it.
    admission: AdmissionForm | None

    def __init__(self, id: str, name: str, severity: Severity, summary: str, doc: str,
                 check: WorkloadCheck | None = None, check_dockerfile: DockerfileCheck | None = None,
                 check_input: InputCheck | None = None, check_render: RenderCheck | None = None,
                 check_template: TemplateCheck | None = None, check_unread: UnreadCheck | None = None,
                 check_suppression: SuppressionCheck | None = None, check_directive: DirectiveCheck | None = None,
                 enabled_by_default: bool = True, kept_when_selecting_others: bool = False,
                 exempt_roles: frozenset[SystemRole] = frozenset(), options: Mapping[str, Any] | None = None,
                 tags: tuple[str, ...] = ("security", "gpu"), precision: str = "high",
                 security_severity: str | None = None, admission: AdmissionForm | None = None) -> None:
        set_field(self, "id", id)
        set_field(self, "name", name)
        set_field(self, "severity", severity)
        set_field(self, "summary", summary)
        set_field(self, "doc", doc)
        set_field(self, "check", check)
        set_field(self, "check_dockerfile", check_dockerfile)
        set_field(self, "check_input", check_input)
        set_field(self, "check_render", check_render)
        set_field(self, "check_template", check_template)
        set_field(self, "check_unread", check_unread)
        set_field(self, "check_suppression", check_suppression)
        set_field(self, "check_directive", check_directive)
        set_field(self, "enabled_by_default", enabled_by_default)
        set_field(self, "kept_when_selecting_others", kept_when_selecting_others)
        set_field(self, "exempt_roles", exempt_roles)
        set_field(self, "options", {} if options is None else options)
        set_field(self, "tags", tags)
        set_field(self, "precision", precision)
        set_field(self, "security_severity", security_severity)
        set_field(self, "admission", admission)
        if not RULE_ID_RE.match(self.id):
            raise ValueError(f"rule id {self.id!r} must look like GPU0NN or GPU1NN")
        if not RULE_NAME_RE.match(self.name):
            raise ValueError(f"rule name {self.name!r} must be kebab-case")
        missing = [h for h in REQUIRED_DOC_HEADINGS if f"## {h}" not in self.doc]
        if missing:
            raise ValueError(f"{self.id} documentation lacks heading(s): {', '.join(missing)}")

    @property
    def documentation(self) -> str:
        """The rule's documentation, exactly as `gpulint explain` prints it."""
        return f"# {self.id} {self.name}\n\n{self.summary}\n\n{_dedent_doc(self.doc)}\n"


def _dedent_doc(doc: str) -> str:
    import textwrap

    return textwrap.dedent(doc).strip()
