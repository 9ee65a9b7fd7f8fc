"""Kubernetes' `$(NAME)` expansion of literal env values.

The kubelet expands `$(NAME)` in an `env` value with the variables defined
before that entry (the container's `envFrom` variables, then the earlier `env`
entries, a later definition overriding an earlier one); `$$` is a literal `$`,
and a reference to a variable not defined so far stays as written. So
`NVIDIA_VISIBLE_DEVICES: $(HIDE)` after `HIDE: void` hides every GPU, and
after `GPUS: all` exposes them all: rules judge the expanded value.
"""

from __future__ import annotations

import re

from gpulint.lazypattern import lazy
from gpulint.model.workload import Container, EnvVar

# `$$`, or `$(` up to the next `)`: what the kubelet's expansion reads as a reference.
_REFERENCE_RE = lazy(r"\$\$|\$\(([^)]*)\)")
_UNKNOWN = None


def literal_value(var: EnvVar) -> str:
    """The literal value as the API server stores it (a missing value is empty)."""
    value = var.value
    return value if isinstance(value, str) else ("" if value is None else str(value))


def expanded_value(container: Container, var: EnvVar) -> str | None:
    """`var`'s literal value after `$(NAME)` expansion, as the container sees it.

    None when it references a variable whose value the manifest does not show
    (set through valueFrom or envFrom). `var` must be one of `container.env`.
    """
    text = literal_value(var)
    if "$" not in text:
        return text
    # Any name with one of these prefixes may come from an envFrom source.
    prefixes = tuple(item.prefix for item in container.env_from if item.name)
    defined: dict[str, str | None] = {}
    for entry in container.env:
        if entry is var:
            break
        if entry.value_from is not None:
            defined[entry.name] = _UNKNOWN
        else:
            previous = literal_value(entry)
            defined[entry.name] = _expand(previous, defined, prefixes) if "$" in previous else previous
    return _expand(text, defined, prefixes)


def _expand(text: str, defined: dict[str, str | None], prefixes: tuple[str, ...]) -> str | None:
    unknown = False

    def replace(match: re.Match) -> str:
        nonlocal unknown
        name = match.group(1)
        if name is None:
            return "$"  # `$$`
        if name in defined:
            value = defined[name]
            if value is None:
                unknown = True
                return match.group(0)
            return value
        if name.startswith(prefixes):
            unknown = True  # an envFrom source may define it
        return match.group(0)

    result = _REFERENCE_RE.sub(replace, text)
    return None if unknown else result
