"""The options of `gpulint scan`, declared once, and a parser for plain invocations.

`gpulint scan` is what pre-commit hooks and CI run, often once per commit, so
its start-up time matters. The Typer application (cli.py) builds the `scan`
command from `OPTIONS` and `PATHS`; the console-script launcher (launch.py)
parses a plain `gpulint scan ...` command line with `parse` below, from the
same declaration, without importing Typer. Anything `parse` is not sure of
(help, an unknown or malformed option, a bad value) goes to Typer, which
reports it. This module imports nothing beyond the standard library.

`parse` follows the parsing rules of Click (which Typer uses) for what it
accepts: options and paths may be interspersed, `--` ends the options, a long
option's value follows it or is attached with `=`, a short option's value
follows it or is attached (`-fjson`), a repeated option keeps its last value
(or every value when it may be repeated), a lone `-` is a path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Opt:
    """One option of `gpulint scan`."""

    name: str                          # parameter name in the scan implementation
    flags: tuple[str, ...]             # e.g. ("--format", "-f")
    help: str
    kind: type = str                   # str, int or bool (a flag)
    default: Any = None
    multiple: bool = False             # may be repeated; the values are a list
    choices: tuple[str, ...] = ()      # allowed values (case-sensitive)
    choice_type: str = ""              # name of the Enum Typer shows for the choices
    metavar: str | None = None
    min: int | None = None
    max: int | None = None
    show_default: bool = True


PATHS_HELP = "Files or directories to scan; '-' reads stdin. Default: '.'"
SCAN_HELP = "Scan manifests, Helm/Kustomize output and Dockerfiles for GPU scheduling bypasses."
FORMATS = ("text", "json", "sarif", "github")
FAIL_ON = ("error", "warning", "info", "never")

OPTIONS: tuple[Opt, ...] = (
    Opt("output_format", ("--format", "-f"), show_default=False, choices=FORMATS, choice_type="ScanFormat",
        help="Output format: text, json, sarif or github (default: github when GITHUB_ACTIONS=true, else text)."),
    Opt("output", ("--output", "-o"), help="Write the report to FILE (atomically)."),
    Opt("category", ("--category",), help="SARIF: the code scanning category (runAutomationDetails.id)."),
    Opt("fail_on", ("--fail-on",), choices=FAIL_ON, choice_type="FailOn",
        help="Lowest severity that makes the exit code 1 (default: warning, or the config's fail-on)."),
    Opt("select", ("--select",), multiple=True,
        help="Rule codes to run instead of the defaults (comma separated, repeatable; ids, prefixes, names or ALL)."),
    Opt("extend_select", ("--extend-select",), multiple=True, help="Rule codes to run in addition to the defaults."),
    Opt("ignore", ("--ignore",), multiple=True, help="Rule codes not to run."),
    Opt("exclude", ("--exclude",), multiple=True,
        help="Glob of paths to skip (repeatable; added to the config's exclude)."),
    Opt("show_suppressed", ("--show-suppressed",), kind=bool, default=False, help="List suppressed findings too."),
    Opt("no_default_exemptions", ("--no-default-exemptions",), kind=bool, default=False,
        help="Do not recognise the built-in GPU system components (device plugins, GPU Operator, ...): "
             "report their findings as active."),
    Opt("config_file", ("--config",),
        help="Configuration file (.gpulint.yaml or pyproject.toml) instead of the one found from the first path."),
    Opt("baseline", ("--baseline",), help="Suppress the findings recorded in this baseline file."),
    Opt("write_baseline", ("--write-baseline",),
        help="Record the current findings in this baseline file (they are reported as suppressed)."),
    Opt("helm", ("--helm",), metavar="PATH", help="helm executable for rendering charts (default: helm on PATH)."),
    Opt("values", ("--values",), metavar="FILE", multiple=True,
        help="Helm values file for every chart scanned (repeatable, later wins)."),
    Opt("set_values", ("--set",), metavar="KEY=VALUE", multiple=True,
        help="Helm value for every chart scanned, as `helm --set` (repeatable)."),
    Opt("helm_release", ("--helm-release",), default="release-name", metavar="NAME",
        help="Release name charts are rendered with."),
    Opt("helm_namespace", ("--helm-namespace",), metavar="NAMESPACE",
        help="Namespace charts are rendered for (default: default)."),
    Opt("helm_skip_tests", ("--helm-skip-tests",), kind=bool, default=False,
        help="Leave out chart test hooks (templates/tests)."),
    Opt("kustomize", ("--kustomize",), metavar="PATH",
        help="kustomize or kubectl executable for building kustomizations (default: kustomize, else kubectl, on PATH)."),
    Opt("max_depth", ("--max-depth",), kind=int, default=500, min=1, max=10_000,
        help="Deepest nesting of a document; deeper input is reported as GPU000."),
    Opt("max_alias_nodes", ("--max-alias-nodes",), kind=int, default=1_000_000, min=0,
        help="Most nodes YAML aliases may add to a document (bounds alias bombs)."),
    Opt("jobs", ("--jobs", "-j"), kind=int, default=None, min=1, show_default=False,
        help="Processes scanning files in parallel (default: one per idle CPU; small scans use one). "
             "The report is the same whatever the number."),
    Opt("no_cache", ("--no-cache",), kind=bool, default=False,
        help="Scan again instead of reading an unchanged scan's result from the cache (also: GPULINT_NO_CACHE=1)."),
    Opt("cache_dir", ("--cache-dir",), metavar="DIR", show_default=False,
        help="Folder of the result cache (default: $XDG_CACHE_HOME/gpulint, else ~/.cache/gpulint)."),
)

_BY_FLAG = {flag: opt for opt in OPTIONS for flag in opt.flags}


def defaults() -> dict[str, Any]:
    """The values of a scan given no option: what both front ends hand the implementation."""
    values: dict[str, Any] = {"paths": []}
    for opt in OPTIONS:
        values[opt.name] = [] if opt.multiple else opt.default
    return values


def parse(args: list[str]) -> dict[str, Any] | None:
    """The values of `gpulint scan ARGS`, or None when Typer should handle the command line.

    None covers help, unknown options, missing or invalid values: Typer
    parses those again and prints its usage error.
    """
    values = defaults()
    paths: list[str] = values["paths"]
    pending = list(args)
    while pending:
        arg = pending.pop(0)
        if arg == "--":
            paths.extend(pending)
            break
        if not arg.startswith("-") or arg == "-":
            paths.append(arg)
            continue
        if arg.startswith("--"):
            name, attached = arg.split("=", 1) if "=" in arg else (arg, None)
            opt = _BY_FLAG.get(name)
        else:
            # Click reads `-fjson` (and `-f=json`) as `-f` with the rest as its value.
            opt = _BY_FLAG.get(arg[:2])
            attached = arg[2:] if len(arg) > 2 else None
        if opt is None:
            return None  # unknown option, or --help
        if opt.kind is bool:
            if attached is not None:
                return None  # a flag takes no value
            values[opt.name] = True
            continue
        if attached is None:
            if not pending:
                return None  # the value is missing
            attached = pending.pop(0)
        value = _convert(opt, attached)
        if value is None:
            return None
        if opt.multiple:
            values[opt.name].append(value)
        else:
            values[opt.name] = value
    return values


def _convert(opt: Opt, text: str) -> Any:
    """The option's value, or None when it is invalid (Typer then says why)."""
    if opt.choices:
        return text if text in opt.choices else None
    if opt.kind is int:
        try:
            number = int(text)
        except ValueError:
            return None
        if (opt.min is not None and number < opt.min) or (opt.max is not None and number > opt.max):
            return None
        return number
    return text
