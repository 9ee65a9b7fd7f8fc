"""Line numbers as editors show them, whatever the line breaks.

- NEL (U+0085), LS (U+2028) and PS (U+2029) are line breaks to YAML 1.1 (so to
  libyaml) but not to editors, git or GitHub: inside a quoted value they must
  not shift the lines of what follows.
- A CR-only file (old Mac line endings) has CR lines for every finding: the
  parser's positions, positions inside a string, suppression comments, errors.
- A byte-order mark at the start of a later document (`cat a.yaml b.yaml` of
  files saved with one) hides nothing: kubectl reads that document, so does gpulint.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import active, scan_json

from gpulint.load import decode as decode_mod

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p{n}
  annotations:
    note: {note}
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: ["sh", "-c", "sleep 1; docker run --gpus all cuda"]
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
"""
# GPU002 at the `docker run` inside the string, GPU003 at the env entry.
EXPECTED = [("GPU002", 11, 37), ("GPU003", 13, 7)]


def _scan_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """The findings of `path` read whole, asserted equal to those of it streamed in tiny blocks."""
    _, whole = scan_json(str(path))
    with monkeypatch.context() as patch:
        patch.setattr(decode_mod, "WHOLE_MAX", 0)
        patch.setattr(decode_mod, "BLOCK_SIZE", 5)
        _, streamed = scan_json(str(path))
    assert streamed == whole
    return active(whole)


@pytest.mark.parametrize("note", [
    '"a\u2028b\u2029c\x85d"',           # double-quoted
    "'a\u2028b\u2029c\x85d'",           # single-quoted
])
def test_nel_ls_ps_inside_values_do_not_shift_lines(note: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(POD.format(n=1, note=note), encoding="utf-8")
    assert _scan_both_ways(path, monkeypatch) == EXPECTED


def test_nel_ls_ps_do_not_shift_errors_or_duplicate_keys(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    text = POD.format(n=1, note='"\u2028\u2028\u2028"').replace("  - name: app\n", "  - name: app\n    name: twice\n")
    path.write_text(text + "---\nbroken: [\n", encoding="utf-8")
    _, report = scan_json(str(path))
    assert active(report) == [("GPU000", 10, 5), ("GPU000", 18, 1), ("GPU002", 12, 37), ("GPU003", 14, 7)]
    assert "first defined at line 9" in next(f["message"] for f in report["findings"] if f["line"] == 10)


def test_cr_only_files_use_cr_lines_for_every_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pod.yaml"
    path.write_bytes(POD.format(n=1, note="x").replace("\n", "\r").encode())
    assert _scan_both_ways(path, monkeypatch) == EXPECTED
    # A suppression comment on its own line applies to the next CR line.
    text = POD.format(n=1, note="x").replace("    - name: NVIDIA", "    # gpulint: ignore[GPU003] test rig\n    - name: NVIDIA")
    path.write_bytes(text.replace("\n", "\r").encode())
    _, report = scan_json(str(path))
    assert active(report) == [("GPU002", 11, 37)]
    assert [(f["rule"], f["line"]) for f in report["findings"] if f["suppressed"]] == [("GPU003", 14)]
    # A parse error, and invalid bytes, are placed on CR lines too.
    path.write_bytes(b"apiVersion: v1\rkind: Pod\rmetadata:\r  name: \xff\rspec: [\r")
    _, report = scan_json(str(path))
    assert active(report) == [("GPU000", 4, 9), ("GPU000", 6, 1)]


def test_mixed_line_endings_count_a_stray_cr_as_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pod.yaml"
    text = POD.format(n=1, note="x").replace("\n", "\r\n", 3).replace("  annotations:\n", "  annotations:\r")
    path.write_bytes(text.encode())
    assert _scan_both_ways(path, monkeypatch) == EXPECTED


@pytest.mark.parametrize("separator", [b"---\n\xef\xbb\xbf", b"\xef\xbb\xbf---\n"])
def test_documents_after_a_mid_stream_byte_order_mark_are_read(separator: bytes, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "all.yaml"
    first, second = POD.format(n=1, note="x"), POD.format(n=2, note="y")
    path.write_bytes(b"\xef\xbb\xbf" + first.encode() + separator + second.encode())
    second_doc = [(rule, line + 15, column) for rule, line, column in EXPECTED]
    assert _scan_both_ways(path, monkeypatch) == sorted(EXPECTED + second_doc)
