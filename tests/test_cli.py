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

from gpulint.results.findings import STATUSES

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
    assert s["files"] == sum(s[k] for k in STATUSES)


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
    assert out.splitlines()[1].startswith("GPU000  invalid-input")
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


# --- command line like ruff's --------------------------------------------------------------------


def test_exit_zero_keeps_findings_but_not_usage_errors(tree: Path) -> None:
    code, out, _ = run_cli("scan", "--exit-zero", str(tree / "bad.yaml"))
    assert code == 0 and "GPU003" in out
    assert run_cli("scan", "--exit-zero", "--select", "GPU999", str(tree / "bad.yaml"))[0] == 2


def test_stdin_filename_names_the_input_and_is_matched_like_that_file(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, report = scan_json("-", "--stdin-filename", "k8s/pod.yaml", input=BAD)
    assert code == 1 and [(f["path"], f["line"]) for f in report["findings"]] == [("k8s/pod.yaml", 10)]
    # The configuration found from that name applies, its exclude included.
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / ".gpulint.yaml").write_text("exclude: ['gen-*.yaml']\n")
    code, report = scan_json("-", "--stdin-filename", "vendor/gen-pod.yaml", input=BAD)
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 0)
    code, report = scan_json("-", "--stdin-filename", "x/pod.yaml", "--exclude", "x", input=BAD)
    assert (code, report["summary"]["files"]) == (0, 0)


def test_stdin_filename_is_never_read_from_disk_for_source_lines(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text("# not what was piped in\n" * 20)
    code, out, _ = run_cli("scan", "-f", "full", "-", "--stdin-filename", "pod.yaml", input=BAD)
    assert code == 1 and out.startswith("pod.yaml:\n  10:7: GPU003") and "not what was piped" not in out


def test_output_creates_missing_folders(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports" / "sub" / "r.json"
    code, stdout, _ = run_cli("scan", "-f", "json", "-o", str(out), str(tree / "bad.yaml"))
    assert (code, stdout) == (1, "") and json.loads(out.read_text())["summary"]["findings"] == 1
    blocked = tmp_path / "file"
    blocked.write_text("")
    code, _, err = run_cli("scan", "-o", str(blocked / "r.txt"), str(tree / "bad.yaml"))
    assert code == 2 and err.startswith(f"gpulint: error: cannot write {blocked / 'r.txt'}: ")


class _Tty:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("choice", "env", "tty", "expected"), [
    ("auto", {}, True, True),
    ("auto", {}, False, False),
    ("auto", {"NO_COLOR": "1"}, True, False),
    ("auto", {"FORCE_COLOR": "1"}, False, True),
    ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
    ("auto", {"TERM": "dumb"}, True, False),
    ("auto", {"TERM": "dumb", "FORCE_COLOR": "1"}, False, True),
    ("always", {"NO_COLOR": "1"}, False, True),
    ("never", {"FORCE_COLOR": "1"}, True, False),
])
def test_colour_follows_the_option_then_the_environment(choice: str, env: dict, tty: bool, expected: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.report.formats._text import use_colour

    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert use_colour(choice, _Tty(tty)) is expected


def test_color_always_and_force_color_colour_the_text(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "\033[31m[error]" in run_cli("scan", "--color", "always", str(tree / "bad.yaml"))[1]
    assert "\033[" not in run_cli("scan", str(tree / "bad.yaml"))[1]
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\033[31m[error]" in run_cli("scan", str(tree / "bad.yaml"))[1]
    assert "\033[" not in run_cli("scan", "--color", "never", str(tree / "bad.yaml"))[1]


def test_the_suppressed_hint_is_given_only_without_show_suppressed() -> None:
    target = str(FIXTURES / "suppressions")
    last = run_cli("scan", target)[1].splitlines()[-1]
    assert last.endswith(" suppressed (--show-suppressed to list).")
    last = run_cli("scan", "--show-suppressed", target)[1].splitlines()[-1]
    assert last.endswith(" suppressed.") and "--show-suppressed" not in last


def test_rules_says_once_whether_a_rule_is_on_by_default() -> None:
    from gpulint.scan.registry import load_rules

    code, out, _ = run_cli("rules")
    header, *lines = out.splitlines()
    assert header.split() == ["ID", "NAME", "SEVERITY", "DEFAULT", "SUMMARY"]
    rules = load_rules()
    for line in lines:
        rule_id, name, severity, default, *_ = line.split()
        assert (name, default) == (rules[rule_id].name, "on" if rules[rule_id].enabled_by_default else "off")
        assert line.count("off by default") <= 1
    assert run_cli("rules", "-f", "xml")[2] == "gpulint: error: --format: 'xml' is not one of text, json\n"


def test_statistics_count_findings_per_rule() -> None:
    target = str(FIXTURES / "rules")
    _, report = scan_json(target)
    expected: dict[tuple[str, str], int] = {}
    for finding in report["findings"]:
        if not finding["suppressed"]:
            key = (finding["rule"], finding["severity"])
            expected[key] = expected.get(key, 0) + 1
    code, out, _ = run_cli("scan", "--statistics", target)
    *rows, last = out.splitlines()
    assert code == 1 and last.startswith(f"Found {report['summary']['findings']} findings")
    seen = {}
    for row in rows:
        count, rule, _name, severity = row.split()
        seen[(rule, severity.strip("[]"))] = int(count)
    assert seen == expected
    counts = [int(row.split()[0]) for row in rows]
    assert counts == sorted(counts, reverse=True)
    code, out, _ = run_cli("scan", "--statistics", "-f", "json", target)
    assert {(r["rule"], r["severity"]): r["count"] for r in json.loads(out)} == expected
    assert run_cli("scan", "--statistics", "-f", "sarif", target)[0] == 2


def test_statistics_in_github_actions_are_text(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert run_cli("scan", str(tree / "bad.yaml"))[1].startswith("::error ")
    assert run_cli("scan", "--statistics", str(tree / "bad.yaml"))[1].startswith("1  GPU003  visible-devices-env")


def test_full_text_groups_by_file_with_the_source_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(BAD)
    (tmp_path / "b.yaml").write_text(BAD.replace("name: bad", "name: other").replace("\n", "\n#\n", 1))
    code, out, _ = run_cli("scan", "-f", "full", ".")
    message = out.splitlines()[1].split(": GPU003 ", 1)[1]
    assert code == 1 and out == (
        "a.yaml:\n"
        f"  10:7: GPU003 {message}\n"
        "    10 |     - name: NVIDIA_VISIBLE_DEVICES\n"
        "       |       ^\n"
        "\n"
        "b.yaml:\n"
        f"  11:7: GPU003 {message.replace('Pod bad', 'Pod other')}\n"
        "    11 |     - name: NVIDIA_VISIBLE_DEVICES\n"
        "       |       ^\n"
        "Found 2 findings (2 errors) in 2 files: 2 scanned.\n")
    # Not a terminal: `text` is the concise form, one line per finding.
    concise = run_cli("scan", ".")[1]
    assert concise == run_cli("scan", "-f", "concise", ".")[1]
    assert concise.splitlines()[:2] == [f"a.yaml:10:7: GPU003 {message}",
                                        f"b.yaml:11:7: GPU003 {message.replace('Pod bad', 'Pod other')}"]


def test_quiet_prints_the_findings_only(tree: Path, tmp_path: Path) -> None:
    code, out, err = run_cli("scan", "-q", str(tree / "bad.yaml"))
    assert code == 1 and err == "" and out.splitlines() == [run_cli("scan", str(tree / "bad.yaml"))[1].splitlines()[0]]
    code, out, err = run_cli("scan", "-q", "--write-baseline", str(tmp_path / "b.json"), str(tree / "bad.yaml"))
    assert (code, out, err) == (0, "", "")


# --- progress and verbosity ----------------------------------------------------------------------


class _Terminal:
    """A stderr that says it is a terminal and keeps what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_the_progress_line_appears_after_a_second_and_is_erased() -> None:
    from gpulint.cli.progress import Progress
    from gpulint.inputs.discovery import Input
    from gpulint.results.scanning import ScanResult

    now = [0.0]
    stream = _Terminal()
    inputs = [Input("a.yaml", "manifest", "a.yaml"), Input("b.yaml", "manifest", "b.yaml"),
              Input("charts/x", "chart", "charts/x")]
    progress = Progress(stream, inputs, line=True, verbose=False, clock=lambda: now[0])
    progress.file_scanned(1, 3)
    assert stream.text == ""                       # a quick scan prints nothing extra
    now[0] = 1.5
    progress.render_started(inputs[2])
    assert stream.text == "\r\033[Kgpulint: 0/1 charts and kustomizations rendered, 1/3 files scanned, rendering charts/x"
    now[0] = 1.55
    progress.file_scanned(2, 3)                    # redrawn at most every 0.1 s
    assert stream.text.count("\r") == 1
    now[0] = 1.7
    progress.render_done(inputs[2], 0.2, failed=False)
    assert stream.text.endswith("\r\033[Kgpulint: 1/1 charts and kustomizations rendered, 2/3 files scanned")
    progress.erase()
    progress.finished(ScanResult([]))
    assert stream.text.endswith("\r\033[K")
    # A forked worker's copy of the object writes nothing.
    copy = Progress(stream, inputs, line=True, verbose=True, clock=lambda: now[0] + 5)
    copy.pid = -1
    before = stream.text
    copy.render_done(inputs[2], 1.0, failed=True)
    copy.file_scanned(3, 3)
    assert stream.text == before


def test_no_progress_line_off_a_terminal_or_with_quiet(tree: Path) -> None:
    from gpulint.cli.progress import Progress

    stream = _Terminal()
    progress = Progress(stream, [], line=False, verbose=False, clock=lambda: 10.0)
    progress.file_scanned(1, 1)
    assert stream.text == ""
    assert run_cli("scan", str(tree))[2] == ""   # the test runner's stderr is no terminal


def test_verbose_names_each_render_with_its_time_and_each_file_not_scanned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.setenv("PATH", str(tmp_path / "no-helm"))   # the chart fails to render, quickly
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n")
    (tmp_path / "blob.yaml").write_bytes(b"\x00\x01")
    (tmp_path / "values.yaml").write_text("a: 1\n")
    (tmp_path / "pod.yaml").write_text(BAD)
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "x.yaml").write_text(BAD)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.yaml")
    code, out, err = run_cli("scan", "-v", "--exclude", "gen", ".")
    assert code == 1 and "GPU003" in out and "gen/x.yaml" not in out
    lines = err.splitlines()
    assert re.fullmatch(r"gpulint: failed chart \(helm template\) in \d+\.\d\d s", lines[0])
    assert lines[1:] == ["gpulint: not scanned: blob.yaml: binary",
                         "gpulint: not scanned: chart: Helm chart not rendered",
                         "gpulint: not scanned: gen: matches --exclude",
                         *(["gpulint: not scanned: pipe.yaml: not a regular file (a pipe, socket or device)"]
                           if hasattr(os, "mkfifo") else []),
                         "gpulint: not scanned: values.yaml: not Kubernetes (no apiVersion and kind)"]
    assert run_cli("scan", "-v", "-q", ".")[2] == ""


def test_source_lines_are_read_forward_and_only_from_regular_files(tmp_path: Path) -> None:
    from gpulint.report.text import _SourceLines

    path = tmp_path / "f.yaml"
    path.write_bytes("\ufeffone\r\ntwo\nthree\n".encode())
    lines = _SourceLines(str(path))
    assert [lines.line(n) for n in (2, 2, 3, 1, 4, 0)] == ["two", "two", "three", "one", "", ""]
    lines.close()
    assert _SourceLines(str(tmp_path)).line(1) == ""                      # a directory
    assert _SourceLines(f"{tmp_path / 'chart'} (rendered)").line(1) == ""  # rendered output has no file
