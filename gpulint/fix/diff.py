"""The unified diff `--diff` prints: per file, what the fixes would change."""

from __future__ import annotations

import difflib
import re

_LINE_RE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def unified(display: str, before: str, after: str) -> str:
    """A unified diff of one file (`--- a` / `+++ b` headers naming it as given), "" when equal.
    Lines are split at LF only (CR LF stays in the line); a last line without a line break is
    marked as diff marks it."""
    if before == after:
        return ""
    out = []
    for line in difflib.unified_diff(_LINE_RE.findall(before), _LINE_RE.findall(after),
                                     fromfile=_name("a", display), tofile=_name("b", display), n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _name(side: str, display: str) -> str:
    """git's `a/` and `b/` prefixes for a relative path; an absolute one is shown as it is."""
    return display if display.startswith("/") else f"{side}/{display}"
