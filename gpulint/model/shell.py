"""A small POSIX shell splitter for linting: script text -> simple commands.

Not an interpreter: nothing is expanded or evaluated. It finds the simple
commands a script runs, with the exact character offsets of every word in the
script text, so a rule can point at `docker run` inside a block scalar.

What counts as a command: the words of a simple command after `;`, `&&`, `||`,
`|`, `&`, newlines, `( )`, `{ }` and the control keywords (`if`, `then`, `do`,
`case ... in pat)`...). Quoted strings, `echo` arguments, comments and here-doc
bodies are data. Command substitutions (`$(...)`, backticks, `<(...)`), the
script of `sh -c`/`bash -c`/`su -c`/`eval` and a here-doc fed to a shell are
nested scripts: their commands are returned too, with offsets in the outer text.
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from gpulint.record import record, set_field

# Shells whose `-c STRING` is a script (busybox is a wrapper: `busybox sh -c`).
SHELL_NAMES = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh", "mksh", "yash", "posh"})

_MAX_DEPTH = 8  # nested scripts deeper than this are not parsed (hostile input)
_ASSIGNMENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_FUNCTION_PARENS_RE = re.compile(r"[ \t]*\([ \t]*\)")
_OPERATOR_CHARS = frozenset(";&|()<>")
_BLANKS = frozenset(" \t\r")
_OPERATORS = ("&&", "||", ";;&", ";;", ";&", "|&", "|", "&", ";", "(", ")")
_REDIRECTIONS = ("<<<", "<<-", "<<", "<>", "<&", ">>", ">&", ">|", "&>>", "&>", "<", ">")
_CONTROL_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{",
                               "fi", "done", "esac", "}"})


def basename(path: str) -> str:
    """`posixpath.basename` for a str, without its generic-path overhead (called per argv word)."""
    return path.rpartition("/")[2]


@record(frozen=True)
class Word:
    """One word of a command, quotes removed; `$x`, `$(...)` are kept as written."""

    __slots__ = ("text", "start", "end", "positions", "assignment")
    text: str
    start: int                 # offset of the word's first character in the script text
    end: int                   # offset just after its last character
    positions: tuple[int, ...]  # script offset of each character of `text`
    assignment: bool           # `NAME=value` written without quotes in the name part

    def __init__(self, text: str, start: int, end: int, positions: tuple[int, ...], assignment: bool = False) -> None:
        set_field(self, "text", text)
        set_field(self, "start", start)
        set_field(self, "end", end)
        set_field(self, "positions", positions)
        set_field(self, "assignment", assignment)


@record(frozen=True)
class Command:
    """A simple command: its words, redirections removed."""

    __slots__ = ("words", "depth")
    words: tuple[Word, ...]
    depth: int                 # 0 at top level, +1 per nested script

    def __init__(self, words: tuple[Word, ...], depth: int = 0) -> None:
        set_field(self, "words", words)
        set_field(self, "depth", depth)

    @property
    def start(self) -> int:
        return self.words[0].start

    @property
    def end(self) -> int:
        return self.words[-1].end

    def argv(self) -> tuple[Word, ...]:
        """The words from the command name on: assignments and wrappers (`sudo`, `env`...) skipped."""
        index = command_index([w.text for w in self.words], [w.assignment for w in self.words])
        return () if index is None else self.words[index:]

    @property
    def name(self) -> str:
        """Base name of the program run (`/usr/bin/docker` -> `docker`), or ""."""
        argv = self.argv()
        return basename(argv[0].text) if argv else ""


def parse(text: str) -> list[Command]:
    """Every simple command of `text`, nested ones included, in order of position."""
    found: dict[tuple[int, int], Command] = {}
    _Parser(text, range(len(text)), 0, found).run()
    return sorted(found.values(), key=lambda c: (c.start, c.depth, c.end))


# --- finding the program a command runs -------------------------------------

# Commands that run their arguments as another command: options taking a value,
# and how many positional words come before the command (`timeout 10 cmd`).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-h", "-C", "-D", "-p", "-r", "-t", "-U", "-T", "--user",
                        "--group", "--host", "--chdir", "--prompt", "--role", "--type",
                        "--other-user", "--close-from", "--command-timeout"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "exec": (frozenset({"-a"}), 0),
    "env": (frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "builtin": (frozenset(), 0),
    "command": (frozenset(), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "--class", "--classdata"}), 0),
    "setsid": (frozenset(), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "xargs": (frozenset({"-n", "-I", "-P", "-d", "-L", "-s", "-a", "-E", "--max-args", "--max-procs",
                         "--delimiter", "--max-lines", "--max-chars", "--arg-file", "--eof"}), 0),
    "busybox": (frozenset(), 0),
    "tini": (frozenset({"-p", "-e"}), 0),
    "dumb-init": (frozenset({"-r", "--rewrite"}), 0),
    "unbuffer": (frozenset(), 0),
    "chronic": (frozenset(), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
}


def command_index(words: Sequence[str], assignments: Sequence[bool] | None = None) -> int | None:
    """Index of the program name in `words`, or None when nothing is run.

    `assignments` marks the words a shell reads as `NAME=value` (a script's
    leading assignments); an exec vector has none. `env` and `sudo` take
    assignments of their own. `command -v X` only looks X up.
    """
    i = 0
    n = len(words)
    while i < n and assignments is not None and assignments[i]:
        i += 1
    while i < n:
        name = basename(words[i])
        wrapper = _WRAPPERS.get(name)
        if wrapper is None:
            return i
        with_value, positional = wrapper
        i += 1
        while i < n:
            word = words[i]
            if word == "--":
                i += 1
                break
            if name == "command" and word in ("-v", "-V"):
                return None
            if word.startswith("-") and len(word) > 1:
                i += 2 if word in with_value else 1
                continue
            if name in ("env", "sudo") and _ASSIGNMENT_RE.match(word):
                i += 1
                continue
            break
        i += positional
    return None


def script_arguments(words: Sequence[str]) -> list[int]:
    """Indices of the words of `words` (an argv, program name first) that are scripts.

    `sh -c SCRIPT` / `bash -ec SCRIPT` / `su -c SCRIPT` give one index; `eval
    A B...` gives all its arguments (joined with spaces by the shell).
    """
    if not words:
        return []
    name = basename(words[0])
    if name == "eval":
        return list(range(1, len(words)))
    if name in SHELL_NAMES:
        # Options first (`-c` may come before others: `bash -lc -- SCRIPT`), then the script.
        i, has_c = 1, False
        while i < len(words):
            word = words[i]
            if word == "--":
                i += 1
                break
            if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if not word.startswith(("-", "+")) or word in ("-", "+"):
                break
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
                has_c = True
            i += 1
        return [i] if has_c and i < len(words) else []
    if name in ("su", "runuser"):
        for i in range(1, len(words) - 1):
            if words[i] in ("-c", "--command"):
                return [i + 1]
            if words[i].startswith("--command="):
                return []
        return []
    return []


# --- lexer -------------------------------------------------------------------


@record
class _Token:
    """One lexical token of a command text."""
    __slots__ = ("kind", "value", "start", "word")
    kind: str                  # "word", "op", "redir", "newline", "skip"
    value: str
    start: int
    word: Word | None

    def __init__(self, kind: str, value: str, start: int, word: Word | None = None) -> None:
        self.kind = kind
        self.value = value
        self.start = start
        self.word = word


@record
class _HereDoc:
    """A here-document whose body starts after the current line."""
    __slots__ = ("delimiter", "strip_tabs", "body")
    delimiter: str
    strip_tabs: bool
    body: tuple[int, int] | None   # local offsets of the body

    def __init__(self, delimiter: str, strip_tabs: bool, body: tuple[int, int] | None = None) -> None:
        self.delimiter = delimiter
        self.strip_tabs = strip_tabs
        self.body = body


class _Lexer:
    """Tokens of one script text; `origin` maps local offsets to outer offsets."""

    def __init__(self, text: str, origin: Sequence[int], substitutions: list[tuple[int, int]]) -> None:
        self.text = text
        self.origin = origin
        self.pos = 0
        self.pending: list[_HereDoc] = []
        self.substitutions = substitutions   # local (start, end) of $(...), `...`, <(...)

    def tokens(self) -> Iterator[_Token]:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in _BLANKS:
                self.pos += 1
            elif c == "\\" and text.startswith("\\\n", self.pos):
                self.pos += 2
            elif c == "\n":
                start = self.pos
                self.pos += 1
                self._read_heredocs()
                yield _Token("newline", "\n", start)
            elif c == "#":
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("((", self.pos):
                # Arithmetic command `(( ... ))` or `for ((...))`: no commands inside.
                end = text.find("))", self.pos + 2)
                start = self.pos
                self.pos = n if end < 0 else end + 2
                yield _Token("skip", text[start:self.pos], start)
            elif c in "<>" and text.startswith("(", self.pos + 1):
                yield self._word()
            elif c in _OPERATOR_CHARS:
                yield self._operator()
            else:
                yield self._word()

    def _operator(self) -> _Token:
        start = self.pos
        for op in _REDIRECTIONS:
            if self.text.startswith(op, start):
                self.pos += len(op)
                return _Token("redir", op, start)
        for op in _OPERATORS:
            if self.text.startswith(op, start):
                self.pos += len(op)
                return _Token("op", op, start)
        self.pos += 1  # unreachable: every operator character starts an operator
        return _Token("op", self.text[start], start)

    def _read_heredocs(self) -> None:
        text = self.text
        for doc in self.pending:
            body_start = self.pos
            while self.pos < len(text):
                end = text.find("\n", self.pos)
                line_end = len(text) if end < 0 else end
                line = text[self.pos:line_end]
                if (line.lstrip("\t") if doc.strip_tabs else line) == doc.delimiter:
                    doc.body = (body_start, self.pos)
                    self.pos = min(len(text), line_end + 1)
                    break
                self.pos = line_end + 1
            else:
                doc.body = (body_start, len(text))
                self.pos = len(text)
        self.pending = []

    def _word(self) -> _Token:
        text, n, origin = self.text, len(self.text), self.origin
        start = self.pos
        chars: list[str] = []
        where: list[int] = []
        literal = True          # no quote or expansion seen yet (for NAME= detection)
        literal_len = 0

        def add(i: int) -> None:
            chars.append(text[i])
            where.append(i)

        if text[self.pos] in "<>":  # process substitution <(...) / >(...)
            end = _match_close(text, self.pos + 2, "(", ")")
            self.substitutions.append((self.pos + 2, end))
            for i in range(self.pos, min(end + 1, n)):
                add(i)
            self.pos = end + 1
            literal = False
        while self.pos < n:
            c = text[self.pos]
            if c in _BLANKS or c == "\n" or c in _OPERATOR_CHARS:
                break
            if literal:
                literal_len = len(chars)
            if c == "\\":
                if text.startswith("\\\n", self.pos):
                    self.pos += 2
                    continue
                literal = False
                if self.pos + 1 < n:
                    add(self.pos + 1)
                self.pos += 2
            elif c == "'":
                literal = False
                end = text.find("'", self.pos + 1)
                end = n if end < 0 else end
                for i in range(self.pos + 1, end):
                    add(i)
                self.pos = end + 1
            elif c == '"':
                literal = False
                self._double_quoted(add)
            elif c == "$" and text.startswith("((", self.pos + 1):
                literal = False
                end = text.find("))", self.pos + 3)
                end = n - 2 if end < 0 else end
                for i in range(self.pos, min(end + 2, n)):
                    add(i)
                self.pos = end + 2
            elif c == "$" and text.startswith("(", self.pos + 1):
                literal = False
                end = _match_close(text, self.pos + 2, "(", ")")
                self.substitutions.append((self.pos + 2, end))
                for i in range(self.pos, min(end + 1, n)):
                    add(i)
                self.pos = end + 1
            elif c == "$" and text.startswith("{", self.pos + 1):
                literal = False
                end = _match_close(text, self.pos + 2, "{", "}")
                for i in range(self.pos, min(end + 1, n)):
                    add(i)
                self.pos = end + 1
            elif c == "`":
                literal = False
                end = _backtick_end(text, self.pos + 1)
                self.substitutions.append((self.pos + 1, end))
                for i in range(self.pos, min(end + 1, n)):
                    add(i)
                self.pos = end + 1
            else:
                add(self.pos)
                self.pos += 1
        if literal:
            literal_len = len(chars)
        value = "".join(chars)
        self.pos = min(self.pos, n)  # an unterminated quote ends the text
        if self.pos < n and text[self.pos] in "<>" and value.isdigit() and literal:
            return _Token("redir", "fd", start)  # `2>file`: a file descriptor; the operator follows
        match = _ASSIGNMENT_RE.match(value)
        assignment = bool(match) and match.end() <= literal_len  # type: ignore[union-attr]
        positions = tuple(origin[i] for i in where)
        end_offset = origin[self.pos - 1] + 1 if self.pos > start else origin[start]
        word = Word(value, origin[start], end_offset, positions, assignment)
        return _Token("word", value, start, word)

    def _double_quoted(self, add) -> None:  # type: ignore[no-untyped-def]
        text, n = self.text, len(self.text)
        self.pos += 1
        while self.pos < n:
            c = text[self.pos]
            if c == '"':
                self.pos += 1
                return
            if c == "\\" and self.pos + 1 < n and text[self.pos + 1] in '$`"\\\n':
                if text[self.pos + 1] != "\n":
                    add(self.pos + 1)
                self.pos += 2
            elif c == "$" and text.startswith("((", self.pos + 1):
                end = text.find("))", self.pos + 3)
                end = n - 2 if end < 0 else end
                for i in range(self.pos, min(end + 2, n)):
                    add(i)
                self.pos = end + 2
            elif c == "$" and text.startswith("(", self.pos + 1):
                end = _match_close(text, self.pos + 2, "(", ")")
                self.substitutions.append((self.pos + 2, end))
                for i in range(self.pos, min(end + 1, n)):
                    add(i)
                self.pos = end + 1
            elif c == "$" and text.startswith("{", self.pos + 1):
                end = _match_close(text, self.pos + 2, "{", "}")
                for i in range(self.pos, min(end + 1, n)):
                    add(i)
                self.pos = end + 1
            elif c == "`":
                end = _backtick_end(text, self.pos + 1)
                self.substitutions.append((self.pos + 1, end))
                for i in range(self.pos, min(end + 1, n)):
                    add(i)
                self.pos = end + 1
            else:
                add(self.pos)
                self.pos += 1


def _skip_quoted(text: str, i: int) -> int:
    """Index after the quoted string starting at text[i] (a quote character)."""
    quote = text[i]
    i += 1
    while i < len(text):
        if text[i] == "\\" and quote == '"':
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


def _match_close(text: str, i: int, opening: str, closing: str) -> int:
    """Index of the `closing` that ends an `opening` whose content starts at `i`.

    Quoted text and escaped characters are skipped; len(text) when unclosed.
    """
    depth = 1
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            i = _skip_quoted(text, i)
            continue
        if c == "\\":
            i += 2
            continue
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def _backtick_end(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i
        i += 1
    return n


# --- parser ------------------------------------------------------------------


class _Parser:
    """Groups one script's tokens into simple commands and parses nested scripts."""

    def __init__(self, text: str, origin: Sequence[int], depth: int,
                 found: dict[tuple[int, int], Command]) -> None:
        self.text = text
        self.origin = origin
        self.depth = depth
        self.found = found
        self.substitutions: list[tuple[int, int]] = []
        self.heredocs: list[_HereDoc] = []   # here-docs fed to a shell (`bash <<EOF`)

    def run(self) -> None:
        lexer = _Lexer(self.text, self.origin, self.substitutions)
        words: list[Word] = []
        heredocs: list[_HereDoc] = []
        discard = False        # the current "command" is a `for x in ...` / `case ... in` head
        case_states: list[str] = []   # per open `case`: "head", "pattern" or "body"
        tokens = lexer.tokens()

        def flush() -> None:
            nonlocal words, heredocs, discard
            if words and not discard:
                self._emit(tuple(words), heredocs)
            words, heredocs, discard = [], [], False

        for token in tokens:
            state = case_states[-1] if case_states else ""
            if state == "head":
                if token.kind == "word" and token.value == "in":
                    case_states[-1] = "pattern"
                continue
            if state == "pattern":
                if token.kind == "word" and token.value == "esac":
                    case_states.pop()
                elif token.kind == "op" and token.value == ")":
                    case_states[-1] = "body"
                continue
            if token.kind == "newline" or token.kind == "op":
                flush()
                if state == "body" and token.value in (";;", ";&", ";;&"):
                    case_states[-1] = "pattern"
                continue
            if token.kind == "skip":
                continue
            if token.kind == "redir":
                if token.value == "fd":
                    continue
                target = next(tokens, None)
                if target is None:
                    break
                if target.kind == "word" and target.value and token.value in ("<<", "<<-"):
                    doc = _HereDoc(target.value, token.value == "<<-")
                    lexer.pending.append(doc)
                    heredocs.append(doc)
                elif target.kind in ("newline", "op"):
                    flush()
                continue
            assert token.word is not None
            if not words and not discard:
                if token.value in _CONTROL_KEYWORDS and self._unquoted(token):
                    if token.value == "esac" and case_states:
                        case_states.pop()
                    continue
                if token.value in ("for", "select") and self._unquoted(token):
                    discard = True
                    continue
                if token.value == "case" and self._unquoted(token):
                    case_states.append("head")
                    continue
                if token.value == "function" and self._unquoted(token):
                    next(tokens, None)  # the function's name
                    continue
            words.append(token.word)
            if len(words) == 1 and not discard:
                # `name() { ...; }`: a function definition, not a command.
                definition = _FUNCTION_PARENS_RE.match(lexer.text, lexer.pos)
                if definition:
                    lexer.pos = definition.end()
                    words = []
        flush()
        if self.depth < _MAX_DEPTH:
            for start, end in self.substitutions:
                self._nested(self.text[start:end], self.origin[start:end])
            for doc in self.heredocs:
                if doc.body is not None:
                    self._nested(self.text[doc.body[0]:doc.body[1]], self.origin[doc.body[0]:doc.body[1]])

    def _unquoted(self, token: _Token) -> bool:
        return self.text[token.start:token.start + len(token.value)] == token.value

    def _emit(self, words: tuple[Word, ...], heredocs: list[_HereDoc]) -> None:
        command = Command(words, self.depth)
        self.found.setdefault((command.start, command.end), command)
        if self.depth >= _MAX_DEPTH:
            return
        argv = command.argv()
        texts = [w.text for w in argv]
        scripts = script_arguments(texts)
        if scripts and basename(texts[0]) == "eval":
            self._nested_words(argv[scripts[0]:])
        elif scripts:
            word = argv[scripts[0]]
            self._nested(word.text, word.positions)
        elif heredocs and texts and basename(texts[0]) in SHELL_NAMES:
            self.heredocs.extend(heredocs)

    def _nested_words(self, words: Sequence[Word]) -> None:
        text = " ".join(w.text for w in words)
        positions: list[int] = []
        for i, word in enumerate(words):
            if i:
                positions.append(words[i - 1].end)
            positions.extend(word.positions)
        self._nested(text, positions)

    def _nested(self, text: str, origin: Sequence[int]) -> None:
        if text.strip():
            _Parser(text, origin, self.depth + 1, self.found).run()
