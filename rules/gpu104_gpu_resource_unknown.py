"""
## What it does
Finds resource names in `limits` or `requests` that look like a GPU but are not
a known GPU resource, and suggests the closest known one:

- typos: `nvidia.com/gpus`, `nvidia.com/GPU`, `nvidia/gpu`, `nvidia.com/gup`,
  `nvidia.com/mig1g.5gb`;
- the removed legacy name `alpha.kubernetes.io/nvidia-gpu`;
- a name containing `gpu` in a known vendor's domain (`nvidia.com/gpu-count`),
  in a domain within two edits of one (`nvidia.co/gpu`), without a domain
  (`gpu`, `nvidia/gpu`) or in Kubernetes' reserved domains.

"Looks like a GPU" means: the name contains `gpu` (in any case), is a
NVIDIA MIG-style name (`nvidia.com/mig...`), is a removed legacy GPU name, or
is within two edits of a known GPU resource. Known names are the
`gpu-resources` and `overcommittable-resources` settings (NVIDIA, MIG, AMD,
Intel, ACK GPU sharing, HAMi, MetaX, Moore Threads, Iluvatar by default).
Other extended resources (`hugepages-2Mi`, `ephemeral-storage`, `rdma/*`,
`smarter-devices/*`, `nvidia.com/hostdev`, `aws.amazon.com/neuron`) are never
reported, nor are placeholder names of documentation domains
(`example.com/gpu`), nor GPU resources of a device plugin or scheduler of
its own: a domain of its own that is no misspelling of a known one, with `gpu`
in the name (Volcano's `volcano.sh/vgpu-number`, `volcano.sh/gpu-memory`; a
container requesting one gets GPUs, for the other rules too), nor DRA extended resources (KEP-5004): a DeviceClass
requested under its implicit name `deviceclass.resource.kubernetes.io/<class>`
(`…/gpu.nvidia.com`), or under the `extendedResourceName` a DeviceClass of the
scan declares, is scheduler-visible, the scheduler allocates a DRA claim
for it (a class part that is no DeviceClass name, e.g. upper case, is still
reported). The finding points at the offending key. Names matching the
option `ignore-resources` (shell globs) are skipped.

## Why is this bad
Kubernetes accepts most misspelt names (`nvidia.com/GPU` and `nvidia/gpu` are
valid extended resource names), but no node advertises them: the Pod stays
`Pending` with `0/N nodes are available: N Insufficient nvidia.com/gpus`, and
the GPU it was meant to get is never requested. Names the API server refuses
(`gpu` without a domain, an upper-case domain) fail at apply time instead.
`alpha.kubernetes.io/nvidia-gpu` was removed in Kubernetes 1.10 together
with the in-tree GPU support; GPUs come from device plugins now.

If your device plugin really advertises the name (renamed per-model
resources such as `nvidia.com/a100`, another vendor's GPU), add it to the
`gpu-resources` setting: the request rules then check it too.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpus: 1
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Fix
Unsafe (`--unsafe-fixes`): when the name is one slip away from a single known
name — one character added, dropped, changed or swapped (`nvidia.com/gpus`,
`nvidia.com/gup`), only its case (`nvidia.com/GPU`), its domain without the
top-level part (`nvidia/gpu`), or the removed legacy name — the key is renamed
to that name, in `limits` and `requests` alike. It is unsafe because the workload then really requests GPUs: it
waits for a node that has them and takes them from other pods. No fix when
several names are as close, or the container already lists the name.

```diff
 resources:
   limits:
-    nvidia.com/gpus: 1
+    nvidia.com/gpu: 1
```

## References
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- Kubernetes 1.10 release notes: `alpha.kubernetes.io/nvidia-gpu` removed in favour of device plugins
- NVIDIA k8s-device-plugin (resource names, MIG strategies, renaming): https://github.com/NVIDIA/k8s-device-plugin
- GPU resource names: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#gpu-resources-in-kubernetes
"""

from __future__ import annotations

from typing import Iterator

from gpulint.api import Applicability, Edit, Fix, KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.knowledge.gpu import matches_any
from gpulint.knowledge.resources import (
    LEGACY_NAMES,
    Entry,
    ResourceNames,
    api_rejects_name,
    edit_distance,
    resource_names,
    suggestions,
    unknown_gpu_like_entries_of,
)
from gpulint.model.workload import Workload


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    found = unknown_gpu_like_entries_of(workload, ctx.settings)
    if not found:
        return   # most workloads
    ignored = tuple(ctx.option("ignore-resources") or ())
    names = resource_names(ctx.settings)
    for container, entries in found:
        # (A name a DeviceClass of the scan declares is scheduler-visible: KEP-5004.)
        unknown = [entry for entry in entries
                   if ctx.index is None or ctx.index.extended_resource_class(entry.name) is None]
        for entry in unknown:
            if not matches_any(entry.name, ignored):
                meant = _meant(entry.name, names)
                # The name is renamed in limits and requests alike: renaming one alone would
                # leave a request without its limit.
                fix = None if meant is None else Fix(
                    f"rename {entry.name} to {meant}", Applicability.UNSAFE,
                    tuple(Edit.rename(same.path, meant) for same in unknown if same.name == entry.name))
                yield Violation(_message(entry, names), KeyAt(entry.path), container, fix=fix)


def _meant(name: str, names: ResourceNames) -> str | None:
    """The one known name `name` is a slip of (see the Fix section), or None."""
    lower = name.lower()
    legacy = LEGACY_NAMES.get(lower)
    if legacy is not None:
        return legacy[0]
    guesses = suggestions(name, names)
    if len(guesses) != 1 or guesses[0] not in names.concrete:
        return None
    meant = guesses[0]
    domain, _, local = lower.rpartition("/")
    meant_domain, _, meant_local = meant.rpartition("/")
    if edit_distance(lower, meant) <= 1:   # also a name wrong only in case
        return meant
    if local == meant_local and domain and meant_domain.startswith(domain + "."):
        return meant
    return None


def _message(entry: Entry, names: ResourceNames) -> str:
    name = entry.name
    legacy = LEGACY_NAMES.get(name.lower())
    if legacy is not None:
        replacement, when = legacy
        return (f"{name} was {when}: no node advertises it, so the Pod stays Pending; "
                f"use {replacement}")
    guesses = suggestions(name, names)
    guess = f"; did you mean {' or '.join(guesses)}?" if guesses else ""
    effect = ("the API server rejects the name" if api_rejects_name(name)
              else "no node advertises it, so the Pod stays Pending")
    return (f"{name} in {entry.section} is not a known GPU resource{guess} "
            f"({effect}; if a device plugin in your cluster provides it, add it to the gpu-resources setting)")


RULE = Rule(
    id="GPU104",
    name="gpu-resource-unknown",
    severity=Severity.WARNING,
    summary="A resource name that looks like a GPU but is not a known GPU resource (a typo, a removed name).",
    doc=__doc__ or "",
    check=check,
    options={"ignore-resources": []},
    tags=("correctness", "gpu"),
    # A name that looks like a GPU resource may be a device plugin gpulint does not know.
    precision="medium",
)
