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

from typing import Any, Iterable

from gpulint.api import Rule
from gpulint.results.findings import Finding
from gpulint.results.scanning import ScanConfig, Suppressor

KIND_INLINE = "inline"
KIND_ANNOTATION = "annotation"
KIND_CONFIG = "config"
KIND_SYSTEM = "system-component"
KIND_BASELINE = "baseline"

NO_REASON = "no reason given"


def pipeline(*, inline: Suppressor | None = None, annotation: Suppressor | None = None,
             config: Suppressor | None = None, system: Suppressor | None = None,
             baseline: Suppressor | None = None) -> list[Suppressor]:
    """The suppressors in their fixed order of precedence (see the module docstring)."""
    return [s for s in (inline, annotation, config, system, baseline) if s is not None]


def code_matches(code: str, finding: Finding) -> bool:
    """Whether a code written in a suppression (an id or a rule name) names the finding's rule."""
    return code.upper() == finding.rule_id or code == finding.rule_name


def about_suppressions(rules: Iterable[Rule]) -> frozenset[str]:
    """Ids of the rules whose findings are about suppressions themselves (a suppression comment or
    one that suppressed nothing: GPU090-GPU092). A directive cannot silence the report about itself
    (a reasonless `ignore[GPU003,GPU090]` would otherwise hide that it has no reason); config
    exemptions and the baseline still apply to them."""
    return frozenset(rule.id for rule in rules
                     if rule.check_directive is not None or rule.check_suppression is not None)


def directive_hook(rule: Rule) -> Any:
    """The hook of the rules that check a suppression comment (GPU090, GPU091)."""
    return rule.check_directive


def unused_suppression_hook(rule: Rule) -> Any:
    """The hook of the rules that report a suppression that suppressed nothing (GPU092)."""
    return rule.check_suppression


def unused_label(code: str, config: ScanConfig) -> str:
    """`code (why it suppressed nothing)`, for GPU092 messages."""
    known = config.all_rules
    rule_id = code.upper() if code.upper() in known else next(
        (r.id for r in known.values() if r.name == code), None)
    if rule_id is None:
        return f"{code} (unknown rule)"
    if not any(rule.id == rule_id for rule in config.rules):
        return f"{code} (rule not enabled)"
    return f"{code} (no such finding here)"
