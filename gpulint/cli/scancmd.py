"""`gpulint scan`: the implementation both front ends call (see scanopts.py).

It takes the option values (as `scanopts.parse` and the Typer command both
produce them), writes the report and messages, and returns the exit code:
0 clean, 1 findings at or above --fail-on, 2 usage, configuration or internal
error. It does not import Typer: the console-script launcher runs it directly
for plain `gpulint scan` command lines.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
GC_THRESHOLD = 10_000
GC_MIN_BYTES = 1 << 20   # inputs smaller than this are scanned without the cyclic collector
_ANSI_RE = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


class UsageError(Exception):
    """Reported as `gpulint: error: MESSAGE`, exit code 2."""


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def echo_err(message: str) -> None:
    """A line on stderr, as click.echo writes it (ANSI escapes dropped unless stderr is a terminal)."""
    stream = sys.stderr
    if stream is None:
        return
    if not _isatty(stream):
        message = _ANSI_RE.sub("", message)
    stream.write(message + "\n")
    stream.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:  # noqa: BLE001 - a closed or odd stream is no terminal
        return False


def run_scan(values: dict[str, Any]) -> int:
    """Run a scan with the option values of `scanopts.defaults()`'s shape; the exit code."""
    import gc

    # A scan makes millions of small objects and no reference cycles worth
    # collecting: the default threshold (700) runs the cyclic collector over
    # them thousands of times for nothing, about a fifth of a large scan's time.
    # Start-up (imports, rules, configuration) makes long-lived objects only, and
    # a small scan little garbage: the collector is off until the inputs turn out
    # to be large (_collect_if_large); it cost 2.6 of a one-file scan's 44 ms.
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(max(thresholds[0], GC_THRESHOLD), *thresholds[1:])
    gc.disable()
    try:
        return _scan(values)
    except UsageError as error:
        echo_err(f"gpulint: error: {error}")
        return EXIT_ERROR
    except _Exit as done:
        return done.code
    finally:
        gc.set_threshold(*thresholds)
        if enabled:
            gc.enable()


def _collect_if_large(inputs: list, enough: int = GC_MIN_BYTES) -> None:
    """Turn the cyclic collector on (see run_scan) for a scan of `enough` bytes or more,
    or of stdin (its size is unknown); what start-up made is frozen out of its way."""
    import gc

    total = 0
    for item in inputs:
        if item.real is None:
            total = enough
        else:
            try:
                total += os.stat(item.real).st_size if item.kind == "manifest" else enough
            except OSError:
                pass
        if total >= enough:
            gc.freeze()
            gc.enable()
            return


def load_rules_or_fail() -> dict:
    from gpulint.scan.registry import RegistryError, load_rules

    try:
        return load_rules()
    except RegistryError as error:
        raise UsageError(str(error)) from None


def _scan(v: dict[str, Any]) -> int:
    from gpulint.cli.runconfig import CliOptions, plan
    from gpulint.config.selection import SelectionError, split_codes
    from gpulint.inputs.discovery import discover
    from gpulint.load.yamlload import Limits
    from gpulint.results.findings import INVALID_INPUT
    from gpulint.scan.engine import scan as run_scan_engine
    from gpulint.suppress.exemptions import system_component_suppressor

    paths = v["paths"] or ["."]
    rules = load_rules_or_fail()
    project = _project_config(paths, v["config_file"], rules)
    options = CliOptions(
        select=split_codes(v["select"]) or None,
        extend_select=split_codes(v["extend_select"]),
        ignore=split_codes(v["ignore"]),
        exclude=list(v["exclude"]),
        fail_on=v["fail_on"],
        baseline=v["baseline"],
        write_baseline=v["write_baseline"],
    )
    try:
        run = plan(rules, project, options,
                   system=system_component_suppressor(builtin=not v["no_default_exemptions"]))
    except SelectionError as error:
        raise UsageError(str(error)) from None
    except Exception as error:
        from gpulint.suppress.baseline import BaselineError

        if isinstance(error, BaselineError):
            raise UsageError(str(error)) from None
        raise

    run.scan.render = _render_options(v)  # type: ignore[assignment]
    run.scan.limits = Limits(max_depth=v["max_depth"], max_expanded_nodes=v["max_alias_nodes"])
    found = discover(paths, tuple(options.exclude), skip=project.excludes if project.exclude else None)
    _collect_if_large(found.inputs)
    result = run_scan_engine(found.inputs, run.scan, jobs=v["jobs"], cache=_result_cache(v, paths, run.writer))

    output_format = v["output_format"]
    if output_format is None:  # like yamllint: annotations when running in GitHub Actions
        output_format = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    problems = [f"{path}: no such file or directory" for path in found.missing]
    output = v["output"]
    report = dict(rules=rules, category=v["category"], problems=problems,
                  enabled=[r.id for r in run.scan.rules] + ([INVALID_INPUT] if run.scan.report_invalid_input else []))
    if output is None:
        _write_report(output_format, result, v["show_suppressed"], sys.stdout, True, **report)
        sys.stdout.flush()
    else:
        from gpulint.report.output import open_atomic

        try:
            with open_atomic(output) as handle:
                _write_report(output_format, result, v["show_suppressed"], handle, False, **report)
        except OSError as error:
            raise UsageError(f"cannot write {output}: {error.strerror or error}") from None

    for path in found.missing:
        echo_err(f"gpulint: error: {path}: no such file or directory")
    for message in result.internal_errors:
        echo_err(f"gpulint: {message} — this is a bug; please report it with the input at "
                 "https://github.com/gpulint/gpulint/issues")
    if found.missing or result.internal_errors:
        if run.writer is not None:
            echo_err(f"gpulint: error: baseline {v['write_baseline']} not written: the scan was incomplete")
        return EXIT_ERROR
    if run.writer is not None:
        from gpulint.suppress.baseline import BaselineError

        try:
            run.writer.write()
        except BaselineError as error:
            raise UsageError(str(error)) from None
        count = sum(run.writer.counts.values())
        echo_err(f"gpulint: wrote {count} finding{'' if count == 1 else 's'} to baseline {v['write_baseline']}")
    return _exit_code(result, run.fail_on)


def _result_cache(v: dict[str, Any], paths: list[str], writer: Any) -> Any:
    """The result cache for this scan (gpulint.scan.cache), or None: --no-cache, GPULINT_NO_CACHE,
    or a scan that writes a baseline (a side effect a cached result would skip)."""
    if v["no_cache"] or os.environ.get("GPULINT_NO_CACHE", "") not in ("", "0") or writer is not None:
        return None
    from gpulint.config.settings import find_config
    from gpulint.scan.cache import ResultCache, default_dir

    # What the scan's result depends on besides its inputs: the options that shape it, and the
    # bytes of the configuration, baseline and values files they name.
    shaping = {k: value for k, value in sorted(v.items())
               if k not in ("output_format", "output", "category", "show_suppressed", "no_cache", "cache_dir",
                            "jobs", "paths")}
    named = [v["config_file"] or str(find_config(paths) or ""), v["baseline"] or "", *v["values"]]
    parts = [repr(shaping), os.getcwd()]
    for path in named:
        try:
            with open(path, "rb") as handle:
                parts.append(f"{path}\0{handle.read().hex()}")
        except OSError:
            parts.append(f"{path}\0unreadable")
    return ResultCache(v["cache_dir"] or default_dir(), "\n".join(parts))


def _project_config(paths: list[str], config_file: str | None, rules: dict) -> Any:
    """The configuration given with --config, or the one nearest to the first path."""
    from gpulint.config.settings import (
        ConfigError,
        default_config,
        find_config,
        load_config,
    )

    if config_file is not None:
        from pathlib import Path

        path: Path | None = Path(config_file)
        if not path.is_file():  # type: ignore[union-attr]
            raise UsageError(f"{config_file}: no such configuration file")
    else:
        path = find_config(paths)
    if path is None:
        return default_config()
    try:
        return load_config(path, rules)
    except ConfigError as error:
        for problem in error.problems:
            echo_err(f"gpulint: error: {problem}")
        raise _Exit(EXIT_ERROR) from None


def _render_options(v: dict[str, Any]) -> Any:
    """Validated Helm/Kustomize settings; a bad one is a usage error (exit 2), not a finding."""
    from gpulint.config.render import RenderOptions

    for values_file in v["values"]:
        if values_file != "-" and not os.path.isfile(values_file):
            raise UsageError(f"--values {values_file}: no such file")
        if values_file == "-":
            raise UsageError("--values -: values cannot be read from stdin")
    for assignment in v["set_values"]:
        if "=" not in assignment:
            raise UsageError(f"--set {assignment!r}: expected KEY=VALUE")
    release = v["helm_release"]
    if not release or release.startswith("-"):
        raise UsageError(f"--helm-release {release!r}: not a valid release name")
    return RenderOptions(helm=v["helm"], values=tuple(v["values"]), sets=tuple(v["set_values"]), release=release,
                         namespace=v["helm_namespace"] or None, skip_tests=v["helm_skip_tests"],
                         kustomize=v["kustomize"])


def _write_report(output_format: str, result: Any, show_suppressed: bool, out: Any, to_stdout: bool, *,
                  rules: dict, enabled: list[str], category: str | None, problems: list[str]) -> None:
    """Write the report to `out` as it is made: text, JSON and GitHub reports never sit whole in memory."""
    if output_format == "json":
        from gpulint.report import json_report

        json_report.write(result, out)
    elif output_format == "sarif":
        from gpulint.report import sarif  # bounded by its maximum number of results

        out.write(sarif.render(result, rules, enabled, category=category, problems=problems))
    elif output_format == "github":
        from gpulint.report import github

        github.write(result, out, show_suppressed=show_suppressed)
    else:
        from gpulint.report import text

        colour = to_stdout and text.use_colour(sys.stdout)
        text.write(result, out, show_suppressed=show_suppressed, colour=colour)


def _exit_code(result: Any, fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_CLEAN
    from gpulint.api import Severity

    threshold = Severity(fail_on).rank
    for finding in (f for report in result.files for f in report.findings):
        if finding.suppressed is None and finding.severity.rank >= threshold:
            return EXIT_FINDINGS
    return EXIT_CLEAN
