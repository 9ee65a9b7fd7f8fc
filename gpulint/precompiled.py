"""What a scan compiles on every start, compiled ahead of time: the same results, made faster.

Two kinds of code are made from text each time gpulint starts, by Python's own
machinery, and cost most of a one-file scan beyond its imports:

- `@dataclass` writes each method it adds (`__init__`, `__eq__`, a frozen
  class's `__setattr__`, `__delattr__` and `__hash__`) as source text and
  compiles it with `exec`: 2-4 million instructions a class, some 70 classes.
- `re.compile` parses a pattern and turns it into the regular-expression
  engine's program in Python (`re._parser`, `re._compiler`): 80-odd patterns.

`dataclassmethods.py` holds that very source text for every dataclass of
gpulint, as ordinary functions, and `patternprograms.py` the program of each
pattern gpulint defines; Python keeps both compiled in its bytecode cache, as it
does any module. `install()` puts two stand-ins in place, each giving exactly
what it stands in for:

- the `dataclasses` module's `exec`: handed a text the table holds, with a
  globals and a locals dict, it defines that text's one function from the
  compiled code, in those globals, as running the text does;
- `re`'s compile step: a (pattern, flags) the table holds is given to the
  engine (`_sre.compile`) with its stored program, the arguments `re` would
  pass it.

Anything else (a class or pattern changed since the tables were made, another
package's, another version of Python) is compiled as before. The tables are used
only under the version of Python and of the engine that made them.
scripts/gen_precompiled.py makes them again; tests/test_startup.py fails
while they are stale.
"""

from __future__ import annotations

import builtins
import sys
from types import FunctionType
from typing import Any

_exec = builtins.exec
_CODE: dict[str, Any] = {}
_PROGRAMS: dict[tuple, tuple] = {}   # patternprograms.PROGRAMS, once installed
_compile: Any = None   # re's own compile step, once the stand-in is installed


def _precompiled_exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:
    if type(source) is str and type(globals) is dict and type(locals) is dict and not kwargs:
        code = _CODE.get(source)
        if code is not None:
            locals[code.co_name] = FunctionType(code, globals)
            return
    _exec(source, globals, locals, **kwargs)


def _precompiled_pattern(pattern: Any, flags: Any = 0) -> Any:
    if type(pattern) is str and type(flags) is int:
        program = _PROGRAMS.get((pattern, flags))
        if program is not None:
            final_flags, code, groups, groupindex, indexgroup = program
            return _sre_compile(pattern, final_flags, list(code), groups, dict(groupindex), indexgroup)
    return _compile(pattern, flags)


_sre_compile: Any = None


def install() -> bool:
    """Put the stand-ins in place where the tables were made for this Python; whether both are."""
    if not _compiled_once():
        return False
    return _install_methods() & _install_patterns()


def _compiled_once() -> bool:
    """Whether importing the tables reads their bytecode: with bytecode writing off and no
    bytecode cached, Python would compile their whole source on every start (about a
    billion instructions, five times what they spare)."""
    if not sys.dont_write_bytecode:
        return True   # compiled on the first start, read from the cache on the others
    import os
    from importlib.util import cache_from_source

    here = os.path.dirname(__file__)
    try:
        return all(os.path.exists(cache_from_source(os.path.join(here, name)))
                   for name in ("dataclassmethods.py", "patternprograms.py"))
    except NotImplementedError:   # no bytecode cache in this Python
        return False


def _install_methods() -> bool:
    import dataclasses

    if getattr(dataclasses, "exec", None) is _precompiled_exec:
        return True
    if "exec" in vars(dataclasses):
        return False  # someone else's: leave it
    from gpulint import dataclassmethods

    if dataclassmethods.PYTHON != sys.version_info[:2]:
        return False
    _CODE.update(dataclassmethods.code())
    dataclasses.exec = _precompiled_exec  # type: ignore[attr-defined]
    return True


def _install_patterns() -> bool:
    global _compile, _sre_compile, _PROGRAMS
    import re

    import _sre

    compiler = getattr(re, "_compiler", None)
    if compiler is None:
        return False
    if compiler.compile is _precompiled_pattern:
        return True
    if getattr(compiler.compile, "__module__", None) != compiler.__name__:
        return False  # someone else's stand-in: leave it
    from gpulint import patternprograms

    if patternprograms.PYTHON != sys.version_info[:2] or patternprograms.MAGIC != _sre.MAGIC:
        return False
    _PROGRAMS = patternprograms.PROGRAMS
    _compile, _sre_compile = compiler.compile, _sre.compile
    compiler.compile = _precompiled_pattern
    return True
