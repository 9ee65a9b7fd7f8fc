"""One scan, every report: `-o FILE` and repeatable `-o FORMAT:FILE` (gpulint/report/destinations.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sarif_check
from conftest import BAD_POD, run_cli

from gpulint.report.destinations import OutputError, Target, plan


def test_plan() -> None:
    assert plan(None, "text") == [Target("text", None)]
    assert plan(["out.txt"], "json") == [Target("json", "out.txt")]                 # as before: stdout empty
    assert plan(["sarif:r.sarif"], "github") == [Target("sarif", "r.sarif"), Target("github", None)]
    assert plan(["sarif:r.sarif", "json:-"], "text") == [Target("sarif", "r.sarif"), Target("json", None)]
    assert plan(["./json:odd", "text:log.txt"], "sarif") == [Target("sarif", "./json:odd"), Target("text", "log.txt")]
    assert plan(["xml:a"], "text") == [Target("text", "xml:a")]     # not a format: a file name
    for bad, why in [(["json:-", "sarif:-"], "only one report can go to stdout"),
                     (["json:"], "no file after 'json:'"),
                     (["a.json", "sarif:./a.json"], "are the same file")]:
        with pytest.raises(OutputError, match=why):
            plan(bad, "text")


def test_one_scan_writes_every_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD_POD)
    code, out, err = run_cli("scan", "--format", "github", "-o", "sarif:r.sarif", "--output", "json:r.json",
                             "-o", "text:r.txt", "bad.yaml")
    assert code == 1, err
    assert out.startswith("::error file=bad.yaml,line=10")                  # --format still goes to stdout
    sarif_check.loads((tmp_path / "r.sarif").read_text())
    report = json.loads((tmp_path / "r.json").read_text())
    assert [f["rule"] for f in report["findings"]] == ["GPU003"]
    assert (tmp_path / "r.txt").read_text().startswith("bad.yaml:10:7: GPU003 [error]")
    # The same findings as separate scans give.
    assert (tmp_path / "r.json").read_text() == run_cli("scan", "--format", "json", "bad.yaml")[1]
    assert (tmp_path / "r.sarif").read_text() == run_cli("scan", "--format", "sarif", "bad.yaml")[1]


def test_bad_output_is_a_usage_error_before_the_scan(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD_POD)
    code, out, err = run_cli("scan", "-o", "json:-", "-o", "sarif:-", "bad.yaml")
    assert (code, out) == (2, "")
    assert "gpulint: error: -o: only one report can go to stdout" in err
