"""Inline suppressions are read only from real comments: never from text inside a YAML scalar, never from JSON.

A line of a quoted multi-line string, or a JSON string, can read exactly like
`# gpulint: ignore[GPU003] ...`; a reviewer sees a string, so it must not
silence a finding (nor count as a directive for GPU090/GPU091/GPU092).
"""

from __future__ import annotations

import pytest
from conftest import active, scan_json

from gpulint.load.comments import CommentMap

_POD = """apiVersion: v1
kind: Pod
metadata:
  name: attack
spec:
  containers:
  - name: app
    image: busybox:1.36
    env:
    - name: GREETING
{greeting}
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
"""


@pytest.mark.parametrize("greeting", [
    '      value: "hello\n        # gpulint: ignore[GPU003] hidden inside a double-quoted string"',
    "      value: 'hello\n        # gpulint: ignore[GPU003] hidden inside a single-quoted string'",
])
def test_a_directive_inside_a_quoted_multi_line_string_suppresses_nothing(greeting: str) -> None:
    _, report = scan_json("--select", "ALL", "-", input=_POD.format(greeting=greeting))
    assert active(report) == [("GPU003", 13, 7)]  # and no GPU090/GPU092 about the text in the string


def test_a_real_comment_in_the_same_place_still_suppresses() -> None:
    text = _POD.format(greeting='      value: "hello"\n    # gpulint: ignore[GPU003] burn-in node, cordoned')
    _, report = scan_json("--select", "ALL", "-", input=text)
    assert active(report) == []
    (finding,) = report["findings"]
    assert (finding["rule"], finding["line"], finding["suppression"]["reason"]) == (
        "GPU003", 13, "burn-in node, cordoned")


def test_a_comment_after_a_quoted_value_on_the_finding_line_suppresses() -> None:
    text = _POD.replace("    - name: NVIDIA_VISIBLE_DEVICES",
                        '    - name: "NVIDIA_VISIBLE_DEVICES"  # gpulint: ignore[GPU003] test rig "quoted"')
    text = text.format(greeting='      value: "#not a comment"')
    _, report = scan_json("-", input=text)
    assert active(report) == [] and report["summary"]["suppressed"] == 1


def test_a_json_string_of_another_object_on_the_same_line_suppresses_nothing() -> None:
    pod = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "app", '
           '"image": "busybox", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}}')
    note = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"n": " # gpulint: ignore[GPU003] x"}}'
    _, report = scan_json("--select", "ALL", "-", input=f"{pod} {note}\n")
    assert active(report) == [("GPU003", 1, 132)]


def test_json_has_no_directives_even_where_yaml_would_read_a_comment() -> None:
    # A `#` after whitespace in flow text libyaml reads: still JSON text, so no directive.
    text = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},\n # gpulint: ignore[GPU003] x\n' \
           ' "spec": {"containers": [{"name": "app", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}}\n'
    _, report = scan_json("-", input=text)
    assert active(report) == [("GPU003", 3, 50)]


def test_comment_map_tells_comments_from_scalar_text() -> None:
    text = 'a: "x # y\n  # z"  # real\nb: |\n  # script comment\nc: \'# q\'\n'
    comments = CommentMap(text, line_offset=10)
    assert not comments.is_comment(11, 8)      # inside the double-quoted scalar
    assert not comments.is_comment(12, 3)      # its second line
    assert comments.is_comment(12, 8)          # after it: a comment
    assert comments.is_comment(14, 3)          # a block scalar's line: the script's comment
    assert not comments.is_comment(15, 5)      # inside a single-quoted scalar
    assert not comments.is_comment(99, 1)      # outside the text


def test_comment_map_counts_what_follows_a_syntax_error_as_comments() -> None:
    # What the scanner never reached cannot be told apart: the document failed to load, so
    # only its GPU000 finding is at stake, which such a comment may suppress.
    comments = CommentMap("a: [\n: b\n# gpulint: ignore[GPU000] broken on purpose\n")
    assert comments.is_comment(3, 1)


def test_telling_comments_apart_stops_at_the_depth_limit() -> None:
    # libyaml's scanner is quadratic in the nesting depth: a million `[` would take hours.
    text = "apiVersion: v1\nkind: Pod\n# gpulint: ignore[GPU000] nested on purpose\nspec: " + "[" * 1_000_000 + "\n"
    _, report = scan_json("-", input=text)
    assert [(f["rule"], f["line"], f["suppressed"]) for f in report["findings"]] == [("GPU000", 4, True)]
