"""`record`: the part of `dataclasses` gpulint uses, at a fraction of the cost to define.

`@dataclass` compiles up to six methods per class when the module is imported
(and a frozen class without a docstring also gets `inspect.signature`); gpulint
defines about sixty such classes on the path of every scan, and that was a
quarter of a one-file scan's time (19 of 78 ms, Python 3.11). A record
compiles only its `__init__`, when its first instance is made (so creating
instances stays as fast as a dataclass's), and shares one generic `__repr__`, `__eq__`, `__hash__` and, when
frozen, `__setattr__`/`__delattr__` between all classes.

Semantics follow dataclasses for what is supported: fields are the class's
annotations in order (`ClassVar` ones excepted); `field()` takes `default`,
`default_factory`, `init`, `repr`, `compare`; `__post_init__` is called;
`eq` compares the `compare` fields of two instances of the same class; a
frozen class hashes them, a mutable one is unhashable; methods the class
defines itself are kept; `slots=True` makes a new class with `__slots__`.
Not supported (not used): inheritance between records, `order`, `kw_only`,
`InitVar`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """An attempt to change a field of a frozen record."""


class Field:
    __slots__ = ("name", "default", "default_factory", "init", "repr", "compare")

    def __init__(self, default: Any = _MISSING, default_factory: Any = _MISSING, init: bool = True,
                 repr: bool = True, compare: bool = True) -> None:  # noqa: A002 - dataclasses' name
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING, init: bool = True,
          repr: bool = True, compare: bool = True) -> Any:  # noqa: A002
    """A field with options, as dataclasses.field."""
    return Field(default, default_factory, init, repr, compare)


def record(cls: type[T] | None = None, *, frozen: bool = False, slots: bool = False) -> Any:
    """Decorate a class into a record (see the module docstring)."""
    def wrap(klass: type[T]) -> type[T]:
        return _process(klass, frozen, slots)

    return wrap if cls is None else wrap(cls)


def fields(obj: Any) -> tuple[Field, ...]:
    return obj.__record_fields__


def replace(obj: T, **changes: Any) -> T:
    """A copy of `obj` with `changes` (init fields only), as dataclasses.replace."""
    for item in obj.__record_fields__:  # type: ignore[attr-defined]
        if not item.init and item.name in changes:
            raise ValueError(f"field {item.name} is declared with init=False, it cannot be specified with replace()")
        if item.init and item.name not in changes:
            changes[item.name] = getattr(obj, item.name)
    return type(obj)(**changes)


def _process(cls: type[T], frozen: bool, slots: bool) -> type[T]:
    body = cls.__dict__
    found: list[Field] = []
    for name, annotation in body.get("__annotations__", {}).items():
        if isinstance(annotation, str) and annotation.replace("typing.", "").startswith("ClassVar"):
            continue
        value = body.get(name, _MISSING)
        item = value if isinstance(value, Field) else Field(default=value)
        item.name = name
        if isinstance(item.default, (list, dict, set)):
            raise ValueError(f"mutable default {type(item.default)} for field {name} is not allowed: use default_factory")
        found.append(item)
    defaulted = False
    for item in found:
        if item.init:
            if item.default is _MISSING and item.default_factory is _MISSING:
                if defaulted:
                    raise TypeError(f"non-default argument {item.name!r} follows default argument")
            else:
                defaulted = True
    compared = tuple(item.name for item in found if item.compare)
    getter = _getter(compared)
    methods: dict[str, Any] = {
        "__record_fields__": tuple(found),
        "__match_args__": tuple(item.name for item in found if item.init),
        "__init__": _first_init(found, frozen, "__post_init__" in body),
    }
    if "__repr__" not in body:
        methods["__repr__"] = _repr_function(tuple(item.name for item in found if item.repr))
    if "__eq__" not in body:
        methods["__eq__"] = _eq_function(getter)
    if body.get("__hash__") is None:  # not defined, or set to None by Python for a class defining __eq__
        methods["__hash__"] = _hash_function(getter) if frozen else None
    if frozen:
        methods["__setattr__"] = _frozen_setattr
        methods["__delattr__"] = _frozen_delattr
    if slots:  # a new class: __slots__ only work when the class is made
        if "__slots__" in body:
            raise TypeError(f"{cls.__name__} already specifies __slots__")
        namespace = {key: value for key, value in body.items()
                     if key not in ("__dict__", "__weakref__") and not any(key == item.name for item in found)}
        namespace.update(methods, __slots__=tuple(item.name for item in found))
        out = type(cls)(cls.__name__, cls.__bases__, namespace)
        out.__qualname__ = cls.__qualname__
        return out  # type: ignore[return-value]
    for item in found:  # class attributes hold plain defaults only, as with dataclasses
        if item.default is not _MISSING:
            setattr(cls, item.name, item.default)
        elif item.name in body:
            delattr(cls, item.name)
    for key, value in methods.items():
        setattr(cls, key, value)
    return cls

def _first_init(found: list[Field], frozen: bool, post_init: bool) -> Callable[..., None]:
    """An __init__ that compiles the real one on the first instance and puts it in its
    place: a third of gpulint's records are never made in a typical scan."""
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        init = _init(cls, found, frozen, post_init)
        type.__setattr__(cls, "__init__", init)
        init(self, *args, **kwargs)
    return __init__


def _init(cls: type, found: list[Field], frozen: bool, post_init: bool) -> Callable[..., None]:
    """The generated __init__: keeps instance creation as fast as a dataclass's."""
    scope: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    params: list[str] = []
    lines: list[str] = []
    for item in found:
        name = item.name
        if item.default_factory is not _MISSING:
            scope[f"_f_{name}"] = item.default_factory
            value = f"_f_{name}()" if not item.init else f"_f_{name}() if {name} is _MISSING else {name}"
            default = "_MISSING"
        elif item.default is not _MISSING:
            scope[f"_d_{name}"] = item.default
            value = name if item.init else f"_d_{name}"
            default = f"_d_{name}"
        else:
            if not item.init:
                continue  # set by __post_init__ or never, as with dataclasses
            value, default = name, ""
        if item.init:
            params.append(f"{name}={default}" if default else name)
        lines.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if post_init:
        lines.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n    " + ("\n    ".join(lines) or "pass") + "\n"
    exec(compile(source, f"<record {cls.__qualname__}>", "exec"), scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _repr_function(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({inner})"
    return __repr__


def _eq_function(getter: Callable[[Any], tuple]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return getter(self) == getter(other)
        return NotImplemented
    return __eq__


def _hash_function(getter: Callable[[Any], tuple]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(getter(self))
    return __hash__


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
