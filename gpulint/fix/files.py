"""A file's text as the fix stage edits it, and written back in its own encoding.

The loader normalises text (a lone CR becomes LF, a byte-order mark inside the
text is dropped); edits placed on normalised text would shift on such a file,
so it is not fixed, and says why. Everything else round-trips byte for byte: the
byte-order mark and encoding are kept, CR LF line breaks are part of the text.
"""

from __future__ import annotations

import os
import tempfile

from gpulint.load.decode import BINARY_SNIFF, detect_encoding, normalise
from gpulint.record import record, set_field


class NotFixable(Exception):
    """The file cannot be edited in place (the reason is the message)."""


@record(eq=True, frozen=True, repr=True)
class Source:
    __slots__ = ("text", "encoding", "bom")
    text: str
    encoding: str
    bom: bytes

    def __init__(self, text: str, encoding: str, bom: bytes) -> None:
        set_field(self, "text", text)
        set_field(self, "encoding", encoding)
        set_field(self, "bom", bom)

    @classmethod
    def of(cls, data: bytes) -> "Source":
        encoding, skip = detect_encoding(data[:BINARY_SNIFF])
        try:
            text = data[skip:].decode(encoding)
        except UnicodeDecodeError:
            raise NotFixable(f"it is not valid {encoding}") from None
        if normalise(text) != text:
            raise NotFixable("it has lone CR line breaks or a byte-order mark inside the text")
        return cls(text, encoding, data[:skip])

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding)


def write_atomic(path: str, data: bytes) -> None:
    """Replace `path`'s content with `data` in one rename, keeping its permission bits."""
    folder = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(prefix=".gpulint-fix-", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
