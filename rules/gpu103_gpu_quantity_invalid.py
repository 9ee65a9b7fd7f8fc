"""
## What it does
Finds GPU resource quantities, in `limits` or `requests`, that Kubernetes does
not accept for a GPU:

- not a quantity at all: `one`, `""`, `1 GPU`, `true`, `1.5.0`;
- negative: `-1`;
- not a whole number: `0.5`, `"0.5"`, `500m`, `1.5`, `1536Mi`-style fractions;
- written without a value (`nvidia.com/gpu:`, often a template placeholder
  that was never filled in);
- outside the range a sharing scheduler accepts: the ACK cGPU compute share
  `aliyun.com/gpu-core.percentage` takes multiples of 5 from 5 to 100, the HAMi
  shares `nvidia.com/gpucores` and `nvidia.com/gpumem-percentage` 1 to 100.

The Kubernetes quantity syntax is parsed exactly: `2`, `"2"`, `2000m`, `2e0`
and `+2` are all 2 and valid. A value that is a template variable (`${GPUS}`,
`$GPUS`, `{{ .Values.gpus }}`, `<gpus>`) or a placeholder token
(`PLACEHOLDER_NUM_GPUS`, `__GPUS__`: capitals joined by underscores, which no
quantity is) is left alone: it is filled in later. The finding points at the resource's key. Every
container role and every pod template is checked; resources listed in the
`overcommittable-resources` setting are skipped. Values of the wrong YAML type
(a list, a mapping) are reported as GPU000 instead.

## Why is this bad
A GPU is an extended resource: the device plugin hands out whole devices, and
the API server rejects anything else. Depending on the value it answers

    quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'
    spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "-1": must be greater than or equal to 0
    spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer

so the Pod, the built-in workload holding it, or every Pod an operator tries
to create for a custom resource, is refused. A key
without a value is read as 0 (or dropped), so the container silently gets no
GPU. A fraction of a GPU is not requested with a fractional count: it takes a
sharing resource (ACK `aliyun.com/gpu-mem`, time-slicing `nvidia.com/gpu.shared`,
MIG `nvidia.com/mig-1g.5gb`, HAMi `nvidia.com/gpumem`).

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: 0.5
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```
or share a GPU, e.g. on ACK:
```yaml
resources:
  limits:
    aliyun.com/gpu-mem: 4    # GiB of one shared GPU
```

## Fix
None: the intended count is unknown (a fraction of a GPU is not a count, and rounding
either way changes what the workload gets).

## References
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- Kubernetes, resource quantities: https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go`, `ValidateResourceQuantityValue`
- ACK GPU sharing and cGPU: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#gpu-resources-in-kubernetes
"""

from __future__ import annotations

import functools
from typing import Iterator

from gpulint.api import KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.knowledge.quantity import (
    FRACTIONAL,
    MISSING,
    MSG_INTEGER,
    MSG_NEGATIVE,
    MSG_REGEX,
    NEGATIVE,
    QuantityIssue,
    extended_resource_issue,
    format_amount,
    parse_quantity,
)
from gpulint.knowledge.resources import (
    SHARE_RANGES,
    is_template_value,
    validated_pairs_of,
    written,
)
from gpulint.model.workload import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for container, pairs in validated_pairs_of(workload, ctx.settings):
        for pair in pairs:
            for entry in (pair.limit, pair.request):
                if entry is None or is_template_value(entry.value):
                    continue  # a template variable is filled in later
                message = _problem(entry.name, entry.section, type(entry.value), entry.value)
                if message is not None:
                    yield Violation(message, KeyAt(entry.path), container)


@functools.lru_cache(maxsize=4096)
def _problem(name: str, section: str, kind: type, value: object) -> str | None:
    """The message for `value` of resource `name` in `section`, or None. Cached: the same
    few quantities recur in every container (`kind` keeps 1, 1.0 and true apart)."""
    issue = extended_resource_issue(value)
    if issue is not None:
        return _describe(name, section, value, issue)
    share = SHARE_RANGES.get(name)
    amount = parse_quantity(value)
    if share is not None and amount is not None and not share.accepts(amount):
        return (f"{name}: {written(value)} in {section} is not a valid "
                f"{share.what}: it must be {share.describe()}")
    return None


def _describe(name: str, section: str, value: object, issue: QuantityIssue) -> str:
    head = f"{name}: {written(value)} in {section}"
    if issue.kind == MISSING:
        return (f"{name} in {section} has no value: Kubernetes reads it as 0 (or drops it), "
                "so the container gets no GPU; write a whole number")
    if issue.kind == NEGATIVE:
        return f'{head} is negative; the API server rejects it ("{MSG_NEGATIVE}")'
    if issue.kind == FRACTIONAL:
        amount = format_amount(issue.amount) if issue.amount is not None else ""
        shown = f" ({amount})" if amount and amount != written(value) else ""
        return (f'{head}{shown} is not a whole number; the API server rejects it ("{MSG_INTEGER}"): '
                "request whole GPUs, or a fraction through a sharing resource")
    return f'{head} is not a Kubernetes quantity; the API server rejects it ("{MSG_REGEX}")'


RULE = Rule(
    id="GPU103",
    name="gpu-quantity-invalid",
    severity=Severity.ERROR,
    summary="A GPU quantity that is not a whole, non-negative number; Kubernetes rejects it or reads 0.",
    doc=__doc__ or "",
    check=check,
    tags=("correctness", "gpu"),
)
