"""`gpulint scan`: parse the command line (scanargs.py), scan, report; the exit code.

0 clean, 1 findings at or above --fail-on, 2 usage, configuration or internal
error. Typer is not imported here: the console script runs `main` directly for
`gpulint scan` (see launch.py), and the Typer application passes `scan` to it.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpulint.cli.scanargs import HelpShown, UsageError

if TYPE_CHECKING:
    from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# A scan makes millions of small objects and no reference cycles worth collecting:
# at the default threshold (700) the cyclic collector ran over them thousands of
# times for nothing, about a fifth of a large scan's time.
GC_THRESHOLD = 10_000
_ANSI_RE = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")
_BUG = "this is a bug; please report it at https://github.com/gpulint/gpulint/issues"


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def echo_err(message: str) -> None:
    """A line on stderr (ANSI escapes dropped unless stderr is a terminal)."""
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


def main(args: list[str]) -> int:
    """`gpulint scan ARGS`: the exit code. Never a traceback: Ctrl-C exits 130, a reader
    that went away (`gpulint scan | head`) 1, a bug 2 with a one-line message."""
    from gpulint.cli import scanargs

    try:
        try:
            values = scanargs.parse(args)
        except HelpShown:
            return EXIT_CLEAN
        code = run_scan(values)
        if sys.stdout is not None:
            sys.stdout.flush()  # here, where a closed pipe can still be handled
        return code
    except UsageError as error:
        echo_err(f"gpulint: error: {error}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        echo_err("gpulint: interrupted")
        return 130
    except OSError as error:
        if error.errno != errno.EPIPE:
            echo_err(f"gpulint: internal error: {type(error).__name__}: {error} — {_BUG}")
            return EXIT_ERROR
        _discard_stdout()
        return 1
    except Exception as error:  # never show a traceback to the user
        echo_err(f"gpulint: internal error: {type(error).__name__}: {error} — {_BUG}")
        return EXIT_ERROR


def _discard_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush does not fail
    again (the recipe of Python's documentation on SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file behind stdout (tests)
        pass


def run_scan(values: dict[str, Any]) -> int:
    """Run a scan with the option values of `scanargs.parse`; the exit code."""
    import gc

    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], GC_THRESHOLD), *thresholds[1:])
    try:
        return _scan(values)
    except UsageError as error:
        echo_err(f"gpulint: error: {error}")
        return EXIT_ERROR
    except _Exit as done:
        return done.code
    finally:
        gc.set_threshold(*thresholds)


def load_rules_or_fail() -> dict:
    from gpulint.scan.registry import RegistryError, load_rules

    try:
        return load_rules()
    except RegistryError as error:
        raise UsageError(str(error)) from None


def _scan(v: dict[str, Any]) -> int:
    from gpulint.cli.progress import ObservedReader, Progress
    from gpulint.cli.runconfig import CliOptions, plan
    from gpulint.config.selection import SelectionError, split_codes
    from gpulint.inputs.discovery import discover, with_chart_values
    from gpulint.load.yamlload import Limits
    from gpulint.results.findings import INVALID_INPUT, RENDER_FAILED
    from gpulint.results.inputkind import InputKind
    from gpulint.report import registry
    from gpulint.scan.engine import scan as run_scan_engine
    from gpulint.suppress.systemcomponents import system_component_suppressor

    paths = v["paths"] or ["."]
    stdin_name = v["stdin_filename"]
    output_format = v["output_format"]
    if output_format is None:  # like yamllint: annotations when running in GitHub Actions
        github = os.environ.get("GITHUB_ACTIONS") == "true" and not v["statistics"]
        output_format = "github" if github else "text"
    if v["statistics"] and not registry.reporter(output_format).statistics:
        formats = [name for name, reporter in registry.reporters().items() if reporter.statistics]
        raise UsageError(f"--statistics: only with the {', '.join(formats[:-1])} and {formats[-1]} formats")
    rules = load_rules_or_fail()
    # The configuration of stdin given a name is found, and its excludes applied, as for that file.
    project = _project_config([stdin_name if p == "-" and stdin_name else p for p in paths], v["config_file"], rules)
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
                   system=system_component_suppressor(builtin=not v["no_default_exemptions"],
                                                     settings=project.settings))
    except SelectionError as error:
        raise UsageError(str(error)) from None
    except Exception as error:
        from gpulint.suppress.baseline import BaselineError

        if isinstance(error, BaselineError):
            raise UsageError(str(error)) from None
        raise

    from gpulint.report.destinations import OutputError
    from gpulint.report.destinations import plan as plan_outputs

    try:  # before the scan: a bad -o is a usage error, not minutes lost
        targets = plan_outputs(v["output"], output_format)
    except OutputError as error:
        raise UsageError(str(error)) from None
    run.scan.render = _render_options(v, paths, project.render_timeout)  # type: ignore[assignment]
    run.scan.limits = Limits(max_depth=v["max_depth"], max_expanded_nodes=v["max_alias_nodes"])
    found = discover(paths, tuple(options.exclude), skip=project.excludes if project.exclude else None,
                     respect_ignore=not v["no_ignore"], stdin_name=stdin_name)
    for target in targets:
        if target.path is not None:
            _refuse_to_overwrite_an_input(target.path, v, found, project)
    found.inputs = with_chart_values(found.inputs, project.charts)
    # The progress line needs a terminal on stderr; --verbose lines are wanted anywhere.
    progress = Progress(sys.stderr, found.inputs, line=not v["quiet"] and _isatty(sys.stderr),
                        verbose=v["verbose"] and not v["quiet"])
    reader = ObservedReader(progress, run.scan.render)
    try:
        result = run_scan_engine(found.inputs, run.scan, reader=reader, jobs=v["jobs"],
                                 progress=progress.file_scanned, cache=_result_cache(v, project, run.writer))
    finally:
        progress.erase()
    progress.finished(result, found.skipped)
    fixing = v["fix"] if v["fix"] is not None else project.fix
    if (fixing or v["diff"]) and not v.get("fixed_already"):
        return _fix(v, result, found, run, reader, rules, project, fixing)

    problems = [f"{path}: no such file or directory" for path in found.missing]
    context = registry.ReportContext(
        rules=rules, category=v["category"], problems=problems, show_suppressed=v["show_suppressed"],
        statistics=v["statistics"], quiet=v["quiet"], colour=v["color"],
        not_on_disk=frozenset(item.display for item in found.inputs if item.kind is InputKind.STDIN),
        enabled=sorted({r.id for r in run.scan.rules} | ({INVALID_INPUT} if run.scan.report_invalid_input else set())
                       | ({RENDER_FAILED} if run.scan.report_render_failed else set())))
    for target in targets:  # one scan, every report (report/destinations.py)
        reporter = registry.reporter(target.format)
        if target.path is None:
            reporter.write(result, sys.stdout, replace(context, to_stdout=True))
            sys.stdout.flush()
            continue
        from gpulint.report.atomicfile import open_atomic

        try:
            parent = os.path.dirname(target.path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open_atomic(target.path) as handle:
                reporter.write(result, handle, context)
        except OSError as error:
            raise UsageError(f"cannot write {target.path}: {error.strerror or error}") from None
    for name in sorted({target.format for target in targets}, key=registry.sort_key):
        warning = registry.reporter(name).finish(result)
        if warning is not None:
            echo_err(f"gpulint: warning: {warning}")

    for path in found.missing:
        echo_err(f"gpulint: error: {path}: no such file or directory")
    empty = _nothing_scanned(found.inputs, paths) if not found.missing else None
    if empty is not None:
        echo_err(f"gpulint: {'error' if v['fail_if_empty'] else 'warning'}: {empty}")
        if v["fail_if_empty"]:
            return EXIT_ERROR
    result.internal_errors += v.get("fix_errors", [])
    if v.get("fixed_already") and not v["quiet"]:
        from gpulint.cli.fixcmd import summary

        summary(v["fixed_already"][0], result, v["fixed_already"][1], echo_err)
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
        if not v["quiet"]:
            echo_err(f"gpulint: wrote {count} finding{'' if count == 1 else 's'} to baseline {v['write_baseline']}")
    code = _exit_code(result, run.fail_on)
    return EXIT_CLEAN if v["exit_zero"] else code


def _fix(v: dict[str, Any], result: Any, found: Any, run: Any, reader: Any, rules: dict, project: Any,
         fixing: bool) -> int:
    """--fix / --diff (cli/fixcmd.py): fix in memory, then print the diff, or print stdin's fixed
    text, or write the files and scan again for the report of what remains."""
    from gpulint.cli import fixcmd
    from gpulint.results.inputkind import InputKind

    unsafe = v["unsafe_fixes"] if v["unsafe_fixes"] is not None else project.unsafe_fixes
    rules_policy = fixcmd.policy(rules, project, unsafe)
    done = fixcmd.fix_inputs(result, found.inputs, run.scan, reader, rules_policy)
    if not v["quiet"]:
        for note in done.notes:
            echo_err(f"gpulint: {note}")
    errors = [f"gpulint: {message} — {_BUG}" for message in done.errors]
    if v["diff"]:
        sys.stdout.write(fixcmd.diff_text(done))
        sys.stdout.flush()
        for message in errors:
            echo_err(message)
        if not v["quiet"]:
            for finding in result.findings:
                if finding.no_fix is not None and finding.suppressed is None:
                    s = finding.span
                    echo_err(f"gpulint: {finding.file}:{s.line}:{s.column}: {finding.rule_id} {finding.no_fix}")
            fixcmd.would_fix(done, result, rules_policy, echo_err)
        return EXIT_ERROR if errors else (EXIT_FINDINGS if done.files else EXIT_CLEAN)
    stdin = next((item for item in found.inputs if item.kind is InputKind.STDIN), None)
    if stdin is not None:
        # As ruff does: the text (fixed or not) on stdout, what remains in the summary and exit code.
        fixed = next((item for item in done.files if item.path is None), None)
        sys.stdout.write(fixed.after if fixed is not None else fixcmd.text_of(stdin, reader))
        sys.stdout.flush()
        remaining = fixcmd.remaining(result, done)
        fixcmd.write_files(done)
        for message in errors:
            echo_err(message)
        if not v["quiet"]:
            fixcmd.summary(done.fixed, remaining, rules_policy, echo_err)
        if errors or found.missing:
            return EXIT_ERROR
        return EXIT_CLEAN if v["exit_zero"] else _exit_code(remaining, run.fail_on)
    try:
        fixcmd.write_files(done)
    except OSError as error:
        raise UsageError(f"cannot write a fixed file: {error.strerror or error}") from None
    # The report is of the fixed files, scanned again as they now are.
    return _scan(dict(v, fixed_already=(done.fixed, rules_policy), fix_errors=done.errors))


def _nothing_scanned(inputs: list, paths: list[str]) -> str | None:
    """What to say when no input was scanned (None when one was)."""
    from gpulint.results.inputkind import InputKind

    if any(item.kind.read for item in inputs):
        return None
    ignored = sum(1 for item in inputs if item.kind is InputKind.IGNORED)
    message = f"no file to scan in {' '.join(paths)}"
    if ignored:
        message += f" ({ignored} ignored by git: --no-ignore scans them)"
    return message


def _refuse_to_overwrite_an_input(output: str, v: dict[str, Any], found: Any, project: Any) -> None:
    """`--output` naming a file the scan reads is a usage error: the report would replace it."""
    from gpulint.inputs.overwrite import input_named_by

    extra = [str(path) for path in (project.file, project.baseline, v["baseline"], *v["values"]) if path]
    clash = input_named_by(output, found, extra)
    if clash is not None:
        raise UsageError(f"--output {output}: is {clash}, which this scan reads; "
                         "the report would replace it (write it elsewhere)")


def _result_cache(v: dict[str, Any], project: Any, writer: Any) -> Any:
    """The result cache for this scan (gpulint.scan.cache), or None: --no-cache, GPULINT_NO_CACHE,
    or a scan that writes a baseline (a side effect a cached result would skip)."""
    if v["no_cache"] or os.environ.get("GPULINT_NO_CACHE", "") not in ("", "0") or writer is not None:
        return None
    from gpulint.scan.cache import ResultCache, default_dir

    # What the scan's result depends on besides its inputs: the options that shape it, and the
    # bytes of the configuration in effect (found from --stdin-filename too), the baselines and the
    # values files they name.
    shaping = {k: value for k, value in sorted(v.items())
               if k not in ("output_format", "output", "category", "show_suppressed", "no_cache", "cache_dir",
                            "jobs", "paths")}
    named = [str(project.file or ""), v["baseline"] or "", str(project.baseline or ""), *v["values"]]
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
    try:
        if config_file is None:
            path = find_config(paths)  # refuses a configuration linked from outside the repository
        if path is None:
            return default_config()
        return load_config(path, rules)
    except ConfigError as error:
        for problem in error.problems:
            echo_err(f"gpulint: error: {problem}")
        raise _Exit(EXIT_ERROR) from None


def _render_options(v: dict[str, Any], paths: list[str], config_timeout: int | None = None) -> Any:
    """Validated Helm/Kustomize settings; a bad one is a usage error (exit 2), not a finding."""
    from gpulint.config.render import DEFAULT_TIMEOUT, RenderOptions

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
                         kustomize=v["kustomize"],
                         timeout=float(v["render_timeout"] or config_timeout or DEFAULT_TIMEOUT),
                         scan_roots=tuple(p for p in paths if p != "-"))


def _exit_code(result: Any, fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_CLEAN
    from gpulint.api import Severity

    threshold = Severity(fail_on).rank
    for finding in (f for report in result.files for f in report.findings):
        if finding.suppressed is None and finding.severity.rank >= threshold:
            return EXIT_FINDINGS
    return EXIT_CLEAN
