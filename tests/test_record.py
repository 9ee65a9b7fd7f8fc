"""gpulint.record: the dataclass features gpulint relies on, checked against dataclasses itself."""

from __future__ import annotations

import dataclasses

import pytest

from gpulint.record import FrozenInstanceError, field, fields, record, replace


def _pair(frozen: bool) -> tuple[type, type]:
    """The same class as a record and as a dataclass."""
    @record(frozen=frozen)
    class Point:
        x: int
        y: int = 0
        tags: list = field(default_factory=list)

    ours = Point

    @dataclasses.dataclass(frozen=frozen)
    class Point:  # type: ignore[no-redef]  # noqa: F811
        x: int
        y: int = 0
        tags: list = dataclasses.field(default_factory=list)

    return ours, Point


@pytest.mark.parametrize("frozen", [False, True])
def test_behaves_like_a_dataclass(frozen: bool) -> None:
    ours, theirs = _pair(frozen)
    assert not ours.__init__.__code__.co_filename.startswith("<record")   # compiled by the first instance
    a, b = ours(1), theirs(1)
    assert ours.__init__.__code__.co_filename.startswith("<record")
    assert repr(a) == repr(b) and repr(a).endswith(".Point(x=1, y=0, tags=[])")
    assert a == ours(1, 0, []) and a != ours(2) and (a == b) is False
    assert ours.__match_args__ == theirs.__match_args__ == ("x", "y", "tags")
    assert ours.y == 0 and not hasattr(ours, "tags")   # plain defaults stay class attributes
    assert ours(1).tags is not ours(1).tags
    if frozen:
        assert hash(ours(1, 0, ())) == hash(theirs(1, 0, ())) == hash((1, 0, ()))
        with pytest.raises(FrozenInstanceError):
            a.x = 2
        with pytest.raises(AttributeError):
            del a.x
    else:
        with pytest.raises(TypeError):
            hash(a)
        a.x = 5
        assert a.x == 5
    with pytest.raises(TypeError):
        ours()


def test_field_options_post_init_and_replace() -> None:
    @record(frozen=True)
    class Thing:
        name: str
        cache: dict = field(default_factory=dict, repr=False, compare=False)
        size: int = field(init=False, default=0)

        def __post_init__(self) -> None:
            object.__setattr__(self, "size", len(self.name))

    one = Thing("abc")
    assert one.size == 3 and repr(one).endswith(".Thing(name='abc', size=3)")
    assert one == Thing("abc", {"other": 1}) and hash(one) == hash(Thing("abc"))
    two = replace(one, name="abcd")
    assert two.size == 4 and two.name == "abcd" and type(two) is Thing
    with pytest.raises(ValueError):
        replace(one, size=1)
    assert [f.name for f in fields(one)] == ["name", "cache", "size"]


def test_own_methods_are_kept_and_slots_make_a_slotted_class() -> None:
    @record(slots=True)
    class Slotted:
        a: int
        b: str = "x"

        def __repr__(self) -> str:
            return "mine"

    s = Slotted(1)
    assert repr(s) == "mine" and Slotted.__slots__ == ("a", "b") and not hasattr(s, "__dict__")
    with pytest.raises(AttributeError):
        s.other = 1  # type: ignore[attr-defined]


def test_declaration_errors() -> None:
    with pytest.raises(ValueError, match="mutable default"):
        @record
        class Bad:
            items: list = []  # noqa: RUF012
    with pytest.raises(TypeError, match="follows default"):
        @record
        class Order:
            a: int = 0
            b: int
