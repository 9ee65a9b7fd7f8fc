"""Suppression: deciding that a finding is reported as suppressed, and why.

The engine hands every finding to the configured suppressors in order; the first
that returns a `Suppression` wins and its reason is the one reported. A
suppressed finding is never dropped: it is counted, shown with
`--show-suppressed`, marked in JSON and SARIF.

The order (see `pipeline`) goes from the most specific, closest to the code, to
the most general:

1. inline comment      `# gpulint: ignore[GPU003] reason` (kind "inline")
2. object annotation   `gpulint.io/ignore` + `gpulint.io/ignore-reason` ("annotation")
3. config exemption    `exemptions:` in .gpulint.yaml ("config")
4. system component    the built-in allowlist of GPU stack components ("system-component")
5. baseline            `--baseline FILE` ("baseline")

so a finding someone explained next to the code is reported with that
explanation, and the baseline only catches what nothing else accounts for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Protocol

from gpulint.findings import Finding, Suppression
from gpulint.model import Container, Workload
from gpulint.objects import KubeObject
from gpulint.record import record

if TYPE_CHECKING:
    from gpulint.engine import ScanConfig, ScanResult
    from gpulint.findings import FileReport
    from gpulint.locations import Span
    from gpulint.yamlload import Document

KIND_INLINE = "inline"
KIND_ANNOTATION = "annotation"
KIND_CONFIG = "config"
KIND_SYSTEM = "system-component"
KIND_BASELINE = "baseline"

# Rules about suppressions themselves. A directive cannot silence the report
# about itself (a reasonless `ignore[GPU003,GPU090]` would otherwise hide that
# it has no reason); config exemptions and the baseline still apply to them.
SUPPRESSION_WITHOUT_REASON = "GPU090"
SUPPRESSION_WITHOUT_CODES = "GPU091"
UNUSED_SUPPRESSION = "GPU092"
META_RULES = frozenset({SUPPRESSION_WITHOUT_REASON, SUPPRESSION_WITHOUT_CODES, UNUSED_SUPPRESSION})

NO_REASON = "no reason given"


@record
class SuppressionContext:
    """What a suppressor may consult about a finding."""

    workload: Workload | None          # None for input errors and Dockerfiles
    container: Container | None
    obj: KubeObject | None
    text: str | None                   # text of the document (or Dockerfile) the finding is in
    line_offset: int                   # 0-based file line of the first line of `text`

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

    def text_done(self, report: "FileReport", text: str, line_offset: int, config: "ScanConfig") -> None:
        """A stretch of checked input text, starting at 0-based file line `line_offset`: a whole
        file when it was read whole, each document when it was streamed."""

    def document_done(self, report: "FileReport", doc: "Document", workloads: "list[Workload]",
                      config: "ScanConfig") -> None:
        """A document whose workloads have all been checked."""

    def scan_done(self, result: "ScanResult", config: "ScanConfig") -> None:
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


def apply(finding: Finding, ctx: SuppressionContext, suppressors: list[Suppressor]) -> Finding:
    for suppressor in suppressors:
        verdict = suppressor(finding, ctx)
        if verdict is not None:
            finding.suppressed = verdict
            break
    return finding


def pipeline(*, inline: Suppressor | None = None, annotation: Suppressor | None = None,
             config: Suppressor | None = None, system: Suppressor | None = None,
             baseline: Suppressor | None = None) -> list[Suppressor]:
    """The suppressors in their fixed order of precedence (see the module docstring)."""
    return [s for s in (inline, annotation, config, system, baseline) if s is not None]


def code_matches(code: str, finding: Finding) -> bool:
    """Whether a code written in a suppression (an id or a rule name) names the finding's rule."""
    return code.upper() == finding.rule_id or code == finding.rule_name


def add_finding(report: "FileReport", config: "ScanConfig", rule_id: str, span: "Span", message: str,
                ctx: SuppressionContext, obj: KubeObject | None = None, field_path: str = "") -> None:
    """Add a finding about a suppression itself, if its rule is enabled (suppressors still apply)."""
    rule = next((r for r in config.rules if r.id == rule_id), None)
    if rule is None:
        return
    finding = Finding(rule.id, rule.name, config.severity_of(rule.id, rule.severity), message,
                      report.file, span, obj=obj.ref if obj else None,
                      field_path=field_path or f"line:{span.line}")
    report.findings.append(apply(finding, ctx, config.suppressors))


def unused_label(code: str, config: "ScanConfig") -> str:
    """`code (why it suppressed nothing)`, for GPU092 messages."""
    known = config.all_rules
    rule_id = code.upper() if code.upper() in known else next(
        (r.id for r in known.values() if r.name == code), None)
    if rule_id is None:
        return f"{code} (unknown rule)"
    if not any(rule.id == rule_id for rule in config.rules):
        return f"{code} (rule not enabled)"
    return f"{code} (no such finding here)"
