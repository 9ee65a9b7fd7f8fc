"""The command line: formats, exit codes, selection, discovery, errors."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from conftest import (
    ACK_EXAMPLE_POD,
    BAD_POD,
    FIXTURES,
    ROOT,
    active,
    run_cli,
    scan_json,
)

BAD = BAD_POD
GOOD = ACK_EXAMPLE_POD


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "bad.yaml").write_text(BAD)
    (tmp_path / "good.yml").write_text(GOOD)
    (tmp_path / "values.yaml").write_text("replicas: 2\n")
    (tmp_path / "notes.txt").write_text("not scanned\n")
    return tmp_path


def test_text_format_and_exit_code(tree: Path) -> None:
    code, out, _ = run_cli("scan", str(tree / "bad.yaml"))
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith(f"{tree / 'bad.yaml'}:10:7: GPU003 [error] NVIDIA_VISIBLE_DEVICES=all")
    assert 'Pod bad, container "app"' in first
    assert out.splitlines()[-1] == "Found 1 finding (1 error) in 1 file: 1 scanned."


def test_clean_scan_exits_zero(tree: Path) -> None:
    code, out, _ = run_cli("scan", str(tree / "good.yml"))
    assert code == 0
    assert out == "No findings in 1 file: 1 scanned.\n"


def test_policy_example_pod_is_clean(tree: Path) -> None:
    code, report = scan_json(str(tree / "good.yml"))
    assert (code, report["findings"]) == (0, [])


def test_directory_scan_counts_every_file(tree: Path) -> None:
    code, report = scan_json(str(tree))
    s = report["summary"]
    assert code == 1
    assert (s["files"], s["scanned"], s["not_kubernetes"]) == (3, 2, 1)
    assert s["files"] == sum(s[k] for k in ("scanned", "not_kubernetes", "binary", "error", "helm_chart"))


def test_relative_paths_stay_relative(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    _, report = scan_json(".")
    assert [f["path"] for f in report["findings"]] == ["bad.yaml"]
    _, report = scan_json("./")
    assert [f["path"] for f in report["findings"]] == ["./bad.yaml"]


def test_json_output_validates_against_shipped_schema(tree: Path) -> None:
    schema = json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text())
    for target in (tree, FIXTURES):
        _, report = scan_json(str(target))
        jsonschema.validate(report, schema)


def test_fail_on_thresholds(tree: Path) -> None:
    bad = str(tree / "bad.yaml")
    assert run_cli("scan", "--fail-on", "never", bad)[0] == 0
    assert run_cli("scan", "--fail-on", "error", bad)[0] == 1
    assert run_cli("scan", "--fail-on", "bogus", bad)[0] == 2


def test_select_and_ignore(tree: Path) -> None:
    bad = str(tree / "bad.yaml")
    assert active(scan_json("--ignore", "GPU003", bad)[1]) == []
    assert active(scan_json("--select", "visible-devices-env", bad)[1]) == [("GPU003", 10, 7)]
    code, _, err = run_cli("scan", "--select", "GPU999", bad)
    assert code == 2 and "unknown rule code 'GPU999'" in err


def test_stdin(tree: Path) -> None:
    code, report = scan_json("-", input=BAD)
    assert code == 1
    assert [(f["path"], f["line"]) for f in report["findings"]] == [("-", 10)]


def test_output_file(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    code, stdout, _ = run_cli("scan", "--format", "json", "--output", str(out), str(tree / "bad.yaml"))
    assert code == 1 and stdout == ""
    assert json.loads(out.read_text())["summary"]["findings"] == 1
    assert [p.name for p in out.parent.iterdir()] == ["report.json"]  # no temp file left


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_output_to_a_pipe_writes_into_it_instead_of_replacing_it(tree: Path, tmp_path: Path) -> None:
    # /dev/null, /dev/stdout and pipes must stay what they are: an atomic rename would
    # put a regular file in their place.
    (tmp_path / "out").mkdir()
    fifo = tmp_path / "out" / "report.pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    code, stdout, _ = run_cli("scan", "--format", "json", "--output", str(fifo), str(tree / "bad.yaml"))
    reader.join(10)
    assert code == 1 and stdout == ""
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(received[0])["summary"]["findings"] == 1
    assert [p.name for p in fifo.parent.iterdir()] == ["report.pipe"]


def test_missing_path_is_a_usage_error_but_others_are_scanned(tree: Path) -> None:
    code, out, err = run_cli("scan", str(tree / "nope.yaml"), str(tree / "bad.yaml"))
    assert code == 2
    assert "nope.yaml: no such file or directory" in err
    assert "GPU003" in out


def test_rules_and_explain() -> None:
    code, out, _ = run_cli("rules")
    assert code == 0
    assert out.splitlines()[0].startswith("GPU000  invalid-input")
    code, out, _ = run_cli("explain", "GPU003")
    from gpulint.scan.registry import load_rules

    assert code == 0 and out == load_rules()["GPU003"].documentation
    assert run_cli("explain", "visible-devices-env")[1] == out
    assert run_cli("explain", "GPU999")[0] == 2


def test_every_rule_documentation_has_the_fixed_headings() -> None:
    from gpulint.api import DOC_HEADINGS
    from gpulint.scan.registry import load_rules

    for rule in load_rules().values():
        positions = [rule.documentation.index(f"## {h}") for h in DOC_HEADINGS]
        assert positions == sorted(positions), rule.id


def test_discovery_order_exclude_vcs_and_symlink_loops(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "vendor").mkdir()
    for name in ("b/z.yaml", "a/y.yml", "a/x.json", ".git/hidden.yaml", "vendor/v.yaml", "Dockerfile",
                 "gpu.Dockerfile", "Containerfile", "a/readme.md"):
        (tmp_path / name).write_text("{}\n" if name.endswith(".json") else "FROM scratch\n"
                                     if "file" in name.lower() else "a: 1\n")
    (tmp_path / "a" / "loop").symlink_to(tmp_path, target_is_directory=True)
    from gpulint.inputs.discovery import discover

    found = discover([str(tmp_path)], exclude=("vendor",))
    rel = [str(Path(i.display).relative_to(tmp_path)) for i in found.inputs]
    assert rel == ["Containerfile", "Dockerfile", "a/x.json", "a/y.yml", "b/z.yaml", "gpu.Dockerfile"]
    assert [i.kind for i in found.inputs][:2] == ["dockerfile", "dockerfile"]


def test_chart_directory_is_reported_not_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-helm"))   # rendering with helm: tests/test_helm.py
    chart = tmp_path / "mychart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
    (chart / "templates" / "d.yaml").write_text("kind: {{ .Values.kind }}\n")
    code, report = scan_json(str(tmp_path))
    (finding,) = report["findings"]
    assert finding["rule"] == "GPU010" and "helm template" in finding["message"]
    assert finding["path"].endswith("mychart/Chart.yaml")
    assert report["summary"]["helm_chart"] == 1


def test_binary_file_is_skipped_and_counted(tmp_path: Path) -> None:
    (tmp_path / "blob.yaml").write_bytes(b"\x00\x01\x02\x03")
    code, report = scan_json(str(tmp_path))
    assert code == 0 and report["summary"]["binary"] == 1


def test_python_dash_m_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "gpulint", "scan", str(bad)], capture_output=True,
                          text=True, env=env, cwd=ROOT)
    assert proc.returncode == 1 and "GPU003" in proc.stdout and "Traceback" not in proc.stderr
