"""The options of `gpulint scan`: one argparse declaration, parsed with clean usage errors.

`gpulint scan` runs on every commit (pre-commit) and every push (CI), so it is
parsed with the standard library's argparse: the Typer application (app.py)
imports pydantic to build its commands, which alone took 3-4 times what
`python -c "import ruamel.yaml"` takes, while the whole one-file scan must stay
under 3 times that. app.py registers `scan` as a pass-through to `main` here, so
`gpulint --help` lists it and every entry point parses it the same way.

To add an option: one `add_argument` call in `build_parser` (its `dest` is the
key `run_scan` reads). Messages follow ruff's: `gpulint: error: --fail-on:
'bogus' is not one of error, warning, info, never`, and an unknown option names
the option it most likely meant only when the spelling is close.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, NoReturn

from gpulint.report import registry as formats

SCAN_HELP = "Scan manifests, Helm/Kustomize output and Dockerfiles for GPU scheduling bypasses."
FAIL_ON = ("error", "warning", "info", "never")
COLORS = ("auto", "always", "never")
# How close (difflib ratio) an unknown option must be to one of ours to be suggested:
# `--fail_on` gives `--fail-on` (0.89), `--confg` gives `--config`.
SUGGEST_CUTOFF = 0.75


class UsageError(Exception):
    """Reported as `gpulint: error: MESSAGE`, exit code 2."""


class HelpShown(Exception):
    """-h/--help printed the help: exit 0."""


def choice(*allowed: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(allowed)}")
        return text
    return convert


def _format(text: str) -> str:
    """A --format value: the name of a module of gpulint/report/formats/ (report/registry.py)."""
    if text not in formats.format_modules():
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(formats.names())}")
    return text


class _Formats:
    """The formats with what each is, read when --help is shown (listing them imports every format)."""

    def __str__(self) -> str:
        return formats.help_text()


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    def convert(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if number < low or (high is not None and number > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{number} is out of range (allowed: {bounds})")
        return number
    return convert


class _Parser(argparse.ArgumentParser):
    """Errors become UsageError (the caller prints them) instead of argparse's usage dump and exit."""

    def error(self, message: str) -> NoReturn:
        # argparse writes "argument --fail-on: ..."; the option alone reads better.
        if message.startswith("argument "):
            message = message[len("argument "):]
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            raise UsageError(message.strip())
        raise HelpShown()


def build_parser() -> argparse.ArgumentParser:
    """Every option of `gpulint scan`, in the order `--help` lists them."""
    parser = _Parser(prog="gpulint scan", usage="gpulint scan [OPTIONS] [PATH ...]", description=SCAN_HELP,
                     allow_abbrev=False, formatter_class=_Formatter, add_help=False)
    parser._positionals.title = "arguments"
    parser.add_argument("-h", "--help", action="help", help="Show this help and exit.")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="Files or directories to scan; '-' reads stdin "
                        "(default: '.').")

    out = parser.add_argument_group("output")
    listed = out.add_argument("-f", "--format", dest="output_format", type=_format, metavar="FORMAT",
                              help="%(formats)s (default: github when GITHUB_ACTIONS=true, else text).")
    setattr(listed, "formats", _Formats())   # `%(formats)s` above, expanded when help is shown
    out.add_argument("-o", "--output", action="append", metavar="[FORMAT:]FILE",
                     help="Write the report to FILE (atomically; missing folders are created) instead of stdout; "
                          "FORMAT:FILE writes one more report in FORMAT from the same scan (e.g. -o "
                          "sarif:results.sarif; '-' is stdout). Repeatable.")
    out.add_argument("--category", metavar="NAME", help="SARIF: the code scanning category (runAutomationDetails.id).")
    out.add_argument("--color", type=choice(*COLORS), default="auto", metavar="WHEN",
                     help="Colour text output: auto (on a terminal, unless NO_COLOR is set or TERM=dumb; "
                          "FORCE_COLOR forces it), always or never (default: auto).")
    out.add_argument("--statistics", action="store_true", help="Print the number of findings per rule instead of "
                     "the findings.")
    out.add_argument("--show-suppressed", action="store_true", help="List suppressed findings too.")
    out.add_argument("-v", "--verbose", action="store_true",
                     help="Also list, on stderr, every chart and kustomization rendered (with its time) and every "
                          "file not scanned (with the reason).")
    out.add_argument("-q", "--quiet", action="store_true", help="Print the findings only (no summary, no progress).")
    out.add_argument("--fail-on", type=choice(*FAIL_ON), metavar="SEVERITY",
                     help="Lowest severity that makes the exit code 1: error, warning, info or never "
                          "(default: warning, or the configuration's fail-on).")
    out.add_argument("--exit-zero", action="store_true",
                     help="Exit 0 even when there are findings (usage and configuration errors still exit 2).")

    fixes = parser.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", default=None,
                       help="Apply the safe fixes to the files in place (atomically, only files that change; "
                            "stdin: the fixed text on stdout), then report what remains (default: the "
                            "configuration's fix).")
    fixes.add_argument("--no-fix", dest="fix", action="store_false", help="Do not apply fixes (overrides fix: true).")
    fixes.add_argument("--unsafe-fixes", action="store_true", default=None,
                       help="Apply (with --fix) or show (with --diff) the unsafe fixes too: they change what the "
                            "workload gets (default: the configuration's unsafe-fixes).")
    fixes.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                       help="Leave the unsafe fixes out (overrides unsafe-fixes: true).")
    fixes.add_argument("--diff", action="store_true",
                       help="Print a unified diff of the fixes instead of applying them; change nothing (exit 1 "
                            "when there is a diff).")

    rules = parser.add_argument_group("rule selection")
    rules.add_argument("--select", action="append", metavar="CODES",
                       help="Rules to run instead of the defaults: comma-separated ids, prefixes, names or ALL "
                            "(repeatable).")
    rules.add_argument("--extend-select", action="append", metavar="CODES",
                       help="Rules to run in addition to the defaults.")
    rules.add_argument("--ignore", action="append", metavar="CODES", help="Rules not to run.")

    files = parser.add_argument_group("files and configuration")
    files.add_argument("--exclude", action="append", metavar="GLOB",
                       help="Skip paths matching GLOB (repeatable; added to the configuration's exclude).")
    files.add_argument("--no-ignore", action="store_true",
                       help="Also scan files git ignores (by default a directory walk inside a git work tree passes "
                            "over them; paths named on the command line are always scanned).")
    files.add_argument("--changed", action="store_true",
                       help="The paths are files a commit changes (what the pre-commit hook passes): each scans "
                            "the chart or the kustomizations that read it, reporting the builds' findings on the "
                            "changed files; other files that are no manifest or Dockerfile are left out.")
    files.add_argument("--fail-if-empty", action="store_true",
                       help="Exit 2 when there is no file to scan (always said on stderr).")
    files.add_argument("--no-cache", action="store_true",
                       help="Scan again instead of reading an unchanged scan's result from the cache "
                            "(also: GPULINT_NO_CACHE=1).")
    files.add_argument("--cache-dir", metavar="DIR",
                       help="Folder of the result cache (default: $XDG_CACHE_HOME/gpulint, else ~/.cache/gpulint).")
    files.add_argument("--stdin-filename", metavar="NAME",
                       help="The name of the input read from '-': shown in findings, and matched against the "
                            "configuration and excludes as that file would be.")
    files.add_argument("--isolated", action="store_true",
                       help="Read no configuration file from the scanned tree (.gpulint.yaml, pyproject.toml): only "
                            "--config, else the defaults. For CI on pull requests, whose tree is untrusted.")
    files.add_argument("--config", dest="config_file", metavar="FILE",
                       help="Configuration file (.gpulint.yaml or pyproject.toml) instead of the one found from "
                            "the first path.")
    files.add_argument("--config-root", metavar="DIR",
                       help="Folder the --config file's relative paths (exclude, exemptions, baseline, charts) name "
                            "files in, instead of the file's own; they must then be inside its repository. For a "
                            "trusted configuration copied out of the checkout it describes (the Action's base "
                            "branch configuration).")
    files.add_argument("--no-default-exemptions", action="store_true",
                       help="Do not recognise the built-in GPU system components (device plugins, GPU Operator, "
                            "...): report their findings as active.")
    files.add_argument("--baseline", metavar="FILE", help="Suppress the findings recorded in this baseline file.")
    files.add_argument("--baseline-root", metavar="DIR",
                       help="Folder the --baseline file's paths are relative to, instead of the file's own. For a "
                            "trusted baseline copied out of the checkout it describes (the Action's base branch "
                            "baseline).")
    files.add_argument("--write-baseline", metavar="FILE",
                       help="Record the current findings in this baseline file (they are reported as suppressed).")

    render = parser.add_argument_group("Helm and Kustomize")
    render.add_argument("--helm", metavar="PATH", help="helm executable for rendering charts (default: helm on PATH).")
    render.add_argument("--values", action="append", metavar="FILE",
                        help="Helm values file for every chart scanned (repeatable, later wins).")
    render.add_argument("--set", dest="set_values", action="append", metavar="KEY=VALUE",
                        help="Helm value for every chart scanned, as `helm --set` (repeatable).")
    render.add_argument("--helm-release", default="release-name", metavar="NAME",
                        help="Release name charts are rendered with (default: release-name).")
    render.add_argument("--helm-namespace", metavar="NAMESPACE",
                        help="Namespace charts are rendered for (default: default).")
    render.add_argument("--helm-skip-tests", action="store_true", help="Leave out chart test hooks (templates/tests).")
    render.add_argument("--kube-version", metavar="VERSION",
                        help="Kubernetes version charts are rendered for, e.g. 1.33 (Capabilities.KubeVersion and a "
                             "chart's kubeVersion; default: the newest the installed helm knows, or the "
                             "configuration's kube-version).")
    render.add_argument("--render-timeout", type=integer(1, 3600), metavar="SECONDS",
                        help="Seconds one helm or kustomize run may take; it is then stopped and reported as GPU010 "
                             "(default: 30, or the configuration's render-timeout).")
    render.add_argument("--render-memory", type=integer(64, 1 << 20), default=512, metavar="MIB",
                        help="MiB of memory one helm or kustomize run may allocate; past it the run fails and is "
                             "reported as GPU010 (default: 512).")
    render.add_argument("--kustomize", metavar="PATH",
                        help="kustomize or kubectl executable for building kustomizations (default: kustomize, "
                             "else kubectl, on PATH).")

    limits = parser.add_argument_group("limits")
    limits.add_argument("--max-depth", type=integer(1, 10_000), default=500, metavar="N",
                        help="Deepest nesting of a document; deeper input is reported as GPU000 (default: 500).")
    limits.add_argument("--max-alias-nodes", type=integer(0), default=1_000_000, metavar="N",
                        help="Most nodes YAML aliases may add to a document, bounding alias bombs "
                             "(default: 1000000).")
    limits.add_argument("--max-file-size", type=integer(1, 1 << 30), default=256, metavar="MIB",
                        help="Largest file read, in MiB; a larger one is reported as GPU000 and not opened "
                             "(default: 256).")
    limits.add_argument("-j", "--jobs", type=integer(1), metavar="N",
                        help="Processes scanning files in parallel (default: one per idle CPU; small scans use "
                             "one). The report is the same whatever the number.")
    return parser


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30, width=100)


def defaults() -> dict[str, Any]:
    """The values of a scan given no option."""
    return parse([])


def parse(args: list[str]) -> dict[str, Any]:
    """The values of `gpulint scan ARGS` (repeatable options as lists). Raises UsageError, or
    HelpShown after printing the help."""
    parser = build_parser()
    namespace, unknown = parser.parse_known_intermixed_args(args)
    options = [arg for arg in unknown if arg.startswith("-") and arg != "-"]
    if options:
        raise UsageError(_unknown(options[0], parser))
    if unknown:  # cannot happen with PATH taking any number of values; kept as a guard
        raise UsageError(f"unexpected arguments: {' '.join(unknown)}")
    values = vars(namespace)
    for action in parser._actions:
        if isinstance(action, argparse._AppendAction) and values[action.dest] is None:
            values[action.dest] = []
    return values


def _unknown(arg: str, parser: argparse.ArgumentParser) -> str:
    import difflib

    name = arg.split("=", 1)[0]
    flags = [flag for action in parser._actions for flag in action.option_strings]
    close = difflib.get_close_matches(name, flags, n=1, cutoff=SUGGEST_CUTOFF)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown option {name}{hint}; see gpulint scan --help"
