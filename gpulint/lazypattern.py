"""Regular expressions compiled the first time they are used.

Compiling a pattern runs the `re` module's parser and compiler, written in
Python: the patterns gpulint defines took about 15 % of a one-file scan, and
some serve input most scans never meet (other vendors' hardware, cloud instance
types, text a report must escape). Such a pattern is defined with `lazy` instead
of `re.compile`; its uses (`.match`, `.search`, `.sub`...) stay as they are.
Globs are matched by `glob_matches`, which compiles none that is a name or a
prefix (each other vendor's resource name and built-in image rule is one).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any


class LazyPattern:
    """Stands for `re.compile(pattern, flags)` until an attribute of the compiled pattern is asked
    for; from then on that attribute is the compiled pattern's own (a bound method: no extra call)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:   # only called for what is not set yet
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(re.compile(*self._source), name)
        setattr(self, name, value)
        return value


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled when first used. Only for patterns used through their
    attributes (not passed to `re` functions, which want a compiled pattern)."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]


_GLOB_SPECIAL = frozenset("*?[")


def glob_matches(name: str, pattern: str) -> bool:
    """fnmatch.fnmatchcase(name, pattern); a pattern that is a literal, or a literal and one final
    `*`, is compared as a string (fnmatch would compile a regular expression for it)."""
    head = pattern[:-1] if pattern.endswith("*") else pattern
    if _GLOB_SPECIAL.isdisjoint(head):
        return name.startswith(head) if len(head) < len(pattern) else name == pattern
    return fnmatch.fnmatchcase(name, pattern)
