"""Report formats: one `Reporter` per `--format` value, found in gpulint/report/formats/.

Each module of that folder (but `_*` ones) defines `REPORTER`, an instance of a
`Reporter` subclass. The format list of `--format`, of `-o FORMAT:FILE` and of
the help text is derived from them; the command line picks one by name and
calls its `write`. Adding a format is adding one module there (and its test),
see CONTRIBUTING.md.

A format module stays cheap to import (no third-party import at its top): every
scan lists the formats, and only the chosen reporter loads what it writes with.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:
    from gpulint.api import Rule
    from gpulint.results.scanning import ScanResult


FORMATS_PACKAGE = "gpulint.report.formats"


@dataclass(frozen=True, repr=False)
class ReportContext:
    """Everything a report may depend on besides the scan's result."""

    rules: Mapping[str, Rule] = field(default_factory=dict)   # every registered rule, run or not
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
    order: int = 100          # its place in that list (the built-in ones are 10 to 60)
    statistics: bool = False  # whether it can write --statistics instead of the findings

    def write(self, result: ScanResult, out: IO[str], context: ReportContext) -> None:
        """Write the report of `result` to `out`, as it is made where the format allows."""
        raise NotImplementedError

    def finish(self, result: ScanResult) -> str | None:
        """Called once per scan that wrote this format, after every report: a side output of the
        format (GitHub's job summary). A warning for stderr when it could not be written."""
        return None


@functools.lru_cache(maxsize=None)
def reporters() -> dict[str, Reporter]:
    """Every format by name, in the order of --help."""
    found: list[Reporter] = [importlib.import_module(f"{FORMATS_PACKAGE}.{name}").REPORTER
                             for name in format_modules()]
    found.sort(key=lambda reporter: (reporter.order, reporter.name))
    return {reporter.name: reporter for reporter in found}


@functools.lru_cache(maxsize=None)
def format_modules() -> list[str]:
    """The modules of gpulint/report/formats/ that define a format (listed, not imported: pkgutil
    would cost every scan its import)."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "formats")
    return sorted(entry[:-3] for entry in os.listdir(folder) if entry.endswith(".py") and not entry.startswith("_"))


def names() -> tuple[str, ...]:
    """The --format values, in the order of --help."""
    return tuple(reporters())


def reporter(name: str) -> Reporter:
    """The reporter of format `name` (KeyError for an unknown one: the command line checks names first)."""
    return _own_module(name) or reporters()[name]


def is_format(name: str) -> bool:
    """Whether `name` is a --format value."""
    return _own_module(name) is not None or name in reporters()


def sort_key(name: str) -> tuple[int, str]:
    """Where format `name` comes in names()."""
    found = reporter(name)
    return found.order, found.name


def _own_module(name: str) -> Reporter | None:
    """The reporter of the module named as the format (the usual case), imported alone: a scan
    writes one format, and importing the others cost it about 5 % of a one-file scan."""
    if name in format_modules():
        found: Reporter = importlib.import_module(f"{FORMATS_PACKAGE}.{name}").REPORTER
        if found.name == name:
            return found
    return None


def help_text() -> str:
    """`a, b (what b is) or c`: the formats as --help lists them."""
    entries = [reporter.help or reporter.name for reporter in reporters().values()]
    return entries[0] if len(entries) == 1 else f"{', '.join(entries[:-1])} or {entries[-1]}"
