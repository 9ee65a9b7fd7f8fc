"""Whether text that does not parse still shows a sign of being a Kubernetes object.

A file that fails to parse is a broken manifest only if it looks like one: a
`tsconfig.json` with comments, a CI config, a Go template for Markdown are not
manifests, and their syntax is none of gpulint's business. The sign is the
pair every Kubernetes object starts with, `apiVersion` and `kind`, as keys of
a document's top level: at column 0 in block YAML (quoted or not, a Helm
template's `apiVersion: {{ ... }}` included), anywhere in text that starts
like JSON or a flow mapping (where the top level cannot be told from the rest
once the text is broken, and where the two words rarely occur otherwise).
"""

from __future__ import annotations

import re

_BLOCK_KEY = r"^[\"']?{word}[\"']?[ \t]*:"
_FLOW_KEY = r"[\"']?\b{word}[\"']?\s*:"
_BLOCK = tuple(re.compile(_BLOCK_KEY.format(word=word), re.M) for word in ("apiVersion", "kind"))
_FLOW = tuple(re.compile(_FLOW_KEY.format(word=word)) for word in ("apiVersion", "kind"))


def looks_like_kubernetes(text: str) -> bool:
    """Whether `text` (one document, or a whole file) has `apiVersion` and `kind` keys at its top level."""
    if "apiVersion" not in text or "kind" not in text:
        return False
    start = text.lstrip(" \t\r\n\ufeff")[:1]
    patterns = _FLOW if start in ("{", "[") else _BLOCK
    return all(pattern.search(text) is not None for pattern in patterns)
