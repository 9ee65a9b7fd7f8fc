"""What a scan is asked to do, and what it gives back: the library's entry point types.

`gpulint.scan.run(ScanRequest(...))` is the whole scan: configuration, rule
selection, suppressions, discovery, rendering, the result cache and the engine.
The command line builds a request from its options; tests, the GitHub Action
and any embedding build one directly. Everything the result depends on is a
field here (and the files they name); nothing is read from a module-level
setting, but GPULINT_NO_CACHE, which turns the result cache off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from gpulint.config.render import DEFAULT_MEMORY, DEFAULT_RELEASE

if TYPE_CHECKING:
    from gpulint.api import Rule
    from gpulint.config.settings import ProjectConfig
    from gpulint.inputs.discovery import Input
    from gpulint.results.scanning import ScanConfig, ScanResult
    from gpulint.scan.reader import InputReader
    from gpulint.suppress.baseline import BaselineWriter

DEFAULT_MAX_DEPTH = 500
DEFAULT_MAX_ALIAS_NODES = 1_000_000


class RequestError(Exception):
    """A request that cannot be run as it is (an unknown rule code, a configuration with errors,
    a values file that does not exist, a report file the scan reads): a usage error, with one
    message per problem."""

    def __init__(self, *problems: str) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


class ScanObserver(Protocol):
    """Told how a scan goes (the command line's progress line and --verbose lines)."""

    def inputs_found(self, inputs: list[Input]) -> None:
        """Discovery is done: these will be scanned."""

    def render_started(self, item: Input) -> None:
        """The scan waits for a chart's or kustomization's render."""

    def render_done(self, item: Input, seconds: float, failed: bool) -> None:
        """A render was handed to the scan, `seconds` after it started."""

    def file_scanned(self, done: int, total: int) -> None:
        """`done` of the `total` inputs are scanned."""


class ScanRequest(NamedTuple):
    """Everything a scan depends on. The defaults are those of `gpulint scan` with no option.

    Immutable (a named tuple); `request._replace(jobs=1)` is a changed copy.
    """

    paths: tuple[str, ...] = (".",)           # files and directories; "-" is stdin
    stdin_name: str | None = None             # the name of the input read from "-"
    config_file: str | None = None            # None: the configuration found from the first path
    isolated: bool = False                    # read no configuration file from the scanned tree
    config_root: str | None = None            # the folder config_file's relative paths name files in
    # Rule selection, on top of the configuration's (config/selection.py).
    select: tuple[str, ...] | None = None     # None: the defaults
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()             # globs, added to the configuration's exclude
    respect_ignore: bool = True               # pass over what git ignores in a walk
    # The paths are files a commit changes: each is scanned through the chart or the kustomizations
    # that read it, and those builds report their findings on the changed files (inputs/changed.py).
    changed: bool = False
    fail_on: str | None = None                # None: the configuration's, else "warning"
    baseline: str | None = None               # findings recorded there are suppressed
    baseline_root: str | None = None          # the folder its paths are relative to (default: its own)
    write_baseline: str | None = None         # record the findings there (see ScanOutcome.baseline)
    default_exemptions: bool = True           # recognise the built-in GPU system components
    # Helm and Kustomize.
    helm: str | None = None
    kustomize: str | None = None
    values: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()          # KEY=VALUE, as helm --set
    helm_release: str = DEFAULT_RELEASE
    helm_namespace: str | None = None
    helm_skip_tests: bool = False
    render_timeout: int | None = None         # None: the configuration's, else the default
    kube_version: str | None = None           # helm --kube-version; None: the configuration's, else helm's own
    render_memory: int = DEFAULT_MEMORY       # MiB one renderer run may allocate
    # Loader limits.
    max_depth: int = DEFAULT_MAX_DEPTH
    max_alias_nodes: int = DEFAULT_MAX_ALIAS_NODES
    max_file_size: int | None = 256 << 20     # bytes of the largest file read (None: no limit)
    jobs: int | None = None                   # processes (None: one per idle CPU); the result is the same
    cache: bool = True                        # read an unchanged scan's result from the result cache
    cache_dir: str | None = None
    report_files: tuple[str, ...] = ()        # where reports will be written: refused if the scan reads one
    observer: ScanObserver | None = None     # told how the scan goes; no part of what it finds
    # Resolve each finding's fix (its text edits, or why it has none). False when no report of the
    # scan shows fixes: the scan leaves them out, unless the configuration turns --fix on.
    fixes: bool = True


class ScanOutcome(NamedTuple):
    """A scan's result and what its reports and exit code need."""

    result: ScanResult
    rules: dict[str, Rule]                    # every registered rule, in id order
    enabled: list[str]                        # ids of the rules the scan ran, sorted
    fail_on: str                              # the lowest severity that fails the scan, or "never"
    inputs: list[Input]
    missing: list[str]                        # paths of the request that do not exist
    skipped: list[tuple[str, str]]            # (path, reason) left out on purpose (excludes, special files)
    baseline: BaselineWriter | None = None    # the baseline to write, when the request asked for one
    # What the scan ran with, for a stage that works on its findings afterwards (fixes: cli/fixcmd.py).
    config: ScanConfig | None = None
    project: ProjectConfig | None = None      # the configuration in effect
    reader: InputReader | None = None         # how the inputs were read (stdin kept, renders)

    @property
    def complete(self) -> bool:
        """Every path existed and no input met a bug."""
        return not self.missing and not self.result.internal_errors

    def fails(self) -> bool:
        """Whether an active finding is at or above `fail_on`."""
        return fails(self.result, self.fail_on)


def fails(result: ScanResult, fail_on: str) -> bool:
    """Whether an active finding of `result` is at or above `fail_on` ("never": none is)."""
    if fail_on == "never":
        return False
    from gpulint.api import Severity

    threshold = Severity(fail_on).rank
    return any(finding.suppressed is None and finding.severity.rank >= threshold
               for report in result.files for finding in report.findings)
