"""`json.dumps(value, indent=2, ensure_ascii=False)`, written piece by piece.

A report with a hundred thousand findings is a hundred megabytes of JSON; the
standard encoder builds all of it in memory (and with `indent` it runs in pure
Python). This writes each finding's text as it goes, with the same bytes: the
same separators, indentation, string escapes (the standard library's C
escaper) and number spellings. tests/test_report_stream.py compares the two.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, Callable, Iterable

INDENT = "  "


def dumps(value: Any, level: int = 0) -> str:
    """The text json.dumps(value, indent=2, ensure_ascii=False) gives, for a value at nesting `level`."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is int:  # (not bool, whose type is bool)
        return int.__repr__(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = ",\n" + INDENT * (level + 1)
        return ("{\n" + INDENT * (level + 1)
                + inner.join(encode_basestring(_key(k)) + ": " + dumps(v, level + 1) for k, v in value.items())
                + "\n" + INDENT * level + "}")
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        inner = ",\n" + INDENT * (level + 1)
        return ("[\n" + INDENT * (level + 1) + inner.join(dumps(v, level + 1) for v in value)
                + "\n" + INDENT * level + "]")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def items(values: Iterable[Any], level: int, emit: Callable[[str], Any]) -> None:
    """A list at nesting `level`, each item encoded and emitted as it comes (an iterator is fine)."""
    first = "[\n" + INDENT * (level + 1)
    head = first
    inner = ",\n" + INDENT * (level + 1)
    for item in values:
        emit(head + dumps(item, level + 1))
        head = inner
    emit("[]" if head is first else "\n" + INDENT * level + "]")


def _key(key: Any) -> str:
    """A mapping key as json.dumps writes it: strings as they are, other scalars as their JSON text."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (int, float)):  # bool is an int
        return dumps(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)
