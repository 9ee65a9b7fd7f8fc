"""`--format rdjson`: reviewdog's diagnostic format, fixes as suggestions, columns in UTF-8 bytes."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from gpulint import __version__

POD = """apiVersion: v1
kind: Pod
metadata: {name: "träin"}
spec:
  containers:
  - {name: "träin", image: i, resources: {requests: {nvidia.com/gpu: 1}}}  # expect: GPU101
  - name: ok
    image: i
    env:
    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
"""


def test_diagnostics_and_suggestions(tmp_path: Path) -> None:
    target = tmp_path / "pod.yaml"
    target.write_text(POD, encoding="utf-8")
    code, out, _err = run_cli("scan", "--format", "rdjson", str(target))
    assert code == 1
    doc = json.loads(out)
    assert doc["source"] == {"name": "gpulint", "url": "https://github.com/gpulint/gpulint"}
    first, second = doc["diagnostics"]
    # Line 6 holds an "ä" (two bytes in UTF-8) before both the finding and the edit: byte columns.
    line = POD.splitlines()[5]
    key = line.encode("utf-8").index(b"nvidia.com/gpu") + 1
    assert key == line.index("nvidia.com/gpu") + 2
    assert first["location"] == {"path": str(target), "range": {"start": {"line": 6, "column": key},
                                                                  "end": {"line": 6, "column": key + 14}}}
    assert first["severity"] == "ERROR"
    assert first["code"] == {"value": "GPU101",
                             "url": f"https://github.com/gpulint/gpulint/blob/v{__version__}/docs/rules/GPU101.md"}
    assert first["message"].endswith("[fix: add nvidia.com/gpu to resources.limits, equal to the request]")
    after = line.encode("utf-8").index(b"1}}") + 3    # after `requests: {...}`, inside `resources: {...}`
    assert first["suggestions"] == [{"range": {"start": {"line": 6, "column": after},
                                               "end": {"line": 6, "column": after}},
                                     "text": ", limits: {nvidia.com/gpu: 1}"}]
    # `all` has no fix: a diagnostic without suggestions.
    assert second["code"]["value"] == "GPU003" and "suggestions" not in second
    assert second["location"]["range"]["start"] == {"line": 10, "column": 7}


def test_suggestions_applied_give_the_fixed_file(tmp_path: Path) -> None:
    """What reviewdog applies (byte ranges of the file) is what `--fix --unsafe-fixes` writes."""
    target = tmp_path / "pod.yaml"
    target.write_text(POD, encoding="utf-8")
    _code, out, _err = run_cli("scan", "--format", "rdjson", str(target))
    data = target.read_bytes()
    lines = data.split(b"\n")
    starts = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines))]
    edits = []
    for diagnostic in json.loads(out)["diagnostics"]:
        for suggestion in diagnostic.get("suggestions", []):
            start, end = suggestion["range"]["start"], suggestion["range"]["end"]
            edits.append((starts[start["line"] - 1] + start["column"] - 1, starts[end["line"] - 1] + end["column"] - 1,
                          suggestion["text"].encode("utf-8")))
    for begin, stop, text in sorted(edits, reverse=True):
        data = data[:begin] + text + data[stop:]
    run_cli("scan", "--fix", "--unsafe-fixes", str(target))
    assert data == target.read_bytes()


def test_suppressed_findings_are_left_out(tmp_path: Path) -> None:
    target = tmp_path / "pod.yaml"
    target.write_text(POD.replace("value: all}", "value: all}  # gpulint: ignore[GPU003] test pod"), encoding="utf-8")
    _code, out, _err = run_cli("scan", "--format", "rdjson", str(target))
    assert [d["code"]["value"] for d in json.loads(out)["diagnostics"]] == ["GPU101"]
