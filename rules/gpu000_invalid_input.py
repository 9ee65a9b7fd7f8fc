"""
## What it does
Reports input gpulint could not read as Kubernetes manifests: invalid YAML or
JSON, undecodable text, duplicate mapping keys, values of the wrong type where
Kubernetes expects another (`containers: "x"`, `privileged: "yes"`), unrendered
Helm templates, unreadable files and resource bombs (deep nesting, alias
expansion). The finding sits at the parser's line and column; the rest of the
file and every other file are still scanned.

## Why is this bad
A manifest gpulint cannot read is a manifest it cannot check. Malformed input
can also hide a bypass from review: with a duplicate `env` key only the last
list counts for most tools, so an `NVIDIA_VISIBLE_DEVICES` entry in the first
one is easy to miss; `privileged: "yes"` is rejected by the API server instead
of being caught where it was written. gpulint checks the last value of a
duplicate key, as Kubernetes keeps it, so the ignored first value cannot hide a
bypass from the check: the finding is an error when that value holds GPU access
(the message names it), info otherwise (a repeated label).

## Example
```yaml
spec:
  containers:
  - name: app
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
    env: []          # duplicate key
```

## Use instead
Fix the syntax or type the message names. Render Helm charts before scanning
(`helm template RELEASE CHART | gpulint scan -`) or let gpulint render them.

## Fix
None: what the input was meant to say is not known; the message says what the parser found.

## References
- Kubernetes API conventions: https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md
- YAML 1.2 specification, node anchors and duplicate keys: https://yaml.org/spec/1.2.2/
"""

from typing import Iterator

from gpulint.api import InputProblem, Rule, RuleContext, Severity, Violation


def check_input(problem: InputProblem, ctx: RuleContext) -> Iterator[Violation]:
    """Every problem of the input is a finding where the parser or the type check found it."""
    yield Violation(problem.message, problem.where, severity=problem.severity)


RULE = Rule(
    id="GPU000",
    name="invalid-input",
    severity=Severity.ERROR,
    summary="Input that cannot be read as Kubernetes manifests (reported by the engine).",
    doc=__doc__ or "",
    # A problem with the input or the tools, not a bypass: a code scanning
    # error at the file to fix, never a security alert.
    tags=("maintainability", "input"),
    check_input=check_input,
    kept_when_selecting_others=True,
)
