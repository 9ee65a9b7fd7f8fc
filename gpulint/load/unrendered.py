"""A column-preserving stand-in for an unrendered Helm template.

A chart's `templates/*.yaml` is Go-template text, not YAML: `{{ ... }}` actions
break the parser. When such a file is met outside its chart (copied alone, or
linted file by file), gpulint still reports it as GPU000 and, best effort,
checks its literal text: lines holding only actions (`{{- if ... }}`,
`{{- toYaml . | nindent 8 }}`, `{{- end }}`; a comment may follow) become blank, and an action inside
a line (`image: {{ .Values.image }}`) becomes a same-length placeholder scalar
that still names it (`image: ___.Values.image___`).
Every other character keeps its line and column, so findings on the literal
text point at the right place; findings on a placeholder are dropped, since
the real value is unknown until the chart is rendered.
"""

from __future__ import annotations

import re
from typing import Iterator

# What of an action a placeholder keeps: characters valid in a plain scalar in
# block, flow and quoted context alike; the others become "_".
_UNSAFE_RE = re.compile(r"[^A-Za-z0-9._/-]")


def actions(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each Go template action `{{ ... }}`, comments `{{/* */}}` included.

    Each `{{` ends at the first `}}` after it (`{{ "{{" }}` is one action).
    Plain `find` keeps this linear on hostile text (a regex with `.*?` is
    quadratic when thousands of `{{` have no `}}`).
    """
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            return
        end = text.find("}}", start + 2)
        if end < 0:
            return
        yield start, end + 2
        pos = end + 2


def has_actions(text: str) -> bool:
    return next(actions(text), None) is not None


def mask(text: str) -> tuple[str, list[tuple[int, int, int]]]:
    """(masked text, placeholders as (0-based line, 0-based start column, end column))."""
    out: list[str] = []
    placeholders: list[tuple[int, int, int]] = []
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    # Per line, the column ranges actions cover (an action may span lines).
    covered: dict[int, list[tuple[int, int, bool]]] = {}
    number = 0
    for action_start, action_end in actions(text):
        while starts[number + 1] <= action_start:
            number += 1
        first = number
        while starts[number + 1] <= action_end - 1:
            number += 1
        for ln in range(first, number + 1):
            begin = max(action_start, starts[ln]) - starts[ln]
            end = min(action_end, starts[ln + 1] - 1) - starts[ln]
            covered.setdefault(ln, []).append((begin, end, ln > first))
    for ln, line in enumerate(lines):
        ranges = covered.get(ln)
        if not ranges:
            out.append(line)
            continue
        chars = list(line)
        for begin, end, continued in ranges:
            chars[begin:end] = " " * (end - begin)
        rest = "".join(chars).strip()
        if not rest or rest.startswith("#"):
            # Only actions (and a comment): the line renders to YAML that cannot be seen here.
            out.append("".join(chars).rstrip())
            continue
        for begin, end, continued in ranges:
            if not continued:  # the rest of a multi-line action stays blank
                chars[begin:end] = _UNSAFE_RE.sub("_", line[begin:end])
                placeholders.append((ln, begin, end))
        out.append("".join(chars))
    return "\n".join(out), placeholders
