"""Report formats come from one registry (gpulint/report/registry.py): one module per format.

The format list of --format, of `-o FORMAT:FILE` and of --help is what the
modules of gpulint/report/formats/ declare; a format added there is usable at
once, with no list to extend elsewhere.
"""

from __future__ import annotations

import io
import sys
import types
from pathlib import Path

import pytest
from conftest import BAD_POD, run_cli

from gpulint.report import registry
from gpulint.report.destinations import OutputError, Target, plan
from gpulint.report.registry import ReportContext, Reporter
from gpulint.results.findings import FileReport
from gpulint.results.scanning import ScanResult


def test_the_formats_are_the_modules_of_the_formats_folder_in_their_declared_order() -> None:
    folder = Path(registry.__file__).parent / "formats"
    modules = {path.stem for path in folder.glob("*.py") if not path.name.startswith("_")}
    assert set(registry.names()) == modules == set(registry.format_modules())
    assert registry.names() == ("text", "full", "concise", "json", "sarif", "github", "rdjson", "junit", "gitlab")
    assert registry.help_text().startswith("text (full on a terminal, concise otherwise), full (")
    assert registry.help_text().endswith(", json, sarif, github, rdjson (reviewdog, fixes as suggestions), junit "
                                          "(JUnit XML for CI test reports) or gitlab (GitLab Code Quality JSON)")


def test_every_reporter_writes_an_empty_scan() -> None:
    result = ScanResult([FileReport("a.yaml", "scanned")])
    for name, reporter in registry.reporters().items():
        out = io.StringIO()
        reporter.write(result, out, ReportContext(rules={}))
        assert out.getvalue(), name


@pytest.fixture
def toy_format(monkeypatch: pytest.MonkeyPatch) -> Reporter:
    """A format module as a contributor would add it, registered for the test only."""

    class CountReporter(Reporter):
        name = "count"
        help = "count (the number of findings)"
        order = 100

        def write(self, result: ScanResult, out: io.TextIOBase, context: ReportContext) -> None:  # type: ignore[override]
            out.write(f"{len(result.findings)}\n")

    module = types.ModuleType("gpulint.report.formats.count")
    module.REPORTER = CountReporter()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    real = registry.format_modules
    monkeypatch.setattr(registry, "format_modules", lambda: [*real(), "count"])
    registry.reporter.cache_clear()
    yield module.REPORTER
    registry.reporter.cache_clear()


def test_a_format_module_is_all_a_new_format_needs(toy_format: Reporter, tmp_path: Path) -> None:
    assert registry.names()[-1] == "count"
    assert registry.help_text().endswith("gitlab (GitLab Code Quality JSON) or count (the number of findings)")
    assert plan(["count:n.txt"], "text") == [Target("count", "n.txt"), Target("text", None)]
    (tmp_path / "bad.yaml").write_text(BAD_POD)
    code, out, _err = run_cli("scan", "--format", "count", str(tmp_path / "bad.yaml"))
    assert (code, out) == (1, "1\n"), _err


def test_an_unknown_format_prefix_is_a_file_name() -> None:
    assert plan(["junk:x"], "json") == [Target("json", "junk:x")]
    with pytest.raises(OutputError):
        plan(["json:"], "text")
