"""Equality and hashing by field values, one pair of functions for every class that uses it.

`dataclass(eq=True)` compiles an `__eq__` (and, frozen, a `__hash__`) for each
class with `exec` when its module is imported (Python 3.11): about 0.6 million
instructions a method, on every start-up. The rule API's classes (gpulint/api.py)
compare and hash by value; `by_value` gives a frozen dataclass declared with
`eq=False` the same two methods, shared: equal when of the same class with equal
fields (compared in field order, as the generated `__eq__` compares its tuples),
hashed as the tuple of its fields.

That holds because an instance's `__dict__` is its fields in field order: the
frozen `__init__` sets every field, in order, and nothing else can be set (a
`__post_init__` may only set fields again, which keeps their order). So only
frozen dataclasses whose fields are all compared and hashed are accepted (and
gpulint/setonce.py's classes, whose fields are set once, in order, likewise).
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any, TypeVar

_T = TypeVar("_T")


def equal_fields(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__dict__ == other.__dict__
    return NotImplemented


def hash_fields(self: Any) -> int:
    return hash(tuple(self.__dict__.values()))


def by_value(cls: type[_T]) -> type[_T]:
    """Give the frozen dataclass `cls` (declared with eq=False) dataclass(eq=True)'s `__eq__` and
    frozen `__hash__`."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or params.eq or hasattr(cls, "__slots__"):
        raise TypeError(f"by_value: {cls.__qualname__} must be a dataclass(frozen=True, eq=False) with a __dict__")
    for f in fields(cls):  # type: ignore[arg-type]
        if not f.compare or f.hash is not None or (not f.init and f.default is MISSING and f.default_factory is MISSING):
            raise TypeError(f"by_value: {cls.__qualname__}.{f.name} must be set by __init__, compared and hashed")
    for name in ("__eq__", "__hash__"):
        if name in cls.__dict__:
            raise TypeError(f"by_value: {cls.__qualname__} defines {name} itself")
    cls.__eq__ = equal_fields  # type: ignore[assignment,method-assign]
    cls.__hash__ = hash_fields  # type: ignore[assignment,method-assign]
    return cls
