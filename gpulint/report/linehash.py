"""`partialFingerprints.primaryLocationLineHash`, as GitHub's upload-sarif computes it.

GitHub code scanning tracks an alert across commits by this value. When a SARIF
file lacks it, the `upload-sarif` action fills it in from the checked-out file
(github/codeql-action, src/fingerprints.ts); an upload through the REST API
gets none. We compute the same value, so either way of uploading gives the same
alert identity, and `upload-sarif` finds nothing inconsistent to warn about.

The algorithm, as upload-sarif documents and implements it:

- the file is read as UTF-8 (invalid bytes become U+FFFD) and taken as UTF-16
  code units;
- spaces and tabs are dropped, CR and CRLF become LF (an LF right after a CR is
  dropped, unless a dropped space or tab came between them);
- a special end-of-file unit (0xFFFF) follows, then zeros;
- a line's hash is the polynomial hash, base 37 and modulo 2**64, of the 100
  units that start at the line's first unit: sum(unit[k] * 37**(99 - k));
- it is written as unpadded lower-case hex, followed by `:N` where N counts the
  lines of the file, up to and including this one, with the same hash.

A line's hash depends only on text from its own start on, so lines inserted or
removed above a finding do not change it. Here the rolling computation is done
per line asked for, its window joined from the lines that start there (a SARIF
report asks for a few lines of each of thousands of files: nothing is computed
for every line of a file); the `:N` count compares the 100-unit windows themselves
(identical windows are exactly the lines whose hashes are equal, barring a
64-bit collision), and only of lines that start with the same text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from operator import add, mul
from typing import Iterable

from gpulint.lazypattern import lazy

BLOCK = 100
MOD = 1 << 64
EOF = "\uffff"
# A file's first this many different short lines asked about are found by searching its
# lines (in C); past them, all its lines are grouped in one (Python) pass.
_SEARCHED_KEYS = 16
_POWERS = tuple(pow(37, BLOCK - 1 - k, MOD) for k in range(BLOCK))
_ASTRAL = lazy("[\U00010000-\U0010ffff]")


def _utf16_units(char: re.Match) -> str:
    """An astral character as its two UTF-16 surrogates (JavaScript's charCodeAt view)."""
    value = ord(char.group()) - 0x10000
    return chr(0xD800 + (value >> 10)) + chr(0xDC00 + (value & 0x3FF))


def normalise(data: bytes) -> str:
    """The units the hash runs over: decoded, whitespace dropped, line ends as LF, then EOF."""
    return "\n".join(normalised_lines(data))


def normalised_lines(data: bytes) -> list[str]:
    """normalise(data) split at LF. EOF is added to the last line alone: on the whole text it
    would make a copy of it with two bytes a character (one is no longer ASCII)."""
    # Order matters: CRLF first; then a lone CR; spaces and tabs last, so that
    # "CR space LF" stays two line ends, as upload-sarif counts it.
    if data.isascii():
        # Bytes are characters: spaces and tabs go in one pass over the bytes (dropping
        # each through str.replace cost more than the rest of the report).
        text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").translate(None, b" \t").decode("ascii")
    else:  # decoded first: an invalid sequence must not be joined across a dropped space
        text = data.decode("utf-8", "replace")
        if _ASTRAL.search(text):
            text = _ASTRAL.sub(_utf16_units, text)
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace(" ", "").replace("\t", "")
    lines = text.split("\n")
    lines[-1] += EOF
    return lines


def hash_window(window: str) -> str:
    """The hex hash of up to 100 units (zeros pad a window cut by the end of the text)."""
    value = sum(map(mul, map(ord, window), _POWERS)) % MOD   # missing units are zeros: they add nothing
    return format(value, "x")


class FileLineHashes:
    """Line hashes of one file, computed for the lines asked for."""

    def __init__(self, data: bytes) -> None:
        self._lines = normalised_lines(data)
        self._units = ""                        # the lines joined, with _starts
        self._starts: list[int] | None = None   # where each line starts: made when lines are grouped
        self._members: dict[str, list[int]] = {}   # first 100 units of a line -> the lines starting so
        self._grouped = False                       # whether _members holds every line's
        self._groups: dict[str, tuple[dict[str, list[int]], int]] = {}   # ... -> ({window: the lines}, members seen)
        self._hashes: dict[int, str] = {}

    @property
    def lines(self) -> int:
        return len(self._lines)

    def _window(self, index: int) -> str:
        """The 100 units from the start of line `index` (fewer at the end of the text)."""
        if self._starts is not None:
            start = self._starts[index]
            return self._units[start:start + BLOCK]
        lines = self._lines
        first = lines[index]
        if len(first) >= BLOCK:
            return first[:BLOCK]
        parts = [first]
        size = len(first)
        following = index + 1
        end = len(lines)
        while size < BLOCK and following < end:
            line = lines[following]
            parts.append(line)
            size += 1 + len(line)
            following += 1
        return "\n".join(parts)[:BLOCK]

    def _lines_starting(self, key: str) -> list[int]:
        """The lines whose first 100 units are `key`, in order.

        A line shorter than 100 units is found where the whole line equals it, by
        list searches (in C); a file asked about many different lines (or long ones)
        has all its lines grouped in one pass instead."""
        members = self._members.get(key)
        if members is not None or self._grouped:
            return members or []
        lines = self._lines
        if len(key) < BLOCK and len(self._members) < _SEARCHED_KEYS:
            members = []
            at = lines.index(key)
            try:
                while True:
                    members.append(at)
                    at = lines.index(key, at + 1)
            except ValueError:
                pass
            self._members[key] = members
            return members
        grouped: dict[str, list[int]] = {}
        for i, line in enumerate(lines):
            grouped.setdefault(line[:BLOCK], []).append(i)
        self._members, self._grouped = grouped, True
        # Windows of many lines are compared from here on: index where lines start.
        self._units = "\n".join(lines)
        self._starts = list(map(add, accumulate(map(len, lines[:-1]), initial=0), range(len(lines))))
        return grouped[key]

    def _occurrence(self, index: int) -> int:
        """N of `hash:N`: the lines up to this one whose window is this line's window.

        Equal windows need lines with the same first 100 units (for a shorter
        line: the same line), so only those are compared, each window once, and
        only up to the line asked for (results come in line order)."""
        key = self._lines[index][:BLOCK]
        members = self._lines_starting(key)
        if len(members) == 1:
            return 1                              # the only line with this text
        group, done = self._groups.get(key) or ({}, 0)
        while done < len(members) and members[done] <= index:
            group.setdefault(self._window(members[done]), []).append(members[done])
            done += 1
        self._groups[key] = (group, done)
        return bisect_right(group[self._window(index)], index)

    def get(self, line: int) -> str | None:
        """`hash:N` for 1-based `line`, None past the end of the file."""
        found = self._hashes.get(line)   # several results on one line
        if found is None:
            index = line - 1
            if not 0 <= index < len(self._lines):
                return None
            found = self._hashes[line] = f"{hash_window(self._window(index))}:{self._occurrence(index)}"
        return found


def all_hashes(data: bytes) -> Iterable[str]:
    """Every line's `hash:N`, in order (what upload-sarif's callback receives)."""
    hashes = FileLineHashes(data)
    return [hashes.get(line) or "" for line in range(1, hashes.lines + 1)]
