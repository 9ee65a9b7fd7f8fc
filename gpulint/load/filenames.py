"""What a file's name says it is, for the stages that must not load a parser to ask."""

from __future__ import annotations


def is_dockerfile(name: str) -> bool:
    """Whether a file name (no directory) names a Dockerfile or Containerfile."""
    lower = name.lower()
    return (lower in ("dockerfile", "containerfile") or lower.endswith(".dockerfile")
            or lower.startswith(("dockerfile.", "containerfile.")))
