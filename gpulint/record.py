"""Classes of plain fields: equality, hashing, a repr, immutability, copies and pickling, shared.

gpulint's value classes (findings, the model, the rule API, configuration)
are plain classes, not dataclasses. `@dataclass` compiles every method it
writes with `exec` when its module is imported (Python 3.11), and importing
`dataclasses` imports `inspect` (with `ast`, `dis`, `tokenize`): about 100M
and 37M instructions on every start-up, a third of a one-file scan's own work
and 6 % of a 1,000-document scan (docs/performance.md, stop 37). A record's
methods are written once, here, and `.pyc` files keep the rest.

A record class:

- lists its fields in `__slots__`, in the order its `__init__` takes them
  (a subclass lists only its own; its fields follow its base's);
- writes its own `__init__`, setting every field (a frozen class through
  `set_field`, as `self.x = ...` is refused);
- is decorated with `@record(...)`, which adds only what it is asked for:

  - `eq=True`: equal to an instance of the same class whose `compare` fields
    (all, unless named) are equal, compared in field order;
  - `frozen=True`: assigning or deleting a field raises `FrozenInstanceError`;
  - hashing follows `dataclass`: by the compared fields when `eq` and `frozen`
    (or `hash=True`), none when only `eq`, by identity otherwise; a
    `__hash__` the class writes itself is kept;
  - `repr=True` (or the names to show): `Name(field=value, ...)`, as dataclass writes it.

Every record can be copied with changes (`replace`), listed (`fields`),
pickled (a parallel scan sends findings between processes) and copied with `copy`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable, TypeVar

_T = TypeVar("_T")
_NOT_FIELDS = frozenset({"__weakref__", "__dict__"})

set_field = object.__setattr__   # a frozen record's __init__ sets its fields through this


class FrozenInstanceError(AttributeError):
    """A field of a frozen record was assigned or deleted."""


def fields(obj_or_cls: Any) -> tuple[str, ...]:
    """The names of a record's fields, in `__init__`'s order."""
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    return cls.__record_fields__   # type: ignore[no-any-return]


def replace(obj: _T, /, **changes: Any) -> _T:
    """A new record like `obj` with `changes` (made through its `__init__`, by field name)."""
    cls = type(obj)
    names = cls.__record_fields__   # type: ignore[attr-defined]
    unknown = changes.keys() - set(names)
    if unknown:
        raise TypeError(f"{cls.__qualname__} has no field {sorted(unknown)[0]!r}")
    return cls(**{name: changes[name] if name in changes else getattr(obj, name) for name in names})


def _rebuild(cls: type, values: tuple) -> Any:
    made = cls.__new__(cls)
    for name, value in zip(cls.__record_fields__, values):   # type: ignore[attr-defined]
        set_field(made, name, value)
    return made


def _reduce(self: Any) -> tuple:
    # Rebuilt field by field, not through __init__ (which may check or work things out).
    cls = type(self)
    return _rebuild, (cls, tuple(getattr(self, name) for name in cls.__record_fields__))


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _repr(self: Any) -> str:
    cls = type(self)
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in cls.__record_repr__)
    return f"{cls.__qualname__}({shown})"


def _values_of(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """A function giving the tuple of the named fields (attrgetter gives a lone value for one name)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names) if names else (lambda obj: ())


def _eq_by(values: Callable[[Any], tuple]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented
    return __eq__


def _hash_by(values: Callable[[Any], tuple]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))
    return __hash__


def _declared_fields(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in _NOT_FIELDS and name not in names:
                names.append(name)
    return tuple(names)


def record(cls: type[_T] | None = None, *, eq: bool = False, frozen: bool = False, hash: bool | None = None,
           repr: bool | tuple[str, ...] = False, compare: tuple[str, ...] | None = None) -> Any:
    """Make `cls` a record (see the module's docstring); `@record` alone adds no comparison."""

    def wrap(klass: type[_T]) -> type[_T]:
        if "__slots__" not in klass.__dict__ or "__init__" not in klass.__dict__:
            raise TypeError(f"record: {klass.__qualname__} must define __slots__ and __init__")
        names = _declared_fields(klass)
        compared = names if compare is None else compare
        shown = names if repr is True else (repr or ())
        for name in (*compared, *shown):
            if name not in names:
                raise TypeError(f"record: {klass.__qualname__} has no field {name!r}")
        setattr(klass, "__record_fields__", names)
        setattr(klass, "__reduce__", _reduce)
        own = klass.__dict__
        if eq and "__eq__" not in own:
            values = _values_of(compared)
            setattr(klass, "__eq__", _eq_by(values))
            if "__hash__" not in own or own["__hash__"] is None:
                if hash or (hash is None and frozen):
                    setattr(klass, "__hash__", _hash_by(values))
                else:
                    setattr(klass, "__hash__", None)
        elif hash and "__hash__" not in own:
            setattr(klass, "__hash__", _hash_by(_values_of(compared)))
        if shown:
            setattr(klass, "__record_repr__", shown)
            setattr(klass, "__repr__", _repr)
        if frozen:
            setattr(klass, "__setattr__", _refuse_set)
            setattr(klass, "__delattr__", _refuse_delete)
        return klass

    return wrap if cls is None else wrap(cls)
