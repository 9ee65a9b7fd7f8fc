"""
## What it does
Finds containers whose request for a GPU resource differs from its limit, both
being valid quantities. Quantities are compared as exact values, so `"2"`, `2`
and `2000m` are all equal. The finding points at the resource's key under
`requests`, where the API server reports it. Every container role and every
pod template is checked; resources listed in the `overcommittable-resources`
setting are skipped. A request or limit that is not a valid GPU quantity is
reported by GPU103 instead.

## Why is this bad
Extended resources cannot be overcommitted: for a GPU, the request must equal
the limit, neither lower nor higher. The API server rejects the Pod, and any
built-in workload whose template holds it, with

    spec.containers[0].resources.requests: Invalid value: "2": must be equal to nvidia.com/gpu limit of 1

A custom resource (PyTorchJob, RayCluster, ...) is accepted but its operator
never gets the Pods created. Writing
the request at all is redundant: Kubernetes copies the limit into the request.

## Example
```yaml
resources:
  requests:
    nvidia.com/gpu: 2
  limits:
    nvidia.com/gpu: 1
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 2     # the request defaults to the limit
```

## Fix
Safe: the request is made equal to the limit (`--fix`). The API server accepts
only equal values, and the limit is what the scheduler and the device plugin
use, so the Pod means what its limit says:

```diff
 resources:
   requests:
-    nvidia.com/gpu: 2
+    nvidia.com/gpu: 1
   limits:
     nvidia.com/gpu: 1
```

## References
- ACK, "Use the default Kubernetes GPU scheduling": https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go`, `ValidateResourceRequirements`
"""

from __future__ import annotations

from typing import Iterator

from gpulint.api import Applicability, CopyOf, Edit, Fix, KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.knowledge.quantity import (
    extended_resource_issue,
    format_amount,
    parse_quantity,
)
from gpulint.knowledge.resources import validated_pairs_of, written
from gpulint.model.workload import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for container, pairs in validated_pairs_of(workload, ctx.settings):
        for pair in pairs:
            if pair.request is None or pair.limit is None:
                continue
            if extended_resource_issue(pair.request.value) or extended_resource_issue(pair.limit.value):
                continue  # GPU103's finding
            request, limit = parse_quantity(pair.request.value), parse_quantity(pair.limit.value)
            if request is None or limit is None or request == limit:
                continue
            yield Violation(
                f"{pair.name} request {written(pair.request.value)} differs from its limit "
                f"{written(pair.limit.value)}; the API server rejects it (\"must be equal to "
                f"{pair.name} limit of {format_amount(limit)}\"): set only the limit",
                KeyAt(pair.request.path), container,
                fix=Fix(f"make the {pair.name} request equal to its limit", Applicability.SAFE,
                        (Edit.set(pair.request.path, CopyOf(pair.limit.path)),)),
            )


RULE = Rule(
    id="GPU102",
    name="gpu-request-limit-mismatch",
    severity=Severity.ERROR,
    summary="A GPU resource whose request differs from its limit; Kubernetes rejects the Pod.",
    doc=__doc__ or "",
    check=check,
    tags=("correctness", "gpu"),
)
