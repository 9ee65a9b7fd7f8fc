"""
## What it does
Reports codes in `# gpulint: ignore[...]` comments and `gpulint.io/ignore`
annotations that suppressed nothing in this run: the rule found nothing on
that line (or on the next line, for a comment on a line of its own) or in that
object, the rule is not enabled, or the code names no rule. Off by default;
enable it with `--extend-select GPU092` or `extend-select: [GPU092]` in the
configuration. Reported by the suppression pass, on the comment or on the
annotation's value.

## Why is this bad
A suppression that outlived its finding is noise at best. At worst it is a
trap: it silently hides the next violation someone writes on that line, with a
reason that was about something else.

## Example
```yaml
# gpulint: ignore[GPU003] legacy image needed all GPUs
- name: NVIDIA_VISIBLE_DEVICES
  value: void
```

## Use instead
```yaml
- name: NVIDIA_VISIBLE_DEVICES
  value: void
```

## Fix
None: a suppression may be kept on purpose for a finding other inputs produce.

## References
- Ruff, unused-noqa (RUF100), the model for this rule: https://docs.astral.sh/ruff/rules/unused-noqa/
"""

from typing import Iterator

from gpulint.api import Rule, RuleContext, Severity, UnusedSuppression, Violation


def check_suppression(unused: UnusedSuppression, ctx: RuleContext) -> Iterator[Violation]:
    yield Violation(f"unused suppression: {', '.join(unused.unused)}; remove it from {unused.directive}", unused.where)


RULE = Rule(
    id="GPU092",
    name="unused-suppression",
    severity=Severity.WARNING,
    summary="A code in a `# gpulint: ignore[...]` comment or gpulint.io/ignore annotation that suppressed no finding.",
    doc=__doc__ or "",
    enabled_by_default=False,
    tags=("maintainability",),
    check_suppression=check_suppression,
)
