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
    out: list[str] = []
    _encode(value, level, out.append)
    return "".join(out)


def _encode(value: Any, level: int, emit: Callable[[str], Any]) -> None:
    if isinstance(value, str):
        emit(encode_basestring(value))
    elif value is None:
        emit("null")
    elif value is True:
        emit("true")
    elif value is False:
        emit("false")
    elif isinstance(value, int):
        emit(int.__repr__(value))
    elif isinstance(value, float):
        emit(_float(value))
    elif isinstance(value, dict):
        if not value:
            emit("{}")
            return
        inner = "\n" + INDENT * (level + 1)
        emit("{")
        first = True
        for key, item in value.items():
            emit(inner if first else "," + inner)
            first = False
            emit(encode_basestring(_key(key)))
            emit(": ")
            _encode(item, level + 1, emit)
        emit("\n" + INDENT * level + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            emit("[]")
            return
        items(value, level, emit)
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def items(values: Iterable[Any], level: int, emit: Callable[[str], Any]) -> None:
    """A non-empty list at nesting `level`, its items encoded as they come (an iterator is fine)."""
    inner = "\n" + INDENT * (level + 1)
    emit("[")
    first = True
    for item in values:
        emit(inner if first else "," + inner)
        first = False
        _encode(item, level + 1, emit)
    emit("\n" + INDENT * level + "]")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return _float(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)
