"""The types a scan is configured with and returns, and the hooks it calls.

They sit below the engine and the suppressions so that both can use them
without importing each other: the engine runs the hooks and suppressors of a
`ScanConfig`; the suppressions implement them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from gpulint.api import Rule, Severity
from gpulint.config.render import RenderOptions
from gpulint.load.yamlload import DEFAULT_LIMITS, Limits
from gpulint.model.objects import KubeObject
from gpulint.model.workload import Container, Workload
from gpulint.record import record
from gpulint.results.findings import FileReport, Finding, Suppression

if TYPE_CHECKING:
    from gpulint.load.yamlload import Document


@record
class SuppressionContext:
    """What a suppressor may consult about a finding."""

    __slots__ = ("workload", "container", "obj", "text", "line_offset", "image_env")
    workload: Workload | None          # None for input errors and Dockerfiles
    container: Container | None
    obj: KubeObject | None
    text: str | None                   # text of the document (or Dockerfile) the finding is in
    line_offset: int                   # 0-based file line of the first line of `text`
    image_env: dict[str, str] | None   # a Dockerfile's: the ENV of the image it builds

    def __init__(self, workload: Workload | None, container: Container | None, obj: KubeObject | None,
                 text: str | None, line_offset: int, image_env: dict[str, str] | None = None) -> None:
        self.workload = workload
        self.container = container
        self.obj = obj
        self.text = text
        self.line_offset = line_offset
        self.image_env = image_env

    def line(self, number: int) -> str | None:
        """Text of 1-based file line `number`, when it is inside `text`."""
        if self.text is None:
            return None
        index = number - 1 - self.line_offset
        lines = _lines(self.text)
        return lines[index] if 0 <= index < len(lines) else None


_last_lines: tuple[str, list[str]] | None = None


def _lines(text: str) -> list[str]:
    """Lines of `text` as the YAML parser counts them, cached for the last text.

    Findings of one document arrive one after another, so a one-entry cache
    keeps `line()` from splitting a large document once per finding.
    """
    global _last_lines
    if _last_lines is not None and _last_lines[0] is text:
        return _last_lines[1]
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    _last_lines = (text, lines)
    return lines


Suppressor = Callable[[Finding, SuppressionContext], Optional[Suppression]]


class ScanHook(Protocol):
    """Sees the text and documents of every input and the finished scan; may add findings.

    Used for what no single workload shows: suppression comments anywhere in a
    file, and suppressions that matched nothing (known only at the end).
    """

    def text_done(self, report: FileReport, text: str, line_offset: int, config: ScanConfig) -> None:
        """A stretch of checked input text, starting at 0-based file line `line_offset`: a whole
        file when it was read whole, each document when it was streamed."""

    def document_done(self, report: FileReport, doc: "Document", workloads: "list[Workload]",
                      config: ScanConfig) -> None:
        """A document whose workloads have all been checked."""

    def scan_done(self, result: ScanResult, config: ScanConfig) -> None:
        """The whole scan."""


class ParallelHook(ScanHook, Protocol):
    """A hook whose state a parallel scan gathers from its worker processes (see engine.scan).

    A worker calls `take_state()` after each input; the parent calls
    `merge_state()` with each input's state in input order, before `scan_done`,
    so the hook ends up as if one process had scanned everything.
    """

    def take_state(self) -> object:
        """What was recorded since the last call (picklable), forgetting it."""

    def merge_state(self, state: object) -> None:
        """Add what `take_state()` returned in a worker."""


class OrderedSuppressor(Protocol):
    """A suppressor whose verdicts depend on the findings it saw before (a baseline counts them).

    `key()` reads what it needs from the finding and its context; `decide()`
    gives the verdict and updates the state; calling the suppressor does both.
    A parallel scan computes keys where findings are made and decides in the
    parent, in the order one process would have. Such suppressors come last in
    the pipeline, so no other suppressor depends on their verdict.
    """

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> Optional[Suppression]: ...

    def key(self, finding: Finding, ctx: SuppressionContext) -> object: ...

    def decide(self, key: object) -> Optional[Suppression]: ...



@record
class ScanConfig:
    """What the engine needs besides the inputs."""
    __slots__ = ("rules", "all_rules", "options", "severities", "settings", "limits", "suppressors", "hooks",
                 "render", "fixes")
    rules: list[Rule]                                   # enabled rules, in id order
    all_rules: dict[str, Rule]
    options: dict[str, dict]                            # per-rule option values
    severities: dict[str, Severity]                     # per-rule overrides
    settings: dict[str, Any]
    limits: Limits
    suppressors: list[Suppressor]                       # applied in order
    hooks: list[ScanHook]                               # see suppress.ScanHook
    render: RenderOptions                               # Helm/Kustomize settings
    fixes: bool                                         # resolve findings' fixes (fix/resolve.py)

    # None for a dict, list or RenderOptions: a new empty one (the defaults).
    def __init__(self, rules: list[Rule], all_rules: dict[str, Rule] | None = None,
                 options: dict[str, dict] | None = None, severities: dict[str, Severity] | None = None,
                 settings: dict[str, Any] | None = None, limits: Limits = DEFAULT_LIMITS,
                 suppressors: list[Suppressor] | None = None, hooks: list[ScanHook] | None = None,
                 render: RenderOptions | None = None, fixes: bool = True) -> None:
        self.rules = rules
        self.all_rules = {} if all_rules is None else all_rules
        self.options = {} if options is None else options
        self.severities = {} if severities is None else severities
        self.settings = {} if settings is None else settings
        self.limits = limits
        self.suppressors = [] if suppressors is None else suppressors
        self.hooks = [] if hooks is None else hooks
        self.render = RenderOptions() if render is None else render
        self.fixes = fixes

    def severity_of(self, rule_id: str, default: Severity) -> Severity:
        return self.severities.get(rule_id, default)


@record
class ScanResult:
    """The reports of every file scanned."""
    __slots__ = ("files", "internal_errors")
    files: list[FileReport]
    internal_errors: list[str]

    def __init__(self, files: list[FileReport], internal_errors: list[str] | None = None) -> None:
        self.files = files
        self.internal_errors = [] if internal_errors is None else internal_errors

    @property
    def findings(self) -> list[Finding]:
        out = [f for report in self.files for f in report.findings]
        out.sort(key=Finding.sort_key)
        return out
