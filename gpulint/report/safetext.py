"""Untrusted names and messages, written so that every report stays valid and truthful.

File names come from the scanned tree: on POSIX they are bytes, and a name that
is not UTF-8 reaches us with each undecodable byte as a lone surrogate
(U+DC80..U+DCFF, Python's `surrogateescape`). Such text cannot be written as
UTF-8, and a name holding a newline could forge a line of a line-based report.

- JSON (json, SARIF): lone surrogates become `\\udcNN` escapes. That is valid
  JSON (RFC 8259 §7) made only of ASCII, and lossless: Python's `json` reads
  the name back as the same string, `os.fsencode` gives back the bytes.
- Lines (text, GitHub annotations): `printable` writes each undecodable byte as
  `\\xNN`, control characters (newline, carriage return, escape, ...) and the
  Unicode line separators as `\\n`, `\\r`, `\\x1b`, `\\u2028`..., and, in file
  names, a backslash as `\\\\`, so the escaped name maps back to one name.
- URIs (SARIF): percent-encoding of the name's bytes (repopath.RepoPath.uri).
- CI logs (every line gpulint writes to stdout or stderr): `no_command` makes a
  line GitHub's runner cannot take for a workflow command. The runner reads a
  line as one when, trimmed of white space, it starts with `::`, or (its older
  syntax) when it holds `##[` anywhere; such a line gets a backslash before the
  `::` or the `[`.
- Terminal text (the `full` format's source lines): `terminal_text` escapes every
  control character but tab (C0, ESC, DEL, C1), so a manifest's line cannot set
  a terminal's title, write an OSC 8 link or move the cursor.
"""

from __future__ import annotations

import re

from gpulint.lazypattern import lazy

_SURROGATE = lazy("[\ud800-\udfff]")
# C0 controls, DEL, C1 controls, and the characters some viewers take as line ends.
_UNPRINTABLE = lazy("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_UNPRINTABLE_PATH = lazy("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def json_safe(text: str) -> str:
    """JSON text (as json.dumps writes it) with lone surrogates as `\\uXXXX` escapes.

    A raw surrogate can only be inside a JSON string, so replacing it with
    its six-character escape keeps the document's meaning."""
    if "##[" in text:
        # A JSON report printed in a CI log: `##[` anywhere in a line is a workflow command to
        # GitHub's runner. It can only be inside a string (`#` is no JSON syntax), where `\u005b`
        # is the same `[`.
        text = text.replace("##[", "##\\u005b")
    if text.isascii():
        return text
    try:
        text.encode("utf-8")   # fails exactly on a lone surrogate; in C, faster than a search
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _escape(match: re.Match) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:        # an undecodable byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """A message fit for one line of a report: no control character, valid UTF-8."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(_escape, text)


_INVALID = lazy("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`printable` for formats that escape line ends themselves (GitHub workflow commands):
    newline, carriage return and tab are left for them."""
    if _INVALID.search(text) is None:
        return text
    return _INVALID.sub(_escape, text)


def printable_path(name: str) -> str:
    """A file name fit for one line of a report, escaped so it maps back to one name."""
    if _UNPRINTABLE_PATH.search(name) is None:
        return name
    return _UNPRINTABLE_PATH.sub(_escape, name)


def no_command(line: str) -> str:
    """One line of a log that no CI runner reads as a workflow command (see the module's notes)."""
    if "##[" in line:
        line = line.replace("##[", "##\\[")
    stripped = line.lstrip()
    if stripped.startswith("::"):
        at = len(line) - len(stripped)
        line = line[:at] + "\\" + line[at:]
    return line


def no_commands(text: str) -> str:
    """`no_command` for each line of `text`."""
    if "::" not in text and "##[" not in text:
        return text
    return "\n".join(no_command(line) for line in text.split("\n"))


_CONTROL_BUT_TAB = lazy("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def terminal_text(text: str) -> str:
    """`text` with every control character but tab escaped (`\\x1b`, `\\x9d`, ...)."""
    if _CONTROL_BUT_TAB.search(text) is None:
        return text
    return _CONTROL_BUT_TAB.sub(_escape, text)
