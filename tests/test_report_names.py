"""Any file name, in every format (issue 17.6): a name that is not UTF-8 is written
losslessly and validly, and a newline in a name never forges a line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest

from gpulint.report.safetext import json_safe, printable, printable_path, valid_text

BAD = """apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
  - name: cuda
    image: registry.example.com/train:1
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
"""
ODD = b"caf\xe9 \xff.yaml"           # Latin-1 bytes: not UTF-8
NEWLINE = "two\nlines.yaml"


@pytest.fixture
def odd_repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    with open(os.fsencode(tmp_path) + b"/" + ODD, "wb") as handle:
        handle.write(BAD.encode())
    (tmp_path / NEWLINE).write_text(BAD)
    return tmp_path


def _scan(repo: Path, fmt: str) -> bytes:
    """The bytes gpulint writes, out of process (no test runner decoding in between)."""
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("GITHUB_ACTIONS", None)
    proc = subprocess.run([sys.executable, "-m", "gpulint", "scan", "--format", fmt, "."], cwd=repo,
                          capture_output=True, env=env)
    assert proc.returncode == 1, proc.stderr
    proc.stdout.decode("utf-8")          # valid UTF-8, whatever the names
    return proc.stdout


def test_json_names_round_trip(odd_repo: Path) -> None:
    report = json.loads(_scan(odd_repo, "json"))
    names = sorted(os.fsencode(f["path"]) for f in report["findings"])
    assert names == sorted([ODD, NEWLINE.encode()])   # the bytes of the names, exactly


def test_text_escapes_names(odd_repo: Path) -> None:
    lines = _scan(odd_repo, "text").decode().splitlines()
    assert len(lines) == 3                              # two findings and the summary: nothing forged
    assert sorted(line.split(":")[0] for line in lines[:2]) == ["caf\\xe9 \\xff.yaml", "two\\nlines.yaml"]


def test_github_annotations_escape_names(odd_repo: Path) -> None:
    lines = _scan(odd_repo, "github").decode().splitlines()
    assert len(lines) == 3
    files = sorted(line.split("file=")[1].split(",")[0] for line in lines[:2])
    # GitHub decodes %0A in a property: the annotation names the real file.
    assert files == ["caf\\xe9 \\xff.yaml", "two%0Alines.yaml"]


def test_sarif_uris_are_the_names_bytes(odd_repo: Path) -> None:
    doc = json.loads(_scan(odd_repo, "sarif"))
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"])
    assert uris == ["caf%E9%20%FF.yaml", "two%0Alines.yaml"]
    assert sorted(unquote_to_bytes(u) for u in uris) == sorted([ODD, NEWLINE.encode()])


def test_escape_functions() -> None:
    name = os.fsdecode(b"a\\b\x1b[31m\n\xff\xe2\x80\xa8.yaml")   # backslash, ESC, newline, bad byte, U+2028 bytes
    assert printable_path(name) == "a\\\\b\\x1b[31m\\n\\xff\\u2028.yaml"
    assert printable("say\r\nhi\tthere\x00") == "say\\r\\nhi\\tthere\\x00"
    assert printable("plain é text") == "plain é text"
    assert valid_text("keep\nlines\x07" + os.fsdecode(b"\xff")) == "keep\nlines\\x07\\xff"
    text = json.dumps({"path": name}, ensure_ascii=False)
    assert json.loads(json_safe(text)) == {"path": name}
    json_safe(text).encode("utf-8")
