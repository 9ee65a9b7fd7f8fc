"""Loader: every format, and exact 1-based lines/columns in the file read."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gpulint.load.decode import BinaryInput, DecodeError, decode
from gpulint.load.locations import Span
from gpulint.load.yamlload import (
    Document,
    Limits,
    LoadError,
    load_documents,
    resolve_plain,
)


def docs(text: str) -> list:
    return list(load_documents(text))


def test_multi_document_lines_are_file_lines() -> None:
    text = "---\n# c\n---\na: 1\n...\n---\nb:\n  c: 2\n---\n"
    out = docs(text)
    assert [d.data for d in out] == [{"a": 1}, {"b": {"c": 2}}]
    assert out[0].span(("a",)) == Span(4, 4, 4, 5)
    assert out[1].span(("b", "c")) == Span(8, 6, 8, 7)
    assert out[1].span(("b", "c"), key=True) == Span(8, 3, 8, 4)
    assert [d.index for d in out] == [0, 1]


def test_document_without_separator_after_end_marker() -> None:
    out = docs("a: 1\n...\nb: 2\n")
    assert [d.data for d in out] == [{"a": 1}, {"b": 2}]
    assert out[1].span(("b",)) == Span(3, 4, 3, 5)


def test_directive_stays_with_its_document() -> None:
    out = docs("a: 1\n...\n%YAML 1.1\n---\nb: 2\n")
    assert [d.data for d in out] == [{"a": 1}, {"b": 2}]


def test_flow_style_positions() -> None:
    (doc,) = docs('{a: [1, {b: "x"}], c: d}\n')
    assert doc.span(("a", 1, "b")) == Span(1, 13, 1, 16)
    assert doc.span(("a", 1)) == Span(1, 9, 1, 17)


def test_sequence_entry_span_ends_at_its_last_value() -> None:
    (doc,) = docs("env:\n- name: A\n  value: b\n- name: C\n")
    assert doc.span(("env", 0)) == Span(2, 3, 3, 11)


@pytest.mark.parametrize("style, body, line, column", [
    ("|", "  echo a\n  docker run x\n", 4, 3),
    ("|-", "  echo a\n\n  docker run x\n", 5, 3),
    (">", "  echo a\n\n  docker run x\n", 5, 3),
])
def test_text_inside_block_scalars(style: str, body: str, line: int, column: int) -> None:
    text = f"k: 1\ns: {style}\n{body}"
    (doc,) = docs(text)
    value = doc.data["s"]
    start = value.index("docker")
    span = doc.text_span(("s",), start, start + len("docker run x"))
    assert span == Span(line, column, line, column + len("docker run x"))


def test_text_inside_plain_and_quoted_scalars() -> None:
    text = 'a: echo x; docker run y\nb: "echo; docker run z"\n'
    (doc,) = docs(text)
    i = doc.data["a"].index("docker")
    assert doc.text_span(("a",), i, i + 6) == Span(1, 12, 1, 18)
    j = doc.data["b"].index("docker")
    assert doc.text_span(("b",), j, j + 6) == Span(2, 11, 2, 17)


def test_repeated_text_maps_to_the_right_occurrence() -> None:
    (doc,) = docs("s: |\n  docker ps\n  docker run x\n")
    value = doc.data["s"]
    second = value.index("docker", 1)
    assert doc.text_span(("s",), second, second + 10).line == 3


def test_anchor_alias_and_merge_locations() -> None:
    text = "base: &b\n  x: 1\n  y: 2\nuse: *b\nm:\n  <<: *b\n  y: 3\n"
    (doc,) = docs(text)
    assert doc.data["use"] == {"x": 1, "y": 2}
    assert doc.data["m"] == {"x": 1, "y": 3}
    assert doc.span(("use", "x")) == Span(2, 6, 2, 7)     # inside the anchored node
    assert doc.span(("m", "x")) == Span(2, 6, 2, 7)       # merged from the anchor
    assert doc.span(("m", "y")) == Span(7, 6, 7, 7)       # explicit key wins


def test_path_walk_takes_the_last_repeated_key_then_merges() -> None:
    # Document._node searches a mapping's keys itself: the last of repeated keys, a merged key
    # only where no explicit one is written, and nothing for a missing key or a list index.
    (doc,) = docs("b: &b {k: 1, j: 2}\nm:\n  k: 3\n  <<: *b\n  k: 4\n")
    assert doc.span(("m", "k")) == Span(5, 6, 5, 7)
    assert doc.span(("m", "k"), key=True) == Span(5, 3, 5, 4)
    assert doc.span(("m", "j")) == Span(1, 17, 1, 18)
    assert doc.span(("m", "x")) is None
    assert doc.span(("m", 0)) is None
    assert doc.span(("b", "j", "x")) is None


def test_merge_list_earlier_wins() -> None:
    (doc,) = docs("a: &a {k: 1}\nb: &b {k: 2, j: 3}\nc:\n  <<: [*a, *b]\n")
    assert doc.data["c"] == {"k": 1, "j": 3}


def test_duplicate_keys_are_problems_with_positions() -> None:
    (doc,) = docs("a: 1\nb: 2\na: 3\n")
    assert doc.data == {"a": 3, "b": 2}
    (problem,) = doc.problems
    assert problem.span == Span(3, 1, 3, 2)
    assert "first defined at line 1" in problem.message


@pytest.mark.parametrize("text, expected", [
    ("1", 1), ("-2", -2), ("0x1f", 31), ("1.5", 1.5), ("true", True), ("yes", True),
    ("Off", False), ("~", None), ("null", None), ("500m", "500m"), ("1Gi", "1Gi"),
    ("0,1", "0,1"), ("all", "all"), ("void", "void"), ("1e3", 1000.0), (".", "."),
    # Every integer form Kubernetes' decoder (strconv.ParseInt base 0, underscores removed) accepts.
    ("0X1F", 31), ("0o17", 15), ("0O17", 15), ("017", 15), ("0b101", 5), ("-0b101", -5), ("1_0", 10),
    ("0x_", "0x_"), ("0o", "0o"), ("0b2", "0b2"),
])
def test_plain_scalar_resolution(text: str, expected: object) -> None:
    assert resolve_plain(text) == expected
    assert type(resolve_plain(text)) is type(expected)


@given(st.text(alphabet="0123456789_+-.xXoeEabcdfABCDFinfINFNaGgmMk ", min_size=1, max_size=8)
       .filter(lambda text: text[0] in "0123456789+-."))
@example("0")
@example("00")
@example("012")
@example("08")
@example("1_000")
@example("+1")
@example("-0x1F")
@example(".inf")
@example("-.Inf")
@example(".NaN")
@example("1e3")
@example("1.")
@example(".")
def test_number_fast_paths_agree_with_the_full_resolution(text: str) -> None:
    from gpulint.load.yamlload import _resolve_number

    fast, full = resolve_plain(text), _resolve_number(text)
    assert type(fast) is type(full)
    assert fast == full or (fast != fast and full != full)  # NaN


def test_quoted_and_tagged_scalars_stay_strings() -> None:
    (doc,) = docs('a: "1"\nb: !!str 2\nc: !custom 3\nd: \'true\'\n')
    assert doc.data == {"a": "1", "b": "2", "c": 3, "d": "true"}


def test_json_document() -> None:
    (doc,) = docs('{\n  "kind": "Pod",\n  "spec": {"containers": []}\n}\n')
    assert doc.data == {"kind": "Pod", "spec": {"containers": []}}
    assert doc.span(("spec", "containers")) == Span(3, 26, 3, 28)


def test_parse_error_keeps_other_documents() -> None:
    out = docs("a: 1\n---\nb: [\n---\nc: 3\n")
    assert isinstance(out[1], LoadError)
    assert (out[1].line, out[1].column) == (4, 1)
    assert [d.data for d in out if isinstance(d, Document)] == [{"a": 1}, {"c": 3}]


def test_recursive_alias_is_an_error() -> None:
    (error,) = docs("a: &x\n  b: *x\n")
    assert isinstance(error, LoadError)
    assert "recursive alias" in error.message


def test_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    (error,) = list(load_documents("\n".join(lines) + "\n", Limits(max_expanded_nodes=100_000)))
    assert isinstance(error, LoadError)
    assert "alias expansion" in error.message


def test_deep_nesting_is_bounded() -> None:
    text = "a: " + "[" * 600 + "]" * 600 + "\n"
    (error,) = docs(text)
    assert isinstance(error, LoadError)
    assert "nesting deeper" in error.message


def test_complex_keys_are_rejected() -> None:
    (error,) = docs("? [a, b]\n: c\n")
    assert isinstance(error, LoadError)


def test_decode_boms_and_errors() -> None:
    assert decode("a: é\n".encode("utf-16")) == "a: é\n"
    assert decode(b"\xef\xbb\xbfa: 1\n") == "a: 1\n"
    assert decode("x".encode("utf-32")) == "x"
    with pytest.raises(BinaryInput):
        decode(b"\x00\x01\x02binary")
    with pytest.raises(DecodeError) as info:
        decode(b"a: 1\nb: \xff\n")
    assert (info.value.line, info.value.column) == (2, 4)


def test_shell_script_after_double_dash() -> None:
    from gpulint.model.workload import Exec, shell_script

    item = Exec(("/bin/bash", "-lc", "--", "ray start --head"), tuple(("args", i) for i in range(4)), "command")
    script = shell_script(item)
    assert script is not None and (script.text, script.path) == ("ray start --head", ("args", 3))


_INDEX_AND_SCAN = """\
apiVersion: v1
kind: Service
metadata: {name: s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data:
  run.sh: |
    echo start
    docker run --gpus all img
  run.sh: |
    echo again; docker run --gpus all img
---
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}, "data": {"k": "v"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: a, image: x}]}
"""


def test_chunks_recorded_by_a_first_pass_are_reused_with_the_same_positions() -> None:
    """What the ConfigMap index pass parsed is not parsed again, and positions stay exact."""
    record: dict = {}
    first = [d for d in load_documents(_INDEX_AND_SCAN, only=("ConfigMap",), record=record)
             if isinstance(d, Document)]
    assert [d.data["metadata"]["name"] for d in first] == ["c", "j"]
    assert sorted(record) == [3, 13]          # the 0-based lines where the two ConfigMap chunks start
    fresh = list(load_documents(_INDEX_AND_SCAN))
    reused = list(load_documents(_INDEX_AND_SCAN, parsed=record))
    assert record == {}                        # handed over once
    assert [d.data for d in reused] == [d.data for d in fresh]
    assert reused[1].data is first[0].data     # taken from the first pass, not parsed again
    for new, old in zip(reused, fresh):
        assert new.root().span == old.root().span
        assert [p.span for p in new.problems] == [p.span for p in old.problems]
        assert new.span(("metadata", "name")) == old.span(("metadata", "name"))
    script = ("data", "run.sh")
    assert reused[1].problems[0].span == Span(12, 3, 12, 9)
    text = reused[1].data["data"]["run.sh"]
    at = text.index("docker")
    assert reused[1].text_span(script, at, at + 6) == Span(13, 17, 13, 23)


def test_documents_parsed_in_batches_come_in_order_with_their_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks are parsed a batch at a time (yamlload.BATCH_CHARS of text): documents keep their
    order, numbers, lines and errors across batches, with the ConfigMap pass's record and reuse."""
    from gpulint.load import yamlload

    parts = []
    for n in range(40):
        body = f"kind: ConfigMap\ndata: {{k: '{'x' * (n * 37 % 700)}'}}\n" if n % 3 == 0 else f"a: {n}\nb: [{n}, x]\n"
        parts.append("a: [\n" if n in (7, 21) else body)
    text = "---\n".join(parts)

    def read(**kwargs: object) -> list:
        return [(type(d).__name__, d.message, d.line) if isinstance(d, LoadError)
                else (d.index, d.line_offset, d.data, d.text, d.root().span) for d in load_documents(text, **kwargs)]

    monkeypatch.setattr(yamlload, "BATCH_CHARS", 1)   # one chunk at a time
    expected = read()
    expected_only = read(only=("ConfigMap",), record={})
    assert len(expected) == 40 and [e[0] for e in expected].count("LoadError") == 2
    for size in (300, 2000, len(text) + 1):
        monkeypatch.setattr(yamlload, "BATCH_CHARS", size)
        assert read() == expected
        record: dict = {}
        assert read(only=("ConfigMap",), record=record) == expected_only
        assert read(parsed=record) == expected and not record
