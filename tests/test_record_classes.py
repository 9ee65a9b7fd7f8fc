"""gpulint's frozen and by-value records keep the behaviour they had as dataclasses: the rule API
compares and hashes by value; classes made frozen refuse assignment and deletion."""

from __future__ import annotations

import dataclasses
import math

import pytest

from gpulint.api import Admission, Applicability, CopyOf, Edit, Fix, KeyAt, LineAt, TextAt, ValueAt, Violation
from gpulint.config.render import ChartValues, ConfiguredChart, RenderOptions
from gpulint.config.settings import ConfigProblem, Exemption
from gpulint.inputs.discovery import _Escape
from gpulint.inputs.gitignore import Ignored
from gpulint.knowledge.gpu import ImageRule
from gpulint.knowledge.quantity import QuantityIssue
from gpulint.knowledge.resources import ResourceNames, ShareRange
from gpulint.knowledge.roles import Role
from gpulint.model.index import ClaimSource, ExtendedResourceSource
from gpulint.model.objects import ObjectRef
from gpulint.model.workload import TypeProblem
from gpulint.record import FrozenInstanceError, fields, record, set_field
from gpulint.report.destinations import Target
from gpulint.suppress.systemcomponents import SystemComponent


@record(eq=True, frozen=True)
class Shared:
    __slots__ = ("a", "b")

    def __init__(self, a: object, b: object = 0) -> None:
        set_field(self, "a", a)
        set_field(self, "b", b)


@dataclasses.dataclass(frozen=True)
class Generated:
    a: object
    b: object = 0


NAN = math.nan
PAIRS = [((1, 2), (1, 2)), ((1, 2), (1, 3)), ((1, 2), (2, 2)), (("x", (1,)), ("x", (1,))), ((NAN, 1), (NAN, 1)),
         ((float("nan"), 1), (float("nan"), 1)), ((1, 1.0), (1, 1)), (([1], 2), ([1], 2))]


@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_equality_is_the_dataclass_one(left: tuple, right: tuple) -> None:
    # (a NaN held twice is equal, two NaNs are not: tuples compare items by identity first)
    assert (Shared(*left) == Shared(*right)) is (Generated(*left) == Generated(*right))
    assert (Shared(*left) != Shared(*right)) is (Generated(*left) != Generated(*right))


def test_hash_is_the_dataclass_one() -> None:
    assert hash(Shared(1, "x")) == hash(Generated(1, "x")) == hash((1, "x"))
    with pytest.raises(TypeError, match="unhashable"):
        hash(Shared([1]))
    assert Shared(1, 0) != Generated(1, 0) and Shared(1, 0) != (1, 0)


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


def test_an_own_hash_is_kept() -> None:
    names = ResourceNames(("nvidia.com/gpu",), (), ("nvidia.com/gpu",))
    assert hash(names) == hash((("nvidia.com/gpu",), (), ("nvidia.com/gpu",)))


@pytest.mark.parametrize("made", [
    RenderOptions(), ChartValues(("v.yaml",), ("v.yaml",)), ConfiguredChart("/c", ChartValues()),
    ConfigProblem("f", 1, 2, "m"), Exemption("why"), ShareRange(1, 100, 1, "x"),
    ResourceNames(("a",), (), ("a",)), Role("device plugin", "its mount"),  # type: ignore[arg-type]
    ImageRule("docker.io/x", "all", "s"),
    _Escape("dir", None), Ignored(frozenset(), frozenset()), TypeProblem(("spec",), "m"), QuantityIssue("missing", None),
    ClaimSource(ObjectRef("resource.k8s.io/v1", "ResourceClaim", "c", "ns"), ("gpu",)),
    ExtendedResourceSource(ObjectRef("resource.k8s.io/v1", "DeviceClass", "d", None), "example.com/gpu"),
    SystemComponent("n", ("i",), frozenset()), Target("json", None), KeyAt(("a",)), Violation("m", KeyAt(("a",))),
], ids=lambda made: type(made).__name__)
def test_frozen_records_refuse_assignment(made: object) -> None:
    name = fields(made)[0]
    before = getattr(made, name)
    with pytest.raises(FrozenInstanceError):
        setattr(made, name, before)
    with pytest.raises(FrozenInstanceError):
        delattr(made, name)
    assert getattr(made, name) is before
