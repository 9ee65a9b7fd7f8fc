"""`gpulint.scan.run`: a ScanRequest in, a ScanOutcome out (see request.py).

The steps of a scan in their order: the rules, the configuration in effect,
the rule selection and suppressions, the render settings, discovery (and the
check that no report would replace an input), the scan itself (engine.py)
through the result cache. A problem with the request raises RequestError
before anything is scanned.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from gpulint.scan.reader import InputReader
from gpulint.scan.request import RequestError, ScanObserver, ScanOutcome, ScanRequest

if TYPE_CHECKING:
    from gpulint.config.render import RenderOptions
    from gpulint.config.settings import ProjectConfig
    from gpulint.inputs.discovery import Discovery, Input
    from gpulint.scan.cache import ResultCache
    from gpulint.suppress.baseline import BaselineWriter

# Fields of a request that do not change its result: left out of the result cache's key.
# (`fixes`: an entry says whether it holds them, see cache.py.)
_NOT_SHAPING = ("paths", "jobs", "cache", "cache_dir", "report_files", "observer", "fixes")


def run(request: ScanRequest) -> ScanOutcome:
    """Run the scan `request` asks for. Raises RequestError for a request that cannot run."""
    from gpulint.config.selection import SelectionError
    from gpulint.inputs.discovery import discover, with_chart_values
    from gpulint.load.yamlload import Limits
    from gpulint.scan.engine import scan
    from gpulint.scan.runconfig import CliOptions, plan
    from gpulint.suppress.systemcomponents import system_component_suppressor

    rules = load_rules()
    paths = list(request.paths) or ["."]
    stdin_name = request.stdin_name
    # The configuration of stdin given a name is found, and its excludes applied, as for that file.
    project = project_config([stdin_name if p == "-" and stdin_name else p for p in paths], request.config_file,
                             rules, request.isolated, request.config_root)
    if request.baseline_root is not None and not request.baseline:
        raise RequestError(f"--baseline-root {request.baseline_root}: needs --baseline (the file it applies to)")
    options = CliOptions(select=list(request.select) if request.select else None,
                         extend_select=list(request.extend_select), ignore=list(request.ignore),
                         exclude=list(request.exclude), fail_on=request.fail_on, baseline=request.baseline,
                         baseline_root=request.baseline_root, write_baseline=request.write_baseline)
    try:
        setup = plan(rules, project, options,
                     system=system_component_suppressor(builtin=request.default_exemptions,
                                                        settings=project.settings, rules=rules),
                     render=render_options(request, paths, project.render_timeout, project.kube_version),
                     limits=Limits(max_depth=request.max_depth, max_expanded_nodes=request.max_alias_nodes,
                                   max_file_size=request.max_file_size))
    except SelectionError as error:
        raise RequestError(str(error)) from None
    except Exception as error:
        from gpulint.suppress.baseline import BaselineError

        if isinstance(error, BaselineError):
            raise RequestError(str(error)) from None
        raise
    setup.scan.fixes = request.fixes or project.fix
    focus: dict = {}
    if request.changed:
        if request.write_baseline:   # a baseline records a whole scan, not a commit's part of it
            raise RequestError("--write-baseline: not with --changed (write it from a scan of the repository)")
        from gpulint.inputs.changed import discover_changed

        changed = discover_changed(paths, tuple(options.exclude), skip=project.excludes if project.exclude else None,
                                   respect_ignore=request.respect_ignore, stdin_name=stdin_name)
        found, focus = changed.discovery, changed.focus
    else:
        found = discover(paths, tuple(options.exclude), skip=project.excludes if project.exclude else None,
                         respect_ignore=request.respect_ignore, stdin_name=stdin_name)
    for path in request.report_files:
        refuse_to_overwrite_an_input(path, request, found, project)
    found.inputs = with_chart_values(found.inputs, project.charts)
    observer = request.observer
    if observer is not None:
        observer.inputs_found(found.inputs)
    reader = ObservedReader(observer, setup.scan.render) if observer is not None else InputReader(setup.scan.render)
    result = scan(found.inputs, setup.scan, reader=reader, jobs=request.jobs,
                  progress=observer.file_scanned if observer is not None else None,
                  cache=result_cache(request, project, setup.writer))
    if focus:
        from gpulint.inputs.changed import keep_changed

        keep_changed(result, focus, frozenset(rule.id for rule in rules.values() if rule.check_render is not None))
    enabled = sorted(rule.id for rule in setup.scan.rules)
    return ScanOutcome(result, rules, enabled, setup.fail_on, found.inputs, found.missing, found.skipped,
                       setup.writer, setup.scan, project, reader)


def load_rules() -> dict:
    """Every registered rule (scan/registry.py); a rule package that does not load is a RequestError."""
    from gpulint.scan.registry import RegistryError
    from gpulint.scan.registry import load_rules as load

    try:
        return load()
    except RegistryError as error:
        raise RequestError(str(error)) from None


class ObservedReader(InputReader):
    """The scan's reader, telling the observer when a chart or kustomization is rendered and how long it
    took (once per directory, whatever its renders; from the scan's thread, in the scan's order)."""

    def __init__(self, observer: ScanObserver, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.observer = observer
        self._seen: set[str] = set()

    def render_started(self, item: Input) -> None:
        if str(item.real) not in self._seen:
            self.observer.render_started(item)

    def render_done(self, item: Input, seconds: float, failed: bool) -> None:
        key = str(item.real)
        if key not in self._seen:
            self._seen.add(key)
            self.observer.render_done(item, seconds, failed)


def refuse_to_overwrite_an_input(output: str, request: ScanRequest, found: Discovery,
                                 project: ProjectConfig) -> None:
    """A report file that the scan reads is a RequestError: the report would replace it."""
    from gpulint.inputs.overwrite import input_named_by

    extra = [str(path) for path in (project.file, project.baseline, request.baseline, *request.values) if path]
    clash = input_named_by(output, found, extra)
    if clash is not None:
        raise RequestError(f"--output {output}: is {clash}, which this scan reads; "
                           "the report would replace it (write it elsewhere)")


def result_cache(request: ScanRequest, project: ProjectConfig, writer: BaselineWriter | None) -> ResultCache | None:
    """The result cache for this scan (gpulint.scan.cache), or None: `cache` off, GPULINT_NO_CACHE,
    or a scan that writes a baseline (a side effect a cached result would skip)."""
    if not request.cache or os.environ.get("GPULINT_NO_CACHE", "") not in ("", "0") or writer is not None:
        return None
    from gpulint.scan.cache import ResultCache, default_dir

    # What the scan's result depends on besides its inputs: the fields of the request that shape it,
    # and the bytes of the configuration in effect (found from the stdin name too), the baselines
    # and the values files they name.
    shaping = {name: value for name, value in request._asdict().items() if name not in _NOT_SHAPING}
    named = [str(project.file or ""), request.baseline or "", str(project.baseline or ""), *request.values,
             *(f for chart in project.charts for f in chart.values.files)]
    parts = [repr(shaping), os.getcwd()]
    from gpulint.load.regular import read_regular

    for path in named:
        try:
            parts.append(f"{path}\0{read_regular(path).hex()}")     # (never a named pipe: it would wait)
        except OSError:
            parts.append(f"{path}\0unreadable")
    cache = ResultCache(request.cache_dir or default_dir(), "\n".join(parts))
    if cache.problem is not None:
        # (the folder is the user's own choice: its name needs no escaping)
        import sys

        if sys.stderr is not None:
            sys.stderr.write(f"gpulint: warning: result cache off: {cache.problem} (use a folder of your own "
                             "with --cache-dir)\n")
        return None
    return cache


def project_config(paths: list[str], config_file: str | None, rules: dict, isolated: bool = False,
                   config_root: str | None = None) -> ProjectConfig:
    """The configuration given as `config_file`, or the one nearest to the first path (none when
    `isolated`: a configuration in the scanned tree is the pull request's own); `config_root`: the
    folder config_file's relative paths name files in (default: its own)."""
    from gpulint.config.settings import (
        ConfigError,
        default_config,
        find_config,
        load_config,
    )

    if config_root is not None and (config_file is None or not os.path.isdir(config_root)):
        raise RequestError(f"--config-root {config_root}: " + ("no such directory" if config_file is not None
                                                               else "needs --config"))
    if config_file is not None:
        from pathlib import Path

        path: Path | None = Path(config_file)
        if path is None or not path.is_file():
            raise RequestError(f"{config_file}: no such configuration file")
    try:
        if config_file is None:
            if isolated:
                return default_config()
            path = find_config(paths)  # refuses a configuration linked from outside the repository
        if path is None:
            return default_config()
        return load_config(path, rules, from_tree=config_file is None,
                           root=Path(config_root) if config_root is not None and path is not None else None)
    except ConfigError as error:
        raise RequestError(*map(str, error.problems)) from None


def render_options(request: ScanRequest, paths: list[str], config_timeout: int | None = None,
                   config_kube_version: str | None = None) -> RenderOptions:
    """Validated Helm/Kustomize settings; a bad one is a RequestError, not a finding."""
    from gpulint.config.render import DEFAULT_TIMEOUT, KUBE_VERSION_RE, RenderOptions

    for values_file in request.values:
        if values_file != "-" and not os.path.isfile(values_file):
            raise RequestError(f"--values {values_file}: no such file")
        if values_file == "-":
            raise RequestError("--values -: values cannot be read from stdin")
    for assignment in request.set_values:
        if "=" not in assignment:
            raise RequestError(f"--set {assignment!r}: expected KEY=VALUE")
    kube_version = request.kube_version or config_kube_version
    if kube_version is not None and not KUBE_VERSION_RE.match(kube_version):
        raise RequestError(f"--kube-version {kube_version!r}: expected a Kubernetes version such as 1.33 or v1.33.1")
    release = request.helm_release
    if not release or release.startswith("-"):
        raise RequestError(f"--helm-release {release!r}: not a valid release name")
    return RenderOptions(helm=request.helm, values=tuple(request.values), sets=tuple(request.set_values),
                         release=release, namespace=request.helm_namespace or None,
                         skip_tests=request.helm_skip_tests, kustomize=request.kustomize,
                         timeout=float(request.render_timeout or config_timeout or DEFAULT_TIMEOUT),
                         kube_version=kube_version,
                         memory=request.render_memory, scan_roots=tuple(p for p in paths if p != "-"))
