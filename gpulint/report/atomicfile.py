"""Writing reports: atomically, so a crash never leaves half a SARIF/JSON file."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from typing import IO, Iterator


def write_atomic(path: str, text: str) -> None:
    with open_atomic(path) as handle:
        handle.write(text)


@contextmanager
def open_atomic(path: str) -> Iterator[IO[str]]:
    """A text file that replaces `path` when the block ends without an exception (else is removed).

    A path that exists and is not a regular file (/dev/null, /dev/stdout, a pipe) is
    written in place: replacing it would swap a device for a file."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = True   # does not exist (yet): made atomically
    if not regular:
        with open(path, "w", encoding="utf-8", newline="\n") as direct:
            yield direct
        return
    import tempfile  # (brings shutil, bz2, lzma: not for a report to /dev/null or a pipe)

    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".gpulint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
