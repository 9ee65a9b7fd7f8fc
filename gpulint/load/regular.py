"""Reading a file of the scanned tree only when it is a regular file, and only up to a size.

Opening a named pipe waits for a writer (forever, in a tree someone else made),
and a device or socket is no file at all: the kind is looked at before opening,
the file is opened without waiting (O_NONBLOCK), and looked at again on the open
descriptor, so that a name swapped in between changes nothing.
"""

from __future__ import annotations

import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegular(OSError):
    """A FIFO, device, socket or directory where a file was expected."""


class TooLarge(OSError):
    """A file larger than the limit it was read with (never read)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes, more than the limit of {limit} bytes (--max-file-size {limit >> 20} MiB); "
                         "not read")
        self.size = size
        self.limit = limit


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def check_regular(path: str | os.PathLike, limit: int | None = None) -> os.stat_result:
    """os.stat of `path` (symlinks followed), raising NotRegular or TooLarge."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise NotRegular(f"{kind_of(info.st_mode)}, not a regular file")
    if limit is not None and info.st_size > limit:
        raise TooLarge(info.st_size, limit)
    return info


def check_size(path: str | os.PathLike, limit: int) -> None:
    """TooLarge when `path` is a regular file larger than `limit` (a named pipe the user gave
    on the command line, `<(kubectl get ...)`, is read as the stream it is)."""
    info = os.stat(path)
    if stat.S_ISREG(info.st_mode) and info.st_size > limit:
        raise TooLarge(info.st_size, limit)


def read_regular(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of the regular file `path` (at most `limit`); NotRegular, TooLarge or OSError else."""
    check_regular(path, limit)
    fd = os.open(path, _FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{kind_of(info.st_mode)}, not a regular file")
        if limit is not None and info.st_size > limit:
            raise TooLarge(info.st_size, limit)
        chunks = []
        left = limit + 1 if limit is not None else -1
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            if left > 0:
                left -= len(chunk)
        data = b"".join(chunks)
        if limit is not None and len(data) > limit:     # grew while read
            raise TooLarge(len(data), limit)
        return data
    finally:
        os.close(fd)
