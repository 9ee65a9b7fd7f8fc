"""gpulint.byvalue.by_value: dataclass(eq=True)'s equality and frozen hash, shared by the rule API's classes."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest

from gpulint.api import Admission, Applicability, CopyOf, Edit, Fix, KeyAt, LineAt, TextAt, ValueAt, Violation
from gpulint.byvalue import by_value
from gpulint.record import FrozenInstanceError, fields
from gpulint.report.destinations import Target
from gpulint.suppress.systemcomponents import SystemComponent


@by_value
@dataclasses.dataclass(frozen=True, eq=False)
class Shared:
    a: object
    b: object = 0


@dataclasses.dataclass(frozen=True)
class Generated:
    a: object
    b: object = 0


NAN = math.nan
PAIRS = [((1, 2), (1, 2)), ((1, 2), (1, 3)), ((1, 2), (2, 2)), (("x", (1,)), ("x", (1,))), ((NAN, 1), (NAN, 1)),
         ((float("nan"), 1), (float("nan"), 1)), ((1, 1.0), (1, 1)), (([1], 2), ([1], 2))]


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_equality_is_the_generated_one(left: tuple, right: tuple) -> None:
    assert (Shared(*left) == Shared(*right)) is (Generated(*left) == Generated(*right))
    assert (Shared(*left) != Shared(*right)) is (Generated(*left) != Generated(*right))


def test_hash_is_the_generated_one_and_other_classes_are_not_equal() -> None:
    assert hash(Shared(1, "x")) == hash(Generated(1, "x")) == hash((1, "x"))
    with pytest.raises(TypeError, match="unhashable"):
        hash(Shared([1]))
    assert Shared(1, 0) != Generated(1, 0) and Shared(1, 0) != (1, 0)
    assert Shared.__eq__(Shared(1), Generated(1)) is NotImplemented
    assert len({Shared(1, 2), Shared(1, 2), pickle.loads(pickle.dumps(Shared(1, 2)))}) == 1


def test_only_for_frozen_dataclasses_without_eq_whose_fields_are_all_compared() -> None:
    @dataclasses.dataclass(frozen=True)
    class WithEq:
        a: int

    @dataclasses.dataclass(eq=False)
    class Mutable:
        a: int

    @dataclasses.dataclass(frozen=True, eq=False)
    class Uncompared:
        a: int = dataclasses.field(compare=False)

    for cls, why in ((WithEq, "must be a dataclass"), (Mutable, "must be a dataclass"),
                     (Uncompared, "Uncompared.a must be set by __init__, compared and hashed"), (int, "must be")):
        with pytest.raises(TypeError, match=why):
            by_value(cls)


def test_the_rule_api_compares_and_hashes_by_value() -> None:
    fix = Fix("add a limit", Applicability.SAFE, (Edit.add(("a", "b"), CopyOf(("c",))),))
    made = [KeyAt(("a",)), ValueAt(("a", 0)), TextAt(("a",), 1, 3), LineAt(1, 2, 1, 5), fix,
            Violation("m", KeyAt(("a",)), fix=fix), Admission("m", container="c.x")]
    again = [KeyAt(("a",)), ValueAt(("a", 0)), TextAt(("a",), 1, 3), LineAt(1, 2, 1, 5),
             Fix("add a limit", Applicability.SAFE, (Edit.add(("a", "b"), CopyOf(("c",))),)),
             Violation("m", KeyAt(("a",)), fix=fix), Admission("m", container="c.x")]
    for one, other in zip(made, again):
        assert one == other and hash(one) == hash(other) and one is not other
    assert KeyAt(("a",)) != ValueAt(("a",)) and TextAt(("a",), 1, 3) != TextAt(("a",), 1, 4)
    assert Violation("m", KeyAt(("a",))) != Violation("m", KeyAt(("b",)))
    assert hash(KeyAt(("a",))) == hash((("a",),))
    with pytest.raises(FrozenInstanceError):
        KeyAt(("a",)).path = ("b",)  # type: ignore[misc]


# Made with gpulint.setonce.frozen_dataclass before they were records (tests/test_setonce.py).
@pytest.mark.parametrize("made", [SystemComponent("n", ("i",), frozenset()), Target("json", None)],
                         ids=lambda made: type(made).__name__)
def test_the_records_once_set_once_refuse_assignment(made: object) -> None:
    name = fields(made)[0]
    before = getattr(made, name)
    with pytest.raises(FrozenInstanceError):
        setattr(made, name, before)
    with pytest.raises(FrozenInstanceError):
        delattr(made, name)
    assert getattr(made, name) is before
