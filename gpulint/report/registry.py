"""Report formats: one `Reporter` per `--format` value, found in gpulint/report/formats/.

Each module of that folder (but `_*` ones) is the format of its name and defines
`REPORTER`, an instance of a `Reporter` subclass. The format list of `--format`,
of `-o FORMAT:FILE` and of the help text is derived from them; the command line
picks one by name and calls its `write`. Adding a format is adding one module there (and its test),
see CONTRIBUTING.md.

A scan imports only the modules of the formats it writes (--help imports them
all); a format module keeps third-party imports out of its top all the same.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import MappingProxyType
from typing import IO, TYPE_CHECKING, Mapping, NamedTuple, Sequence

if TYPE_CHECKING:
    from gpulint.api import Rule
    from gpulint.results.scanning import ScanResult


FORMATS_PACKAGE = "gpulint.report.formats"


class ReportContext(NamedTuple):
    """Everything a report may depend on besides the scan's result. (A named tuple, immutable:
    `_replace` makes a changed copy.)"""

    rules: Mapping[str, Rule] = MappingProxyType({})   # every registered rule, run or not
    enabled: Sequence[str] = ()              # ids of the rules the scan ran
    show_suppressed: bool = False            # list suppressed findings too
    statistics: bool = False                 # --statistics: findings per rule instead of the findings
    quiet: bool = False                      # no summary line
    colour: str = "never"                    # --color: auto (a terminal decides), always or never
    to_stdout: bool = False                  # the report goes to stdout, not to a file
    category: str | None = None              # --category (SARIF: runAutomationDetails.id)
    problems: Sequence[str] = ()             # problems of the command line (e.g. paths that do not exist)
    not_on_disk: frozenset[str] = frozenset()   # inputs that are not the file of their name (stdin)


class Reporter:
    """A report format. Subclasses set the class attributes and implement `write`."""

    name: str = ""            # the --format value
    help: str = ""            # its entry in --help's list, e.g. "json" or "text (full on a terminal, ...)"
    order: int = 100          # its place in that list (the built-in ones are 10 to 80)
    statistics: bool = False  # whether it can write --statistics instead of the findings
    # Whether its reports show fixes (or why a finding has none): a scan whose reports show none
    # leaves them unresolved (cli/scancmd.py, ScanRequest.fixes).
    fixes: bool = True

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        """Write the report of `result` to `out`, as it is made where the format allows."""
        raise NotImplementedError

    def finish(self, result: ScanResult) -> str | None:
        """Called once per scan that wrote this format, after every report: a side output of the
        format (GitHub's job summary). A warning for stderr when it could not be written."""
        return None


def format_modules() -> list[str]:
    """The formats, by the names of the modules of gpulint/report/formats/ (listed, not imported:
    pkgutil, or importing every format, would cost each scan's start-up)."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "formats")
    return sorted(entry[:-3] for entry in os.listdir(folder) if entry.endswith(".py") and not entry.startswith("_"))


@functools.lru_cache(maxsize=None)
def reporter(name: str) -> Reporter:
    """The reporter of format `name`, its module imported now (KeyError for an unknown one: the
    command line checks names first). A format module defines the format of its own name."""
    if name not in format_modules():
        raise KeyError(name)
    found: Reporter = importlib.import_module(f"{FORMATS_PACKAGE}.{name}").REPORTER
    if found.name != name:
        raise ValueError(f"{FORMATS_PACKAGE}.{name} defines the format {found.name!r}, not {name!r}")
    return found


def reporters() -> dict[str, Reporter]:
    """Every format by name, in the order of --help (each format's module imported)."""
    found = sorted((reporter(name) for name in format_modules()), key=lambda r: (r.order, r.name))
    return {found_reporter.name: found_reporter for found_reporter in found}


def names() -> tuple[str, ...]:
    """The --format values, in the order of --help."""
    return tuple(reporters())


def help_text() -> str:
    """`a, b (what b is) or c`: the formats as --help lists them."""
    entries = [reporter.help or reporter.name for reporter in reporters().values()]
    return entries[0] if len(entries) == 1 else f"{', '.join(entries[:-1])} or {entries[-1]}"
