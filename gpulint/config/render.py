"""Settings for rendering Helm charts and kustomizations (kept apart from the
rendering code so that a scan without charts never imports it)."""

from __future__ import annotations

from gpulint.lazypattern import lazy
from gpulint.record import record, set_field

DEFAULT_RELEASE = "release-name"   # what `helm template` itself calls an unnamed release
# A Kubernetes version as helm's --kube-version takes it: 1.33, v1.33, 1.33.1.
KUBE_VERSION_RE = lazy(r"\Av?[0-9]+\.[0-9]+(?:\.[0-9]+)?\Z")
DEFAULT_TIMEOUT = 30.0  # seconds per renderer run; one that takes longer is stopped and reported
DEFAULT_MEMORY = 512    # MiB a renderer run may allocate (beyond the Go runtime's reservation, render/tools.py)


@record(frozen=True)
class RenderOptions:
    """Command-line settings for rendering charts and kustomizations."""

    __slots__ = ("helm", "values", "sets", "release", "namespace", "skip_tests", "kustomize", "timeout",
                 "kube_version", "memory", "scan_roots")
    helm: str | None                    # --helm PATH; else `helm` on PATH
    values: tuple[str, ...]             # --values FILE, in order
    sets: tuple[str, ...]               # --set a.b=c, in order
    release: str                        # --helm-release
    namespace: str | None               # --helm-namespace
    skip_tests: bool                    # --helm-skip-tests
    kustomize: str | None               # --kustomize PATH; else kustomize or kubectl on PATH
    timeout: float                      # --render-timeout / `render-timeout` setting
    # --kube-version / `kube-version` setting: the cluster's Kubernetes version charts are rendered for
    # (Capabilities.KubeVersion, a chart's kubeVersion constraint); None: helm's own default, the newest
    # version the installed helm knows.
    kube_version: str | None
    memory: int                         # --render-memory: MiB of address space each renderer run may use
    scan_roots: tuple[str, ...]         # the command-line paths: the repository outside a git work tree

    def __init__(self, helm: str | None = None, values: tuple[str, ...] = (), sets: tuple[str, ...] = (),
                 release: str = DEFAULT_RELEASE, namespace: str | None = None, skip_tests: bool = False,
                 kustomize: str | None = None, timeout: float = DEFAULT_TIMEOUT, kube_version: str | None = None,
                 memory: int = DEFAULT_MEMORY, scan_roots: tuple[str, ...] = ()) -> None:
        set_field(self, "helm", helm)
        set_field(self, "values", values)
        set_field(self, "sets", sets)
        set_field(self, "release", release)
        set_field(self, "namespace", namespace)
        set_field(self, "skip_tests", skip_tests)
        set_field(self, "kustomize", kustomize)
        set_field(self, "timeout", timeout)
        set_field(self, "kube_version", kube_version)
        set_field(self, "memory", memory)
        set_field(self, "scan_roots", scan_roots)


@record(eq=True, frozen=True)
class ChartValues:
    """Values for one more render of a chart (besides its defaults): values files and --set pairs.

    `files` are the paths helm reads; `shown` the same paths as the user reads
    them (findings that come from a file point there); `sets` are `key=value`
    pairs, as `helm template --set` takes them.
    """

    __slots__ = ("files", "shown", "sets", "label")
    files: tuple[str, ...]
    shown: tuple[str, ...]
    sets: tuple[str, ...]
    label: str                      # what tells this render apart, e.g. `ci/gpu-values.yaml`

    def __init__(self, files: tuple[str, ...] = (), shown: tuple[str, ...] = (), sets: tuple[str, ...] = (),
                 label: str = "") -> None:
        set_field(self, "files", files)
        set_field(self, "shown", shown)
        set_field(self, "sets", sets)
        set_field(self, "label", label)

    @classmethod
    def of(cls, files: tuple[str, ...], shown: tuple[str, ...], sets: tuple[str, ...] = (),
           label: str | None = None) -> "ChartValues":
        """Values labelled by their files as shown and their --set pairs, unless `label` is given."""
        if label is None:
            label = ", ".join([*shown, *(f"--set {s}" for s in sets)])
        return cls(files, shown, sets, label)


@record(frozen=True)
class ConfiguredChart:
    """A `charts:` entry of the configuration: the chart directory and one render's values."""

    __slots__ = ("chart", "values")
    chart: str                      # absolute path of the chart directory
    values: ChartValues

    def __init__(self, chart: str, values: ChartValues) -> None:
        set_field(self, "chart", chart)
        set_field(self, "values", values)
