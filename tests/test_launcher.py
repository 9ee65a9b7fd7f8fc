"""The console-script launcher and the Typer application accept the same `gpulint scan` command lines.

launch.py runs plain scans without importing Typer, parsing the command line
with scanopts.parse; cli.py builds the Typer command from the same option
declaration. Here both parse a matrix of command lines (and random ones) and
must hand the scan implementation the same values, or the launcher must leave
the command line to Typer. Then the installed console script and the Typer
entry point run real scans and must print the same bytes and exit the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpulint.cli import scancmd, scanopts
from gpulint.cli.app import app


def _typer_values(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, Any] | None]:
    """(exit code, values the Typer command hands the implementation; None if it never got there)."""
    seen: list[dict[str, Any]] = []

    def record(values: dict[str, Any]) -> int:
        seen.append(values)
        return 0

    monkeypatch.setattr(scancmd, "run_scan", record)
    result = CliRunner().invoke(app, ["scan", *args], catch_exceptions=False)
    return result.exit_code, (seen[0] if seen else None)


ACCEPTED = [
    [],
    ["."],
    ["-"],
    ["a.yaml", "b/", "-"],
    ["--format", "json", "x"],
    ["--format=sarif", "x"],
    ["-f", "github"],
    ["-ftext", "x"],
    ["-fsarif", "-ojson"],
    ["x", "--format", "json", "y"],
    ["--output", "out.json", "--category", "k8s"],
    ["-o", "-", "--output=o2"],
    ["-o-x"],
    ["--fail-on", "never"],
    ["--fail-on=info", "--fail-on", "error"],
    ["--select", "GPU003,GPU006", "--select", "GPU1", "--extend-select=GPU105", "--ignore", "GPU000"],
    ["--select", ""],
    ["--exclude", "*.json", "--exclude=vendor/**"],
    ["--show-suppressed", "--no-default-exemptions", "--helm-skip-tests"],
    ["--show-suppressed", "--show-suppressed"],
    ["--config", "c.yaml", "--baseline", "b.json"],
    ["--write-baseline", "w.json"],
    ["--helm", "/bin/helm", "--values", "v1.yaml", "--values", "v2.yaml", "--set", "a=b", "--set=c=d"],
    ["--helm-release", "r", "--helm-namespace", "ns", "--kustomize", "kubectl"],
    ["--max-depth", "1", "--max-alias-nodes", "0"],
    ["--max-depth", "10000", "--max-alias-nodes=  12 "],
    ["--max-depth", "+7"],
    ["--jobs", "1"],
    ["-j", "4", "x"],
    ["-j8"],
    ["--jobs=2", "--jobs", "3"],
    ["--", "--format", "-f", "--help"],
    ["x", "--", "-"],
    ["--output", "--format"],          # a value may start with a dash
    ["--set", "--max-depth=3"],
    ["--helm-release", "--x"],         # accepted by the parser, refused later by the implementation
]

REFUSED = [
    ["--help"],
    ["-h"],
    ["--format", "xml"],
    ["--format", "JSON"],
    ["--format"],
    ["-f"],
    ["--fail-on", "fatal"],
    ["--max-depth", "0"],
    ["--max-depth", "10001"],
    ["--max-depth", "x"],
    ["--max-depth", "1.5"],
    ["--max-alias-nodes", "-1"],
    ["--jobs", "0"],
    ["--show-suppressed=yes"],
    ["--bogus"],
    ["--forma", "json"],
    ["-x"],
    ["-fxml"],
    ["-f=json"],
    ["--version"],
    ["x", "--no-such-option"],
]


@pytest.mark.parametrize("args", ACCEPTED, ids=" ".join)
def test_the_launcher_parses_like_typer(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = scanopts.parse(args)
    assert fast is not None, "a plain scan command line must not need Typer"
    code, values = _typer_values(args, monkeypatch)
    assert code == 0
    assert values == fast


@pytest.mark.parametrize("args", REFUSED, ids=" ".join)
def test_the_launcher_leaves_other_command_lines_to_typer(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert scanopts.parse(args) is None
    code, values = _typer_values(args, monkeypatch)
    assert values is None and code in (0, 2)  # help, or a usage error Typer explains


_TOKENS = st.sampled_from([
    "--format", "-f", "json", "sarif", "xml", "--format=text", "-fjson", "-fx", "--output", "-o", "o.txt",
    "--select", "GPU003", "--fail-on", "never", "bad", "--show-suppressed", "--show-suppressed=1",
    "--max-depth", "0", "3", "10001", "-1", "--jobs", "-j", "-j2", "--", "-", ".", "x.yaml", "--set", "a=b",
    "--helm-release", "", "=", "--exclude=*", "-", "--nope", "-z", "--values", "--max-alias-nodes=5",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=7))
def test_random_command_lines_parse_like_typer_or_go_to_typer(args: list[str]) -> None:
    fast = scanopts.parse(args)
    with pytest.MonkeyPatch.context() as monkeypatch:
        code, values = _typer_values(args, monkeypatch)
    if fast is not None:
        assert (code, values) == (0, fast)


def test_every_declared_option_is_a_typer_option() -> None:
    import inspect

    from gpulint.cli.app import scan

    params = inspect.signature(scan).parameters
    assert list(params) == ["paths"] + [opt.name for opt in scanopts.OPTIONS]
    for opt in scanopts.OPTIONS:
        info = params[opt.name].default
        assert tuple(info.param_decls) == opt.flags and info.default == opt.default and info.help == opt.help


# --- whole runs: the console script against the Typer entry point ---------------------------


def _console_script() -> str:
    script = shutil.which("gpulint", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the gpulint console script is not installed next to this python")
    with open(script, encoding="utf-8", errors="replace") as handle:
        if "gpulint.cli.launch" not in handle.read():
            pytest.skip("the installed console script predates the launcher (pip install -e . again)")
    return script


_TYPER = "import sys; from gpulint.cli.app import main; sys.argv[0] = 'gpulint'; main()"
# Rendering, colour and GitHub detection depend on the environment: keep it fixed.
_ENV = {**os.environ, "NO_COLOR": "1", "GITHUB_ACTIONS": ""}

RUNS = [
    ["scan", str(FIXTURES / "rules")],
    ["scan", "--format", "json", str(FIXTURES / "rules"), str(FIXTURES / "core")],
    ["scan", "-f", "sarif", "--category", "k8s", str(FIXTURES / "rules" / "GPU006")],
    ["scan", "--format=github", "--show-suppressed", str(FIXTURES / "suppressions")],
    ["scan", "--select", "GPU00", "--ignore", "GPU003", "--fail-on", "error", str(FIXTURES / "rules")],
    ["scan", "--fail-on", "never", "-j", "2", str(FIXTURES / "workloads")],
    ["scan", "--max-depth", "3", str(FIXTURES / "core")],
    ["scan", "--no-default-exemptions", str(FIXTURES / "exemptions")],
    ["scan", str(FIXTURES / "core" / "not-kubernetes.yaml")],
    ["scan", "missing.yaml", str(FIXTURES / "core" / "list.yaml")],
    ["scan", "--select", "GPU999", "."],
    ["scan", "--config", "no-such-config.yaml", "."],
    ["scan", "--baseline", "no-such-baseline.json", "."],
    ["scan", "--set", "novalue", "."],
    ["scan", "--helm-release", "--bad", "."],
    ["scan", "--format", "xml", "."],
    ["scan", "--help"],
    ["--version"],
    ["rules"],
]


@pytest.mark.slow
@pytest.mark.parametrize("args", RUNS, ids=" ".join)
def test_the_console_script_and_typer_print_the_same(args: list[str]) -> None:
    script = _console_script()
    fast = subprocess.run([script, *args], capture_output=True, cwd=ROOT, env=_ENV)
    typer = subprocess.run([sys.executable, "-c", _TYPER, *args], capture_output=True, cwd=ROOT, env=_ENV)
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer.returncode, typer.stdout, typer.stderr)


@pytest.mark.slow
def test_scan_from_stdin_and_a_closed_pipe_behave_the_same(tmp_path: Path) -> None:
    script = _console_script()
    text = (FIXTURES / "core" / "anchors.yaml").read_bytes()
    fast = subprocess.run([script, "scan", "-"], input=text, capture_output=True, env=_ENV)
    typer = subprocess.run([sys.executable, "-c", _TYPER, "scan", "-"], input=text, capture_output=True, env=_ENV)
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer.returncode, typer.stdout, typer.stderr)
    # A reader that stops early: exit 1 and nothing on stderr, like Click.
    many = tmp_path / "many.yaml"
    many.write_bytes(b"---\n".join([text] * 3000))
    codes = []
    for cmd in ([script, "scan", str(many)], [sys.executable, "-c", _TYPER, "scan", str(many)]):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_ENV)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()
        err = proc.stderr.read()
        codes.append((proc.wait(), err))
    assert codes[0] == codes[1] == (1, b"")


@pytest.mark.slow
def test_the_console_script_flushes_before_its_fast_exit_and_survives_a_closed_pipe(tmp_path: Path) -> None:
    script = _console_script()
    # Everything printed reaches a file (launch._exit flushes before os._exit).
    with open(tmp_path / "out.txt", "wb") as out:
        done = subprocess.run([script, "scan", str(FIXTURES / "rules")], stdout=out, stderr=subprocess.PIPE,
                              cwd=ROOT, env=_ENV)
    typer = subprocess.run([sys.executable, "-c", _TYPER, "scan", str(FIXTURES / "rules")], capture_output=True,
                           cwd=ROOT, env=_ENV)
    assert (done.returncode, (tmp_path / "out.txt").read_bytes()) == (typer.returncode, typer.stdout)
    # A reader that stops early (`gpulint scan | head -1`): exit 1, no traceback.
    proc = subprocess.Popen([script, "scan", str(FIXTURES)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, env=_ENV)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(60) == 1
    assert b"Traceback" not in err and b"Exception ignored" not in err
