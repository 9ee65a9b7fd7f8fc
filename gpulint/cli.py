"""Command line: `gpulint scan`, `gpulint rules`, `gpulint explain`, `gpulint init`.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, configuration
or internal error. The engine is imported inside the commands so `--help` and
start-up stay cheap.
"""

from __future__ import annotations

import os
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


class ScanFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


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
    output_format: Optional[ScanFormat] = typer.Option(
        None, "--format", "-f", show_default=False,
        help="Output format: text, json, sarif or github (default: github when GITHUB_ACTIONS=true, else text)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the report to FILE (atomically)."),
    category: Optional[str] = typer.Option(None, "--category", help="SARIF: the code scanning category (runAutomationDetails.id)."),
    fail_on: Optional[FailOn] = typer.Option(None, "--fail-on",
                                             help="Lowest severity that makes the exit code 1 (default: warning, or the config's fail-on)."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Rule codes to run instead of the defaults (comma separated, repeatable; ids, prefixes, names or ALL)."),
    extend_select: Optional[List[str]] = typer.Option(None, "--extend-select", help="Rule codes to run in addition to the defaults."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Rule codes not to run."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Glob of paths to skip (repeatable; added to the config's exclude)."),
    show_suppressed: bool = typer.Option(False, "--show-suppressed", help="List suppressed findings too."),
    no_default_exemptions: bool = typer.Option(
        False, "--no-default-exemptions",
        help="Do not recognise the built-in GPU system components (device plugins, GPU Operator, ...): report their findings as active."),
    config_file: Optional[str] = typer.Option(None, "--config", help="Configuration file (.gpulint.yaml or pyproject.toml) instead of the one found from the first path."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Suppress the findings recorded in this baseline file."),
    write_baseline: Optional[str] = typer.Option(None, "--write-baseline", help="Record the current findings in this baseline file (they are reported as suppressed)."),
    helm: Optional[str] = typer.Option(None, "--helm", metavar="PATH", help="helm executable for rendering charts (default: helm on PATH)."),
    values: Optional[List[str]] = typer.Option(None, "--values", metavar="FILE", help="Helm values file for every chart scanned (repeatable, later wins)."),
    set_values: Optional[List[str]] = typer.Option(None, "--set", metavar="KEY=VALUE", help="Helm value for every chart scanned, as `helm --set` (repeatable)."),
    helm_release: str = typer.Option("release-name", "--helm-release", metavar="NAME", help="Release name charts are rendered with."),
    helm_namespace: Optional[str] = typer.Option(None, "--helm-namespace", metavar="NAMESPACE", help="Namespace charts are rendered for (default: default)."),
    helm_skip_tests: bool = typer.Option(False, "--helm-skip-tests", help="Leave out chart test hooks (templates/tests)."),
    kustomize: Optional[str] = typer.Option(None, "--kustomize", metavar="PATH", help="kustomize or kubectl executable for building kustomizations (default: kustomize, else kubectl, on PATH)."),
    max_depth: int = typer.Option(500, "--max-depth", min=1, max=10_000,
                                  help="Deepest nesting of a document; deeper input is reported as GPU000."),
    max_alias_nodes: int = typer.Option(1_000_000, "--max-alias-nodes", min=0,
                                        help="Most nodes YAML aliases may add to a document (bounds alias bombs)."),
) -> None:
    """Scan manifests, Helm/Kustomize output and Dockerfiles for GPU scheduling bypasses."""
    from gpulint.baseline import BaselineError
    from gpulint.discovery import discover
    from gpulint.engine import scan as run_scan
    from gpulint.exemptions import system_component_suppressor
    from gpulint.findings import INVALID_INPUT
    from gpulint.runconfig import CliOptions, plan
    from gpulint.selection import SelectionError, split_codes
    from gpulint.yamlload import Limits

    rules = _load_rules()
    project = _project_config(paths or ["."], config_file, rules)
    options = CliOptions(
        select=split_codes(select) or None,
        extend_select=split_codes(extend_select),
        ignore=split_codes(ignore),
        exclude=list(exclude or ()),
        fail_on=fail_on.value if fail_on else None,
        baseline=baseline,
        write_baseline=write_baseline,
    )
    try:
        run = plan(rules, project, options,
                   system=system_component_suppressor(builtin=not no_default_exemptions))
    except (SelectionError, BaselineError) as error:
        raise _fail(str(error)) from None

    run.scan.render = _render_options(helm, values, set_values, helm_release, helm_namespace, helm_skip_tests,
                                      kustomize)  # type: ignore[assignment]
    run.scan.limits = Limits(max_depth=max_depth, max_expanded_nodes=max_alias_nodes)
    found = discover(paths or ["."], tuple(options.exclude),
                     skip=project.excludes if project.exclude else None)
    result = run_scan(found.inputs, run.scan)

    if output_format is None:  # like yamllint: annotations when running in GitHub Actions
        output_format = ScanFormat.github if os.environ.get("GITHUB_ACTIONS") == "true" else ScanFormat.text
    problems = [f"{path}: no such file or directory" for path in found.missing]
    text = _render(output_format, result, show_suppressed, output is None,
                   rules=rules,
                   enabled=[r.id for r in run.scan.rules] + ([INVALID_INPUT] if run.scan.report_invalid_input else []),
                   category=category, problems=problems)
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
        if run.writer is not None:
            typer.echo(f"gpulint: error: baseline {write_baseline} not written: the scan was incomplete",
                       err=True)
        raise typer.Exit(EXIT_ERROR)
    if run.writer is not None:
        try:
            run.writer.write()
        except BaselineError as error:
            raise _fail(str(error)) from None
        count = sum(run.writer.counts.values())
        typer.echo(f"gpulint: wrote {count} finding{'' if count == 1 else 's'} to baseline {write_baseline}",
                   err=True)
    raise typer.Exit(_exit_code(result, run.fail_on))


def _project_config(paths: List[str], config_file: Optional[str], rules: dict) -> object:
    """The configuration given with --config, or the one nearest to the first path."""
    from pathlib import Path

    from gpulint.config import ConfigError, default_config, find_config, load_config

    if config_file is not None:
        path: Optional[Path] = Path(config_file)
        if not path.is_file():  # type: ignore[union-attr]
            raise _fail(f"{config_file}: no such configuration file")
    else:
        path = find_config(paths)
    if path is None:
        return default_config()
    try:
        return load_config(path, rules)
    except ConfigError as error:
        for problem in error.problems:
            typer.echo(f"gpulint: error: {problem}", err=True)
        raise typer.Exit(EXIT_ERROR) from None


def _render_options(helm: Optional[str], values: Optional[List[str]], sets: Optional[List[str]], release: str,
                    namespace: Optional[str], skip_tests: bool, kustomize: Optional[str]) -> object:
    """Validated Helm/Kustomize settings; a bad one is a usage error (exit 2), not a finding."""
    import os

    from gpulint.render import RenderOptions

    for values_file in values or ():
        if values_file != "-" and not os.path.isfile(values_file):
            raise _fail(f"--values {values_file}: no such file")
        if values_file == "-":
            raise _fail("--values -: values cannot be read from stdin")
    for assignment in sets or ():
        if "=" not in assignment:
            raise _fail(f"--set {assignment!r}: expected KEY=VALUE")
    if not release or release.startswith("-"):
        raise _fail(f"--helm-release {release!r}: not a valid release name")
    return RenderOptions(helm=helm, values=tuple(values or ()), sets=tuple(sets or ()), release=release,
                         namespace=namespace or None, skip_tests=skip_tests, kustomize=kustomize)


def _render(output_format: ScanFormat, result: object, show_suppressed: bool, to_stdout: bool, *,
            rules: dict, enabled: list[str], category: Optional[str], problems: list[str]) -> str:
    if output_format is ScanFormat.json:
        from gpulint.report import json_report

        return json_report.render(result)  # type: ignore[arg-type]
    if output_format is ScanFormat.sarif:
        from gpulint.report import sarif

        return sarif.render(result, rules, enabled, category=category, problems=problems)  # type: ignore[arg-type]
    if output_format is ScanFormat.github:
        from gpulint.report import github

        return github.render(result, show_suppressed=show_suppressed)  # type: ignore[arg-type]
    from gpulint.report import text

    colour = to_stdout and text.use_colour(sys.stdout)
    return text.render(result, show_suppressed=show_suppressed, colour=colour)  # type: ignore[arg-type]


def _exit_code(result: object, fail_on: str) -> int:
    if fail_on == FailOn.never.value:
        return EXIT_CLEAN
    from gpulint.api import Severity

    threshold = Severity(fail_on).rank
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
def init(
    directory: str = typer.Argument(".", help="Directory to write .gpulint.yaml into."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing configuration file."),
) -> None:
    """Write a commented starter configuration (.gpulint.yaml)."""
    from pathlib import Path

    from gpulint.config import CONFIG_FILES
    from gpulint.starter import starter_config
    from gpulint.output import write_atomic

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
