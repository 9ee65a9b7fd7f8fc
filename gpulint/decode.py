"""Bytes -> text, honouring byte-order marks, with errors placed by line."""

from __future__ import annotations

import codecs

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class BinaryInput(Exception):
    """The bytes are not text (NUL bytes without a UTF-16/32 byte-order mark)."""


class DecodeError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def decode(data: bytes) -> str:
    """Decode manifest bytes; UTF-8 unless a byte-order mark says otherwise."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding = name
            data = data[len(bom):]
            break
    else:
        if b"\x00" in data[:8192]:
            raise BinaryInput("binary file (NUL bytes)")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        raise DecodeError(
            f"invalid {encoding.upper()} at byte {error.start}: {error.reason}", line, column
        ) from None
