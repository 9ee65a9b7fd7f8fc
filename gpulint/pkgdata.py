"""Files shipped inside the gpulint package (data/, schemas/).

Read straight from beside this module, as in every ordinary install;
importlib.resources (which costs a few milliseconds to import, and every scan
reads a data file) only when the package lives somewhere that has no files,
such as a zip archive.
"""

from __future__ import annotations

import os


def read_text(relative: str) -> str:
    """The text of `relative` (e.g. "data/gpu_images.yaml") in the gpulint package."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), *relative.split("/"))
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (FileNotFoundError, NotADirectoryError):
        from importlib.resources import files

        return files("gpulint").joinpath(relative).read_text(encoding="utf-8")
