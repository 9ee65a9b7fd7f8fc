"""Bytes -> text: byte-order marks, binary detection, errors placed by character.

Text is decoded leniently: an invalid byte sequence becomes U+FFFD and its
position is kept (the caller reports it as GPU000), so one stray byte in a
comment does not hide the rest of the file from the rules. Large inputs are
decoded block by block (`TextBlocks`) so that memory stays bounded.

Line breaks are made what every later stage counts (`normalise`): a lone CR
(old Mac line endings, or one stray CR) becomes LF, character for character,
so a CR-only file has the lines an editor shows in every finding; and a
byte-order mark at the start of a later line (`cat a.yaml b.yaml` of files
saved with one) is dropped, so the document after it reads as kubectl reads it.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
from typing import BinaryIO, Iterator

from gpulint.lazypattern import lazy

# How much of the start of a file is searched for NUL bytes to call it binary.
BINARY_SNIFF = 8192
# Inputs up to this size are read and decoded whole (the fast path); larger
# ones are decoded block by block and split into documents as they arrive.
WHOLE_MAX = 8 << 20
BLOCK_SIZE = 1 << 20

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# C0 controls that are not line breaks or tabs: binary data, whatever it decodes as.
_CONTROL_RE = lazy("[\x00-\x08\x0b\x0c\x0e-\x1f]")

_NAMES = {"utf-8": "UTF-8", "utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE",
          "utf-32-le": "UTF-32LE", "utf-32-be": "UTF-32BE"}


class BinaryInput(Exception):
    """The bytes are not text (NUL bytes that no text encoding explains)."""


class DecodeError(Exception):
    """An invalid byte sequence; `line`/`column` are 1-based, the column in characters."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class ReadError(Exception):
    """Reading the input failed part way (an OSError from the stream)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.reason = error.strerror or str(error)


def detect_encoding(head: bytes) -> tuple[str, int]:
    """(codec name, length of the byte-order mark) for a stream starting with `head`.

    A byte-order mark decides. Without one, the YAML 1.2 rule (§5.2) applies:
    an ASCII first character followed or preceded by NUL bytes means UTF-16 or
    UTF-32; a guess is kept only if the sniffed start decodes to mostly-ASCII
    text without control characters. Otherwise NUL bytes in the first 8 KiB
    mean binary.
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, len(bom)
    if b"\x00" not in head[:BINARY_SNIFF]:
        return "utf-8", 0
    guess = None
    if head[:3] == b"\x00\x00\x00" and head[3:4] not in (b"", b"\x00"):
        guess = "utf-32-be"
    elif head[1:4] == b"\x00\x00\x00" and head[:1] != b"\x00":
        guess = "utf-32-le"
    elif head[:1] == b"\x00" and head[1:2] not in (b"", b"\x00"):
        guess = "utf-16-be"
    elif head[1:2] == b"\x00" and head[:1] != b"\x00":
        guess = "utf-16-le"
    if guess is not None:
        unit = 4 if "32" in guess else 2
        sample = head[:BINARY_SNIFF - BINARY_SNIFF % unit]
        try:
            text = codecs.getincrementaldecoder(guess)().decode(sample, final=False)
        except UnicodeDecodeError:
            text = ""
        if text and _CONTROL_RE.search(text) is None and sum(c < "\x80" for c in text) * 2 > len(text):
            return guess, 0
    raise BinaryInput("binary file (NUL bytes)")


_LONE_CR_RE = lazy(r"\r(?!\n)")


def normalise(text: str, after_break: bool = False) -> str:
    """Lone CRs as LFs, byte-order marks at line starts dropped (see the module docstring).
    `after_break`: `text` continues a text whose last character was a line break."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        text = _LONE_CR_RE.sub("\n", text)
    if "\ufeff" in text:
        text = text.replace("\n\ufeff", "\n")
        if after_break and text.startswith("\ufeff"):
            text = text[1:]
    return text


def _position(prefix: str, line: int = 1, column: int = 1) -> tuple[int, int]:
    """Line and column just after `prefix`, starting from (line, column)."""
    newlines = prefix.count("\n")
    if newlines:
        return line + newlines, len(prefix) - prefix.rfind("\n")
    return line, column + len(prefix)


def _error(encoding: str, offset: int, reason: str, line: int, column: int) -> DecodeError:
    return DecodeError(f"invalid {_NAMES.get(encoding, encoding)} at byte {offset}: {reason}; "
                       "the invalid bytes were read as U+FFFD", line, column)


def decode_lenient(data: bytes) -> tuple[str, DecodeError | None]:
    """Decode a whole input; the first invalid sequence is returned, not raised."""
    encoding, skip = detect_encoding(data[:BINARY_SNIFF])
    body = data[skip:] if skip else data
    try:
        return normalise(body.decode(encoding)), None
    except UnicodeDecodeError as error:
        line, column = _position(normalise(body[: error.start].decode(encoding)))
        problem = _error(encoding, skip + error.start, error.reason, line, column)
        return normalise(body.decode(encoding, "replace")), problem


def decode(data: bytes) -> str:
    """Decode strictly: raises BinaryInput or DecodeError."""
    text, problem = decode_lenient(data)
    if problem is not None:
        raise problem
    return text


class TextBlocks:
    """The text of a binary stream, decoded one block at a time.

    Iterating yields text blocks; `error` holds the first invalid sequence
    once it has been read past. Construction reads the first block (or takes
    `head`, bytes already read), so a binary file raises BinaryInput right away.
    A failing read raises ReadError.
    """

    def __init__(self, stream: BinaryIO, block_size: int = 1 << 20, head: bytes = b"") -> None:
        self._stream = stream
        self._block_size = max(block_size, 1)
        self._first = head if len(head) >= BINARY_SNIFF else head + _read(stream, BINARY_SNIFF - len(head))
        self.encoding, skip = detect_encoding(self._first[:BINARY_SNIFF])
        self._offset = skip          # bytes of the stream handed to the decoder so far
        self._first = self._first[skip:]
        self.error: DecodeError | None = None

    def __iter__(self) -> Iterator[str]:
        held = ""            # a CR at the end of the last block: an LF may follow in the next
        after_break = False  # the text so far ends with a line break
        for piece in self._decoded():
            piece = held + piece
            held = ""
            if piece.endswith("\r"):
                piece, held = piece[:-1], "\r"
            text = normalise(piece, after_break)
            if text:
                after_break = text.endswith("\n")
                yield text
        if held:
            yield "\n"

    def _decoded(self) -> Iterator[str]:
        """The decoded blocks as they are, keeping `error` placed as `normalise` counts lines."""
        decoder = codecs.getincrementaldecoder(self.encoding)()
        line, column = 1, 1
        data = self._first
        self._first = b""
        carry = ""           # a CR ending the text counted so far, not counted yet (an LF may follow)
        after_break = False
        while True:
            final = not data
            if self.error is None:
                state = decoder.getstate()
                try:
                    text = decoder.decode(data, final)
                except UnicodeDecodeError as error:
                    # error.object is what the decoder held plus this block.
                    pending = len(state[0])
                    good = error.object[: error.start].decode(self.encoding, "replace")
                    at_line, at_column = _position(normalise(carry + good, after_break), line, column)
                    self.error = _error(self.encoding, self._offset - pending + error.start,
                                        error.reason, at_line, at_column)
                    decoder.setstate(state)
                    decoder.errors = "replace"
                    text = decoder.decode(data, final)
                else:
                    piece = carry + text
                    carry = "\r" if piece.endswith("\r") else ""
                    normal = normalise(piece[:-1] if carry else piece, after_break)
                    line, column = _position(normal, line, column)
                    after_break = bool(carry) or normal.endswith("\n") or (not normal and after_break)
            else:
                text = decoder.decode(data, final)
            self._offset += len(data)
            if text:
                yield text
            if final:
                return
            data = _read(self._stream, self._block_size)


class Text:
    """The text of one input: whole when small, a stream of blocks when large."""

    def __init__(self, stream: BinaryIO, whole_max: int | None = None, block_size: int | None = None) -> None:
        whole_max = WHOLE_MAX if whole_max is None else whole_max
        block_size = BLOCK_SIZE if block_size is None else block_size
        self._raw: bytes | None = None
        self._whole: str | None = None
        self._error: DecodeError | None = None
        self.blocks: TextBlocks | None = None
        size = _file_size(stream)
        # A large regular file streams from its first block; anything else
        # (pipes, stdin) is read up to the limit first to learn its size.
        head = None
        if size is None:
            head = _read(stream, whole_max + 1)
        elif size <= whole_max:
            # Asking for its size (plus one, to see it grew) rather than the limit:
            # a read allocates what it is asked for, 8 MiB per file otherwise.
            head = _read(stream, size + 1)
            if len(head) > size:
                head += _read(stream, whole_max + 1 - len(head))
        if head is not None and len(head) <= whole_max:
            self.encoding, _skip = detect_encoding(head[:BINARY_SNIFF])
            self._raw = head
        else:
            self.blocks = TextBlocks(stream, block_size, head=head or b"")
            self.encoding = self.blocks.encoding

    @classmethod
    def of(cls, data: bytes) -> Text:
        """The text of a small input whose bytes were read already (at most WHOLE_MAX)."""
        self = cls.__new__(cls)
        self._raw, self._whole, self._error, self.blocks = data, None, None, None
        self.encoding, _skip = detect_encoding(data[:BINARY_SNIFF])
        return self

    @property
    def data(self) -> bytes | None:
        """The bytes of a small input, until `whole` decodes them; None for a streamed one."""
        return self._raw

    @property
    def whole(self) -> str | None:
        """The decoded text of a small input; None for a streamed one."""
        if self._raw is not None:
            self._whole, self._error = decode_lenient(self._raw)
            self._raw = None
        return self._whole

    @property
    def error(self) -> DecodeError | None:
        """The first invalid byte sequence read so far."""
        return self.blocks.error if self.blocks is not None else self._error

    def may_contain(self, words: tuple[bytes, ...]) -> bool:
        """False when a small UTF-8 input certainly holds none of `words` (UTF-8 bytes)."""
        raw = self._raw
        if raw is None or self.encoding != "utf-8":
            return True
        for word in words:
            if word in raw:
                return True
        return False


def read_small_file(path: str | os.PathLike, limit: int | None = None) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes, read with plain system calls
    (a scan reads thousands of small files: a Python file object costs more than the
    reading); None for anything else, which is then read as a stream."""
    limit = WHOLE_MAX if limit is None else limit
    # Looked at before opening: opening a FIFO would wait for a writer, and closing it
    # again would make that writer's output fail before the stream path reads it.
    if not stat.S_ISREG(os.stat(path).st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks = []
        want = st.st_size + 1  # one more, to see it grew
        while want > 0:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        data = b"".join(chunks) if len(chunks) != 1 else chunks[0]
        return data if len(data) <= st.st_size else None
    finally:
        os.close(fd)


def _file_size(stream: BinaryIO) -> int | None:
    """Size of a regular file opened with open(); None for anything else."""
    if not isinstance(stream, io.BufferedReader):
        return None  # e.g. a SpooledTemporaryFile, whose fileno() would move it to disk
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _read(stream: BinaryIO, size: int) -> bytes:
    try:
        return stream.read(size)
    except OSError as error:
        raise ReadError(error) from None
