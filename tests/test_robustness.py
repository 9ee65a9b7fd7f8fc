"""Hostile and broken input: never a crash, never a lost finding, always counted.

Positions of bad input in real files are covered by `fixtures/invalid/` (run by
test_fixtures.py); this module covers what fixtures cannot express: decoding
across block boundaries, streaming, resource bombs, unreadable files, safety,
determinism and internal errors.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ENV_POD, FIXTURES, ROOT, active, run_cli, scan_json
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.api import Rule, Severity, ValueAt, Violation
from gpulint.inputs.discovery import discover
from gpulint.load import decode as decode_mod
from gpulint.load.decode import (
    BinaryInput,
    DecodeError,
    TextBlocks,
    decode,
    decode_lenient,
    detect_encoding,
)
from gpulint.load.jsonload import json_events
from gpulint.load.locations import Span
from gpulint.load.unrendered import mask
from gpulint.load.yamlload import (
    Document,
    Limits,
    LoadError,
    load_documents,
    split_documents,
    split_stream,
)
from gpulint.results.findings import STATUSES
from gpulint.results.scanning import ScanConfig
from gpulint.scan import engine, indexing, registry
from gpulint.scan.engine import scan
from gpulint.scan.reader import InputReader


def pod(name: str = "p", value: str = "all") -> str:
    return ENV_POD.format(name=name, value=value)


def counts_add_up(report: dict) -> None:
    s = report["summary"]
    assert s["files"] == sum(s[k] for k in STATUSES), s


_RENDERED_BY = ("Chart.yaml", "kustomization.yaml", "kustomization.yml", "Kustomization")


def plain_fixture_files() -> list[Path]:
    """Every fixture that is a plain manifest or Dockerfile (nothing inside a chart or kustomization)."""
    out = []
    for path in sorted(FIXTURES.rglob("*")):
        parts = path.relative_to(FIXTURES).parts
        if not path.is_file() or path.name.endswith(".expect") or "charts" in parts or "kustomize" in parts:
            continue
        if any((parent / name).exists() for parent in path.parents if FIXTURES in parent.parents or
               parent == FIXTURES for name in _RENDERED_BY):
            continue
        if path.suffix in (".yaml", ".yml", ".json") or "dockerfile" in path.name.lower():
            out.append(path)
    return out


# --- decoding -------------------------------------------------------------------


@pytest.mark.parametrize("encoding, bom", [
    ("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
    ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-32-be", b"\x00\x00\xfe\xff"),
])
def test_every_byte_order_mark_is_decoded(encoding: str, bom: bytes) -> None:
    text = "a: é ü 🚀\nb: 2\n"
    assert decode(bom + text.encode(encoding)) == text
    assert detect_encoding(bom + text.encode(encoding)) == (encoding, len(bom))


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_without_bom_are_detected_as_yaml_specifies(encoding: str) -> None:
    text = "apiVersion: v1\nkind: Pod\nnote: é\n"
    assert decode(text.encode(encoding)) == text


@pytest.mark.parametrize("data", [
    b"\x00\x01\x02binary", b"\x7fELF\x02\x01\x01\x00\x00\x00", b"PK\x03\x04\x14\x00\x00\x00",
    b"a: 1\n" * 100 + b"\x00" + b"b: 2\n", bytes(range(256)),
])
def test_nul_bytes_in_the_first_8k_mean_binary(data: bytes) -> None:
    with pytest.raises(BinaryInput):
        decode(data)


def test_decode_error_column_counts_characters_not_bytes() -> None:
    data = "a: 1\nb: éé\xff\n".encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff")
    text, problem = decode_lenient(data)
    assert problem is not None
    assert (problem.line, problem.column) == (2, 6)  # bytes would say column 8
    assert text == "a: 1\nb: éé\ufffd\n"
    with pytest.raises(DecodeError):
        decode(data)


def test_utf16_decode_error_is_placed_by_line_and_character() -> None:
    data = b"\xff\xfe" + "a: 1\nbb: x".encode("utf-16-le") + b"\x00\xd8" + "y\n".encode("utf-16-le")
    _text, problem = decode_lenient(data)
    assert problem is not None and (problem.line, problem.column) == (2, 6)
    assert "UTF-16LE" in problem.message


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from("a: é\n\t-ü🚀x"), max_size=300),
       st.sampled_from(["utf-8", "utf-16", "utf-32-le"]),
       st.integers(1, 9), st.integers(0, 400), st.booleans())
def test_block_decoding_equals_whole_decoding(text: str, encoding: str, block: int, cut: int,
                                              corrupt: bool) -> None:
    data = text.encode(encoding)
    if corrupt and encoding == "utf-8":
        cut = min(cut, len(data))
        data = data[:cut] + b"\xff" + data[cut:]
    try:
        whole, problem = decode_lenient(data)
    except BinaryInput:
        with pytest.raises(BinaryInput):
            TextBlocks(io.BytesIO(data), block)
        return
    blocks = TextBlocks(io.BytesIO(data), block)
    assert "".join(blocks) == whole
    if problem is None:
        assert blocks.error is None
    else:
        assert blocks.error is not None
        assert (blocks.error.line, blocks.error.column, blocks.error.message) == (
            problem.line, problem.column, problem.message)


# --- splitting a stream into documents ---------------------------------------------

_LINES = ["---\n", "--- # c\n", "...\n", "%YAML 1.1\n", "%TAG ! x\n", "a: 1\n", "- b\n", "  c: |\n",
          "--\n", "----\n", "... x\n", "\n", "x", "---", "..."]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_LINES), max_size=30), st.lists(st.integers(1, 12), min_size=1, max_size=8))
def test_streamed_split_equals_whole_split(lines: list[str], sizes: list[int]) -> None:
    text = "".join(lines)
    blocks, pos, i = [], 0, 0
    while pos < len(text):
        size = sizes[i % len(sizes)]
        blocks.append(text[pos:pos + size])
        pos += size
        i += 1
    assert list(split_stream(blocks)) == list(split_documents(text))


def test_streamed_input_gives_the_same_report_as_whole_input(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_bytes(b"replicas: 2\n# caf\xe9\n")  # Latin-1 in a file that is not Kubernetes
    files = [str(p) for p in plain_fixture_files()] + [str(values)]
    _, whole = scan_json(*files)
    monkeypatch.setattr(decode_mod, "WHOLE_MAX", 0)    # every input streamed...
    monkeypatch.setattr(decode_mod, "BLOCK_SIZE", 7)   # ...in tiny blocks
    _, streamed = scan_json(*files)
    assert streamed == whole
    assert [(f["line"], f["column"]) for f in whole["findings"] if f["path"] == str(values)] == [(2, 6)]


def test_stdin_is_read_once_and_streamed_when_large(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join("---\n" + pod(f"p{i}", "void" if i % 50 else "all") for i in range(300))
    monkeypatch.setattr(decode_mod, "WHOLE_MAX", 1000)
    code, report = scan_json("-", input=text)
    assert code == 1
    assert [f["line"] for f in report["findings"]] == [12 * i + 11 for i in range(0, 300, 50)]
    assert report["summary"]["documents"] == 300


# --- the loader ------------------------------------------------------------------------


def _spans(doc: Document, node_path: tuple = ()) -> dict:
    """Every path of the document with its span."""
    out = {node_path: doc.span(node_path)}
    value = doc.data
    for item in node_path:
        value = value[item]
    keys = value.keys() if isinstance(value, dict) else range(len(value)) if isinstance(value, list) else ()
    for key in keys:
        out.update(_spans(doc, node_path + (key,)))
    return out


def test_json_that_libyaml_rejects_loads_with_exact_positions() -> None:
    tabbed = ('\t{\n\t"kind": "Pod",\n\t"note": "\\ud83d\\ude80 ok \\u00e9",\n\t"spec": {"containers": '
              '[\n\t\t{"name": "a", "env": [{"name": "X", "value": "all"}]}\n\t]}\n}\n\t\n')
    (doc,) = load_documents(tabbed)
    assert isinstance(doc, Document)
    assert doc.data["note"] == "🚀 ok é"
    # Same text with each tab as a space (same columns, valid for libyaml): same positions.
    spaced = tabbed.replace("\t", " ").replace("\\ud83d\\ude80", "\\u00e9\\u00e9")
    (reference,) = load_documents(spaced)
    assert _spans(doc) == _spans(reference)


def test_json_key_and_colon_on_different_lines_and_value_sequences() -> None:
    out = list(load_documents('{"a"\n  : [1, {"b": null}]}\n{"c": true} ["x"]\n'))
    assert [d.data for d in out] == [{"a": [1, {"b": None}]}, {"c": True}, ["x"]]
    assert out[0].span(("a", 1, "b")) == Span(2, 15, 2, 19)
    assert out[2].span((0,)) == Span(3, 14, 3, 17)


def test_lone_surrogate_escape_becomes_a_replacement_character() -> None:
    (doc,) = load_documents('{"a": "x\\ud800y",\t"b": 1}\n')
    assert doc.data == {"a": "x\ufffdy", "b": 1}
    json.dumps(doc.data, ensure_ascii=False).encode("utf-8")  # writable as UTF-8


def test_invalid_json_keeps_the_parsers_error() -> None:
    (error,) = load_documents('{"a": 1,\t"b" 2}\n')
    assert isinstance(error, LoadError) and error.line == 1


def test_json_reader_accepts_only_json() -> None:
    for bad in ('{"a": 1,}', "[1 2]", '{"a" 1}', "{'a': 1}", '{"a": tru}', "[01]", '{"a": "\\x"}', "[", "{}}"):
        with pytest.raises(Exception):
            json_events(bad)


def test_strict_json_reports_yaml_only_syntax_and_still_scans() -> None:
    text = '{"a": [1, 2,],\n "b": "NVIDIA_VISIBLE_DEVICES"}\n'
    error, doc = load_documents(text, strict_json=True)
    assert isinstance(error, LoadError) and "invalid JSON" in error.message
    assert (error.line, error.column) == (1, 13)
    assert isinstance(doc, Document) and doc.data == {"a": [1, 2], "b": "NVIDIA_VISIBLE_DEVICES"}
    assert [type(d) for d in load_documents(text)] == [Document]


def test_control_character_error_is_placed_at_the_character() -> None:
    (error,) = load_documents("a: ééé\nb: \"x\x1b[31m\"\n")
    assert isinstance(error, LoadError)
    assert (error.line, error.column) == (2, 6)
    assert "#x1b" in error.message


def test_large_documents_drop_events_and_parse_again_for_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.load import yamlload

    text = "# Source: x\n---\n" + pod() + "---\n" + '{"kind": "Pod",\t"a": [1, {"b": 2}]}\n'
    expected = [(_spans(d), d.content_start, d.data) for d in load_documents(text)]
    monkeypatch.setattr(yamlload, "KEEP_EVENTS_MAX", 0)
    docs = list(load_documents(text))
    assert all(d._events is None for d in docs)
    assert [(_spans(d), d.content_start, d.data) for d in docs] == expected


def test_duplicate_key_problems_are_placed_and_name_the_hidden_text() -> None:
    (doc,) = load_documents("env:\n- name: NVIDIA_VISIBLE_DEVICES\n  value: all\nenv: []\n")
    (problem,) = doc.problems
    assert problem.span == Span(4, 1, 4, 4)
    assert problem.hidden == Span(2, 1, 3, 13)
    code, report = scan_json(str(FIXTURES / "invalid" / "duplicate-keys.yaml"))
    messages = [f["message"] for f in report["findings"] if f["rule"] == "GPU000"]
    assert "holds NVIDIA_VISIBLE_DEVICES" in messages[0]
    assert "holds" not in messages[1] and "holds" not in messages[2]
    assert [f["severity"] for f in report["findings"] if f["rule"] == "GPU000"] == ["error", "info", "info"]


def test_a_duplicate_key_that_holds_nothing_that_matters_is_info_and_does_not_fail(tmp_path: Path) -> None:
    """A repeated label (the last value is the one Kubernetes and the check read) is shown at info and
    the scan exits 0; the same duplicate hiding NVIDIA_VISIBLE_DEVICES is an error and exits 1."""
    labels = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: a\n    app: b\n"
              "spec:\n  containers:\n  - name: c\n    image: registry.example.com/app:1\n")
    path = tmp_path / "labels.yaml"
    path.write_text(labels)
    code, report = scan_json(str(path))
    assert (code, [(f["rule"], f["severity"], f["line"], f["column"]) for f in report["findings"]]) == \
        (0, [("GPU000", "info", 7, 5)])
    hidden = labels.replace(
        "  - name: c\n", "  - name: c\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: all\n    env: []\n")
    path.write_text(hidden)
    code, report = scan_json(str(path))
    assert (code, [(f["rule"], f["severity"], f["line"], f["column"]) for f in report["findings"]]) == \
        (1, [("GPU000", "info", 7, 5), ("GPU000", "error", 14, 5)])


def test_custom_limits_apply_when_positions_are_built() -> None:
    deep = "a: " + "[" * 800 + "1" + "]" * 800 + "\n"
    (doc,) = load_documents(deep, Limits(max_depth=1000))
    assert isinstance(doc, Document)
    assert doc.span(("a",) + (0,) * 799).line == 1  # built with the same limits, no LoadError


# --- unrendered Helm templates ---------------------------------------------------------

TEMPLATE = """{{- if .Values.enabled }}
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ include "x.fullname" . }}
  labels:
    {{- include "x.labels" . | nindent 4 }}
spec:
  template:
    spec:
      containers:
      - name: c
        image: "{{ .Values.image }}:{{ .Values.tag | default "latest" }}"
        args: [--level, {{ .Values.level }}]
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: all
        {{- if .Values.privileged }}
        securityContext:
          privileged: true
        {{- else }}
        securityContext:
          privileged: false
        {{- end }}
        {{- with .Values.x }}
        x: {{ toYaml . | nindent 10 }}
        {{- end }}
      - name: d
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: {{ .Values.devices | quote }}
{{- end }}
"""


def test_masking_keeps_every_line_and_column() -> None:
    masked, placeholders = mask(TEMPLATE)
    original_lines, masked_lines = TEMPLATE.split("\n"), masked.split("\n")
    assert len(masked_lines) == len(original_lines)
    for before, after in zip(original_lines, masked_lines):
        if after.strip():
            assert len(after) == len(before)
            # Literal characters stay where they were.
            assert all(a == b for a, b in zip(before, after) if a not in "{}" and b != "_" and a == b)
        else:
            assert "{{" in before or not before.strip()
    for line, start, end in placeholders:
        assert original_lines[line][start:start + 2] == "{{" and original_lines[line][end - 2:end] == "}}"


def test_template_literal_text_is_checked_and_placeholders_are_not() -> None:
    out = list(load_documents(TEMPLATE))
    error, doc = out
    assert isinstance(error, LoadError) and error.template and error.literal_checked
    assert isinstance(doc, Document) and doc.placeholders
    containers = doc.data["spec"]["template"]["spec"]["containers"]
    assert [c["env"][0]["value"] for c in containers] == ["all", "___.Values.devices___quote___"]
    assert containers[0]["args"] == ["--level", "___.Values.level___"]
    assert doc.problems == []  # the `if`/`else` branches would be duplicates otherwise
    assert doc.span(("spec", "template", "spec", "containers", 0, "env", 0)) == Span(16, 11, 17, 21)
    assert doc.span(("spec", "template", "spec", "containers", 1, "env", 0, "value")) == Span(31, 18, 31, 47)
    _, report = scan_json("-", input=TEMPLATE)
    # The literal `all` is found; the templated value of container d is unknown, so not reported. GPU011 sits
    # at the first unknown that could hide a bypass: container c's args (its image cannot matter: c sets
    # NVIDIA_VISIBLE_DEVICES itself).
    assert active(report) == [("GPU003", 16, 11), ("GPU011", 14, 25)]
    (template,) = [f for f in report["findings"] if f["rule"] == "GPU011"]
    assert template["severity"] == "warning" and "only its literal text was checked" in template["message"]
    assert "the value of `spec.template.spec.containers[].args` is unknown" in template["message"]
    assert "helm template" in template["message"]


def test_a_template_that_cannot_be_masked_says_how_to_render() -> None:
    _, report = scan_json(str(FIXTURES / "rules" / "GPU011" / "bad-helm-template-unparseable.yaml"))
    (finding,) = report["findings"]
    assert "unrendered Helm template" in finding["message"]
    assert "`helm template RELEASE CHART | gpulint scan -`" in finding["message"]


def test_invalid_yaml_mentioning_braces_elsewhere_is_not_called_a_template() -> None:
    text = "note: uses {{ .Values.x }} later\nbad: [\n  - x\n: y\n"
    (error,) = load_documents(text)
    assert isinstance(error, LoadError) and not error.template


def test_argo_expressions_in_valid_yaml_are_not_templates() -> None:
    text = pod() + '    args: ["{{inputs.parameters.message}}", "echo {{workflow.name}}"]\n'
    _, report = scan_json("-", input=text)
    assert active(report) == [("GPU003", 10, 7)]


# --- resource bombs --------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["flow", "block-sequence", "block-mapping-in-sequence", "json", "json-tabs"])
def test_nesting_ten_thousand_levels_deep_is_a_finding(shape: str, tmp_path: Path) -> None:
    depth = 10_000
    text = {
        "flow": "spec: " + "[" * depth + "]" * depth + "\n",
        "block-sequence": "spec:\n" + "- " * depth + "x\n",
        "block-mapping-in-sequence": "spec:\n" + "- a:\n" * 1 + "- " * depth + "{a: 1}\n",
        "json": '{"spec": ' + '{"a": ' * depth + "1" + "}" * depth + "}\n",
        "json-tabs": '\t{"spec": ' + '{"a":\t' * depth + "1" + "}" * depth + "}\n",
    }[shape]
    path = tmp_path / ("deep.json" if shape.startswith("json") else "deep.yaml")
    path.write_text("apiVersion: v1\nkind: Pod\n---\n" + text if not shape.startswith("json") else text)
    code, report = scan_json(str(path))
    (finding,) = [f for f in report["findings"] if f["rule"] == "GPU000"]
    assert "nesting deeper than 500 levels" in finding["message"]
    counts_add_up(report)


def test_billion_laughs_is_bounded_by_the_alias_limit(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 30):  # 10^30 nodes if expanded
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    path = tmp_path / "lol.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\n" + "\n".join(lines) + "\n")
    _, report = scan_json(str(path))
    assert [f["rule"] for f in report["findings"]] == ["GPU000"]
    _, report = scan_json("--max-alias-nodes", "50", str(path))
    assert report["findings"][0]["line"] == 4  # a1's sixth alias: 5 x 11 nodes > 50


def test_many_aliases_to_one_wide_anchor_are_bounded() -> None:
    wide = "[" + ", ".join(["x"] * 1000) + "]"
    text = f"a: &w {wide}\nb: [" + ", ".join(["*w"] * 2000) + "]\n"
    (error,) = load_documents(text)
    assert isinstance(error, LoadError) and "alias expansion" in error.message


def test_limits_are_configurable_and_default_to_the_loader_defaults(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(pod())
    assert active(scan_json("--max-depth", "6", str(path))[1]) == [("GPU003", 10, 7)]
    _, report = scan_json("--max-depth", "5", str(path))
    assert active(report) == [("GPU000", 10, 7)]
    assert run_cli("scan", "--max-depth", "0", str(path))[0] == 2
    from gpulint.cli.scanargs import defaults as scan_defaults

    defaults = scan_defaults()
    assert (defaults["max_depth"], defaults["max_alias_nodes"]) == (Limits().max_depth, Limits().max_expanded_nodes)


# --- large files stream ------------------------------------------------------------------

_RSS_PROBE = """
import resource, sys
from gpulint.cli.app import main
sys.argv = ["gpulint", "scan", "--format", "json", "--output", sys.argv[1], sys.argv[2]]
try:
    main()
except SystemExit as exit:
    code = exit.code
print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def _peak_rss_kib(target: Path, out: Path) -> tuple[int, int]:
    proc = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(out), str(target)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})
    code, rss = proc.stderr.split()[-2:]
    return int(code), int(rss)


def write_multi_document_file(path: Path, megabytes: int) -> int:
    """A stream of Deployments, one in 500 with a finding; returns the number of documents."""
    docs = 0
    with path.open("w") as handle:
        size = 0
        while size < megabytes << 20:
            value = "all" if docs % 500 == 0 else "void"
            chunk = "---\n" + _DEPLOYMENT.format(n=docs, value=value)
            handle.write(chunk)
            size += len(chunk)
            docs += 1
    return docs


_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: train-{n}
  namespace: ml
  labels: {{app: train, tier: gpu}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: train}}
  template:
    metadata:
      labels: {{app: train}}
    spec:
      containers:
      - name: cuda
        image: registry.example.com/train:1.{n}
        command: ["python", "train.py", "--epochs", "10"]
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: {value}
        - name: LOG_LEVEL
          value: info
        resources:
          limits:
            cpu: "4"
            memory: 16Gi
"""


@pytest.mark.slow
def test_a_large_multi_document_file_streams_in_bounded_memory(tmp_path: Path) -> None:
    """Peak memory grows by far less than the file: it is never held whole.

    GPULINT_STREAM_TEST_MB sets the size (default 24); with 200 it checks the
    target of the robustness issue, peak RSS under 300 MB for a 200 MB file.
    """
    megabytes = int(os.environ.get("GPULINT_STREAM_TEST_MB", "24"))
    small, big = tmp_path / "small.yaml", tmp_path / "big.yaml"
    small.write_text("---\n" + _DEPLOYMENT.format(n=0, value="all"))
    docs = write_multi_document_file(big, megabytes)
    code, baseline = _peak_rss_kib(small, tmp_path / "small.json")
    assert code == 1
    code, peak = _peak_rss_kib(big, tmp_path / "big.json")
    report = json.loads((tmp_path / "big.json").read_text())
    assert code == 1
    assert report["summary"]["documents"] == docs
    assert len(report["findings"]) == (docs + 499) // 500
    # Reading the file whole costs at least twice its size (bytes + text); streaming
    # costs a few blocks and one document (measured: about 6 MiB).
    grown_mib = (peak - baseline) / 1024
    assert grown_mib < min(megabytes / 2, 16), f"peak RSS grew by {grown_mib:.0f} MiB for a {megabytes} MiB file"
    if megabytes >= 200:
        assert peak < 300 * 1024


# --- files and directories ----------------------------------------------------------------


def test_symlink_loops_terminate_and_every_file_is_counted(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pod.yaml").write_text(pod())
    (tmp_path / "sub" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "self").symlink_to(tmp_path / "self")
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "same.yaml").symlink_to(tmp_path / "sub" / "pod.yaml")  # scanned once
    os.mkfifo(tmp_path / "fifo.yaml")  # would block forever if opened
    code, report = scan_json(str(tmp_path))
    counts_add_up(report)
    s = report["summary"]
    assert (s["files"], s["scanned"], s["error"]) == (4, 1, 3)
    reasons = sorted((f["severity"], f["message"]) for f in report["findings"] if f["rule"] == "GPU000")
    # A link to nothing holds nothing to hide a bypass in: info. A loop cannot be read: an error.
    assert reasons == [("error", "cannot read file: Too many levels of symbolic links")] * 2 + [
        ("info", f"symbolic link to {tmp_path / 'nowhere.yaml'}, which does not exist: nothing to scan")]


def _deny(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Opening `denied` fails, with a file object (open) or a descriptor (os.open) alike."""
    def denying(real):  # noqa: ANN001, ANN202
        def fake_open(file, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
            if Path(file) == denied:
                raise PermissionError(13, "Permission denied", str(file))
            return real(file, *args, **kwargs)
        return fake_open

    monkeypatch.setattr(builtins, "open", denying(builtins.open))
    monkeypatch.setattr(os, "open", denying(os.open))


def test_unreadable_file_is_reported_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(pod())
    (tmp_path / "b.yaml").write_text(pod("b"))
    _deny(monkeypatch, tmp_path / "a.yaml")
    code, report = scan_json(str(tmp_path))
    assert active(report) == [("GPU000", 1, 1), ("GPU003", 10, 7)]
    assert report["findings"][0]["message"] == "cannot read file: Permission denied"
    assert (report["summary"]["error"], report["summary"]["scanned"]) == (1, 1)
    counts_add_up(report)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="running as root: chmod 000 does not stop root from reading (see the monkeypatched test)")
def test_unreadable_file_by_permissions(tmp_path: Path) -> None:
    target = tmp_path / "secret.yaml"
    target.write_text(pod())
    target.chmod(0)
    try:
        code, report = scan_json(str(tmp_path))
    finally:
        target.chmod(0o644)
    assert active(report) == [("GPU000", 1, 1)] and report["summary"]["error"] == 1


def test_unreadable_directory_is_reported_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "x.yaml").write_text(pod())
    (tmp_path / "open.yaml").write_text(pod())
    real_scandir = os.scandir

    def fake_scandir(path):  # noqa: ANN001
        if Path(path) == tmp_path / "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", fake_scandir)
    _, report = scan_json(str(tmp_path))
    assert [(f["path"], f["message"]) for f in report["findings"] if f["rule"] == "GPU000"] == [
        (str(tmp_path / "locked"), "cannot read directory")]
    assert report["summary"]["error"] == 1
    counts_add_up(report)


class _FailingStream(io.BytesIO):
    """Raises EIO after the first read."""

    reads = 0

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        self.reads += 1
        if self.reads > 2:
            raise OSError(5, "Input/output error")
        return super().read(size)


def test_read_error_part_way_keeps_what_was_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = "".join("---\n" + pod(f"p{i}") for i in range(3000)).encode()
    path = tmp_path / "big.yaml"
    path.write_bytes(b"")
    monkeypatch.setattr(decode_mod, "WHOLE_MAX", 10_000)
    monkeypatch.setattr(decode_mod, "BLOCK_SIZE", 100_000)

    class Reader(InputReader):
        def small(self, item):  # noqa: ANN001, ANN201 - read as a stream, through open
            return None

        def open(self, item):  # noqa: ANN001, ANN201
            from contextlib import nullcontext

            return nullcontext(_FailingStream(data))

    (item,) = discover([str(path)]).inputs
    invalid_input = registry.load_rules()["GPU000"]   # the one rule that reports unreadable input
    result = scan([item], ScanConfig(rules=[invalid_input], all_rules={"GPU000": invalid_input}), Reader())
    (report,) = result.files
    assert report.status == "scanned" and report.documents > 10
    (finding,) = report.findings
    assert finding.message == "cannot read file: Input/output error"


# --- safety ------------------------------------------------------------------------------------


def test_tags_never_construct_objects_or_run_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "pwned"
    text = (f'a: !!python/object/apply:os.system ["touch {marker}"]\n'
            f'b: !!python/object/new:subprocess.Popen [["touch", "{marker}"]]\n'
            "c: !!python/name:os.system\n"
            "d: !!python/module:os\n"
            "e: !custom {x: 1}\n"
            "f: !!binary aGVsbG8=\n"
            "g: !<tag:yaml.org,2002:python/object:os._wrap_close> {}\n")
    (doc,) = load_documents(text)
    assert doc.data == {"a": [f"touch {marker}"], "b": [["touch", str(marker)]], "c": None,
                        "d": None, "e": {"x": 1}, "f": "aGVsbG8=", "g": {}}
    assert not marker.exists()
    for value in doc.data.values():
        assert value is None or type(value) in (str, list, dict)


def test_a_scan_makes_no_network_call_and_runs_no_program(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def forbid(name: str):  # noqa: ANN202
        def refuse(*args, **kwargs):  # noqa: ANN002, ANN003
            calls.append(name)
            raise AssertionError(f"{name} called during a scan")
        return refuse

    for target, name in ((socket.socket, "connect"), (socket.socket, "connect_ex"), (socket.socket, "sendto"),
                         (socket, "create_connection"), (socket, "getaddrinfo"), (subprocess, "Popen"),
                         (os, "system"), (os, "popen"), (os, "posix_spawn"), (os, "posix_spawnp"),
                         (os, "fork"), (os, "execv"), (os, "execve"), (os, "execvp")):
        monkeypatch.setattr(target, name, forbid(f"{getattr(target, '__name__', target)}.{name}"))
    files = [str(p) for p in plain_fixture_files()]
    code, out, err = run_cli("scan", "--format", "json", *files)
    assert code == 1, err
    assert calls == []
    assert json.loads(out)["summary"]["internal_errors"] == 0


def test_output_write_failure_leaves_the_previous_file_and_no_temp_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.report import atomicfile as output

    target = tmp_path / "report.sarif"
    target.write_text("previous report\n")
    real_fdopen = os.fdopen

    def half_then_fail(fd, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        handle = real_fdopen(fd, *args, **kwargs)
        real_write = handle.write

        def write(text: str) -> int:
            real_write(text[: len(text) // 2])
            handle.flush()
            raise OSError(28, "No space left on device")

        handle.write = write  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(output.os, "fdopen", half_then_fail)
    with pytest.raises(OSError):
        output.write_atomic(str(target), "new report " * 1000)
    assert target.read_text() == "previous report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]
    # Through the CLI: a clear usage error, exit 2, the old file intact.
    code, _out, err = run_cli("scan", "--format", "json", "--output", str(target), str(FIXTURES / "core"))
    assert code == 2 and "cannot write" in err and "No space left" in err
    assert target.read_text() == "previous report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]


def test_output_rename_failure_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.report import atomicfile as output

    target = tmp_path / "out.json"
    target.write_text("old")

    def fail(*args: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(output.os, "replace", fail)
    with pytest.raises(OSError):
        output.write_atomic(str(target), "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


# --- determinism ---------------------------------------------------------------------------------


def _formats() -> list[str]:
    """Every value the CLI's `scan --format` accepts, as the CLI itself lists them when refusing one."""
    import re

    code, _out, err = run_cli("scan", "--format", "no-such-format", "-")
    assert code == 2
    match = re.search(r"is not one of (.*?)\.?$", err, re.M)
    assert match, err
    return [name.strip() for name in match.group(1).split(",")]


def test_format_discovery_sees_the_cli() -> None:
    assert {"text", "json"} <= set(_formats())


@pytest.mark.parametrize("output_format", _formats())
def test_output_is_byte_identical_across_runs_and_hash_seeds(output_format: str, tmp_path: Path) -> None:
    outputs = set()
    for seed in ("0", "1", "4242"):
        out = tmp_path / f"out-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "NO_COLOR": "1"}
        files = [str(p.relative_to(ROOT)) for p in plain_fixture_files()]
        proc = subprocess.run([sys.executable, "-m", "gpulint", "scan", "--format", output_format, "--output",
                               str(out), *files], capture_output=True, cwd=ROOT, env=env)
        assert proc.returncode == 1, proc.stderr
        outputs.add(out.read_bytes())
    assert len(outputs) == 1


def test_output_does_not_depend_on_directory_listing_order(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    import shutil

    for path in plain_fixture_files():
        target = tmp_path / path.relative_to(FIXTURES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
        if path.with_name(path.name + ".expect").exists():
            shutil.copy(path.with_name(path.name + ".expect"), target.with_name(target.name + ".expect"))
    _, expected = scan_json(str(tmp_path))
    real_scandir = os.scandir

    class Shuffled:
        def __init__(self, path: object) -> None:
            self._inner = real_scandir(path)  # type: ignore[arg-type]
            self._entries = list(self._inner)
            random.Random(str(path)).shuffle(self._entries)
            self._entries.reverse()

        def __iter__(self):  # noqa: ANN204
            return iter(self._entries)

        def __enter__(self):  # noqa: ANN204
            return self

        def __exit__(self, *exc: object) -> None:
            self._inner.close()

    monkeypatch.setattr(os, "scandir", Shuffled)
    _, shuffled = scan_json(str(tmp_path))
    assert shuffled == expected
    assert expected["summary"]["files"] == len(plain_fixture_files())


# --- internal errors -----------------------------------------------------------------------------


class _FakeEntryPoint:
    def __init__(self, name: str, target: object) -> None:
        self.name = name
        self.value = f"tests.{name}"
        self._target = target

    def load(self) -> object:
        return self._target


_BUG_DOC = """
## What it does
Raises on a workload named "boom", to test internal errors.
## Why is this bad
-
## Example
-
## Use instead
-
## References
-
"""


def _buggy_check(workload, ctx):  # noqa: ANN001, ANN202
    if workload.name == "boom":
        raise KeyError("a bug\nwith a two-line message")
    yield Violation("plugin saw this workload", ValueAt(workload.obj.path("metadata", "name")))


def test_a_crashing_rule_is_reported_in_one_line_and_the_rest_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = list(registry._entry_points())
    rule = Rule(id="GPU199", name="buggy-plugin", severity=Severity.WARNING, summary="test plugin",
                doc=_BUG_DOC, check=_buggy_check)
    monkeypatch.setattr(registry, "_entry_points", lambda: real + [_FakeEntryPoint("buggy", rule)])
    (tmp_path / "a.yaml").write_text(pod("boom"))
    (tmp_path / "b.yaml").write_text(pod("fine"))
    out = tmp_path / "report.json"
    code, stdout, err = run_cli("scan", "--format", "json", "--output", str(out), str(tmp_path))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"gpulint: {tmp_path / 'a.yaml'}: internal error: KeyError")
    assert "please report it" in lines[0] and "github.com/gpulint/gpulint/issues" in lines[0]
    report = json.loads(out.read_text())
    assert {(f["path"], f["rule"]) for f in report["findings"]} == {
        (str(tmp_path / "b.yaml"), "GPU003"), (str(tmp_path / "b.yaml"), "GPU199")}
    s = report["summary"]
    assert (s["files"], s["scanned"], s["error"], s["internal_errors"]) == (2, 1, 1, 1)
    counts_add_up(report)


def test_a_crash_while_indexing_is_reported_and_does_not_stop_the_scan(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    (tmp_path / "p.yaml").write_text(pod())

    def broken_source_of(obj, keep=False):  # noqa: ANN001, ANN202
        raise ValueError("index bug")

    monkeypatch.setattr(indexing, "source_of", broken_source_of)
    code, out, err = run_cli("scan", "--format", "json", str(tmp_path))
    assert code == 2
    assert err.strip() == (f"gpulint: {tmp_path / 'cm.yaml'}: internal error: ValueError: index bug — this is a "
                           "bug; please report it with the input at https://github.com/gpulint/gpulint/issues")
    assert active(json.loads(out)) == [("GPU003", 10, 7)]


def test_recursion_error_message_stays_one_line() -> None:
    message = engine.internal_error_message("x.yaml", RecursionError("maximum recursion depth exceeded\nwhile"))
    assert message == "x.yaml: internal error: RecursionError: maximum recursion depth exceeded"


# --- hostile text against quadratic paths ------------------------------------------------------
# Sizes where a quadratic algorithm would take minutes and a linear one milliseconds.


def test_thousands_of_directive_lines_split_in_linear_time() -> None:
    text = "".join(f"%TAG !t{i}! tag:example.com:\n" for i in range(200_000)) + "---\n" + pod()
    chunks = list(split_documents(text))
    assert len(chunks) == 2 and chunks[1][0].count("%TAG") == 64  # a `---` claims at most 64 directives
    blocks = [text[i:i + 4096] for i in range(0, len(text), 4096)]
    assert list(split_stream(blocks)) == chunks
    _, report = scan_json("-", input=text)
    assert ("GPU003", 200_000 + 11, 7) in active(report)


def test_thousands_of_unclosed_template_braces_are_linear() -> None:
    text = pod() + "  x: " + "{{" * 500_000 + "\n"
    _, report = scan_json("-", input=text)
    assert active(report) == [("GPU000", 12, 7)]  # `{{` is a complex key: libyaml is stopped there
    assert mask("{{" * 500_000) == ("{{" * 500_000, [])


@pytest.mark.parametrize("opener", ["[", "{"])
def test_a_million_nested_brackets_stop_at_the_depth_limit(opener: str) -> None:
    # libyaml's time grows with the square of the depth: it must not be run to the end.
    (error,) = load_documents("a: " + opener * 1_000_000 + "\n")
    assert isinstance(error, LoadError)
    assert ("nesting deeper than 500" if opener == "[" else "complex (non-scalar) mapping keys") in error.message
    (error,) = load_documents("a: " + "[{a: " * 500_000 + "\n")
    assert isinstance(error, LoadError) and "nesting deeper than 500" in error.message


def test_a_helm_source_comment_with_a_huge_blank_run_is_linear() -> None:
    text = "# Source: chart/templates/a.yaml" + " " * 1_000_000 + "x\n# Source: chart/templates/b.yaml  \n---\n" + pod()
    # the `---` separates the comment block from the document
    docs = [d for d in load_documents(text.replace("\n---\n", "\n", 1)) if isinstance(d, Document)]
    from gpulint.model.objects import helm_source

    assert helm_source(docs[0]) == "chart/templates/b.yaml"


def test_empty_text_target_does_not_hang() -> None:
    (doc,) = load_documents("s: abc\n")
    assert doc.text_span(("s",), 1, 1) == doc.span(("s",))


def test_bare_document_end_markers_are_not_errors() -> None:
    out = list(load_documents("...\n...\na: 1\n...\n...\n"))
    assert [d.data for d in out] == [{"a": 1}]


def test_a_file_of_broken_documents_lists_the_first_hundred_and_counts_the_rest() -> None:
    text = "a: [\n---\n" * 250 + pod()
    _, report = scan_json("-", input=text)
    errors = [f for f in report["findings"] if f["rule"] == "GPU000"]
    assert len(errors) == 101
    assert errors[-1]["line"] == 202  # where the first unlisted error is
    assert errors[-1]["message"].startswith("150 more documents from here on could not be loaded")
    assert ("GPU003", 500 + 10, 7) in active(report)  # documents after them are still checked


def test_small_files_are_read_whole_and_anything_else_is_left_to_the_stream(tmp_path: Path) -> None:
    from gpulint.load.decode import read_small_file

    (tmp_path / "a.yaml").write_bytes(b"a: 1\n")
    (tmp_path / "empty.yaml").write_bytes(b"")
    assert read_small_file(tmp_path / "a.yaml") == b"a: 1\n"
    assert read_small_file(tmp_path / "empty.yaml") == b""
    assert read_small_file(tmp_path / "a.yaml", limit=4) is None   # too large: streamed
    assert read_small_file(tmp_path) is None                        # not a regular file
    with pytest.raises(OSError):
        read_small_file(tmp_path / "missing.yaml")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_given_on_the_command_line_is_read_once_as_a_stream(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(pod()))
    writer.start()
    code, report = scan_json(str(fifo))
    writer.join(10)
    assert active(report) == [("GPU003", 10, 7)] and report["summary"]["scanned"] == 1
