"""gpulint.setonce.frozen_dataclass: frozen as dataclass(frozen=True) is, with shared methods."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from gpulint import record
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
from gpulint.setonce import frozen_dataclass


@frozen_dataclass(frozen=True, repr=False)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, repr=False)
class StdPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@frozen_dataclass(frozen=True, repr=False)
class Tagged:
    """Compared without its tags: the class hashes itself."""
    x: int
    tags: list[str] = dataclasses.field(default_factory=list, compare=False)

    def __hash__(self) -> int:
        return self.x


def test_fields_are_set_by_init_and_never_again() -> None:
    point = Point(1, 2)
    assert (point.x, point.y, point.tags) == (1, 2, ())
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'z'"):
        point.z = 5  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
        del point.y  # type: ignore[misc]
    assert (point.x, point.y) == (1, 2)
    assert vars(point) == {"x": 1, "y": 2, "tags": ()}


def test_equality_and_hash_are_the_frozen_dataclass_ones() -> None:
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1) and Point(1, 2) != Point(1, 2, ("a",))
    assert hash(Point(1, 2, ("a",))) == hash(StdPoint(1, 2, ("a",))) == hash((1, 2, ("a",)))
    assert Point(1, 2) != StdPoint(1, 2) and Point.__eq__(Point(1), StdPoint(1)) is NotImplemented
    assert {Point(1, 2), Point(1, 2)} == {Point(1, 2)}
    assert Tagged(1, ["a"]) == Tagged(1, ["b"]) and Tagged(1) != Tagged(2) and hash(Tagged(7)) == 7


def test_replace_copy_and_pickle_make_equal_frozen_instances() -> None:
    point = Point(1, 2, ("a",))
    for other in (dataclasses.replace(point, y=3), copy.copy(point), copy.deepcopy(point),
                  pickle.loads(pickle.dumps(point))):
        assert type(other) is Point
        with pytest.raises(dataclasses.FrozenInstanceError):
            other.x = 9  # type: ignore[misc]
    assert dataclasses.replace(point, y=3) == Point(1, 3, ("a",))
    assert pickle.loads(pickle.dumps(point)) == point


def test_only_for_frozen_classes_with_fields_init_sets() -> None:
    with pytest.raises(TypeError, match="frozen=True classes with a __dict__ only"):
        frozen_dataclass(frozen=False)
    with pytest.raises(TypeError, match="frozen=True classes with a __dict__ only"):
        frozen_dataclass(frozen=True, slots=True)
    with pytest.raises(TypeError, match="Later.z: __init__ does not set it"):
        @frozen_dataclass(frozen=True)
        class Later:
            z: int = dataclasses.field(init=False)
    with pytest.raises(TypeError, match="Partly.z: not compared like the other fields"):
        @frozen_dataclass(frozen=True)
        class Partly:
            y: int
            z: int = dataclasses.field(compare=False)


def test_eq_false_compares_by_identity_and_an_own_hash_is_kept() -> None:
    @frozen_dataclass(frozen=True, eq=False)
    class Plain:
        a: int

    one = Plain(1)
    assert one != Plain(1) and hash(one) == object.__hash__(one)
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
], ids=lambda made: type(made).__name__)
def test_the_classes_made_so_refuse_assignment(made: object) -> None:
    # (some of these classes are gpulint.record records now, the others still dataclasses)
    is_record = hasattr(type(made), "__record_fields__")
    name = record.fields(made)[0] if is_record else dataclasses.fields(made)[0].name   # type: ignore[arg-type]
    refused = record.FrozenInstanceError if is_record else dataclasses.FrozenInstanceError
    before = getattr(made, name)
    with pytest.raises(refused):
        setattr(made, name, before)
    with pytest.raises(refused):
        delattr(made, name)
    assert getattr(made, name) is before
