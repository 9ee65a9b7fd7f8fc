"""libyaml's parser events as plain tuples, made without running a Python class per event.

ruamel.yaml.clib's C parser is fast; what costs is the object it makes for each
event: a call of ruamel's event class, a Python `__init__` setting eight slots
(a third of the time gpulint spends reading YAML). The C module looks those
classes up by name in its own namespace at every event. While gpulint parses
(inside `parsing()`), the names point at the small functions below instead, and
an event is a tuple: (kind, start mark, end mark, fields of that kind...).

Outside these windows the names are ruamel's classes again. A window is
counted across threads (renders parse in the background), so it stays open
while any gpulint parse runs; the child of a fork starts with none open. Code
other than gpulint's that asks ruamel's C parser for event objects, or uses
ruamel's C emitter, in another thread during such a window would meet the
tuples; ruamel's loaders compose in C without event objects, and its round-trip
mode is pure Python, so neither is concerned.

If the installed ruamel.yaml.clib does not call these names as this module
expects (checked once, on a sample holding every kind of event), ruamel's own
events are turned into the same tuples instead: slower, identical.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterator

import _ruamel_yaml
from _ruamel_yaml import CParser

# Kinds (the first field of every event).
SCALAR, MAP_START, SEQ_START, MAP_END, SEQ_END, ALIAS, DOC_START, DOC_END, STREAM_START, STREAM_END = range(10)

# Fields: every event has its kind and marks first; anchors, tags and `implicit` of the
# node events next; then a scalar's value and style, or a collection's flow style.
KIND, START_MARK, END_MARK = 0, 1, 2
ANCHOR, TAG, IMPLICIT = 3, 4, 5
VALUE, STYLE = 6, 7
FLOW = 6


# The factories, called by the C module as ruamel's classes are (positional arguments). Only what
# gpulint reads is kept. The five made for every node take exactly the arguments the C module passes
# and write their kind as a literal: a call with defaults to fill, or a global to load, costs more
# (about a twentieth of their cost, once per event). Were the C module to pass other arguments, the
# check below fails and ruamel's own events are converted instead.

def scalar(anchor: Any, tag: Any, implicit: Any, value: Any, start_mark: Any, end_mark: Any, style: Any) -> tuple:
    return (0, start_mark, end_mark, anchor, tag, implicit, value, style)   # SCALAR


def mapping_start(anchor: Any, tag: Any, implicit: Any, start_mark: Any, end_mark: Any, flow_style: Any) -> tuple:
    return (1, start_mark, end_mark, anchor, tag, implicit, flow_style)   # MAP_START


def sequence_start(anchor: Any, tag: Any, implicit: Any, start_mark: Any, end_mark: Any, flow_style: Any) -> tuple:
    return (2, start_mark, end_mark, anchor, tag, implicit, flow_style)   # SEQ_START


def mapping_end(start_mark: Any, end_mark: Any) -> tuple:
    return (3, start_mark, end_mark)   # MAP_END


def sequence_end(start_mark: Any, end_mark: Any) -> tuple:
    return (4, start_mark, end_mark)   # SEQ_END


def alias(anchor: Any, start_mark: Any = None, end_mark: Any = None, style: Any = None, comment: Any = None) -> tuple:
    return (ALIAS, start_mark, end_mark, anchor)


def document_start(start_mark: Any = None, end_mark: Any = None, explicit: Any = None, version: Any = None,
                   tags: Any = None, comment: Any = None) -> tuple:
    return (DOC_START, start_mark, end_mark)


def document_end(start_mark: Any = None, end_mark: Any = None, explicit: Any = None, comment: Any = None) -> tuple:
    return (DOC_END, start_mark, end_mark)


def stream_start(start_mark: Any = None, end_mark: Any = None, encoding: Any = None, comment: Any = None) -> tuple:
    return (STREAM_START, start_mark, end_mark)


def stream_end(start_mark: Any = None, end_mark: Any = None, comment: Any = None) -> tuple:
    return (STREAM_END, start_mark, end_mark)


_FACTORIES: dict[str, Callable[..., tuple]] = {
    "ScalarEvent": scalar, "MappingStartEvent": mapping_start, "SequenceStartEvent": sequence_start,
    "MappingEndEvent": mapping_end, "SequenceEndEvent": sequence_end, "AliasEvent": alias,
    "DocumentStartEvent": document_start, "DocumentEndEvent": document_end,
    "StreamStartEvent": stream_start, "StreamEndEvent": stream_end,
}
_ORIGINALS = {name: getattr(_ruamel_yaml, name, None) for name in _FACTORIES}


def from_ruamel(event: Any) -> tuple:
    """The tuple of one of ruamel's event objects (the fallback, and what the check compares)."""
    name = type(event).__name__
    factory = _FACTORIES[name]
    if name == "ScalarEvent":
        return factory(event.anchor, event.ctag, event.implicit, event.value, event.start_mark, event.end_mark,
                       event.style)
    if name in ("MappingStartEvent", "SequenceStartEvent"):
        return factory(event.anchor, event.ctag, event.implicit, event.start_mark, event.end_mark, event.flow_style)
    if name == "AliasEvent":
        return factory(event.anchor, event.start_mark, event.end_mark)
    return factory(event.start_mark, event.end_mark)


# --- the windows -----------------------------------------------------------------------------

_lock = threading.Lock()
_open = 0                      # parses running now, in any thread
_lean: bool | None = None      # whether the factories are known to work (None: not checked yet)


class parsing:
    """A window in which `reader` may be used (re-entrant, counted across threads)."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _open
        if _lean if _lean is not None else _check():
            with _lock:
                if _open == 0:
                    _swap(_FACTORIES)
                _open += 1

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        global _open
        if _lean:
            with _lock:
                _open -= 1
                if _open == 0:
                    _swap(_ORIGINALS)


_namespace = vars(_ruamel_yaml)


def _swap(names: dict[str, Any]) -> None:
    _namespace.update(names)   # (one call: a window opens and closes for every batch of chunks)


# A fork (gpulint's index helper and --jobs workers fork while renders may be parsing in
# threads) waits for the lock, so that the child never inherits it held; the child has none of
# the parent's other threads, hence none of their windows.
def _before_fork() -> None:
    _lock.acquire()


def _after_fork_in_parent() -> None:
    _lock.release()


def _after_fork_in_child() -> None:
    global _lock, _open
    _lock = threading.Lock()
    if _open:
        _open = 0
        _swap(_ORIGINALS)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def reader(text: str) -> Callable[[], tuple]:
    """The next event of `text` at each call (inside `parsing()` only)."""
    get_event = CParser(text).get_event
    if _lean:
        return get_event
    return lambda: from_ruamel(get_event())


# A sample with every kind of event, tags, anchors, aliases and every scalar style.
_SAMPLE = "%YAML 1.1\n--- !t\na: &x [1, {b: *x}]\n'c': \"d\"\ne: |\n  f\n? g\n: !!str h\n...\n--- [i]\n"


def _check() -> bool:
    """Whether the C module makes its events through the names swapped (once per process)."""
    global _lean
    with _lock:
        if _lean is None:
            _lean = _compatible()
    return _lean


def _compatible() -> bool:
    if any(original is None for original in _ORIGINALS.values()):
        return False
    try:
        expected = [from_ruamel(event) for event in through_end(CParser(_SAMPLE).get_event)]
        _swap(_FACTORIES)
        try:
            lean = list(through_end(CParser(_SAMPLE).get_event))
        finally:
            _swap(_ORIGINALS)
    except Exception:  # noqa: BLE001 - any surprise means: keep ruamel's classes
        return False
    return _same(expected, lean)


def through_end(get_event: Callable[[], Any]) -> Iterator[Any]:
    """Every event of `get_event`'s stream, its end included (tuples, or ruamel's events)."""
    while True:
        event = get_event()
        yield event
        if isinstance(event, tuple) and event[KIND] == STREAM_END or type(event).__name__ == "StreamEndEvent":
            return


def _same(expected: list[tuple], lean: list[tuple]) -> bool:
    def plain(event: tuple) -> tuple:   # marks compared by position
        return (event[KIND], *((mark.index, mark.line, mark.column) for mark in event[START_MARK:END_MARK + 1]),
                *event[END_MARK + 1:])

    return len(expected) == len(lean) and all(type(e) is tuple for e in lean) \
        and [plain(e) for e in expected] == [plain(e) for e in lean]
