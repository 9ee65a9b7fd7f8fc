"""Command line: `gpulint scan`, `gpulint rules`, `gpulint explain`.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, configuration
or internal error. The engine is imported inside the commands so `--help` and
start-up stay cheap.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from gpulint import __version__

app = typer.Typer(
    name="gpulint",
    help="Find every way a Kubernetes workload gets GPUs around the scheduler.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


def _fail(message: str) -> "typer.Exit":
    typer.echo(f"gpulint: error: {message}", err=True)
    return typer.Exit(EXIT_ERROR)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpulint {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Find every way a Kubernetes workload gets GPUs around the scheduler."""


def _load_rules() -> dict:
    from gpulint.registry import RegistryError, load_rules

    try:
        return load_rules()
    except RegistryError as error:
        raise _fail(str(error)) from None


@app.command()
def scan(
    paths: List[str] = typer.Argument(None, help="Files or directories to scan; '-' reads stdin. Default: '.'"),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report to FILE (atomically)."),
    fail_on: FailOn = typer.Option(FailOn.warning, "--fail-on",
                                   help="Lowest severity that makes the exit code 1."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Rule codes to run instead of the defaults (comma separated, repeatable; ids, prefixes, names or ALL)."),
    extend_select: Optional[List[str]] = typer.Option(None, "--extend-select", help="Rule codes to run in addition to the defaults."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Rule codes not to run."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Glob of paths to skip (repeatable)."),
    show_suppressed: bool = typer.Option(False, "--show-suppressed", help="List suppressed findings too."),
    max_depth: int = typer.Option(500, "--max-depth", min=1, max=10_000,
                                  help="Deepest nesting of a document; deeper input is reported as GPU000."),
    max_alias_nodes: int = typer.Option(1_000_000, "--max-alias-nodes", min=0,
                                        help="Most nodes YAML aliases may add to a document (bounds alias bombs)."),
) -> None:
    """Scan manifests, Helm/Kustomize output and Dockerfiles for GPU scheduling bypasses."""
    from gpulint.discovery import discover
    from gpulint.engine import ScanConfig, scan as run_scan
    from gpulint.findings import INVALID_INPUT
    from gpulint.selection import SelectionError, select_rules, split_codes
    from gpulint.yamlload import Limits

    rules = _load_rules()
    try:
        ignore_codes = split_codes(ignore)
        chosen = select_rules(rules, split_codes(select), split_codes(extend_select), ignore_codes)
    except SelectionError as error:
        raise _fail(str(error)) from None
    invalid_ignored = any(rule.id == INVALID_INPUT for rule in select_rules(rules, ignore_codes)) if ignore_codes else False

    found = discover(paths or ["."], tuple(exclude or ()))
    config = ScanConfig(rules=chosen, all_rules=rules, report_invalid_input=not invalid_ignored,
                        limits=Limits(max_depth=max_depth, max_expanded_nodes=max_alias_nodes))
    result = run_scan(found.inputs, config)

    text = _render(output_format, result, show_suppressed, output is None)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        from gpulint.output import write_atomic

        try:
            write_atomic(output, text)
        except OSError as error:
            raise _fail(f"cannot write {output}: {error.strerror or error}") from None

    for path in found.missing:
        typer.echo(f"gpulint: error: {path}: no such file or directory", err=True)
    for message in result.internal_errors:
        typer.echo(f"gpulint: {message} — this is a bug; please report it with the input at "
                   "https://github.com/gpulint/gpulint/issues", err=True)
    if found.missing or result.internal_errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(_exit_code(result, fail_on))


def _render(output_format: OutputFormat, result: object, show_suppressed: bool, to_stdout: bool) -> str:
    if output_format is OutputFormat.json:
        from gpulint.report import json_report

        return json_report.render(result)  # type: ignore[arg-type]
    from gpulint.report import text

    colour = to_stdout and text.use_colour(sys.stdout)
    return text.render(result, show_suppressed=show_suppressed, colour=colour)  # type: ignore[arg-type]


def _exit_code(result: object, fail_on: FailOn) -> int:
    if fail_on is FailOn.never:
        return EXIT_CLEAN
    from gpulint.api import Severity

    threshold = Severity(fail_on.value).rank
    for finding in result.findings:  # type: ignore[attr-defined]
        if finding.suppressed is None and finding.severity.rank >= threshold:
            return EXIT_FINDINGS
    return EXIT_CLEAN


@app.command("rules")
def list_rules(
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format."),
) -> None:
    """List every registered rule (built-in and plugins)."""
    rules = _load_rules()
    if output_format is OutputFormat.json:
        import json

        typer.echo(json.dumps([
            {"id": r.id, "name": r.name, "severity": r.severity.value,
             "enabled_by_default": r.enabled_by_default, "summary": r.summary}
            for r in rules.values()], indent=2))
        return
    width = max((len(r.name) for r in rules.values()), default=4)
    for rule in rules.values():
        default = "" if rule.enabled_by_default else "  (off by default)"
        typer.echo(f"{rule.id}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.summary}{default}")


@app.command()
def explain(rule: str = typer.Argument(..., help="Rule id (GPU003) or name (visible-devices-env).")) -> None:
    """Print a rule's documentation."""
    rules = _load_rules()
    found = rules.get(rule.upper()) or next((r for r in rules.values() if r.name == rule), None)
    if found is None:
        raise _fail(f"unknown rule {rule!r} (see `gpulint rules`)")
    typer.echo(found.documentation, nl=False)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("gpulint: interrupted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as error:  # never show a traceback to the user
        typer.echo(f"gpulint: internal error: {type(error).__name__}: {error} — this is a bug; "
                   "please report it at https://github.com/gpulint/gpulint/issues", err=True)
        sys.exit(EXIT_ERROR)
