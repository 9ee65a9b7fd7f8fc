"""gpulint's dataclasses made from code compiled ahead of time, with the same results.

`@dataclass` writes each method it adds (`__init__`, `__eq__`, a frozen class's
`__setattr__`, `__delattr__` and `__hash__`) as source text and compiles it with
`exec` when the class is made: 2-4 million instructions a class, about a third
of a one-file scan's instructions (valgrind: 607M with, 433M without). A scan
makes about 70 dataclasses on every start.

`dataclassmethods.py` holds that same source text, for every dataclass of
gpulint, as ordinary functions: Python compiles them once into its bytecode
cache, as it does any module. Each text defines one function (which, called,
returns the method). `install()` gives the `dataclasses` module an `exec`
that, handed a text it holds with a globals and a locals dict, defines that
function from the text's compiled code in the same globals, as running the
text does; any other text (another version of Python, a class changed since
the table was made, another package's dataclass) is compiled as before.
Nothing else of `dataclasses` is touched.

scripts/gen_dataclass_methods.py makes the table again; tests/test_startup.py
fails when a dataclass of gpulint is missing from it.
"""

from __future__ import annotations

import builtins
import dataclasses
import sys
from types import FunctionType
from typing import Any

_exec = builtins.exec


def _precompiled_exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:
    if type(source) is str and type(globals) is dict and type(locals) is dict and not kwargs:
        code = _CODE.get(source)
        if code is not None:
            locals[code.co_name] = FunctionType(code, globals)
            return
    _exec(source, globals, locals, **kwargs)


_CODE: dict[str, Any] = {}


def install() -> bool:
    """Use the precompiled methods if they were made for this version of Python; whether they are."""
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
