"""gpulint/record.py: records compare, hash, show, freeze, copy and pickle as dataclasses would."""

from __future__ import annotations

import copy
import pickle

import pytest

from gpulint.record import FrozenInstanceError, fields, record, replace, set_field


@record(eq=True, frozen=True, repr=True)
class Point:
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int = 0) -> None:
        set_field(self, "x", x)
        set_field(self, "y", y)


@record(eq=True, frozen=True)
class Point3(Point):
    __slots__ = ("z",)

    def __init__(self, x: int, y: int, z: int) -> None:
        super().__init__(x, y)
        set_field(self, "z", z)


@record(eq=True, compare=("name",), repr=("name",))
class Named:
    __slots__ = ("name", "notes")

    def __init__(self, name: str, notes: list | None = None) -> None:
        self.name = name
        self.notes = [] if notes is None else notes


@record
class Plain:
    __slots__ = ("a",)

    def __init__(self, a: int) -> None:
        self.a = a


@record(eq=True, hash=True)
class Keyed:
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: int) -> None:
        self.a = a
        self.b = b


def test_fields_follow_slots_base_first() -> None:
    assert fields(Point) == ("x", "y")
    assert fields(Point3(1, 2, 3)) == ("x", "y", "z")


def test_frozen_equality_hash_and_repr_are_dataclass_like() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2)) == hash((1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(1)}) == 2
    assert repr(Point(1, "a")) == "Point(x=1, y='a')"   # type: ignore[arg-type]
    # Another class with the same values is not equal (dataclass compares classes too).
    assert Point3(1, 2, 3) != Point(1, 2)
    assert Point(1, 2).__eq__(object()) is NotImplemented


def test_frozen_refuses_assignment_and_deletion() -> None:
    p = Point(1, 2)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 3   # type: ignore[misc]
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'other'"):
        p.other = 3   # type: ignore[attr-defined]
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'y'"):
        del p.y   # type: ignore[misc]
    assert isinstance(FrozenInstanceError(), AttributeError)


def test_mutable_eq_compares_named_fields_and_is_unhashable() -> None:
    assert Named("a", [1]) == Named("a", [2])
    assert Named("a") != Named("b")
    assert Named.__hash__ is None
    with pytest.raises(TypeError):
        hash(Named("a"))
    assert repr(Named("a", [1])) == "Named(name='a')"
    n = Named("a")
    n.name = "b"
    assert n.name == "b"
    with pytest.raises(AttributeError):
        n.unknown = 1   # type: ignore[attr-defined]   # slots: no other names


def test_plain_record_compares_by_identity_and_hash_true_by_values() -> None:
    assert Plain(1) != Plain(1)
    assert hash(Plain(1)) != hash(Plain(1)) or Plain(1) is not Plain(1)
    assert object.__repr__ is Plain.__repr__
    assert Keyed(1, 2) == Keyed(1, 2) and hash(Keyed(1, 2)) == hash((1, 2))


def test_replace_makes_a_new_record_through_init() -> None:
    p = Point(1, 2)
    q = replace(p, y=5)
    assert (q.x, q.y, p.y) == (1, 5, 2)
    assert replace(Point3(1, 2, 3), z=9) == Point3(1, 2, 9)
    with pytest.raises(TypeError, match="has no field 'w'"):
        replace(p, w=1)


@record
class Holder:
    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj


def test_replace_takes_any_field_name() -> None:
    assert replace(Holder(1), obj=2).obj == 2   # (replace's own parameter is positional-only)


@pytest.mark.parametrize("value", [Point(1, 2), Point3(1, 2, 3), Named("a", [1]), Keyed(3, 4)])
def test_pickle_and_copy_keep_every_field(value: object) -> None:
    for again in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert type(again) is type(value)
        assert all(getattr(again, n) == getattr(value, n) for n in fields(value))


def test_a_record_must_write_slots_and_init() -> None:
    with pytest.raises(TypeError, match="must define __slots__ and __init__"):
        @record
        class NoSlots:
            def __init__(self) -> None:
                pass
    with pytest.raises(TypeError, match="has no field 'b'"):
        @record(eq=True, compare=("b",))
        class Wrong:
            __slots__ = ("a",)

            def __init__(self, a: int) -> None:
                self.a = a
