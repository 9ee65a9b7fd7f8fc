"""Exemptions written in the configuration (`exemptions:`), as a suppressor.

Every matcher an exemption sets must match (rules, path, namespace, kind,
name, container, image); each is a glob or a list of globs. `path` matches as
`exclude` does, relative to the configuration's directory: the file the
finding is in, or for rendered input one of the files it maps to (template,
values, Kustomize source). An object without a
namespace has the namespace "" (only `*` matches it: gpulint cannot know which
namespace it will be applied to). `container` needs a finding about a
container; `image` matches the finding's container image, or for a pod-level
finding (hostPID, a volume) any container image of the workload. Images match
as written and in their normalised form (`nvidia/cuda:12` is also
`docker.io/nvidia/cuda:12`).
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Iterable, Sequence

from gpulint.config.settings import Exemption, path_matches
from gpulint.knowledge.gpu import normalize_image
from gpulint.results.findings import Finding, Suppression
from gpulint.results.scanning import SuppressionContext
from gpulint.suppress.core import KIND_CONFIG

if TYPE_CHECKING:
    from pathlib import Path


class ConfigExemptions:
    def __init__(self, exemptions: Sequence[Exemption], root: str | Path = ".") -> None:
        self.exemptions = list(exemptions)
        self.root = root     # the configuration's directory: `path` globs are relative to it

    def __call__(self, finding: Finding, ctx: SuppressionContext) -> Suppression | None:
        for exemption in self.exemptions:
            if matches(exemption, finding, ctx, self.root):
                return Suppression(KIND_CONFIG, exemption.reason)
        return None


def _any(patterns: Iterable[str], *values: str) -> bool:
    return any(fnmatch.fnmatchcase(v, p) for p in patterns for v in values)


def matches(exemption: Exemption, finding: Finding, ctx: SuppressionContext, root: str | Path = ".") -> bool:
    if exemption.rules is not None and finding.rule_id not in exemption.rules:
        return False
    if exemption.path is not None:
        files = [finding.file, *(location.file for location in finding.mapped)]
        if not any(path_matches(file, exemption.path, root) for file in files):
            return False
    obj = finding.obj
    for patterns, value in ((exemption.namespace, obj and (obj.namespace or "")),
                            (exemption.kind, obj and obj.kind),
                            (exemption.name, obj and obj.name)):
        if patterns is not None and (value is None or not _any(patterns, value)):
            return False
    if exemption.container is not None:
        if finding.container is None or not _any(exemption.container, finding.container):
            return False
    if exemption.image is not None:
        if ctx.container is not None:
            images = [ctx.container.image]
        elif ctx.workload is not None:
            images = [c.image for _pod, c in ctx.workload.containers()]
        else:
            images = []
        if not any(image and _any(exemption.image, image, normalize_image(image)) for image in images):
            return False
    return True
