"""Cheaper construction of ruamel.yaml's parser events, with identical results.

ruamel.yaml.clib's C parser is fast; what costs is the Python object it makes
for every event: `ScalarEvent(...)` runs ScalarEvent.__init__, which calls
NodeEvent.__init__, which calls Event.__init__ (three Python frames per
scalar, the same for every mapping/sequence start). On a large scan that is
about a fifth of the time spent reading YAML.

`install()` gives ScalarEvent and CollectionStartEvent one flat `__init__`
each, setting the same slots to the same values as the original chain (same
parameters, same defaults, the same `CommentCheck` rule for `comment`). The
classes stay ruamel's own, so every other user of ruamel.yaml in the process
(its composer compares event classes by identity) sees exactly the events it
saw before, only made faster. Nothing else is touched: swapping the C
module's event classes for lean ones of our own would be a little faster but
would hand foreign events to any other thread parsing with ruamel meanwhile.

The flat versions are installed only when the installed ruamel.yaml has the
constructor chain they were written against (checked by signature and by
building sample events both ways); otherwise the originals stay.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import events as ev

_ORIGINAL_SCALAR_INIT = ev.ScalarEvent.__init__
_ORIGINAL_COLLECTION_INIT = ev.CollectionStartEvent.__init__
_COMMENT_CHECK = getattr(ev, "CommentCheck", None)


def _scalar_init(self: Any, anchor: Any, tag: Any, implicit: Any, value: Any, start_mark: Any = None,
                 end_mark: Any = None, style: Any = None, comment: Any = None) -> None:
    self.start_mark = start_mark
    self.end_mark = end_mark
    self.comment = None if comment is _COMMENT_CHECK else comment
    self.anchor = anchor
    self.ctag = tag
    self.implicit = implicit
    self.value = value
    self.style = style


def _collection_init(self: Any, anchor: Any, tag: Any, implicit: Any, start_mark: Any = None,
                     end_mark: Any = None, flow_style: Any = None, comment: Any = None,
                     nr_items: Any = None) -> None:
    self.start_mark = start_mark
    self.end_mark = end_mark
    self.comment = None if comment is _COMMENT_CHECK else comment
    self.anchor = anchor
    self.ctag = tag
    self.implicit = implicit
    self.flow_style = flow_style
    self.nr_items = nr_items


_SCALAR_SLOTS = ("start_mark", "end_mark", "comment", "anchor", "ctag", "implicit", "value", "style")
_COLLECTION_SLOTS = ("start_mark", "end_mark", "comment", "anchor", "ctag", "implicit", "flow_style", "nr_items")


def _params(function: Any) -> tuple:
    code = getattr(function, "__code__", None)
    if code is None:
        return ()
    return code.co_varnames[:code.co_argcount], function.__defaults__


def _slots(cls: type) -> tuple[str, ...]:
    out: list[str] = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        out.extend((slots,) if isinstance(slots, str) else slots)
    return tuple(out)


def _same(cls: type, original: Any, flat: Any, slots: tuple[str, ...], samples: list[tuple]) -> bool:
    """Whether `flat` sets every slot as `original` does, for each sample argument list."""
    for args, kwargs in samples:
        a, b = cls.__new__(cls), cls.__new__(cls)
        original(a, *args, **kwargs)
        flat(b, *args, **kwargs)
        if [getattr(a, s, _MISSING) for s in slots] != [getattr(b, s, _MISSING) for s in slots]:
            return False
    return True


_MISSING = object()


def compatible() -> bool:
    """Whether the installed ruamel.yaml builds events exactly as the flat constructors do."""
    if _COMMENT_CHECK is None:
        return False
    if (_params(_ORIGINAL_SCALAR_INIT) != (_params(_scalar_init)[0], (None, None, None, None))
            or _params(_ORIGINAL_COLLECTION_INIT) != (_params(_collection_init)[0], (None, None, None, None, None))):
        return False
    if set(_slots(ev.ScalarEvent)) != set(_SCALAR_SLOTS) or set(_slots(ev.MappingStartEvent)) != set(_COLLECTION_SLOTS):
        return False
    marks = (object(), object())
    scalar_samples = [
        ((None, None, (True, False), "v", *marks, ""), {}),
        (("a", "tag:yaml.org,2002:str", (False, True), "", *marks, '"'), {}),
        (("a", "!x", (False, False), "v"), {"style": "|", "comment": ["c"]}),
        ((None, None, (True, False), "v", *marks, ""), {"comment": _COMMENT_CHECK}),
    ]
    collection_samples = [
        ((None, None, True, *marks, False), {}),
        (("a", "!t", False, *marks, True), {"comment": ["c"], "nr_items": 3}),
        ((None, None, True), {"comment": _COMMENT_CHECK}),
    ]
    return (_same(ev.ScalarEvent, _ORIGINAL_SCALAR_INIT, _scalar_init, _SCALAR_SLOTS, scalar_samples)
            and _same(ev.MappingStartEvent, _ORIGINAL_COLLECTION_INIT, _collection_init, _COLLECTION_SLOTS,
                      collection_samples))


def install() -> bool:
    """Install the flat constructors if they are equivalent; whether they are in place."""
    if ev.ScalarEvent.__init__ is _scalar_init:
        return True
    if ev.ScalarEvent.__init__ is not _ORIGINAL_SCALAR_INIT or not compatible():
        return False
    ev.ScalarEvent.__init__ = _scalar_init  # type: ignore[method-assign]
    ev.CollectionStartEvent.__init__ = _collection_init  # type: ignore[method-assign]
    return True
