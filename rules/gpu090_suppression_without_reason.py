"""
## What it does
Reports a suppression that does not say why: a `gpulint.io/ignore` annotation
without a non-empty `gpulint.io/ignore-reason` beside it (on the workload or on
its pod template), and an inline comment `# gpulint: ignore[GPU003]` with
nothing after the codes. The suppression still applies; this finding sits on
the annotation key or on the comment.

Annotations are checked per workload like any rule; comments are checked by
the suppression pass over each file (YAML and Dockerfiles). A directive cannot
suppress this finding about itself; a config exemption or a baseline can.

## Why is this bad
A suppression is a decision that a GPU access path is acceptable. Without the
reason, the next reviewer cannot tell a deliberate exception (a node
acceptance test, a vendor component) from a shortcut taken to make CI pass,
and nobody can tell when the exception stops being true.

## Example
```yaml
metadata:
  annotations:
    gpulint.io/ignore: "GPU003"
```
```yaml
# gpulint: ignore[GPU003]
- name: NVIDIA_VISIBLE_DEVICES
  value: all
```

## Use instead
```yaml
metadata:
  annotations:
    gpulint.io/ignore: "GPU003"
    gpulint.io/ignore-reason: "burn-in test; runs only on cordoned nodes"
```
```yaml
# gpulint: ignore[GPU003] burn-in test; runs only on cordoned nodes
- name: NVIDIA_VISIBLE_DEVICES
  value: all
```

## Fix
None: the reason is yours to write.

## References
- gpulint README, "Suppressing findings"
- Ruff, error suppression (the model for inline codes): https://docs.astral.sh/ruff/linter/#error-suppression
"""

from __future__ import annotations

from typing import Iterator

from gpulint.api import KeyAt, Rule, RuleContext, Severity, SuppressionComment, Violation
from gpulint.model.ignores import IGNORE, IGNORE_REASON, ignores_of
from gpulint.model.workload import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for ignore in ignores_of(workload):
        if ignore.codes and not ignore.reason:
            where = "pod template" if ignore.pod is not None else "workload"
            yield Violation(
                f"{IGNORE} on the {where} gives no {IGNORE_REASON}; say why the finding is acceptable",
                KeyAt(ignore.key_path),
            )


def check_directive(comment: SuppressionComment, ctx: RuleContext) -> Iterator[Violation]:
    if comment.codes and not comment.reason:
        yield Violation(f"`{comment.text}` gives no reason; say after the codes why the finding is acceptable",
                        comment.where)


RULE = Rule(
    id="GPU090",
    name="suppression-without-reason",
    severity=Severity.WARNING,
    summary="A gpulint.io/ignore annotation or `# gpulint: ignore[...]` comment that gives no reason.",
    doc=__doc__ or "",
    check=check,
    check_directive=check_directive,
    tags=("maintainability",),
)
