"""Files of a chart read with edited contents: `--fix` renders a chart again with its
values file as a fix would leave it, before anything is written (gpulint/cli/fixcmd.py).

The edits are keyed by real path and live in a context variable, so a render in
another thread of the scan (which sets none) reads the files as they are.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar
from typing import Iterator

_EDITED: ContextVar[dict[str, bytes]] = ContextVar("gpulint_edited_files", default={})


def edited(path: "os.PathLike[str] | str") -> bytes | None:
    """The edited bytes of the file at `path`, or None to read it as it is."""
    files = _EDITED.get()
    return files.get(os.path.realpath(path)) if files else None


@contextlib.contextmanager
def editing(files: dict[str, bytes]) -> Iterator[None]:
    """Within this block, the files (real paths) read as the given bytes."""
    token = _EDITED.set({os.path.realpath(path): data for path, data in files.items()})
    try:
        yield
    finally:
        _EDITED.reset(token)
