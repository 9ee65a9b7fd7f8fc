"""Frozen dataclasses whose `__setattr__` and `__delattr__` are shared, not compiled per class.

`dataclass(frozen=True)` writes a `__setattr__` and a `__delattr__` for each
class and compiles them with `exec` when the module is imported (Python 3.11):
about 1.3 million instructions a class on every start-up, a quarter of a
percent of a one-file scan each. For a class made a few times per scan
(configuration, knowledge tables, the report targets), or only for input that is
rare and costs far more than the object (a field of the wrong type, a malformed
quantity, a DRA claim or device class), `frozen_dataclass` gives
the same guarantee with two functions all such classes share: the plain
dataclass `__init__` sets each field once through the shared `__setattr__`;
after that, assigning a field, assigning any other name or deleting one raises
`FrozenInstanceError`, as with `dataclass(frozen=True)`. Equality and hashing
are the frozen dataclass's (with `eq`, by the fields' values: gpulint/byvalue.py).

Not for classes made per document or per finding: each field set in `__init__`
then costs a Python call (about 1,700 instructions more per field than the
frozen `__init__`'s `object.__setattr__`), which a scan of thousands of
documents pays more often than start-up. Not for subclassing either: a
subclass may not set names of its own (a frozen dataclass lets one that is not
a dataclass).
"""

from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, dataclass, fields
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from gpulint.byvalue import equal_fields, hash_fields

_T = TypeVar("_T")
_FIELDS = "__set_once_fields__"   # on each class: the names its __init__ sets once


def _set_once(self: Any, name: str, value: Any) -> None:
    if name in self.__dict__ or name not in getattr(type(self), _FIELDS):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _refuse_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _frozen_dataclass(*, frozen: bool, **options: Any) -> Callable[[type[_T]], type[_T]]:
    """`dataclass(frozen=True, **options)` (frozen=True is written out, for type checkers)."""
    if not frozen or options.get("slots"):
        raise TypeError("frozen_dataclass: for frozen=True classes with a __dict__ only")

    def wrap(cls: type[_T]) -> type[_T]:
        # Compared and hashed as dataclass(frozen=True) does: with eq, by the fields, unless the class
        # has its own __hash__ (or __eq__); by gpulint/byvalue.py's shared pair where it has neither.
        eq = options.get("eq", True)
        own_hash = cls.__dict__.get("__hash__", MISSING)
        explicit = not (own_hash is MISSING or (own_hash is None and "__eq__" in cls.__dict__))
        shared = eq and not explicit and "__eq__" not in cls.__dict__
        made = dataclass(**{**options, "eq": eq and not shared, "unsafe_hash": eq and not explicit and not shared})(cls)
        names = []
        for f in fields(made):
            if not f.init and f.default is MISSING and f.default_factory is MISSING:
                raise TypeError(f"{cls.__qualname__}.{f.name}: __init__ does not set it, so it could be set later")
            if shared and (not f.compare or f.hash is not None):
                raise TypeError(f"{cls.__qualname__}.{f.name}: not compared like the other fields (eq=False, or "
                                "give the class its own __hash__)")
            names.append(f.name)
        setattr(made, _FIELDS, frozenset(names))
        if shared:
            made.__eq__ = equal_fields  # type: ignore[assignment,method-assign]
            made.__hash__ = hash_fields  # type: ignore[assignment,method-assign]
        made.__setattr__ = _set_once  # type: ignore[assignment]
        made.__delattr__ = _refuse_delete  # type: ignore[assignment]
        return made

    return wrap


if TYPE_CHECKING:
    frozen_dataclass = dataclass   # checkers see what it stands for: dataclass(frozen=True, ...)
else:
    frozen_dataclass = _frozen_dataclass
