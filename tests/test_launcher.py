"""The console script and the Typer application run `gpulint scan` the same way.

launch.py sends `gpulint scan ...` straight to scancmd.main (argparse, no Typer:
see launch.py for the measured reason); the Typer application's `scan` command
passes its arguments to the same function, so `python -m gpulint`, the console
script and in-process tests agree. These run both on real command lines and
compare bytes and exit codes, including help, usage errors, stdin and a reader
that stops early.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, run_cli

from gpulint.cli import scanargs


def test_every_option_reaches_the_scan_under_its_name() -> None:
    values = scanargs.parse(["-f", "json", "-o", "r.json", "--select", "GPU003,GPU006", "--select", "GPU1",
                             "--set", "a=b", "-j2", "x.yaml", "--max-depth=3", "-", "--", "--odd-name.yaml"])
    assert values["paths"] == ["x.yaml", "-", "--odd-name.yaml"]
    assert (values["output_format"], values["output"], values["jobs"], values["max_depth"]) == ("json", ["r.json"], 2, 3)
    assert values["select"] == ["GPU003,GPU006", "GPU1"] and values["set_values"] == ["a=b"]
    assert values["extend_select"] == [] and values["values"] == []   # repeatable options default to []
    assert scanargs.defaults()["helm_release"] == "release-name"


@pytest.mark.parametrize(("args", "message"), [
    (["--fail-on", "bogus"], "--fail-on: 'bogus' is not one of error, warning, info, never"),
    (["--format", "JSON"], "-f/--format: 'JSON' is not one of text, full, concise, json, sarif, github, rdjson, junit, gitlab"),
    (["--max-depth", "0"], "--max-depth: 0 is out of range (allowed: from 1 to 10000)"),
    (["--max-depth", "1.5"], "--max-depth: '1.5' is not a whole number"),
    (["--jobs"], "-j/--jobs: expected one argument"),
    (["--autofix"], "unknown option --autofix; see gpulint scan --help"),
    (["--json"], "unknown option --json; see gpulint scan --help"),
    (["--fail_on", "error"], "unknown option --fail_on (did you mean --fail-on?); see gpulint scan --help"),
    (["--exlude=x"], "unknown option --exlude (did you mean --exclude?); see gpulint scan --help"),
    (["--forma", "json"], "unknown option --forma (did you mean --format?); see gpulint scan --help"),
    (["--show-suppressed=yes"], "--show-suppressed: ignored explicit argument 'yes'"),
])
def test_usage_errors_are_one_clean_line(args: list[str], message: str) -> None:
    code, out, err = run_cli("scan", *args)
    assert (code, out, err) == (2, "", f"gpulint: error: {message}\n")


def test_help_names_no_internal_types() -> None:
    for flag in ("-h", "--help"):
        code, out, err = run_cli("scan", flag)
        assert code == 0 and err == "" and out.startswith("usage: gpulint scan [OPTIONS] [PATH ...]")
        assert "--fail-on SEVERITY" in out and "--max-depth N" in out
        for internal in ("list[", "int range", "<", "TEXT", "INTEGER", "Value error"):
            assert internal not in out
    code, out, _ = run_cli("-h")
    assert code == 0 and "scan" in out and "rules" in out
    assert run_cli("rules", "-h")[0] == 0


def _console_script() -> str:
    script = shutil.which("gpulint", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the gpulint console script is not installed next to this python")
    with open(script, encoding="utf-8", errors="replace") as handle:
        if "gpulint.cli.launch" not in handle.read():
            pytest.skip("the installed console script is not gpulint.cli.launch (pip install -e . again)")
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
    ["scan", "--diff", str(FIXTURES / "rules" / "GPU101")],
    ["scan", "--help"],
    ["scan", "-h"],
    ["--version"],
    ["rules"],
]


@pytest.mark.slow
@pytest.mark.parametrize("args", RUNS, ids=" ".join)
def test_the_console_script_and_typer_print_the_same(args: list[str]) -> None:
    script = _console_script()
    script_run = subprocess.run([script, *args], capture_output=True, cwd=ROOT, env=_ENV)
    typer = subprocess.run([sys.executable, "-c", _TYPER, *args], capture_output=True, cwd=ROOT, env=_ENV)
    assert (script_run.returncode, script_run.stdout, script_run.stderr) == (typer.returncode, typer.stdout, typer.stderr)


@pytest.mark.slow
def test_scan_from_stdin_and_a_closed_pipe_behave_the_same(tmp_path: Path) -> None:
    script = _console_script()
    text = (FIXTURES / "core" / "anchors.yaml").read_bytes()
    script_run = subprocess.run([script, "scan", "-"], input=text, capture_output=True, env=_ENV)
    typer = subprocess.run([sys.executable, "-c", _TYPER, "scan", "-"], input=text, capture_output=True, env=_ENV)
    assert (script_run.returncode, script_run.stdout, script_run.stderr) == (typer.returncode, typer.stdout, typer.stderr)
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
def test_the_console_script_writes_everything_to_a_file_and_survives_a_closed_pipe(tmp_path: Path) -> None:
    script = _console_script()
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
