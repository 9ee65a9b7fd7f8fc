"""A small Dockerfile/Containerfile reader: instructions, stages and ENV values.

Only what rules need, read the way BuildKit reads it: logical instructions with
the position of every character (line continuations joined, comment and empty
lines inside continuations dropped, the `escape` directive honoured, heredoc
bodies skipped), the stage each belongs to and the stage it builds on, and ENV
in both syntaxes (`ENV K V` and `ENV K=V K2="v 2"`) with quotes removed and
`$VAR`/`${VAR}` expanded from earlier ARG defaults and ENV values. Build
arguments given on the command line are unknown; their defaults are used, as a
plain `docker build` would.
"""

from __future__ import annotations

import re

from gpulint.record import record, set_field

_DIRECTIVE_RE = re.compile(r"#\s*([a-zA-Z][a-zA-Z0-9_-]*)\s*=\s*(\S+)\s*$")
_HEREDOC_RE = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_HEREDOC_KEYWORDS = frozenset({"RUN", "COPY", "ADD"})
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@record(eq=True, frozen=True, compare=("keyword", "arguments", "line", "end_line", "column", "stage"))
class Instruction:
    __slots__ = ("keyword", "arguments", "line", "end_line", "column", "stage", "positions")
    keyword: str            # upper case, e.g. "ENV"
    arguments: str          # the text after the keyword, continuations joined
    line: int               # 1-based first line
    end_line: int
    column: int             # 1-based column of the keyword
    stage: int              # 0-based index of the stage (FROM) it belongs to; -1 before the first FROM
    positions: tuple        # (line, column) of each char of arguments; not compared

    def __init__(self, keyword: str, arguments: str, line: int, end_line: int, column: int, stage: int,
                 positions: tuple = ()) -> None:
        set_field(self, "keyword", keyword)
        set_field(self, "arguments", arguments)
        set_field(self, "line", line)
        set_field(self, "end_line", end_line)
        set_field(self, "column", column)
        set_field(self, "stage", stage)
        set_field(self, "positions", positions)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of character `offset` of `arguments` (clamped to its ends)."""
        if not self.positions:
            return self.line, self.column
        if offset >= len(self.positions):
            line, column = self.positions[-1]
            return line, column + 1 + offset - len(self.positions)
        return self.positions[max(offset, 0)]


@record(eq=True, frozen=True)
class EnvPair:
    __slots__ = ("key", "value", "instruction", "start", "end")
    key: str
    value: str              # quotes removed, variables expanded
    instruction: Instruction
    start: int              # offset of the key in instruction.arguments
    end: int                # offset just past the value

    def __init__(self, key: str, value: str, instruction: Instruction, start: int = 0, end: int = 0) -> None:
        set_field(self, "key", key)
        set_field(self, "value", value)
        set_field(self, "instruction", instruction)
        set_field(self, "start", start)
        set_field(self, "end", end)

    @property
    def span(self) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of `KEY=value`, end column exclusive."""
        line, column = self.instruction.position(self.start)
        end_line, end_column = self.instruction.position(max(self.end - 1, self.start))
        return line, column, end_line, end_column + 1


@record(eq=True, frozen=True)
class Stage:
    __slots__ = ("index", "name", "base", "parent", "instruction")
    index: int
    name: str | None        # `AS name`
    base: str               # the image (or stage) it is built FROM, variables expanded
    parent: int | None      # index of the earlier stage it builds on, None for an image
    instruction: Instruction

    def __init__(self, index: int, name: str | None, base: str, parent: int | None,
                 instruction: Instruction) -> None:
        set_field(self, "index", index)
        set_field(self, "name", name)
        set_field(self, "base", base)
        set_field(self, "parent", parent)
        set_field(self, "instruction", instruction)


@record(eq=True)
class Dockerfile:
    __slots__ = ("path", "text", "instructions", "stages")
    path: str
    text: str
    instructions: list[Instruction]
    stages: list[Stage]

    def __init__(self, path: str, text: str, instructions: list[Instruction] | None = None,
                 stages: list[Stage] | None = None) -> None:
        self.path = path
        self.text = text
        self.instructions = [] if instructions is None else instructions
        self.stages = [] if stages is None else stages

    @property
    def stage_count(self) -> int:
        return len(self.stages)

    def final_stage(self) -> list[Instruction]:
        last = self.stage_count - 1
        return [i for i in self.instructions if i.stage == max(last, 0)]

    def env(self, instructions: list[Instruction] | None = None) -> list[EnvPair]:
        """ENV pairs of `instructions` (default: all), quotes removed; variables are expanded
        without ARG/ENV context (to ""). `effective_env` gives what a build really sets."""
        out = []
        for ins in instructions if instructions is not None else self.instructions:
            if ins.keyword == "ENV":
                out.extend(parse_env_pairs(ins, {}))
        return out

    def effective_env(self, stage: int | None = None) -> dict[str, EnvPair]:
        """The ENV in effect at the end of `stage` (default: the final stage, i.e. the built image).

        Follows `FROM <earlier stage>` chains, so a variable set in a stage the
        final stage builds on counts; a stage the final one does not build on
        does not. Each name maps to the assignment that is in effect.
        """
        if not self.stages:
            return {}
        index = len(self.stages) - 1 if stage is None else stage
        chain: list[int] = []
        while index is not None and index not in chain:
            chain.append(index)
            index = self.stages[index].parent
        global_args = self._args_of(-1, {}, {})
        env: dict[str, EnvPair] = {}
        for number in reversed(chain):
            args: dict[str, str] = {}
            for ins in self.instructions:
                if ins.stage != number:
                    continue
                if ins.keyword == "ARG":
                    args.update(_arg_values(ins.arguments, global_args, {**args, **_values(env)}))
                elif ins.keyword == "ENV":
                    for pair in parse_env_pairs(ins, {**args, **_values(env)}):
                        env[pair.key] = pair
        return env

    def _args_of(self, stage: int, inherited: dict[str, str], env: dict[str, str]) -> dict[str, str]:
        args: dict[str, str] = {}
        for ins in self.instructions:
            if ins.stage == stage and ins.keyword == "ARG":
                args.update(_arg_values(ins.arguments, inherited, {**args, **env}))
        return args


def _values(env: dict[str, EnvPair]) -> dict[str, str]:
    return {k: p.value for k, p in env.items()}


def _arg_values(arguments: str, inherited: dict[str, str], scope: dict[str, str]) -> dict[str, str]:
    """`ARG a=1 b` -> {"a": "1", "b": <global default or "">}."""
    out: dict[str, str] = {}
    for word, _start, _end in split_words(arguments):
        name, sep, default = word.partition("=")
        if not _NAME_RE.fullmatch(name):
            continue
        if sep:
            out[name] = expand(default, {**scope, **out})
        else:
            out[name] = inherited.get(name, "")
    return out


# --- reading -------------------------------------------------------------------


def parse(path: str, text: str) -> Dockerfile:
    lines = text.splitlines()
    escape = _escape_directive(lines)
    result = Dockerfile(path, text)
    stage = -1
    global_args: dict[str, str] = {}
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i
        chars: list[str] = []
        positions: list[tuple[int, int]] = []
        indent = len(raw) - len(raw.lstrip())
        body, more = _strip_continuation(raw[indent:], escape)
        _append(chars, positions, body, i + 1, indent + 1)
        while more and i + 1 < len(lines):
            i += 1
            nxt = lines[i]
            if nxt.strip().startswith("#") or not nxt.strip():
                continue  # BuildKit drops comment and empty lines inside a continuation
            body, more = _strip_continuation(nxt, escape)
            _append(chars, positions, body, i + 1, 1)
        logical = "".join(chars)
        match = re.match(r"(\S+)(\s*)", logical)
        if match is None:
            i += 1
            continue
        keyword = match.group(1).upper()
        arg_start = match.end()
        arg_end = len(logical.rstrip())
        arguments = logical[arg_start:arg_end]
        if keyword == "FROM":
            stage += 1
        ins = Instruction(keyword, arguments, start + 1, i + 1, indent + 1, stage,
                          tuple(positions[arg_start:arg_end]))
        result.instructions.append(ins)
        if keyword == "FROM":
            result.stages.append(_stage(ins, result.stages, global_args))
        elif keyword == "ARG" and stage < 0:
            global_args.update(_arg_values(arguments, {}, global_args))
        i += 1
        if keyword in _HEREDOC_KEYWORDS:
            i = _skip_heredocs(arguments, lines, i)
    return result


def _escape_directive(lines: list[str]) -> str:
    """The `# escape=` parser directive; directives only count before anything else."""
    for line in lines:
        match = _DIRECTIVE_RE.match(line.strip())
        if match is None:
            break
        if match.group(1).lower() == "escape" and match.group(2) in ("\\", "`"):
            return match.group(2)
    return "\\"


def _strip_continuation(text: str, escape: str) -> tuple[str, bool]:
    """Remove a trailing escape (followed only by blanks); True when the line continues."""
    trimmed = text.rstrip(" \t")
    if trimmed.endswith(escape):
        return trimmed[:-1], True
    return text, False


def _append(chars: list[str], positions: list[tuple[int, int]], body: str, line: int, column: int) -> None:
    for offset, char in enumerate(body):
        chars.append(char)
        positions.append((line, column + offset))


def _skip_heredocs(arguments: str, lines: list[str], i: int) -> int:
    """Skip the bodies of `<<EOF` heredocs that follow a RUN/COPY/ADD line."""
    for match in _HEREDOC_RE.finditer(arguments):
        strip_tabs, word = match.group(1) == "-", match.group(3)
        while i < len(lines):
            body = lines[i].lstrip("\t") if strip_tabs else lines[i]
            i += 1
            if body == word:
                break
    return i


def _stage(ins: Instruction, earlier: list[Stage], global_args: dict[str, str]) -> Stage:
    words = [w for w, _s, _e in split_words(ins.arguments)]
    words = [w for w in words if not w.startswith("--")]
    base = expand(words[0], global_args) if words else ""
    name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
    parent = None
    for stage in reversed(earlier):
        if stage.name is not None and stage.name.lower() == base.lower():
            parent = stage.index
            break
    return Stage(len(earlier), name, base, parent, ins)


# --- words, quotes and variables -------------------------------------------------


def split_words(text: str) -> list[tuple[str, int, int]]:
    """Whitespace-separated words, quotes kept, with their start/end offsets in `text`."""
    words = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        quote = ""
        while i < n and (quote or not text[i].isspace()):
            char = text[i]
            if char == "\\" and quote != "'" and i + 1 < n:
                i += 2
                continue
            if quote and char == quote:
                quote = ""
            elif not quote and char in "\"'":
                quote = char
            i += 1
        words.append((text[start:i], start, i))
    return words


def expand(word: str, scope: dict[str, str]) -> str:
    """Shell-word processing as Dockerfile ENV/ARG/FROM apply it: quotes removed, `$VAR` expanded.

    An unset variable expands to the empty string, as in Docker.
    """
    out: list[str] = []
    i, n = 0, len(word)
    quote = ""
    while i < n:
        char = word[i]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                out.append(char)
            i += 1
        elif char == "\\" and i + 1 < n:
            nxt = word[i + 1]
            if quote == '"' and nxt not in '"\\$':
                out.append(char)
            out.append(nxt)
            i += 2
        elif char in "\"'" and (not quote or char == quote):
            quote = "" if quote else char
            i += 1
        elif char == "$":
            value, i = _variable(word, i, scope)
            out.append(value)
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _variable(word: str, i: int, scope: dict[str, str]) -> tuple[str, int]:
    """Expand the variable at word[i] == '$'; returns its value and the offset after it."""
    if i + 1 < len(word) and word[i + 1] == "{":
        end = word.find("}", i + 2)
        if end < 0:
            return word[i:], len(word)
        body = word[i + 2:end]
        match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(:?[-+])?(.*)\Z", body, re.S)
        if match is None:
            return "", end + 1
        name, op, arg = match.group(1), match.group(2), match.group(3)
        value = scope.get(name)
        if op in (":-", "-"):
            unset = value is None or (op == ":-" and value == "")
            return (expand(arg, scope) if unset else value or ""), end + 1
        if op in (":+", "+"):
            set_ = value is not None and (op == "+" or value != "")
            return (expand(arg, scope) if set_ else ""), end + 1
        return value or "", end + 1
    match = _NAME_RE.match(word, i + 1)
    if match is None:
        return "$", i + 1
    return scope.get(match.group(0)) or "", match.end()


def parse_env_pairs(ins: Instruction, scope: dict[str, str]) -> list[EnvPair]:
    """ENV pairs of an instruction, values expanded from `scope`."""
    arguments = ins.arguments
    words = split_words(arguments)
    if not words:
        return []
    first, first_start, first_end = words[0]
    if "=" not in first:
        # Legacy form: `ENV KEY the rest of the line`.
        rest = arguments[first_end:].lstrip()
        end = len(arguments) if rest else first_end
        value = expand(rest, scope) if rest else ""
        return [EnvPair(first, value, ins, first_start, end)]
    # Every value of one ENV instruction is expanded with the variables as they
    # were before it (Docker: `ENV abc=bye def=$abc` sees the old abc).
    pairs = []
    for word, start, end in words:
        key, sep, raw = word.partition("=")
        if sep:
            pairs.append(EnvPair(expand(key, scope), expand(raw, scope), ins, start, end))
    return pairs


def parse_env(arguments: str) -> list[tuple[str, str]]:
    """ENV pairs of an argument string: `K V...` (legacy, value is the rest) or `K=V K2="v 2"`."""
    ins = Instruction("ENV", arguments, 1, 1, 1, 0)
    return [(p.key, p.value) for p in parse_env_pairs(ins, {})]
