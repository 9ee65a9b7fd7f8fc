"""Files shipped inside gpulint's packages (knowledge data, schemas), read as text.

importlib.resources would do, but importing it brings zipfile, tempfile, shutil,
bz2 and lzma along: 54 million instructions counted by valgrind, more than
importing ruamel.yaml itself, on every scan's start-up. A module's loader reads
its package's files just as well (`get_data` is what pkgutil.get_data calls, and
it works inside a zip archive too).
"""

from __future__ import annotations

import os
import sys


def read_text(package: str, relative: str) -> str:
    """The UTF-8 text of `relative` (slash-separated) inside the imported `package`."""
    spec = sys.modules[package].__spec__
    folder = os.path.dirname(spec.origin)
    return spec.loader.get_data(os.path.join(folder, *relative.split("/"))).decode("utf-8")
