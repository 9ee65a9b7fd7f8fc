"""Values files `--fix` edits besides a chart's values.yaml, and the check that a values fix
renders as the same fix in a plain file would.

A values file given for the renders (`--values`, `render.values`, a chart's
`ci/*-values.yaml` render, a values file a script in the tree passes to helm) overrides
values.yaml: when the value comes from there, the fix is made there. Only a file inside the
scanned tree is edited, and every render that reads it is rendered again to check the fix.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Callable

from gpulint.fix.valuesedits import expected
from gpulint.load.yamlload import Document, load_documents
from gpulint.render.boundary import inside, repository_root
from gpulint.results.findings import Finding


def given_values(charts: list, options: Any) -> dict[str, tuple[str, list]]:
    """{display: (real path, the chart renders that read it)} of the values files given for
    renders that lie inside the repository of the chart (render/boundary.py: what its render
    may read); a file outside it is never edited."""
    out: dict[str, tuple[str, list]] = {}

    def add(display: str, path: str, render: Any) -> None:
        if not inside(Path(path), repository_root(Path(render.real), options.scan_roots)):
            return
        real, renders = out.setdefault(display, (os.path.abspath(path), []))
        if render not in renders:
            renders.append(render)

    for chart in charts:
        for values in options.values:   # read by every render
            add(values, values, chart)
        if chart.values is not None:
            for path, shown in zip(chart.values.files, chart.values.shown):
                add(shown, path, chart)
    return out


def shape_problem(renders: list[tuple[str | None, str | None]], fixed: list[Finding],
                  again: Callable[[], list[str | None]] | None = None) -> str | None:
    """Why the renders after a round of values fixes are not the renders before with the same fixes
    made in plain files (each fix's `rendered` edits on its object), or None when they are.
    `again()`: the renders before, made once more: a document that differs between the two
    (a generated password, a timestamp) says nothing about the fixes and is not compared."""
    for at, (before_text, after_text) in enumerate(renders):
        if before_text is None or after_text is None:
            continue
        before = _documents(before_text)
        after = _documents(after_text)
        if len(before) != len(after):
            return "no fix: rendered with the edited values, the chart writes other objects"
        for index, (old, new) in enumerate(zip(before, after)):
            want = old.data
            for finding in fixed:
                if finding.fix is not None and finding.fix.rendered and _is(old.data, finding):
                    want = expected(want, finding.fix.rendered)
                    if want is None:
                        return f"no fix: {finding.rule_id}'s edits do not apply to the render of {_name(old.data)}"
            for _attempt in range(_UNSTABLE_MAX):
                if want == new.data:
                    break
                path = _difference(want, new.data, ())
                redone = again()[at] if again is not None else None
                twice = _documents(redone) if redone is not None else []
                if len(twice) != len(before) or _value(twice[index].data, path) == _value(old.data, path):
                    return (f"no fix: the chart rendered with the edited values differs from the fixed object at "
                            f"{_dotted(path) or 'the document'} of {_name(old.data)} (the values are read elsewhere "
                            "too, or written otherwise than the template reads them)")
                want = _replaced(want, path, _value(new.data, path))   # not the same when rendered twice
            else:
                return f"no fix: the chart renders {_name(old.data)} differently each time"
    return None


def _documents(text: str) -> list[Document]:
    return [doc for doc in load_documents(text) if isinstance(doc, Document) and doc.data is not None]


def _is(data: Any, finding: Finding) -> bool:
    obj = finding.obj
    if obj is None or not isinstance(data, dict):
        return False
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    return data.get("kind") == obj.kind and meta.get("name") == obj.name


def _name(data: Any) -> str:
    meta = data.get("metadata") if isinstance(data, dict) and isinstance(data.get("metadata"), dict) else {}
    kind = data.get("kind") if isinstance(data, dict) else None
    return f"{kind} {meta.get('name')}" if kind else "a document"


def _difference(want: Any, got: Any, path: tuple) -> tuple:
    """The path of the first place `got` differs from `want`."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in list(want) + [k for k in got if k not in want]:
            if want.get(key, _ABSENT) != got.get(key, _ABSENT):
                return _difference(want.get(key, _ABSENT), got.get(key, _ABSENT), path + (key,))
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got)):
            if a != b:
                return _difference(a, b, path + (i,))
    return path


def _value(data: Any, path: tuple) -> Any:
    for step in path:
        if isinstance(data, dict) and step in data or isinstance(data, list) and isinstance(step, int) \
                and 0 <= step < len(data):
            data = data[step]
        else:
            return _ABSENT
    return data


def _replaced(data: Any, path: tuple, value: Any) -> Any:
    """`data` with the node at `path` made `value` (removed when _ABSENT)."""
    if not path:
        return value
    out = copy.copy(data)
    head = path[0]
    if len(path) == 1 and value is _ABSENT:
        del out[head]
    else:
        out[head] = _replaced(out[head] if head in out or isinstance(out, list) else {}, path[1:], value)
    return out


def _dotted(path: tuple) -> str:
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


_ABSENT = object()
_UNSTABLE_MAX = 20   # places of one document a template may generate anew on each render
