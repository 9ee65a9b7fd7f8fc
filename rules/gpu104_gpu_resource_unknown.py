"""
## What it does
Finds resource names in `limits` or `requests` that look like a GPU but are not
a known GPU resource, and suggests the closest known one:

- typos: `nvidia.com/gpus`, `nvidia.com/GPU`, `nvidia/gpu`, `nvidia.com/gup`,
  `nvidia.com/mig1g.5gb`;
- the removed legacy name `alpha.kubernetes.io/nvidia-gpu`;
- any other name containing `gpu` that no configured device plugin provides.

"Looks like a GPU" means: the name contains `gpu` (in any case), is a
NVIDIA MIG-style name (`nvidia.com/mig...`), is a removed legacy GPU name, or
is within two edits of a known GPU resource. Known names are the
`gpu-resources` and `overcommittable-resources` settings (NVIDIA, MIG, AMD,
Intel, ACK GPU sharing, HAMi, MetaX, Moore Threads, Iluvatar by default).
Other extended resources (`hugepages-2Mi`, `ephemeral-storage`, `rdma/*`,
`smarter-devices/*`, `nvidia.com/hostdev`, `aws.amazon.com/neuron`) are never
reported, nor are placeholder names of documentation domains
(`example.com/gpu`). The finding points at the offending key. Names matching the
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

## References
- Kubernetes, Schedule GPUs: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
- Kubernetes 1.10 release notes: `alpha.kubernetes.io/nvidia-gpu` removed in favour of device plugins
- NVIDIA k8s-device-plugin (resource names, MIG strategies, renaming): https://github.com/NVIDIA/k8s-device-plugin
- GPU resource names: POLICY.md §5
"""

from __future__ import annotations

import functools
from typing import Iterator

from gpulint.api import KeyAt, Rule, RuleContext, Severity, Violation
from gpulint.gpu import matches_any
from gpulint.model import Workload
from gpulint.resources import (
    LEGACY_NAMES, Entry, ResourceNames, api_rejects_name, entries_named, is_placeholder_name, looks_like_gpu,
    resource_names, suggestions,
)


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    ignored = tuple(ctx.option("ignore-resources") or ())
    names = resource_names(ctx.settings)
    def reported(name: str) -> bool:
        return _unknown_gpu_like(name, names, ignored)

    for _pod, container in workload.containers():
        for entry in entries_named(container, reported):
            yield Violation(_message(entry, names), KeyAt(entry.path), container)


@functools.lru_cache(maxsize=4096)
def _unknown_gpu_like(name: str, names: ResourceNames, ignored: tuple[str, ...]) -> bool:
    """Whether `name` is reported. Cached: it depends on the name and the
    configuration only, and the same few names recur in every container."""
    return not (names.is_known(name) or is_placeholder_name(name) or matches_any(name, ignored)
                or not looks_like_gpu(name, names))


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
)
