"""JSON text -> the parser events the YAML loader consumes, with exact positions.

libyaml (YAML 1.1) rejects some valid JSON: a tab before the first `{` or
after the last `}`, surrogate-pair escapes (`"\\ud83d\\ude00"`, which Python's
`json.dumps` writes for every character outside the BMP), a key and its colon
on different lines. When libyaml fails on text that starts like JSON, the loader
retries with this strict JSON reader, so a valid JSON file always loads. It
also reads several top-level values in a row (`jq -c` output) as documents.
"""

from __future__ import annotations

import re
from typing import Any

from gpulint.load import events as ev
from ruamel.yaml.error import StreamMark

_WS_RE = re.compile(r"[ \t\n\r]*")
_STRING_RE = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_WORDS = ("true", "false", "null")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


class JSONSyntaxError(Exception):
    """Not valid JSON; the caller keeps the YAML parser's error instead."""


def looks_like_json(text: str) -> bool:
    stripped = text.lstrip(" \t\r\n\ufeff")
    return stripped[:1] in ("{", "[")


def looks_like_jsonc(text: str) -> bool:
    """Whether `text` starts like JSON once leading `//` and `/* */` comments are skipped."""
    pos = 0
    while True:
        pos = _WS_RE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith("\ufeff", pos):
            pos += 1
        elif text.startswith("//", pos):
            pos = _line_end(text, pos)
        elif text.startswith("/*", pos):
            stop = text.find("*/", pos + 2)
            if stop < 0:
                return False
            pos = stop + 2
        else:
            return text[pos:pos + 1] in ("{", "[")


class _Cursor:
    """Turns character offsets into marks (line/column) as the reader moves forward."""

    __slots__ = ("text", "line", "line_start", "counted")

    def __init__(self, text: str) -> None:
        self.text = text
        self.line = 0
        self.line_start = 0
        self.counted = 0

    def mark(self, index: int) -> StreamMark:
        newlines = self.text.count("\n", self.counted, index)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.counted, index) + 1
        self.counted = index
        return StreamMark("<json>", index, self.line, index - self.line_start)


def _string_value(token: str) -> str:
    import json

    value = json.loads(token)
    if _SURROGATE_RE.search(value):  # a lone surrogate escape: valid JSON, not encodable text
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def json_events(text: str) -> list[list[Any]]:
    """Node events of each top-level JSON value in `text`; raises JSONSyntaxError."""
    cursor = _Cursor(text)
    documents: list[list[Any]] = []
    events: list[Any] = []
    stack: list[str] = []            # "{" or "["
    expect = "value"                 # value, first-value, key, first-key, colon, next
    pos = _WS_RE.match(text, 0).end()  # type: ignore[union-attr]
    if text.startswith("\ufeff", pos):
        pos = _WS_RE.match(text, pos + 1).end()  # type: ignore[union-attr]
    end = len(text)
    while pos < end:
        char = text[pos]
        start = cursor.mark(pos)
        if expect in ("value", "first-value") or (expect in ("key", "first-key") and char == '"'):
            if char == "]" and expect == "first-value":
                stack.pop()
                events.append(ev.sequence_end(start, cursor.mark(pos + 1)))
                pos += 1
                expect = "next"
            elif char == "{" or char == "[":
                stack.append(char)
                make = ev.mapping_start if char == "{" else ev.sequence_start
                events.append(make(None, None, True, start, cursor.mark(pos + 1), True))
                pos += 1
                expect = "first-key" if char == "{" else "first-value"
            elif char == '"':
                match = _STRING_RE.match(text, pos)
                if match is None:
                    raise JSONSyntaxError("invalid string")
                value = _string_value(match.group(0))
                events.append(ev.scalar(None, None, (False, True), value, start, cursor.mark(match.end()), '"'))
                pos = match.end()
                expect = "colon" if expect in ("key", "first-key") else "next"
            else:
                match = _NUMBER_RE.match(text, pos)
                word = next((w for w in _WORDS if text.startswith(w, pos)), None)
                if match is not None:
                    token = match.group(0)
                elif word is not None:
                    token = word
                else:
                    raise JSONSyntaxError(f"unexpected {char!r}")
                events.append(ev.scalar(None, None, (True, False), token, start, cursor.mark(pos + len(token)), ""))
                pos += len(token)
                expect = "next"
        elif expect == "first-key" and char == "}":
            stack.pop()
            events.append(ev.mapping_end(start, cursor.mark(pos + 1)))
            pos += 1
            expect = "next"
        elif expect == "colon" and char == ":":
            pos += 1
            expect = "value"
        elif expect == "next" and stack and char == ",":
            pos += 1
            expect = "key" if stack[-1] == "{" else "value"
        elif expect == "next" and stack and char == ("}" if stack[-1] == "{" else "]"):
            stack.pop()
            make = ev.mapping_end if char == "}" else ev.sequence_end
            events.append(make(start, cursor.mark(pos + 1)))
            pos += 1
        else:
            raise JSONSyntaxError(f"unexpected {char!r}")
        if expect == "next" and not stack:  # a complete top-level value
            documents.append(events)
            events = []
            expect = "value"
        pos = _WS_RE.match(text, pos).end()  # type: ignore[union-attr]
    if stack or events or not documents:
        raise JSONSyntaxError("unexpected end of input")
    return documents


def json_error(text: str) -> tuple[int, int, str] | None:
    """Where `text` (which libyaml read) stops being JSON: (0-based line, 0-based column, reason).

    YAML accepts what JSON does not (trailing commas, comments, single quotes,
    unquoted keys); Kubernetes' decoders read a `.json` file as JSON and reject
    those, so for `.json` files they are reported.
    """
    import json

    try:
        json.loads(text)
    except RecursionError:
        return None  # nesting beyond Python's stack: the loader's depth limit reports it
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":
            try:
                json_events(text)  # several values in a row, each valid
                return None
            except JSONSyntaxError:
                pass
        return error.lineno - 1, error.colno - 1, error.msg
    return None


def strip_jsonc(text: str) -> tuple[str, int] | None:
    """JSON with comments (tsconfig.json, devcontainer.json, VS Code settings) as JSON:
    `//` and `/* */` comments and trailing commas become spaces, line breaks stay,
    so every position is kept. Returns (the text, offset of the first thing
    removed), or None when there is nothing to remove. Text inside strings is
    left alone (`"src/**/*.ts"`, `"https://x"`); one pass with `find`, linear on
    any input.
    """
    blanks: list[tuple[int, int]] = []
    comma = -1          # a comma that is trailing if only blanks and comments follow it up to `}`/`]`
    pos, end = 0, len(text)
    while pos < end:
        char = text[pos]
        if char == '"':
            match = _JSONC_STRING_RE.match(text, pos)
            pos = match.end() if match else pos + 1  # type: ignore[union-attr]
            comma = -1
        elif char == "/" and text.startswith("//", pos):
            stop = _line_end(text, pos)
            blanks.append((pos, stop))
            pos = stop
        elif char == "/" and text.startswith("/*", pos):
            stop = text.find("*/", pos + 2)
            stop = end if stop < 0 else stop + 2
            blanks.append((pos, stop))
            pos = stop
        elif char == ",":
            comma = pos
            pos += 1
        elif char in "}]":
            if comma >= 0:
                blanks.append((comma, comma + 1))
            comma = -1
            pos += 1
        elif char in " \t\r\n":
            pos = _WS_RE.match(text, pos).end()  # type: ignore[union-attr]
        else:
            comma = -1
            pos = max(_PLAIN_RE.match(text, pos).end(), pos + 1)  # type: ignore[union-attr]
    if not blanks:
        return None
    blanks.sort()
    out: list[str] = []
    last = 0
    for start, stop in blanks:
        out.append(text[last:start])
        out.append(_NOT_BREAK_RE.sub(" ", text[start:stop]))
        last = stop
    out.append(text[last:])
    return "".join(out), blanks[0][0]


# A string up to its closing quote, or (unterminated) up to the end of its line.
_JSONC_STRING_RE = re.compile(r'"(?:[^"\\\n\r]|\\.)*"?')
_NOT_BREAK_RE = re.compile(r"[^\r\n]")
# A run of characters none of which matters to comments and commas.
_PLAIN_RE = re.compile(r'[^"/,}\] \t\r\n]*')


def _line_end(text: str, pos: int) -> int:
    stops = [i for i in (text.find("\n", pos), text.find("\r", pos)) if i >= 0]
    return min(stops) if stops else len(text)
