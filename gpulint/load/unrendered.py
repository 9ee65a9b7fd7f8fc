"""A column-preserving stand-in for an unrendered template.

A chart's `templates/*.yaml` is Go-template text, not YAML: `{{ ... }}` actions
break the parser. The same goes for Go templates other programs render (an
operator's operand manifests, load-test configs) and for `${...}` templating
(Terraform `templatefile` with its `%{ for }` directives, envsubst). When such
a file is met outside a chart, gpulint reports it once (GPU011) and, best
effort, checks its literal text: lines holding only actions (`{{- if ... }}`,
`{{- toYaml . | nindent 8 }}`, `{{- end }}`; a comment may follow) become blank, and an action inside
a line (`image: {{ .Values.image }}`) becomes a same-length placeholder scalar
that still names it (`image: ___.Values.image___`).
`${...}` and `%{...}` are treated alike. Every other character keeps its line and column, so findings on the literal
text point at the right place; findings on a placeholder are dropped, since
the real value is unknown until the chart is rendered.
"""

from __future__ import annotations

import re
from typing import Iterator

# What of an action a placeholder keeps: characters valid in a plain scalar in
# block, flow and quoted context alike; the others become "_".
_UNSAFE_RE = re.compile(r"[^A-Za-z0-9._/-]")


_OPEN_RE = re.compile(r"\{[{%#]|[$%]\{")
# Go's and Jinja's delimiters: an opening pair and what closes it.
_CLOSE = {"{{": "}}", "{%": "%}", "{#": "#}"}
# Helm's own objects and functions: a Go template using none of them is rendered by another program.
_HELM_RE = re.compile(r"\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|\b(?:include|tpl|required|lookup)\b")

GO = "go"            # `{{ ... }}`: Go text/template (Helm or another program)
JINJA = "jinja"      # `{{ ... }}` with `{% ... %}`/`{# ... #}` or Jinja expressions: Ansible, Jinja2
DOLLAR = "dollar"    # `${...}`/`%{...}`: Terraform templatefile, envsubst


def actions(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each template action: Go's `{{ ... }}` (comments `{{/* */}}`
    included), Jinja's `{% ... %}` and `{# ... #}`, and `${...}`/`%{...}` with
    balanced braces on one line.

    Each `{{` ends at the first `}}` after it (`{{ "{{" }}` is one action), and
    so on for `{%` and `{#`. Plain `find` keeps this linear on hostile text (a
    regex with `.*?` is quadratic when thousands of `{{` have no `}}`).
    """
    pos = 0
    still_open = set(_CLOSE)  # openers that may still have a closing pair
    while True:
        match = _OPEN_RE.search(text, pos)
        if match is None:
            return
        start = match.start()
        opener = text[start:start + 2]
        if opener in _CLOSE:
            end = text.find(_CLOSE[opener], start + 2) if opener in still_open else -1
            if end < 0:
                still_open.discard(opener)  # no closing pair from here on: no later opener closes either
                pos = start + 2
                continue
            yield start, end + 2
            pos = end + 2
            continue
        end = _closing_brace(text, start + 2)
        if end < 0:
            pos = -end  # unclosed on its line: nothing later on the line is read (keeps this linear)
            continue
        yield start, end
        pos = end


def _closing_brace(text: str, pos: int) -> int:
    """End (exclusive) of the `}` closing a `${`/`%{` whose body starts at `pos`, on the
    same line; when there is none, minus the end of the line."""
    depth = 1
    line_end = text.find("\n", pos)
    if line_end < 0:
        line_end = len(text)
    for index in range(pos, line_end):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return -line_end


def has_actions(text: str) -> bool:
    return next(actions(text), None) is not None


def syntax(text: str) -> str | None:
    """JINJA or GO when `text` holds `{{ ... }}`/`{% ... %}` actions (see `_jinja`), else DOLLAR when it
    holds `${...}`/`%{...}`, else None."""
    kind = None
    go = jinja = 0
    for start, end in actions(text):
        opener = text[start:start + 2]
        if opener in ("{%", "{#"):
            return JINJA
        if opener == "{{":
            body = text[start + 2:end - 2]
            if _GO_BODY_RE.match(body):
                go += 1
            elif _JINJA_BODY_RE.search(body):
                jinja += 1
            kind = GO
        elif kind is None:
            kind = DOLLAR
    return JINJA if kind == GO and jinja > go else kind


# A Go action: a field or variable (`.Name`, `$x`), a keyword, or a function applied to one (`printf "%s" .X`).
_GO_BODY_RE = re.compile(r"-?\s*(?:[.$(]|/\*|(?:if|else|end|range|with|define|template|block|break|continue)\b"
                         r"|[A-Za-z_]\w*\s+[^|(]*[.$])")
# A Jinja expression: a bare name (`image`, `item.name`, `item['x']`), a filter (`| default('x')`),
# a call with parentheses or a single-quoted string; none of these is how Go writes an action.
_JINJA_BODY_RE = re.compile(r"\A-?\s*[A-Za-z_]\w*(?:\.\w+|\[[^\]]*\])*\s*(?:\||-?\s*\Z)|\w\(|'")


def uses_helm(text: str) -> bool:
    """Whether a `{{ ... }}` action of `text` uses Helm's objects or functions (`.Values`, `include`, ...)."""
    for start, end in actions(text):
        if text.startswith("{{", start) and _HELM_RE.search(text, start, end):
            return True
    return False


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
