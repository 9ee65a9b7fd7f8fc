"""Settings for rendering Helm charts and kustomizations (kept apart from the
rendering code so that a scan without charts never imports it)."""

from __future__ import annotations

from gpulint.lazypattern import lazy
from gpulint.setonce import frozen_dataclass

DEFAULT_RELEASE = "release-name"   # what `helm template` itself calls an unnamed release
# A Kubernetes version as helm's --kube-version takes it: 1.33, v1.33, 1.33.1.
KUBE_VERSION_RE = lazy(r"\Av?[0-9]+\.[0-9]+(?:\.[0-9]+)?\Z")
DEFAULT_TIMEOUT = 30.0  # seconds per renderer run; one that takes longer is stopped and reported
DEFAULT_MEMORY = 512    # MiB a renderer run may allocate (beyond the Go runtime's reservation, render/tools.py)


@frozen_dataclass(frozen=True, repr=False, eq=False)
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
    # --kube-version / `kube-version` setting: the cluster's Kubernetes version charts are rendered for
    # (Capabilities.KubeVersion, a chart's kubeVersion constraint); None: helm's own default, the newest
    # version the installed helm knows.
    kube_version: str | None = None
    memory: int = DEFAULT_MEMORY        # --render-memory: MiB of address space each renderer run may use
    scan_roots: tuple[str, ...] = ()    # the command-line paths: the repository outside a git work tree


@frozen_dataclass(frozen=True, repr=False)
class ChartValues:
    """Values for one more render of a chart (besides its defaults): values files and --set pairs.

    `files` are the paths helm reads; `shown` the same paths as the user reads
    them (findings that come from a file point there); `sets` are `key=value`
    pairs, as `helm template --set` takes them.
    """

    files: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    label: str = ""                 # what tells this render apart, e.g. `ci/gpu-values.yaml`

    @classmethod
    def of(cls, files: tuple[str, ...], shown: tuple[str, ...], sets: tuple[str, ...] = (),
           label: str | None = None) -> "ChartValues":
        """Values labelled by their files as shown and their --set pairs, unless `label` is given."""
        if label is None:
            label = ", ".join([*shown, *(f"--set {s}" for s in sets)])
        return cls(files, shown, sets, label)


@frozen_dataclass(frozen=True, repr=False, eq=False)
class ConfiguredChart:
    """A `charts:` entry of the configuration: the chart directory and one render's values."""

    chart: str                      # absolute path of the chart directory
    values: ChartValues
