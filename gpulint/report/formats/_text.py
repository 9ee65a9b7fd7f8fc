"""What the three text formats share: colour and the full or concise form (report/text.py)."""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any

from gpulint.report.registry import ReportContext

if TYPE_CHECKING:
    from gpulint.results.scanning import ScanResult


def write_text(result: ScanResult, out: IO[str], context: ReportContext, full: bool | None) -> None:
    """`full` None: the full form on a terminal, the concise one elsewhere."""
    from gpulint.report import text

    colour = use_colour(context.colour, out if context.to_stdout else None)
    if context.statistics:
        text.write_statistics(result, out, context.show_suppressed, colour, quiet=context.quiet)
        return
    if full is None:
        full = context.to_stdout and isatty(out)
    text.write(result, out, show_suppressed=context.show_suppressed, colour=colour, full=full, quiet=context.quiet,
               not_on_disk=context.not_on_disk)


def use_colour(choice: str, stream: Any) -> bool:
    """--color: `always`, `never`, or `auto`: off when NO_COLOR is set, on when FORCE_COLOR is,
    off for TERM=dumb, else on a terminal (`stream` None: a file, never a terminal)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return stream is not None and isatty(stream)


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:  # noqa: BLE001 - a closed or odd stream is no terminal
        return False
