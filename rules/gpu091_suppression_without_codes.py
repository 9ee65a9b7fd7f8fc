"""
## What it does
Reports a suppression that names no rule: a bare `# gpulint: ignore` comment
(or `ignore[]`), or a `gpulint.io/ignore` annotation whose value is empty.
Such a suppression silences nothing; this finding sits on the comment or on
the annotation key.

## Why is this bad
gpulint only accepts suppressions for named rules. A blanket ignore would also
hide every bypass a future rule finds in the same place, so it is not
honoured; left in place, it misleads readers into thinking the line or object
is exempt when it is not.

## Example
```yaml
env:
# gpulint: ignore  burn-in test
- name: NVIDIA_VISIBLE_DEVICES
  value: all
```

## Use instead
```yaml
env:
# gpulint: ignore[GPU003] burn-in test; runs only on cordoned nodes
- name: NVIDIA_VISIBLE_DEVICES
  value: all
```

## Fix
None: which rules the comment means is yours to say.

## References
- gpulint README, "Suppressing findings"
- Ruff, blanket noqa (PGH004): https://docs.astral.sh/ruff/rules/blanket-noqa/
"""

from __future__ import annotations

from typing import Iterator

from gpulint.api import KeyAt, Rule, RuleContext, Severity, SuppressionComment, Violation
from gpulint.model.ignores import IGNORE, ignores_of
from gpulint.model.workload import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for ignore in ignores_of(workload):
        if not ignore.codes:
            yield Violation(
                f"{IGNORE} names no rule, so it suppresses nothing; list the codes, e.g. \"GPU003,GPU006\"",
                KeyAt(ignore.key_path),
            )


def check_directive(comment: SuppressionComment, ctx: RuleContext) -> Iterator[Violation]:
    if not comment.codes:
        yield Violation(f"`{comment.text}` names no rule, so it suppresses nothing; list the codes it is for, "
                        "e.g. `# gpulint: ignore[GPU003] reason`", comment.where)


RULE = Rule(
    id="GPU091",
    name="suppression-without-codes",
    severity=Severity.WARNING,
    summary="A `# gpulint: ignore` comment or gpulint.io/ignore annotation that names no rule.",
    doc=__doc__ or "",
    check=check,
    check_directive=check_directive,
    tags=("maintainability",),
)
