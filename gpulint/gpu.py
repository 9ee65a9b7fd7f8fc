"""Shared GPU facts the rules rest on (POLICY.md §2 and §5).

Kept in one module so that rules agree on what a GPU request, a hidden GPU and
a GPU node look like; the configurable lists are defaults a config can extend.
"""

from __future__ import annotations

import re

VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"

# NVIDIA_VISIBLE_DEVICES outcomes (nvidia-container-toolkit).
HIDDEN_VOID = "void"      # void, empty: nothing injected, like plain runc
HIDDEN_NONE = "none"      # no GPU, but driver libraries and capabilities are injected
GRANTS = "grants"         # all, indices, UUIDs, MIG ids, G:M, CDI names, anything else

_UUID_RE = re.compile(r"(?:MIG-)?GPU-[0-9a-fA-F-]+(?:/\d+/\d+)?\Z|MIG-[0-9a-fA-F-]+\Z")


def classify_visible_devices(value: object) -> str:
    """What NVIDIA_VISIBLE_DEVICES=value does when a container is created.

    The value is a comma separated, trimmed list; any `void` token makes the
    whole value void, and an empty value injects nothing.
    """
    text = "" if value is None else str(value)
    tokens = [t.strip() for t in text.split(",")]
    tokens = [t for t in tokens if t]
    if not tokens or any(t == "void" for t in tokens):
        return HIDDEN_VOID
    if all(t == "none" for t in tokens):
        return HIDDEN_NONE
    return GRANTS


def describe_devices(value: object) -> str:
    """A short human description of a granting value, for messages."""
    text = str(value).strip()
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if "all" in tokens:
        return "every GPU of the node"
    if any("=" in t for t in tokens):
        return "GPUs named through CDI"
    if any(_UUID_RE.match(t) for t in tokens):
        return "GPUs or MIG devices chosen by UUID"
    if all(t.isdigit() or re.fullmatch(r"\d+:\d+", t) for t in tokens):
        return "GPUs chosen by index"
    return "GPUs"
