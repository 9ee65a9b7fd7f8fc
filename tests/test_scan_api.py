"""The library entry point: gpulint.scan.run(ScanRequest) -> ScanOutcome, as the CLI uses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BAD_POD, FIXTURES, run_cli

from gpulint.scan import RequestError, ScanOutcome, ScanRequest, run


def _positions(outcome: ScanOutcome) -> list[tuple[str, int, int]]:
    return [(f.rule_id, f.span.line, f.span.column) for f in outcome.result.findings if f.suppressed is None]


def test_a_request_scans_like_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_POD)
    outcome = run(ScanRequest(paths=(str(tmp_path),), jobs=1))
    assert _positions(outcome) == [("GPU003", 10, 7)]
    assert outcome.fails() and outcome.complete and outcome.fail_on == "warning"
    assert "GPU003" in outcome.enabled and "GPU000" in outcome.enabled and set(outcome.enabled) <= set(outcome.rules)
    assert [item.display for item in outcome.inputs] == [str(tmp_path / "bad.yaml")]
    assert run_cli("scan", str(tmp_path))[0] == 1


def test_selection_and_fail_on_come_from_the_request(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_POD)
    outcome = run(ScanRequest(paths=(str(tmp_path),), ignore=("GPU003",), jobs=1))
    assert _positions(outcome) == [] and "GPU003" not in outcome.enabled and not outcome.fails()
    assert not run(ScanRequest(paths=(str(tmp_path),), fail_on="never", jobs=1)).fails()


def test_a_request_that_cannot_run_raises_with_every_problem(tmp_path: Path) -> None:
    with pytest.raises(RequestError, match="unknown rule code 'GPU999'"):
        run(ScanRequest(paths=(str(tmp_path),), select=("GPU999",)))
    with pytest.raises(RequestError) as raised:
        run(ScanRequest(paths=(str(FIXTURES / "core" / "list.yaml"),),
                        config_file=str(FIXTURES / "config" / "invalid" / "unknown-key.gpulint.yaml")))
    assert len(raised.value.problems) == 2 and "unknown key `ignor`" in raised.value.problems[0]
    (tmp_path / "a.yaml").write_text(BAD_POD)
    with pytest.raises(RequestError, match="which this scan reads"):
        run(ScanRequest(paths=(str(tmp_path),), report_files=(str(tmp_path / "a.yaml"),)))


def test_missing_paths_make_an_incomplete_outcome(tmp_path: Path) -> None:
    outcome = run(ScanRequest(paths=(str(tmp_path / "nope.yaml"),)))
    assert outcome.missing == [str(tmp_path / "nope.yaml")] and not outcome.complete


def test_the_observer_sees_the_inputs_and_the_files_scanned(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(BAD_POD)
    (tmp_path / "b.yaml").write_text(BAD_POD)
    seen: list[tuple] = []

    class Observer:
        def inputs_found(self, inputs: list) -> None:
            seen.append(("inputs", len(inputs)))

        def render_started(self, item: object) -> None:
            seen.append(("render",))

        def render_done(self, item: object, seconds: float, failed: bool) -> None:
            seen.append(("rendered",))

        def file_scanned(self, done: int, total: int) -> None:
            seen.append(("scanned", done, total))

    run(ScanRequest(paths=(str(tmp_path),), jobs=1, observer=Observer()))
    assert seen == [("inputs", 2), ("scanned", 1, 2), ("scanned", 2, 2)]
