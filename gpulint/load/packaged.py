"""Files shipped inside gpulint's packages (knowledge data, schemas), read as text.

importlib.resources would do, but importing it brings zipfile, tempfile, shutil,
bz2 and lzma along: 54 million instructions counted by valgrind, more than
importing ruamel.yaml itself, on every scan's start-up. A module's loader reads
its package's files just as well (`get_data` is what pkgutil.get_data calls, and
it works inside a zip archive too).

The shipped YAML data is read on most scans' start (the first finding asks for the
system components and GPU images): `read_yaml_mapping` takes its data from
`packageddata.py`, where scripts/gen_precompiled.py wrote it as JSON with the text
it was read from, when the file's text is still that text (parsing the two files
as YAML took 16 million instructions, 4 % of a one-file scan; `json` is loaded
anyway).
"""

from __future__ import annotations

import os
import sys
from typing import Any


def read_text(package: str, relative: str) -> str:
    """The UTF-8 text of `relative` (slash-separated) inside the imported `package`."""
    spec = sys.modules[package].__spec__
    folder = os.path.dirname(spec.origin)
    return spec.loader.get_data(os.path.join(folder, *relative.split("/"))).decode("utf-8")


def read_yaml_mapping(package: str, relative: str) -> dict | None:
    """The data of the first document of a shipped YAML file that is a mapping (None: none is)."""
    text = read_text(package, relative)
    from gpulint.load import packageddata

    known = packageddata.DATA.get((package, relative))
    if known is not None and known[0] == text:
        import json

        return json.loads(known[1])
    return parse_yaml_mapping(text)


def parse_yaml_mapping(text: str) -> dict | None:
    """The data of the first document of `text` that is a mapping (None: none is)."""
    from gpulint.load.yamlload import Document, load_documents

    for doc in load_documents(text):
        if isinstance(doc, Document) and isinstance(doc.data, dict):
            return doc.data
    return None


# The shipped YAML files read_yaml_mapping serves (scripts/gen_precompiled.py writes their data).
SHIPPED_YAML = (("gpulint.knowledge", "data/gpu_images.yaml"), ("gpulint.knowledge", "data/system_components.yaml"))
