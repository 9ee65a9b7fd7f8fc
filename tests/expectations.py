"""Expectations written in fixtures.

- `# expect: GPU003` on the offending line: a finding of that rule on that line,
  at the line's first column that is not blank or a `- ` list marker.
- `# expect: GPU003@44`: the same at an explicit column; several codes are
  separated by commas.
- `# expect-suppressed: GPU006`: the same for a finding that must be reported
  as suppressed (e.g. a system component).
- A sidecar `<file>.expect` (for JSON, or lines that cannot hold a comment)
  lists `LINE:COL RULE` or `LINE:COL RULE suppressed`, one per line.
- `# fixture-args: --select GPU105` in the first lines: extra scan arguments.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

_MARK_RE = re.compile(r"#\s*expect(-suppressed)?:\s*([A-Z0-9@, ]+)")
_ARGS_RE = re.compile(r"#\s*fixture-args:\s*(.*)$")


@dataclass
class Expected:
    active: list[tuple[str, int, int]] = field(default_factory=list)
    suppressed: list[tuple[str, int, int]] = field(default_factory=list)
    args: list[str] = field(default_factory=list)


def default_column(line: str) -> int:
    stripped = line.lstrip(" \t")
    column = len(line) - len(stripped) + 1
    while stripped.startswith("- "):
        rest = stripped[2:].lstrip(" ")
        column += len(stripped) - len(rest)
        stripped = rest
    return column


def read(path: Path) -> Expected:
    expected = Expected()
    text = path.read_bytes().decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        if number <= 5:
            args = _ARGS_RE.search(line)
            if args:
                expected.args.extend(shlex.split(args.group(1)))
        for match in _MARK_RE.finditer(line):
            target = expected.suppressed if match.group(1) else expected.active
            for code in match.group(2).split(","):
                code = code.strip()
                if not code:
                    continue
                rule, _, col = code.partition("@")
                target.append((rule, number, int(col) if col else default_column(line)))
    sidecar = path.with_name(path.name + ".expect")
    if sidecar.exists():
        for line in sidecar.read_text().splitlines():
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            where, rule = parts[0], parts[1]
            line_no, _, col = where.partition(":")
            target = expected.suppressed if parts[2:3] == ["suppressed"] else expected.active
            target.append((rule, int(line_no), int(col)))
    expected.active.sort()
    expected.suppressed.sort()
    return expected
