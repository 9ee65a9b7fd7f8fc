"""Every file of the shared corpus of real manifests: no crash, and every file accounted for.

A file is either scanned, skipped as not Kubernetes (or binary), or reported
(GPU000 says why it could not be read); the summary's counts add up to the
files given. The corpus lives beside the repository (`../shared/corpus`); the
`corpus` fixture skips these tests when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import chart_of, helm_charts, inputs_of, run_cli

from gpulint.config.selection import select_rules
from gpulint.inputs.discovery import discover
from gpulint.results.findings import (
    STATUS_BINARY,
    STATUS_NOT_KUBERNETES,
    STATUS_SCANNED,
    STATUS_UNPARSEABLE,
    STATUSES,
)
from gpulint.results.scanning import ScanConfig
from gpulint.scan.engine import scan
from gpulint.scan.registry import load_rules


def _every_file(corpus: Path) -> list[str]:
    return sorted(str(p) for p in corpus.rglob("*") if p.is_file())


def _expected_inputs(corpus: Path) -> list[str]:
    """The inputs the explicit list of every corpus file gives: each file outside a
    Helm chart, whatever its name, plus each chart once (a file given explicitly
    inside a chart scans its chart; see discovery.py)."""
    files = [Path(f) for f in _every_file(corpus)]
    charts = helm_charts(corpus)
    expected = [str(p) for p in inputs_of(files, charts)]
    inside = sum(1 for f in files if chart_of(f, charts))
    print(f"\n{len(files)} files: {len(files) - inside} outside charts + {inside} in {len(charts)} charts "
          f"-> {len(expected)} inputs")
    return expected


def test_every_corpus_file_is_scanned_skipped_or_reported(corpus: Path) -> None:
    files = _every_file(corpus)
    expected = _expected_inputs(corpus)
    rules = load_rules()
    found = discover(files)
    assert found.missing == []
    # Each file given explicitly is an input, whatever its name, unless it is in a chart.
    assert sorted(i.real for i in found.inputs) == expected
    assert {i.real for i in found.inputs if i.kind == "chart"} == {str(c) for c in helm_charts(corpus)}
    result = scan(found.inputs, ScanConfig(rules=select_rules(rules), all_rules=rules))
    assert result.internal_errors == []
    assert sorted(r.file for r in result.files) == expected
    for report in result.files:
        reported = any(f.rule_id in ("GPU000", "GPU010", "GPU011") for f in report.findings)
        assert report.status in (STATUS_SCANNED, STATUS_NOT_KUBERNETES, STATUS_UNPARSEABLE, STATUS_BINARY) \
            or reported, report
        if report.status == STATUS_SCANNED:
            assert report.documents > 0 or reported, report


def test_corpus_scan_exits_cleanly_and_counts_add_up(corpus: Path) -> None:
    files = _every_file(corpus)
    for args in (files, [str(corpus)]):
        code, out, err = run_cli("scan", "--format", "json", *args)
        assert code in (0, 1), err
        assert "Traceback" not in err
        summary = json.loads(out)["summary"]
        assert summary["files"] == sum(summary[k] for k in STATUSES)
        assert summary["internal_errors"] == 0
    # The explicit list holds every file (LABELS.tsv, SOURCES.md, `*.yaml-template` too),
    # a chart's files counting once, as their chart.
    summary = json.loads(run_cli("scan", "--format", "json", *files)[1])["summary"]
    assert summary["files"] == len(_expected_inputs(corpus))
    # Each chart is rendered, or reported unrendered (helm missing or failing): never lost.
    assert summary["helm_chart"] <= len(helm_charts(corpus))


def test_raw_helm_templates_in_the_corpus_have_their_literal_text_checked(corpus: Path) -> None:
    """LABELS.tsv points at literal text inside raw templates; the template-tolerant parse finds it."""
    template = corpus / "NVIDIA__k8s-device-plugin/deployments/helm/nvidia-device-plugin/templates/daemonset-device-plugin.yml"
    if not template.is_file():
        return
    labels = (corpus / "LABELS.tsv").read_text().splitlines()
    line = next(int(row.split("\t")[1]) for row in labels
                if row.startswith(str(template.relative_to(corpus))) and "env-visible-devices" in row)
    code, out, _err = run_cli("scan", "--format", "json", "--show-suppressed", str(template))
    findings = json.loads(out)["findings"]
    assert any(f["rule"] == "GPU011" and "helm template" in f["message"] for f in findings)
    assert any(f["rule"] == "GPU003" and f["line"] == line for f in findings), findings
