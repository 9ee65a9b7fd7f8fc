"""Reports written as they are made give the bytes the standard encoder gives."""

from __future__ import annotations

import io
import json
import math

from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint import __version__
from gpulint.config.selection import select_rules
from gpulint.inputs.discovery import discover
from gpulint.report import json_report, jsonstream, summary
from gpulint.results.scanning import ScanConfig
from gpulint.scan.engine import scan
from gpulint.scan.registry import load_rules

_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30)
            | st.floats(allow_nan=True, allow_infinity=True) | st.text())
_KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=3))
def test_dumps_is_json_dumps_with_indent(value: object, level: int) -> None:
    # Nested `level` deep, every line after the first is indented 2 * level more
    # (JSON strings hold no raw line breaks, so only the layout's are shifted).
    expected = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * level)
    assert jsonstream.dumps(value, level) == expected


def test_items_streams_a_list() -> None:
    for value in ([], [1], [{"a": [1, {}]}, "x", []]):
        out: list[str] = []
        jsonstream.items(iter(value), 1, out.append)
        assert "".join(out) == jsonstream.dumps(value, 1)


def test_special_values() -> None:
    for value in (math.nan, math.inf, -math.inf, 1e300, -0.0, "\x00\u2028é\"\\", {1: 2, None: 3, False: 4, 2.5: 5}):
        assert jsonstream.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_the_json_report_is_what_json_dumps_makes() -> None:
    rules = load_rules()
    for target in (FIXTURES, FIXTURES / "core" / "not-kubernetes.yaml"):
        result = scan(discover([str(target)]).inputs, ScanConfig(rules=select_rules(rules, ["ALL"]), all_rules=rules))
        doc = {"version": __version__, "schema_version": json_report.SCHEMA_VERSION,
               "findings": [json_report.as_dict(f) for f in result.findings],
               "summary": summary(result)}
        expected = json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
        assert json_report.render(result) == expected
        out = io.StringIO()
        json_report.write(result, out)
        assert out.getvalue() == expected


def test_a_finding_is_written_as_its_dict_would_be() -> None:
    from gpulint.api import Severity
    from gpulint.load.locations import Span
    from gpulint.model.objects import ObjectRef
    from gpulint.results.findings import (Finding, FindingFix, FindingSource, MappedLocation, Suppression,
                                          TextEdit)

    full = Finding("GPU003", "visible-devices-env", Severity.ERROR, 'msg "quoted" é\n\t\x01', "a/b.yaml",
                   Span(1, 2, 3, 4), ObjectRef("apps/v1", "Deployment", "n", None), "c", "spec.x",
                   FindingSource("template", 't "é".yaml'), Suppression("inline", "why"),
                   [MappedLocation("template", "chart/t.yaml", Span(5, 6, 5, 9), "template"),
                    MappedLocation("values", "chart/values.yaml", Span(7, 1, 7, 3))])
    bare = Finding("GPU000", "invalid-input", Severity.INFO, "m", "-", Span(1, 1, 1, 1))
    namespaced = Finding("GPU001", "x", Severity.WARNING, "m", "f", Span(1, 1, 1, 1),
                         ObjectRef("v1", "Pod", "p", "ml"), source=FindingSource("origin", "base/pod.yaml"))
    fixed = Finding("GPU003", "x", Severity.ERROR, "m", "f", Span(1, 1, 1, 1),
                    fix=FindingFix("Set it", "safe", (TextEdit(Span(2, 3, 2, 9), 'a "é"\n'),
                                                      TextEdit(Span(4, 1, 4, 1), ""))))
    in_values = Finding("GPU003", "x", Severity.ERROR, "m", "f", Span(1, 1, 1, 1),
                        fix=FindingFix("Set it", "unsafe", (TextEdit(Span(1, 1, 1, 2), "x"),), "chart/values.yaml"))
    no_edits = Finding("GPU003", "x", Severity.ERROR, "m", "f", Span(1, 1, 1, 1), fix=FindingFix("t", "safe", ()))
    unfixed = Finding("GPU003", "x", Severity.ERROR, "m", "f", Span(1, 1, 1, 1), no_fix='no fix: "why" é')
    for finding in (full, bare, namespaced, fixed, in_values, no_edits, unfixed):
        assert json_report.finding_text(finding) == jsonstream.dumps(json_report.as_dict(finding), 2)
    assert '"title": "no fix: \\"why\\" é"' in json_report.finding_text(unfixed)


def test_stable_path_names_list_entries_by_their_name() -> None:
    from gpulint.load.yamlload import load_documents
    from gpulint.model.objects import objects_in
    from gpulint.results.findings import stable_path

    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
            "  - name: app\n    env: [{name: A, value: x}, {value: y}]\n  - {image: i}\n  '': {k: v}\n")
    obj = next(objects_in("p.yaml", next(load_documents(text))))
    assert stable_path(obj, ("spec", "containers", 0, "env", 0, "value")) == "spec.containers[name=app].env[name=A].value"
    assert stable_path(obj, iter(("spec", "containers", 0, "env", 1))) == "spec.containers[name=app].env[1]"
    assert stable_path(obj, ("spec", "containers", 1, "image")) == "spec.containers[1].image"
    assert stable_path(obj, ("spec", "containers", 5, "x")) == "spec.containers[5].x"
    assert stable_path(obj, ("", "k")) == "k"
    assert stable_path(obj, ()) == ""
