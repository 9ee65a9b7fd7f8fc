"""Command line: `gpulint scan`, `gpulint rules`, `gpulint explain`, `gpulint init`, `gpulint policy export`.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, configuration
or internal error. The engine is imported inside the commands so `--help` and
start-up stay cheap.
"""

from __future__ import annotations

import sys

import typer

from gpulint import __version__

app = typer.Typer(
    name="gpulint",
    help="Find every way a Kubernetes workload gets GPUs around the scheduler.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
    from gpulint.cli.scancmd import UsageError, load_rules_or_fail

    try:
        return load_rules_or_fail()
    except UsageError as error:
        raise _fail(str(error)) from None


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                               "help_option_names": []}, add_help_option=False)
def scan(ctx: typer.Context) -> None:
    """Scan manifests, Helm/Kustomize output and Dockerfiles for GPU scheduling bypasses."""
    # Options, help and usage errors are scanargs.py's (argparse): see launch.py for why.
    from gpulint.cli.scancmd import main as scan_main

    raise typer.Exit(scan_main(list(ctx.args)))


@app.command("rules")
def list_rules(
    output_format: str = typer.Option("text", "--format", "-f", metavar="FORMAT", show_default=False,
                                      help="text or json (default: text)."),
) -> None:
    """List every registered rule (built-in and plugins)."""
    if output_format not in ("text", "json"):
        raise _fail(f"--format: {output_format!r} is not one of text, json")
    rules = _load_rules()
    if output_format == "json":
        import json

        typer.echo(json.dumps([
            {"id": r.id, "name": r.name, "severity": r.severity.value,
             "enabled_by_default": r.enabled_by_default, "summary": r.summary}
            for r in rules.values()], indent=2))
        return
    # Whether a rule runs by default is a column: a summary may say it too.
    width = max((len(r.name) for r in rules.values()), default=4)
    typer.echo(f"{'ID':<6}  {'NAME':<{width}}  SEVERITY  DEFAULT  SUMMARY")
    for rule in rules.values():
        default = "on" if rule.enabled_by_default else "off"
        typer.echo(f"{rule.id:<6}  {rule.name:<{width}}  {rule.severity.value:<8}  {default:<7}  {rule.summary}")


@app.command()
def init(
    directory: str = typer.Argument(".", metavar="DIR", show_default=False, hidden=True),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing configuration file."),
) -> None:
    """Write a commented starter configuration, DIR/.gpulint.yaml (DIR: the current directory by default)."""
    from pathlib import Path

    from gpulint.cli.starter import starter_config
    from gpulint.config.settings import CONFIG_FILES
    from gpulint.report.atomicfile import write_atomic

    target_dir = Path(directory)
    if not target_dir.is_dir():
        raise _fail(f"{directory}: no such directory")
    existing = [target_dir / name for name in CONFIG_FILES if (target_dir / name).exists()]
    if existing and not force:
        raise _fail(f"{existing[0]} already exists; use --force to overwrite it")
    target = target_dir / CONFIG_FILES[0]
    try:
        write_atomic(str(target), starter_config(_load_rules()))
    except OSError as error:
        raise _fail(f"cannot write {target}: {error.strerror or error}") from None
    typer.echo(f"Wrote {target}")


@app.command()
def explain(rule: str = typer.Argument(..., metavar="RULE", show_default=False, hidden=True)) -> None:
    """Print a rule's documentation; RULE is its id (GPU003) or name (visible-devices-env)."""
    rules = _load_rules()
    found = rules.get(rule.upper()) or next((r for r in rules.values() if r.name == rule), None)
    if found is None:
        raise _fail(f"unknown rule {rule!r} (see `gpulint rules`)")
    typer.echo(found.documentation, nl=False)


policy_app = typer.Typer(help="Export the rules as an admission policy for the cluster.", no_args_is_help=True,
                         add_completion=False, rich_markup_mode=None,
                         context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(policy_app, name="policy")


@policy_app.command("export")
def policy_export(
    output_format: str = typer.Option("vap", "--format", "-f", metavar="FORMAT",
                                      help="vap (ValidatingAdmissionPolicy and binding) or kyverno (ClusterPolicy)."),
    action: str = typer.Option("deny", "--action", metavar="ACTION",
                               help="deny, warn or audit: what the cluster does with an object that breaks a rule."),
    output: str = typer.Option(None, "--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."),
    config_file: str = typer.Option(None, "--config", metavar="FILE",
                                    help="The configuration (default: found as `gpulint scan .` finds it)."),
    no_default_exemptions: bool = typer.Option(False, "--no-default-exemptions",
                                               help="Do not exempt the built-in system components and roles."),
) -> None:
    """Write the enabled rules as a ValidatingAdmissionPolicy (or Kyverno policy); see docs/admission.md."""
    from gpulint.cli.policycmd import PolicyError, export

    try:
        text = export(_load_rules(), output_format, action, config_file, not no_default_exemptions)
    except PolicyError as error:
        raise _fail(str(error)) from None
    if output is None:
        typer.echo(text, nl=False)
        return
    from gpulint.report.atomicfile import write_atomic

    try:
        write_atomic(output, text)
    except OSError as error:
        raise _fail(f"cannot write {output}: {error.strerror or error}") from None


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
