"""`--format github`: workflow-command annotations, and the GITHUB_ACTIONS default."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import ACK_EXAMPLE_POD, ROOT, rendered_from, run_cli, scan_json, scanned

from gpulint import __version__
from gpulint.api import Severity
from gpulint.load.locations import Span
from gpulint.model.objects import ObjectRef
from gpulint.report import github
from gpulint.results.findings import FileReport, Finding, MappedLocation, Suppression
from gpulint.results.scanning import ScanResult

BAD = """apiVersion: v1
kind: Pod
metadata:
  name: bad
spec:
  containers:
  - name: app
    image: registry.example.com/app:1
    env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
"""
GOOD = ACK_EXAMPLE_POD
_COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """One workflow command -> (command, properties, message), unescaped."""
    match = _COMMAND.match(line)
    assert match, line
    props = dict(item.split("=", 1) for item in match.group(2).split(","))
    return match.group(1), {k: _unescape(v) for k, v in props.items()}, _unescape(match.group(3))


def _unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def test_escaping_follows_github_rules() -> None:
    assert github.escape_data("50% of a\r\nb: c, d") == "50%25 of a%0D%0Ab: c, d"
    assert github.escape_property("a,b:c%d\ne") == "a%2Cb%3Ac%25d%0Ae"
    assert github.escape_property("%2C") == "%252C"   # '%' first, so escapes are not double-read


def test_fixtures_annotations_match_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli("scan", "--format", "github", "fixtures/")
    _, report = scan_json("fixtures/")
    _, text, _ = run_cli("scan", "fixtures/")
    lines = out.splitlines()
    assert code == 1
    active = [f for f in report["findings"] if not f["suppressed"]]
    # Most severe first (in report order within a severity), at most 10 per kind (9 notices).
    rank = {"error": 0, "warning": 1, "info": 2}
    ranked = sorted(active, key=lambda f: rank[f["severity"]])
    room = {"error": 10, "warning": 10, "info": 9}
    annotated, rest = [], []
    for finding in ranked:
        if room[finding["severity"]]:
            room[finding["severity"]] -= 1
            annotated.append(finding)
        else:
            rest.append(finding)
    assert len(rest) > 300
    assert lines[-1] == text.splitlines()[-1]          # the same summary as the text format
    for line, finding in zip(lines, annotated):
        command, props, message = parse(line)
        assert command == {"error": "error", "warning": "warning", "info": "notice"}[finding["severity"]]
        # Rendered Helm/Kustomize findings are annotated on their first mapped file.
        where = finding["mapped"][0] if finding["mapped"] else finding
        assert props["file"] == where["path"]          # fixtures/... relative to the repository root
        assert (int(props["line"]), int(props["endLine"])) == (where["line"], where["end_line"])
        if where["line"] == where["end_line"]:
            assert (int(props["col"]), int(props["endColumn"])) == (where["column"], where["end_column"])
        else:   # GitHub accepts columns only on single-line annotations
            assert "col" not in props and "endColumn" not in props
        assert props["title"] == f"{finding['rule']} {finding['name']}"
        # ... followed, for a mapped finding, by where it was rendered.
        at = scanned(finding)   # the rendered position of rendered input
        source, variant = rendered_from(at["path"]) or (None, "")
        rendered = f"{source} with {variant}" if variant else source
        assert message == finding["message"] or (
            finding["mapped"] and message == f"{finding['message']} (rendered output of {rendered}, line {at['line']})")
    # The others: plain lines in a collapsed group (the text format's lines), then one notice.
    n = len(annotated)
    assert lines[n] == f"::group::gpulint: findings not annotated ({len(rest)})"
    text_lines = set(text.splitlines())
    assert all(line in text_lines and not line.startswith("::") for line in lines[n + 1:n + 1 + len(rest)])
    assert lines[n + 1 + len(rest)] == "::endgroup::"
    command, props, message = parse(lines[n + 2 + len(rest)])
    assert (command, props) == ("notice", {"title": "gpulint"})
    assert message.startswith(f"{len(rest)} more findings not annotated: GitHub shows 10 error, 10 warning")
    assert len(lines) == n + len(rest) + 4


def test_annotation_cap_is_most_severe_first() -> None:
    def finding(line: int, severity: Severity) -> Finding:
        return Finding("GPU003", "visible-devices-env", severity, f"m{line}", "-", Span(line, 1, line, 2))

    findings = [finding(n, Severity.INFO) for n in range(1, 4)] + [finding(n, Severity.ERROR) for n in range(4, 8)]
    findings.append(finding(8, Severity.WARNING))
    findings[0].suppressed = Suppression("inline", "ok")
    out = github.render(ScanResult([FileReport("-", "scanned", findings=findings)]), show_suppressed=True, limit=2)
    lines = out.splitlines()
    kinds = [(parse(line)[0], parse(line)[2]) for line in lines[:4]]
    # Errors first, then warnings, then notices (one notice is kept for the word that more exist).
    assert kinds == [("error", "m4"), ("error", "m5"), ("warning", "m8"), ("notice", "m2")]
    assert lines[4] == "::group::gpulint: findings not annotated (4)"
    # The rest as text lines, by rank: the suppressed one last.
    assert [line.split(" ")[3] for line in lines[5:9]] == ["m6", "m7", "m3", "m1"]
    assert lines[9] == "::endgroup::"
    assert lines[10].startswith("::notice title=gpulint::4 more findings not annotated")


def test_step_summary_is_written_when_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD)
    (tmp_path / "a|b.yaml").write_text(BAD.replace("name: bad", "name: other"))
    (tmp_path / "ok.yaml").write_text(BAD.replace("env:", "# gpulint: ignore[GPU003] reviewed\n    env:"))
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = run_cli("scan", "--format", "github", "bad.yaml", "a|b.yaml", "ok.yaml")
    assert code == 1
    text = summary.read_text()
    assert text.startswith("# earlier step\n### gpulint: 2 findings (2 errors)\n")   # appended, not replaced
    assert (f"| [GPU003](https://github.com/gpulint/gpulint/blob/v{__version__}/docs/rules/GPU003.md) "
            "| visible-devices-env | 2 | 0 | 0 | 1 |") in text
    assert "| a\\|b.yaml | 1 |" in text and "| bad.yaml | 1 |" in text   # a | in a name cannot split the table
    assert "**Suppressed:** 1 (inline 1)" in text
    # Not for other formats, and not when the variable is unset.
    summary.write_text("")
    run_cli("scan", "--format", "text", "bad.yaml")
    assert summary.read_text() == ""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert run_cli("scan", "--format", "github", "bad.yaml")[0] == 1


def test_exact_annotation_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "bad.yaml").write_text(BAD)
    monkeypatch.chdir(tmp_path / "k8s")
    code, out, _ = run_cli("scan", "--format", "github", "bad.yaml")
    assert code == 1
    assert out.splitlines() == [
        "::error file=k8s/bad.yaml,line=9,endLine=9,col=11,endColumn=53,title=GPU003 visible-devices-env::"
        "NVIDIA_VISIBLE_DEVICES=all in env exposes every GPU of the node without the scheduler knowing; "
        'request nvidia.com/gpu in resources.limits instead (Pod bad, container "app")',
        "Found 1 finding (1 error) in 1 file: 1 scanned.",
    ]


def test_severity_mapping_and_escaping_in_properties(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a,b:c%.yaml").write_text(BAD)
    findings = [
        _finding("a,b:c%.yaml", Severity.INFO, "first line\nsecond: 100%", line=4),
        _finding("a,b:c%.yaml", Severity.WARNING, "w", line=5),
        _finding("a,b:c%.yaml", Severity.ERROR, "e", line=6),
    ]
    out = github.render(_result(findings)).splitlines()
    assert [line.split(" ", 1)[0] for line in out[:3]] == ["::error", "::warning", "::notice"]
    assert out[2] == ("::notice file=a%2Cb%3Ac%25.yaml,line=4,endLine=4,col=3,endColumn=9,"
                      "title=GPU003 visible-devices-env::first line%0Asecond: 100%25")
    assert out[-1].startswith("Found 3 findings (1 error, 1 warning, 1 info)")


def test_stdin_annotation_has_no_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    _, out, _ = run_cli("scan", "--format", "github", "-", input=BAD)
    command, props, _ = parse(out.splitlines()[0])
    assert command == "error" and set(props) == {"title"}


def test_helm_finding_is_annotated_on_its_template(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "templates" / "pod.yaml").write_text("x\n" * 20)
    finding = _finding("-", Severity.ERROR, "m")
    finding.mapped = [MappedLocation("template", "chart/templates/pod.yaml", Span(12, 5, 12, 17))]
    command, props, message = parse(github.render(_result([finding])).splitlines()[0])
    assert props["file"] == "chart/templates/pod.yaml"
    assert (props["line"], props["col"], props["endColumn"]) == ("12", "5", "17")
    assert message == "m (rendered output of stdin, line 4)"


def test_suppressed_only_with_show_suppressed_and_never_as_error(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.yaml").write_text(BAD)
    finding = _finding("x.yaml", Severity.ERROR, "m")
    finding.suppressed = Suppression("config", "reviewed")
    assert github.render(_result([finding])).splitlines()[:-1] == []
    (line, _) = github.render(_result([finding]), show_suppressed=True).splitlines()
    command, props, message = parse(line)
    assert command == "notice" and props["title"] == "GPU003 visible-devices-env (suppressed)"
    assert message == "m [suppressed (config): reviewed]"


@pytest.mark.parametrize("env, args, expect_annotations", [
    ("true", [], True),                      # in GitHub Actions, like yamllint
    ("true", ["--format", "text"], False),   # an explicit format wins
    ("false", [], False),
    (None, [], False),
])
def test_github_format_is_the_default_in_github_actions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         env: str | None, args: list[str],
                                                         expect_annotations: bool) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD)
    if env is None:
        monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    else:
        monkeypatch.setenv("GITHUB_ACTIONS", env)
    code, out, _ = run_cli("scan", *args, "bad.yaml")
    assert code == 1
    assert out.startswith("::error file=bad.yaml,") is expect_annotations
    if not expect_annotations:
        assert out.startswith("bad.yaml:9:11: GPU003 [error]")


def test_clean_scan_prints_only_the_summary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.yaml").write_text(GOOD)
    assert run_cli("scan", "--format", "github", "good.yaml")[:2] == (0, "No findings in 1 file: 1 scanned.\n")


def _finding(file: str, severity: Severity, message: str, line: int = 4) -> Finding:
    return Finding("GPU003", "visible-devices-env", severity, message, file, Span(line, 3, line, 9),
                   obj=ObjectRef("v1", "Pod", "bad", None), container="app")


def _result(findings: list[Finding]) -> ScanResult:
    return ScanResult([FileReport(findings[0].file, "scanned", findings=findings)])
