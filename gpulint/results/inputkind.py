"""What one input of a scan is, and so how it is read.

Discovery (gpulint/inputs/) decides each input's kind; the engine, the renderers,
the cache and the progress line act on it. The kind sits here, below all of them,
so that each asks the kind (`kind.rendered`) instead of keeping its own list of
names. A str enum: its members are the names that were used before (cache keys,
pickled inputs of a parallel scan).
"""

from __future__ import annotations

from enum import Enum


class InputKind(str, Enum):
    MANIFEST = "manifest"                # a YAML or JSON file of manifests
    DOCKERFILE = "dockerfile"            # a Dockerfile or Containerfile
    STDIN = "stdin"                      # manifests piped in (`-`)
    CHART = "chart"                      # a Helm chart directory, rendered with helm template
    KUSTOMIZATION = "kustomization"      # a kustomization directory, built with kustomize
    UNREADABLE_DIR = "unreadable-dir"    # a directory that could not be listed
    NOT_FOLLOWED = "not-followed"        # a symlink out of the scanned tree, or a kernel filesystem
    IGNORED = "ignored"                  # what git ignores, passed over by a walk

    def __str__(self) -> str:
        return self.value

    @property
    def rendered(self) -> bool:
        """Rendered by an external tool before it is scanned (a chart, a kustomization)."""
        return self is InputKind.CHART or self is InputKind.KUSTOMIZATION

    @property
    def read(self) -> bool:
        """Opened by the scan; the others are reported with a status (and GPU099) only."""
        return self is not InputKind.NOT_FOLLOWED and self is not InputKind.IGNORED

    @property
    def manifests(self) -> bool:
        """Read as a stream of manifests as it is (a file or stdin)."""
        return self is InputKind.MANIFEST or self is InputKind.STDIN

    @property
    def file(self) -> bool:
        """A single file of the scanned tree (a manifest or a Dockerfile)."""
        return self is InputKind.MANIFEST or self is InputKind.DOCKERFILE
