"""What is not Kubernetes is not an error; an unrendered template is one GPU011 finding per file.

Files that fail to parse and show no sign of a Kubernetes object (`apiVersion`
and `kind` at a document's top level) are counted as "not Kubernetes
(unparseable)" with no finding; JSON with comments is read as such. A file that
looks like a manifest and is broken stays a GPU000 error at its line.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from conftest import FIXTURES, active, run_cli, scan_json

from gpulint.load import jsonload, sniff, unrendered
from gpulint.load.yamlload import Document, LoadError, load_documents
from gpulint.results.findings import STATUSES

NOT_KUBE = FIXTURES / "not-kubernetes"


def _summary_adds_up(report: dict) -> dict:
    summary = report["summary"]
    assert summary["files"] == sum(summary[status] for status in STATUSES), summary
    return summary


def test_files_that_are_not_kubernetes_are_counted_not_reported() -> None:
    code, report = scan_json(str(NOT_KUBE))
    assert active(report) == [("GPU000", 2, 3), ("GPU000", 12, 8), ("GPU003", 11, 17)]
    assert {f["path"].rsplit("/", 1)[1] for f in report["findings"]} == {"pod-with-comments.json",
                                                                         "broken-deployment.yaml"}
    summary = _summary_adds_up(report)
    # tsconfig.json, devcontainer.json, launch.json: JSON with comments, read; the CI config and the
    # packager config (a second `%YAML` directive) do not parse.
    assert (summary["files"], summary["scanned"], summary["not_kubernetes"],
            summary["not_kubernetes_unparseable"]) == (7, 2, 3, 2)
    assert code == 1


def test_the_text_summary_names_the_new_statuses() -> None:
    code, out, _err = run_cli("scan", str(NOT_KUBE / "ci-pipeline.yml"), str(NOT_KUBE / "tsconfig.json"),
                              str(FIXTURES / "rules" / "GPU011" / "bad-go-template.yaml"))
    assert out.splitlines()[-1] == ("Found 2 findings (1 error, 1 info) in 3 files: 0 scanned, "
                                    "1 not Kubernetes, 1 not Kubernetes (unparseable), 1 unrendered template.")
    assert code == 1


def test_a_file_of_only_unparseable_non_kubernetes_text_exits_clean() -> None:
    code, report = scan_json(str(NOT_KUBE / "ci-pipeline.yml"), str(NOT_KUBE / "app-package.yaml"))
    assert (code, report["findings"]) == (0, [])
    assert _summary_adds_up(report)["not_kubernetes_unparseable"] == 2


@pytest.mark.parametrize("text, kube", [
    ("apiVersion: v1\nkind: Pod\nspec: [\n", True),
    ('"apiVersion": v1\n\'kind\' : Pod\n', True),
    ("{{- if .Values.on }}\napiVersion: v1\nkind: ConfigMap\n", True),   # a Helm template
    ('{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  x\n', True),     # broken JSON
    ("{apiVersion: v1, kind: Pod, [\n", True),                          # flow YAML
    ("version: 2.1\njobs:\n  kind: build\n  apiVersion: x\n", False),  # not at the top level
    ("apiVersion: v1\nmetadata: {}\n", False),                          # no kind
    ('{"compilerOptions": {"kind": 1}}', False),
    ("# kind: Pod\n# apiVersion: v1\n", False),
])
def test_the_sign_of_a_kubernetes_object(text: str, kube: bool) -> None:
    assert sniff.looks_like_kubernetes(text) is kube


def test_a_broken_manifest_is_still_an_error_at_its_line() -> None:
    _, report = scan_json(str(NOT_KUBE / "broken-deployment.yaml"))
    assert active(report) == [("GPU000", 12, 8)]
    assert report["findings"][0]["severity"] == "error"
    assert _summary_adds_up(report)["scanned"] == 1


def test_a_document_of_a_kubernetes_file_that_is_garbage_is_reported() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nnot: [valid\n"
    _, report = scan_json("-", input=text)
    assert active(report) == [("GPU000", 6, 1)]


def test_limits_are_reported_even_in_files_that_are_not_kubernetes(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("x: " + "[" * 1000 + "]" * 1000 + "\n")
    _, report = scan_json(str(path))
    assert [f["rule"] for f in report["findings"]] == ["GPU000"]
    assert "nesting deeper" in report["findings"][0]["message"]


# --- JSON with comments ------------------------------------------------------------------------


def test_jsonc_keeps_every_position_and_leaves_strings_alone() -> None:
    text = (NOT_KUBE / "tsconfig.json").read_text()
    stripped, first = jsonload.strip_jsonc(text)  # type: ignore[misc]
    assert len(stripped) == len(text) and stripped.count("\n") == text.count("\n")
    assert first == 0
    import json

    data = json.loads(stripped)
    assert data["compilerOptions"]["paths"] == {"@/*": ["src/*"]}
    assert data["include"] == ["src/**/*.d.ts", "src/**/*.ts"]
    assert jsonload.strip_jsonc('{"url": "https://x/*y*/"}') is None


def test_jsonc_is_linear_on_hostile_text() -> None:
    text = "{" + '"a/*": "//",' * 200_000 + "/*" * 100_000
    stripped, _first = jsonload.strip_jsonc(text)  # type: ignore[misc]
    assert len(stripped) == len(text)


def test_jsonc_documents_keep_their_lines() -> None:
    (error, doc) = load_documents((NOT_KUBE / "pod-with-comments.json").read_text(), strict_json=True)
    assert isinstance(error, LoadError) and error.jsonc and (error.line, error.column) == (2, 3)
    assert isinstance(doc, Document) and doc.data["kind"] == "Pod"
    env = ("spec", "containers", 0, "env", 0, "value")
    assert doc.span(env)[:2] == (11, 61)  # `"all"` where it is written


# --- unrendered templates ----------------------------------------------------------------------


def test_a_template_is_one_finding_however_many_documents_fail(tmp_path: Path) -> None:
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\ndata:\n  {{ .Values.k }}: v\n"
    path = tmp_path / "cm.yaml"
    path.write_text("---\n".join([doc] * 5))
    _, report = scan_json(str(path))
    assert active(report) == [("GPU011", 4, 10)]
    assert "4 of its 5" not in report["findings"][0]["message"]
    assert _summary_adds_up(report)["unrendered_template"] == 1


def test_gpu011_can_be_turned_off_without_losing_parse_errors() -> None:
    template = FIXTURES / "rules" / "GPU011" / "bad-helm-template.yaml"
    broken = NOT_KUBE / "broken-deployment.yaml"
    _, report = scan_json("--ignore", "GPU011", str(template), str(broken))
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("GPU000", 12), ("GPU003", 27)]


def test_operator_assets_are_info_and_keep_their_literal_check(tmp_path: Path) -> None:
    asset = FIXTURES / "rules" / "GPU011" / "operator" / "manifests" / "state-driver" / "0500_daemonset.yaml"
    _, report = scan_json(str(asset))
    (finding,) = report["findings"]
    assert (finding["rule"], finding["severity"]) == ("GPU011", "info")
    assert "rendered by the operator itself" in finding["message"]
    # The same text under a name that is not an operator's apply order is a plain Go template (warning).
    other = tmp_path / "daemonset.yaml"
    other.write_text(asset.read_text().replace("value: void", "value: all"))
    _, report = scan_json(str(other))
    assert sorted((f["rule"], f["severity"]) for f in report["findings"]) == [("GPU003", "error"), ("GPU011", "warning")]


def test_dollar_templates_are_found_with_balanced_braces() -> None:
    text = 'a: ${indent(4, yamlencode({x = 1}))}\n%{ for k in ks ~}\nb: ${x\n'
    spans = [text[start:end] for start, end in unrendered.actions(text)]
    assert spans == ["${indent(4, yamlencode({x = 1}))}", "%{ for k in ks ~}"]
    assert unrendered.syntax(text) == unrendered.DOLLAR
    assert unrendered.syntax("x: {{ .Values.a }} ${b}") == unrendered.GO
    # Thousands of unclosed `${` on a line stay linear.
    assert list(unrendered.actions("${" * 200_000)) == []


# --- the shared corpus -------------------------------------------------------------------------


def test_no_error_on_corpus_files_labelled_not_kubernetes(corpus: Path) -> None:
    with (corpus / "LABELS.tsv").open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    quiet = sorted({row["path"] for row in rows if row["category"] == "none"
                    and ("not Kubernetes" in row["justification"] or "must not be an error" in row["justification"])})
    assert len(quiet) > 20
    _, report = scan_json(str(corpus))
    errors = {f["path"] for f in report["findings"]
              if f["rule"] == "GPU000" and f["severity"] == "error" and not f["suppressed"]}
    # Kustomizations with remote resources and charts helm cannot load are the renderers' business.
    rendered = ("kustomization.yaml", "Chart.yaml")
    noisy = [path for path in quiet if str(corpus / path) in errors and not path.endswith(rendered)]
    assert noisy == []


def test_trailing_commas_that_yaml_reads_make_a_non_kubernetes_json_file_no_error(tmp_path: Path) -> None:
    path = tmp_path / "tsconfig.json"
    path.write_text('{\n  "compilerOptions": {"strict": true,},\n  "include": ["src"],\n}\n')
    _, report = scan_json(str(path))
    assert report["findings"] == [] and _summary_adds_up(report)["not_kubernetes"] == 1
    pod = tmp_path / "pod.json"
    pod.write_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p",},}\n')
    _, report = scan_json(str(pod))
    assert [(f["rule"], f["line"], f["column"]) for f in report["findings"]] == [("GPU000", 1, 62)]
    assert "kubectl rejects it" in report["findings"][0]["message"]
