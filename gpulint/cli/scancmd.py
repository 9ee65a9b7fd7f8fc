"""`gpulint scan`: parse the command line (scanargs.py), scan, report; the exit code.

0 clean, 1 findings at or above --fail-on, 2 usage, configuration or internal
error. Typer is not imported here: the console script runs `main` directly for
`gpulint scan` (see launch.py), and the Typer application passes `scan` to it.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from gpulint.cli import GC_THRESHOLD
from gpulint.cli.scanargs import HelpShown, UsageError
from gpulint.lazypattern import lazy
from gpulint.results.inputkind import InputKind
from gpulint.scan.request import RequestError, ScanOutcome, ScanRequest, fails

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_ANSI_RE = lazy(r"\033\[[;?0-9]*[a-zA-Z]")
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
    from gpulint.report.safetext import no_commands

    stream.write(no_commands(message) + "\n")      # a CI runner reads stderr for commands too
    stream.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:  # noqa: BLE001 - a closed or odd stream is no terminal
        return False


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI sends on cancel and timeout) or SIGHUP: stopped as Ctrl-C stops a scan
    (renderer process groups killed, temporary directories removed), exit 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, _frame: Any) -> None:
    import signal

    for name in _STOP_SIGNALS:      # once: a second signal must not cut the cleanup short
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    raise Terminated(signum)


_STOP_SIGNALS = ("SIGTERM", "SIGHUP")


def _handle_stop_signals() -> dict:
    """Install _terminate for SIGTERM and SIGHUP (main thread only); the handlers it replaced."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for name in _STOP_SIGNALS:
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, _terminate)
    return previous


def main(args: list[str]) -> int:
    """`gpulint scan ARGS`: the exit code. Never a traceback: Ctrl-C exits 130, SIGTERM 143 and
    SIGHUP 129 (each stops the scan as Ctrl-C does), a reader that went away (`gpulint scan |
    head`) 1, a bug 2 with a one-line message."""
    import signal

    previous = _handle_stop_signals()
    try:
        return _main(args)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _main(args: list[str]) -> int:
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
    except Terminated as stopped:
        echo_err(f"gpulint: terminated (signal {stopped.signum})")
        return 128 + stopped.signum
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
    from gpulint.scan.runner import load_rules

    try:
        return load_rules()
    except RequestError as error:
        raise UsageError(str(error)) from None


def _scan(v: dict[str, Any]) -> int:
    """Build the request from the options, run it, write the reports; the exit code."""
    from gpulint.cli.progress import Progress
    from gpulint.report import registry
    from gpulint.report.destinations import OutputError
    from gpulint.report.destinations import plan as plan_outputs
    from gpulint.scan import run

    output_format = v["output_format"]
    if output_format is None:  # like yamllint: annotations when running in GitHub Actions
        github = os.environ.get("GITHUB_ACTIONS") == "true" and not v["statistics"]
        output_format = "github" if github else "text"
    if v["statistics"] and not registry.reporter(output_format).statistics:
        formats = [name for name, reporter in registry.reporters().items() if reporter.statistics]
        raise UsageError(f"--statistics: only with the {', '.join(formats[:-1])} and {formats[-1]} formats")
    try:  # before the scan: a bad -o is a usage error, not minutes lost
        targets = plan_outputs(v["output"], output_format)
    except OutputError as error:
        raise UsageError(str(error)) from None
    # The progress line needs a terminal on stderr; --verbose lines are wanted anywhere.
    progress = Progress(sys.stderr, [], line=not v["quiet"] and _isatty(sys.stderr),
                        verbose=v["verbose"] and not v["quiet"])
    # Fixes are resolved when a report shows them or fixing may follow (the configuration's `fix`
    # is added by the scan: gpulint.scan.runner).
    fixes = bool(v["fix"] or v["diff"]) or any(registry.reporter(target.format).fixes for target in targets)
    request = scan_request(v, tuple(target.path for target in targets if target.path is not None), progress)
    request = request._replace(fixes=fixes)
    try:
        outcome = run(request)
    except RequestError as error:
        for problem in error.problems:
            echo_err(f"gpulint: error: {problem}")
        raise _Exit(EXIT_ERROR) from None
    finally:
        progress.erase()
    result = outcome.result
    progress.finished(result, outcome.skipped)
    assert outcome.project is not None
    fixing = v["fix"] if v["fix"] is not None else outcome.project.fix
    if (fixing or v["diff"]) and not v.get("fixed_already"):
        return _fix(v, outcome)

    context = registry.ReportContext(
        rules=outcome.rules, enabled=outcome.enabled, category=v["category"],
        problems=[f"{path}: no such file or directory" for path in outcome.missing],
        show_suppressed=v["show_suppressed"], statistics=v["statistics"], quiet=v["quiet"], colour=v["color"],
        not_on_disk=frozenset(item.display for item in outcome.inputs if item.kind is InputKind.STDIN))
    for target in targets:  # one scan, every report (report/destinations.py)
        reporter = registry.reporter(target.format)
        if target.path is None:
            reporter.write(result, sys.stdout, context._replace(to_stdout=True))
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
    written = {registry.reporter(target.format) for target in targets}
    for used in sorted(written, key=lambda reporter: (reporter.order, reporter.name)):
        warning = used.finish(result)
        if warning is not None:
            echo_err(f"gpulint: warning: {warning}")

    for path in outcome.missing:
        echo_err(f"gpulint: error: {path}: no such file or directory")
    # A commit changing no file gpulint reads is nothing to warn about.
    empty = _nothing_scanned(outcome.inputs, list(request.paths)) if not outcome.missing and not request.changed \
        else None
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
    if outcome.missing or result.internal_errors:
        if outcome.baseline is not None:
            echo_err(f"gpulint: error: baseline {v['write_baseline']} not written: the scan was incomplete")
        return EXIT_ERROR
    if outcome.baseline is not None:
        from gpulint.suppress.baseline import BaselineError

        try:
            outcome.baseline.write()
        except BaselineError as error:
            raise UsageError(str(error)) from None
        count = sum(outcome.baseline.counts.values())
        if not v["quiet"]:
            echo_err(f"gpulint: wrote {count} finding{'' if count == 1 else 's'} to baseline {v['write_baseline']}")
    if v["exit_zero"]:
        return EXIT_CLEAN
    return EXIT_FINDINGS if outcome.fails() else EXIT_CLEAN


def scan_request(v: dict[str, Any], report_files: tuple[str, ...] = (), observer: Any = None) -> ScanRequest:
    """The request the option values of `scanargs.parse` make."""
    from gpulint.config.selection import split_codes

    return ScanRequest(
        paths=tuple(v["paths"] or ["."]), stdin_name=v["stdin_filename"], config_file=v["config_file"],
        isolated=v["isolated"], config_root=v["config_root"], render_memory=v["render_memory"], max_file_size=v["max_file_size"] << 20,
        select=tuple(split_codes(v["select"])) or None, extend_select=tuple(split_codes(v["extend_select"])),
        ignore=tuple(split_codes(v["ignore"])), exclude=tuple(v["exclude"]), respect_ignore=not v["no_ignore"],
        changed=v["changed"],
        fail_on=v["fail_on"], baseline=v["baseline"], baseline_root=v["baseline_root"], write_baseline=v["write_baseline"],
        default_exemptions=not v["no_default_exemptions"],
        helm=v["helm"], kustomize=v["kustomize"], values=tuple(v["values"]), set_values=tuple(v["set_values"]),
        helm_release=v["helm_release"], helm_namespace=v["helm_namespace"], helm_skip_tests=v["helm_skip_tests"],
        render_timeout=v["render_timeout"], kube_version=v.get("kube_version"), max_depth=v["max_depth"],
        max_alias_nodes=v["max_alias_nodes"],
        jobs=v["jobs"], cache=not v["no_cache"], cache_dir=v["cache_dir"], report_files=report_files,
        observer=observer)


def _fix(v: dict[str, Any], outcome: ScanOutcome) -> int:
    """--fix / --diff (cli/fixcmd.py): fix in memory, then print the diff, or print stdin's fixed
    text, or write the files and scan again for the report of what remains."""
    from gpulint.cli import fixcmd

    result, project, reader = outcome.result, outcome.project, outcome.reader
    unsafe = v["unsafe_fixes"] if v["unsafe_fixes"] is not None else project.unsafe_fixes
    rules_policy = fixcmd.policy(outcome.rules, project, unsafe)
    done = fixcmd.fix_inputs(result, outcome.inputs, outcome.config, reader, rules_policy)
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
    stdin = next((item for item in outcome.inputs if item.kind is InputKind.STDIN), None)
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
        if errors or outcome.missing:
            return EXIT_ERROR
        return EXIT_CLEAN if v["exit_zero"] or not fails(remaining, outcome.fail_on) else EXIT_FINDINGS
    try:
        fixcmd.write_files(done)
    except OSError as error:
        raise UsageError(f"cannot write a fixed file: {error.strerror or error}") from None
    # The report is of the fixed files, scanned again as they now are.
    return _scan(dict(v, fixed_already=(done.fixed, rules_policy), fix_errors=done.errors))


def _nothing_scanned(inputs: list, paths: list[str]) -> str | None:
    """What to say when no input was scanned (None when one was)."""
    if any(item.kind.read for item in inputs):
        return None
    ignored = sum(1 for item in inputs if item.kind is InputKind.IGNORED)
    message = f"no file to scan in {' '.join(paths)}"
    if ignored:
        message += f" ({ignored} ignored by git: --no-ignore scans them)"
    return message
