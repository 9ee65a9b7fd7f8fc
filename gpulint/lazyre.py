"""Regular expressions compiled when first used.

Compiling a pattern costs 30 to 400 microseconds; gpulint's modules hold dozens
that most scans never use (a quantity, a placeholder domain, a GPU UUID, an
inline directive: each only when such a value is met), and compiling them all at
import was a noticeable part of a one-file scan's start-up. A `lazy` pattern
has the methods of a compiled one and compiles on the first call.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self._source

    def match(self, *args: Any) -> re.Match | None:
        return self.compiled().match(*args)

    def fullmatch(self, *args: Any) -> re.Match | None:
        return self.compiled().fullmatch(*args)

    def search(self, *args: Any) -> re.Match | None:
        return self.compiled().search(*args)

    def finditer(self, *args: Any) -> Any:
        return self.compiled().finditer(*args)

    def findall(self, *args: Any) -> list:
        return self.compiled().findall(*args)

    def split(self, *args: Any) -> list:
        return self.compiled().split(*args)

    def sub(self, *args: Any) -> str:
        return self.compiled().sub(*args)


def lazy(source: str, flags: int = 0) -> LazyPattern:
    """A pattern like re.compile(source, flags), compiled on first use."""
    return LazyPattern(source, flags)
