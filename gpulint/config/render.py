"""Settings for rendering Helm charts and kustomizations (kept apart from the
rendering code so that a scan without charts never imports it)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_RELEASE = "release-name"   # what `helm template` itself calls an unnamed release
DEFAULT_TIMEOUT = 30.0  # seconds per renderer run; one that takes longer is stopped and reported


@dataclass(frozen=True)
class RenderOptions:
    """Command-line settings for rendering charts and kustomizations."""

    helm: str | None = None             # --helm PATH; else `helm` on PATH
    values: tuple[str, ...] = ()        # --values FILE, in order
    sets: tuple[str, ...] = ()          # --set a.b=c, in order
    release: str = DEFAULT_RELEASE      # --helm-release
    namespace: str | None = None        # --helm-namespace
    skip_tests: bool = False            # --helm-skip-tests
    kustomize: str | None = None        # --kustomize PATH; else kustomize or kubectl on PATH
    timeout: float = DEFAULT_TIMEOUT    # --render-timeout / `render-timeout` setting
    scan_roots: tuple[str, ...] = ()    # the command-line paths: the repository outside a git work tree
