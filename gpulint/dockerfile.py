"""A small Dockerfile/Containerfile reader: instructions, stages and ENV pairs.

Only what rules need: logical instructions with their source lines (line
continuations joined, comments and the `escape` directive honoured), the stage
each belongs to, and ENV in both syntaxes (`ENV K V` and `ENV K=V K2="V 2"`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_DIRECTIVE_RE = re.compile(r"#\s*escape\s*=\s*(\S)", re.I)


@dataclass(frozen=True)
class Instruction:
    keyword: str            # upper case, e.g. "ENV"
    arguments: str          # the text after the keyword, continuations joined
    line: int               # 1-based first line
    end_line: int
    column: int             # 1-based column of the keyword
    stage: int              # 0-based index of the stage (FROM) it belongs to


@dataclass(frozen=True)
class EnvPair:
    key: str
    value: str
    instruction: Instruction


@dataclass
class Dockerfile:
    path: str
    text: str
    instructions: list[Instruction] = field(default_factory=list)

    @property
    def stage_count(self) -> int:
        return sum(1 for i in self.instructions if i.keyword == "FROM")

    def final_stage(self) -> list[Instruction]:
        last = self.stage_count - 1
        return [i for i in self.instructions if i.stage == max(last, 0)]

    def env(self, instructions: list[Instruction] | None = None) -> list[EnvPair]:
        out = []
        for ins in instructions if instructions is not None else self.instructions:
            if ins.keyword == "ENV":
                out.extend(EnvPair(k, v, ins) for k, v in parse_env(ins.arguments))
        return out


def parse(path: str, text: str) -> Dockerfile:
    lines = text.splitlines()
    escape = "\\"
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        match = _DIRECTIVE_RE.match(stripped)
        if match:
            escape = match.group(1)
    result = Dockerfile(path, text)
    stage = -1
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i
        column = len(raw) - len(raw.lstrip()) + 1
        parts = []
        current = raw.rstrip()
        while current.endswith(escape) and i + 1 < len(lines):
            parts.append(current[:-1])
            i += 1
            current = lines[i].rstrip()
            while current.strip().startswith("#") and i + 1 < len(lines):  # comments inside continuations
                i += 1
                current = lines[i].rstrip()
        parts.append(current)
        logical = " ".join(p.strip() for p in parts)
        keyword, _, arguments = logical.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        result.instructions.append(Instruction(keyword, arguments.strip(), start + 1, i + 1,
                                               column, max(stage, 0)))
        i += 1
    return result


def parse_env(arguments: str) -> list[tuple[str, str]]:
    """ENV pairs: `K V...` (legacy, value is the rest) or `K=V K2="v 2"`."""
    first = arguments.split(None, 1)
    if not first:
        return []
    if "=" not in first[0]:
        key = first[0]
        value = first[1] if len(first) > 1 else ""
        return [(key, _unquote(value.strip()))]
    try:
        words = shlex.split(arguments, posix=True)
    except ValueError:
        words = arguments.split()
    pairs = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep:
            pairs.append((key, value))
    return pairs


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
