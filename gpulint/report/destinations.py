"""Several reports from one scan: `-o FILE`, `-o FORMAT:FILE`, repeatable.

A scan of a large repository takes minutes; CI wants SARIF for code scanning,
annotations in the log and sometimes JSON for another tool. Like kube-linter's
and Checkov's repeatable outputs, each `-o` names one report:

- `-o FILE`: the `--format` report goes to FILE instead of stdout (as before);
- `-o FORMAT:FILE`: a FORMAT report goes to FILE (`-` is stdout), and stdout
  keeps the `--format` report unless some `-o` sends a report there.

A file whose name starts with a format and a colon is written as `./json:x`.
The same file twice, or two reports on stdout, is a usage error.
"""

from __future__ import annotations

import os

from gpulint.record import record, set_field
from gpulint.report import registry

STDOUT = "-"


class OutputError(ValueError):
    """A bad `-o` value; reported as a usage error."""


@record(eq=True, frozen=True)
class Target:
    """One report to write: its format and where."""
    __slots__ = ("format", "path")
    format: str
    path: str | None          # None: stdout

    def __init__(self, format: str, path: str | None) -> None:
        set_field(self, "format", format)
        set_field(self, "path", path)

    @property
    def to_stdout(self) -> bool:
        return self.path is None


def parse(value: str, default_format: str) -> Target:
    fmt, sep, rest = value.partition(":")
    if sep and fmt in registry.format_modules():
        if not rest:
            raise OutputError(f"-o {value}: no file after '{fmt}:' (use '{fmt}:-' for stdout)")
        return Target(fmt, None if rest == STDOUT else rest)
    if not value:
        raise OutputError("-o: empty file name")
    return Target(default_format, value)


def plan(values: list[str] | str | None, default_format: str) -> list[Target]:
    """The reports to write, in the order given; stdout's last, after the files."""
    if values is None:
        values = []
    elif isinstance(values, str):
        values = [values]
    targets = [parse(value, default_format) for value in values]
    bare = any(":" not in v or v.partition(":")[0] not in registry.format_modules() for v in values)
    if not bare and not any(t.to_stdout for t in targets):
        targets.append(Target(default_format, None))
    if sum(t.to_stdout for t in targets) > 1:
        raise OutputError("-o: only one report can go to stdout")
    seen: dict[str, str] = {}
    for target in targets:
        if target.path is None:
            continue
        key = os.path.realpath(target.path)
        if key in seen:
            raise OutputError(f"-o: {seen[key]} and {target.path} are the same file")
        seen[key] = target.path
    return sorted(targets, key=lambda t: t.to_stdout)
