"""A private copy of a chart for `helm template`: nothing outside the repository can be read.

Helm follows symbolic links in a chart (templates, `charts/`, files read with
`.Files.Get`). The copy keeps a link only when its target, resolved, stays inside
the repository (it is copied as the file or directory it points at); a link out
of the repository is left out and named, never followed. Only regular files and
directories are copied, so a named pipe or device in the tree cannot stall Helm.

The copy is digested as it is made (names, kinds and bytes, in order): two charts
with the same digest render the same, so a scan renders them once (helm.py).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from gpulint.record import record
from gpulint.render.boundary import inside
from gpulint.render.overlay import edited
from gpulint.render.tools import real_path


@record(eq=True, repr=True)
class Copied:
    __slots__ = ("root", "outside", "special", "digest")
    root: Path                                          # the copy of the chart directory
    outside: list[str]                                  # links left out, relative to the chart
    special: list[str]                                  # named pipes, devices, sockets left out, likewise
    # What was copied: every directory and file name (relative to the chart) and file's bytes, in order.
    digest: "hashlib._Hash"

    def __init__(self, root: Path, outside: list[str] | None = None, special: list[str] | None = None,
                 digest: "hashlib._Hash | None" = None) -> None:
        self.root = root
        self.outside = [] if outside is None else outside
        self.special = [] if special is None else special
        self.digest = hashlib.sha256() if digest is None else digest


def copy_chart(chart: Path, repository: Path, into: Path) -> Copied:
    """Copy `chart` to `into/<its name>`, resolving links that stay inside `repository`."""
    source = real_path(chart)
    result = Copied(into / (source.name or "chart"))
    _copy_dir(source, result.root, "", repository, {source}, result)
    for shown in result.outside:
        result.digest.update(b"o" + shown.encode("utf-8", "surrogateescape") + b"\0")
    for shown in result.special:
        result.digest.update(b"s" + shown.encode("utf-8", "surrogateescape") + b"\0")
    return result


def _copy_dir(source: Path, target: Path, rel: str, repository: Path, ancestors: set[Path],
              result: Copied) -> None:
    target.mkdir(parents=True, exist_ok=True)
    try:
        names = sorted(os.listdir(source))
    except OSError:
        return
    for name in names:
        path = source / name
        shown = f"{rel}{name}"
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            resolved = real_path(path)
            if not inside(resolved, repository):
                result.outside.append(shown)
                continue
            try:
                info = os.stat(resolved)
            except OSError:
                continue                                  # a dangling link: Helm would not read it either
            path = resolved
        if stat.S_ISDIR(info.st_mode):
            real = real_path(path)
            if real in ancestors:
                continue                                  # a link back up the tree: copied once
            result.digest.update(b"d" + shown.encode("utf-8", "surrogateescape") + b"\0")
            _copy_dir(real, target / name, shown + "/", repository, ancestors | {real}, result)
        elif stat.S_ISREG(info.st_mode):
            try:
                data = edited(path)   # a values file as a fix under test leaves it
                if data is None:
                    with open(path, "rb") as handle:
                        data = handle.read()
                (target / name).write_bytes(data)
            except OSError:
                continue
            result.digest.update(b"f%d:" % len(data) + shown.encode("utf-8", "surrogateescape") + b"\0")
            result.digest.update(data)
        else:
            result.special.append(shown)                  # opening a named pipe would wait for a writer
