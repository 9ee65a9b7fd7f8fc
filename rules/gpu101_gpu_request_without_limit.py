"""
## What it does
Finds containers that put a GPU resource (`nvidia.com/gpu`, `amd.com/gpu`,
`aliyun.com/gpu-mem`, a MIG device, ... — the `gpu-resources` setting) in
`resources.requests` but not in `resources.limits`. The finding points at the
resource's key under `requests`. Every container role (init, ephemeral) and
every pod template is checked: Deployments, Jobs, KServe predictors, Ray
worker groups, Kubeflow replicas and so on. Resources listed in the
`overcommittable-resources` setting are skipped.

## Why is this bad
GPUs are extended resources, and Kubernetes does not let extended resources be
overcommitted: a request needs a limit. The API server rejects the Pod, and
any built-in workload (Deployment, Job, ...) whose template holds it, with

    spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources

Custom resources (PyTorchJob, RayCluster, InferenceService, ...) are accepted,
and the error only appears in the operator's events when it creates the Pods:
the workload silently never starts. The policy ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)) is explicit:
GPUs are requested in `limits`; a `requests` without a matching `limits` is
invalid. A LimitRange that gives the namespace a default GPU limit would make
the Pod valid; gpulint does not see LimitRanges, so suppress the finding then.

## Example
```yaml
resources:
  requests:
    nvidia.com/gpu: 1
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1     # the request defaults to the limit
```

## Fix
Safe: adds the limit, written as the request is (`--fix`); no fix when the request
is not a valid GPU quantity (GPU103 says why). Kubernetes defaults a
missing limit of an extended resource to nothing, and a request without a limit
is rejected, so the added limit only makes the manifest valid as written:

```diff
 resources:
   requests:
     nvidia.com/gpu: 1
+  limits:
+    nvidia.com/gpu: 1
```

## References
- ACK, "Use the default Kubernetes GPU scheduling": https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- Kubernetes, extended resources: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#extended-resources
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go`, `ValidateResourceRequirements`
"""

from __future__ import annotations

from typing import Iterator

from gpulint.api import Applicability, CopyOf, Edit, Fix, KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.knowledge.quantity import extended_resource_issue
from gpulint.knowledge.resources import validated_pairs_of
from gpulint.model.workload import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for container, pairs in validated_pairs_of(workload, ctx.settings):
        for pair in pairs:
            if pair.request is not None and pair.limit is None:
                # Copying a quantity the API server rejects (GPU103's finding) would make nothing valid.
                fix = None if extended_resource_issue(pair.request.value) else Fix(
                    f"add {pair.name} to resources.limits, equal to the request", Applicability.SAFE,
                    (Edit.add(container.resources.limits_path(pair.name), CopyOf(pair.request.path)),))
                yield Violation(
                    f"{pair.name} is requested but has no limit; the API server rejects it "
                    '("Limit must be set for non overcommitable resources"): '
                    f"set {pair.name} in resources.limits instead",
                    KeyAt(pair.request.path), container, fix=fix,
                    no_fix=None if fix else "no fix: the requested quantity is not valid (see GPU103)",
                )


RULE = Rule(
    id="GPU101",
    name="gpu-request-without-limit",
    severity=Severity.ERROR,
    summary="A GPU resource in resources.requests without a limit; Kubernetes rejects the Pod.",
    doc=__doc__ or "",
    check=check,
    tags=("correctness", "gpu"),
)
