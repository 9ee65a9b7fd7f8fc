"""Fuzzing: mutated real manifests never crash gpulint, never exit 2, and are always counted.

Bounded in time (a fixed number of examples, derandomized so CI is repeatable);
`GPULINT_FUZZ_EXAMPLES=2000 GPULINT_FUZZ_RANDOM=1 pytest tests/test_fuzz.py`
explores further with fresh random inputs.
"""

from __future__ import annotations

import copy
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from conftest import FIXTURES, run_cli
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpulint.load.yamlload import Document, load_documents
from gpulint.results.findings import STATUSES

EXAMPLES = int(os.environ.get("GPULINT_FUZZ_EXAMPLES", "120"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("GPULINT_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much], database=None)


def _manifests() -> list[Path]:
    out = []
    for path in sorted(FIXTURES.rglob("*")):
        parts = path.relative_to(FIXTURES).parts
        if path.is_file() and path.suffix in (".yaml", ".yml", ".json") and "charts" not in parts \
                and "kustomize" not in parts:
            out.append(path)
    return out


MANIFESTS = _manifests()
SOURCES = {path: path.read_bytes() for path in MANIFESTS}


def scan_bytes(data: bytes, suffix: str) -> dict:
    """Scan `data` as a file; assert the invariants every scan must keep; return the report."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"fuzz{suffix}"
        path.write_bytes(data)
        code, out, err = run_cli("scan", "--format", "json", str(path))
    assert code in (0, 1), f"exit {code}: {err}"
    assert "Traceback" not in err and err == "", err
    report = json.loads(out)
    summary = report["summary"]
    assert summary["files"] == 1 == sum(summary[k] for k in STATUSES), summary
    assert summary["internal_errors"] == 0
    for finding in report["findings"]:
        assert finding["line"] >= 1 and finding["column"] >= 1, finding
        assert (finding["end_line"], finding["end_column"]) >= (finding["line"], finding["column"]), finding
        assert finding["message"]
    if summary["error"]:
        assert any(f["rule"] == "GPU000" for f in report["findings"])
    if code == 1:
        assert report["findings"]
    return report


# --- byte mutations of real files -----------------------------------------------------

NASTY = [
    b"\t", b"{{ .Values.x }}", b"{{- if .Values.y }}\n", b"{{- end }}\n", b"---\n", b"...\n", b"&a ", b"*a",
    b"<<: *a\n", b"!!python/object/apply:os.system ", b"!custom ", b"\x00", b"\xff", b"\xef\xbb\xbf",
    b"\xff\xfe", b'"', b"'", b"[", b"{", b"]", b"}", b": ", b"- ", b"? ", b"#", b"|\n", b">-\n", b"\r\n",
    b"\r", b"\xe2\x80\xa8", b"%YAML 1.1\n", b"\\ud800", b"\x1b", b"\xc2\x85", b",", b"  ", b"\n", b"@",
    b"`", b"%", b"!", b"&", b"*", b"null", b"~", b"yes", b"0x1F", b"1e400", b".nan", b"<<", b"=",
]

_position = st.floats(min_value=0, max_value=1, allow_nan=False)
_mutation = st.one_of(
    st.tuples(st.just("flip"), _position, st.integers(0, 7)),
    st.tuples(st.just("insert"), _position, st.one_of(st.sampled_from(NASTY), st.binary(min_size=1, max_size=8))),
    st.tuples(st.just("delete"), _position, st.integers(1, 40)),
    st.tuples(st.just("truncate"), _position, st.just(0)),
    st.tuples(st.just("repeat"), _position, st.integers(1, 200)),
)


def mutate(data: bytes, mutations: list[tuple]) -> bytes:
    for kind, where, arg in mutations:
        pos = int(where * len(data))
        if kind == "flip" and data:
            pos = min(pos, len(data) - 1)
            data = data[:pos] + bytes([data[pos] ^ (1 << arg)]) + data[pos + 1:]
        elif kind == "insert":
            data = data[:pos] + arg + data[pos:]
        elif kind == "delete":
            data = data[:pos] + data[pos + arg:]
        elif kind == "truncate":
            data = data[:pos]
        elif kind == "repeat":
            data = data[:pos] + data[pos:pos + arg] * 2 + data[pos + arg:]
    return data


@FUZZ
@given(st.sampled_from(MANIFESTS), st.lists(_mutation, min_size=1, max_size=6))
def test_byte_mutations_never_crash(path: Path, mutations: list[tuple]) -> None:
    scan_bytes(mutate(SOURCES[path], mutations), path.suffix)


# --- structural mutations of parsed manifests --------------------------------------------

_odd_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(10 ** 30), 10 ** 30), st.floats(allow_nan=True),
    st.sampled_from(["yes", "no", "on", "0x1F", "0o17", "", " ", "~", "null", "{{ .Values.x }}", "*a", "&b",
                     "all", "void", "none", "0,1", "GPU-1234", "NVIDIA_VISIBLE_DEVICES", "nvidia.com/gpu",
                     "docker run --gpus all x", "\u2028", "\ufeff", "é" * 3, "a: b", "- x", "---", "...",
                     "x" * 5000, "\\", '"', "'", "#", "%", "!!python/name:os.system"]),
    st.text(max_size=20),
)
_odd_value = st.recursive(
    _odd_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.text(max_size=8),
                                                      st.sampled_from(["<<", "name", "value", "env", "", "? x"])),
                                            inner, max_size=4)),
    max_leaves=12,
)
DEEP = "__gpulint_deep_nesting__"


def _documents_of(path: Path) -> list[Any]:
    docs = [d.data for d in load_documents(SOURCES[path].decode("utf-8", "replace")) if isinstance(d, Document)]
    return [d for d in docs if isinstance(d, (dict, list))]


PARSED = {path: _documents_of(path) for path in MANIFESTS}
STRUCTURED = [path for path in MANIFESTS if PARSED[path]]


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, prefix + (key,)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.extend(_paths(item, prefix + (i,)))
    return out


def _replace(data: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    parent = data
    for item in path[:-1]:
        parent = parent[item]
    parent[path[-1]] = new
    return data


def _serialise(docs: list[Any], style: str, depth: int) -> bytes:
    if style == "yaml":
        yaml = YAML(typ="safe", pure=True)
        yaml.version = (1, 1)  # quote `yes`/`on` as Kubernetes (YAML 1.1) reads them as booleans
        yaml.default_flow_style = False
        yaml.allow_unicode = True
        stream = io.StringIO()
        yaml.dump_all(docs, stream)
        text = stream.getvalue()
    else:
        indent = {"json": 2, "json-tabs": "\t", "json-compact": None}[style]
        text = "\n".join(json.dumps(doc, indent=indent, ensure_ascii=style == "json-compact", allow_nan=False)
                         for doc in docs)
    nested = "[" * depth + "1" + "]" * depth
    return text.replace(f'"{DEEP}"', nested).replace(DEEP, nested).encode("utf-8", "surrogatepass")


@FUZZ
@given(st.sampled_from(STRUCTURED), st.data(), st.sampled_from(["yaml", "json", "json-tabs", "json-compact"]),
       st.integers(1, 700))
def test_structural_mutations_never_crash(path: Path, data: st.DataObject, style: str, depth: int) -> None:
    docs = copy.deepcopy(PARSED[path])
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        index = data.draw(st.integers(0, len(docs) - 1), label="document")
        target = data.draw(st.sampled_from(_paths(docs[index])), label="path")
        new = data.draw(st.one_of(_odd_value, st.just(DEEP)), label="value")
        docs[index] = _replace(docs[index], target, new)
    try:
        text = _serialise(docs, style, depth)
    except (ValueError, UnicodeEncodeError):
        assume(False)  # e.g. NaN for strict JSON: not an input worth making
        return
    scan_bytes(text, ".json" if style.startswith("json") else ".yaml")


# --- wrong types where the model expects others are always reported ------------------------

BASE_POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typed"},
    "spec": {
        "hostPID": False,
        "volumes": [{"name": "v", "emptyDir": {}}],
        "containers": [{
            "name": "app", "image": "registry.example.com/app:1", "command": ["sleep", "1"],
            "env": [{"name": "A", "value": "b"}],
            "resources": {"limits": {"nvidia.com/gpu": 1}},
            "securityContext": {"privileged": False},
            "volumeMounts": [{"name": "v", "mountPath": "/v"}],
        }],
    },
}
TYPED_FIELDS: dict[tuple, tuple] = {
    ("spec", "containers"): (list,),
    ("spec", "volumes"): (list,),
    ("spec", "hostPID"): (bool,),
    ("spec", "containers", 0): (dict,),
    ("spec", "containers", 0, "image"): (str,),
    ("spec", "containers", 0, "command"): (list,),
    ("spec", "containers", 0, "env"): (list,),
    ("spec", "containers", 0, "env", 0): (dict,),
    ("spec", "containers", 0, "resources"): (dict,),
    ("spec", "containers", 0, "resources", "limits"): (dict,),
    ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"): (str, int, float),
    ("spec", "containers", 0, "securityContext"): (dict,),
    ("spec", "containers", 0, "securityContext", "privileged"): (bool,),
    ("spec", "containers", 0, "volumeMounts"): (list,),
}


def _dotted(path: tuple) -> str:
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


@FUZZ
@given(st.sampled_from(sorted(TYPED_FIELDS, key=str)), _odd_value.filter(lambda v: v is not None),
       st.sampled_from(["yaml", "json"]))
def test_every_wrong_type_is_a_gpu000_at_the_field(field: tuple, value: Any, style: str) -> None:
    expected = TYPED_FIELDS[field]
    wrong = type(value) not in expected and not (float in expected and type(value) is int)
    doc = _replace(copy.deepcopy(BASE_POD), field, value)
    try:
        text = _serialise([doc], style, 1)
    except ValueError:
        assume(False)  # NaN or infinity, which JSON cannot hold
        return
    report = scan_bytes(text, ".json" if style == "json" else ".yaml")
    messages = [f["message"] for f in report["findings"] if f["rule"] == "GPU000"]
    at_field = [m for m in messages if m.endswith(f"(at {_dotted(field)})")]
    if wrong:
        assert at_field, (value, messages)
    else:
        assert not at_field, (value, messages)
