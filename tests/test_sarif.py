"""`--format sarif`: schema-valid, and what GitHub code scanning reads (GITHUB_RULES below)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import expectations
import pytest
import sarif_check
from conftest import ACK_EXAMPLE_POD, FIXTURES, ROOT, rendered_from, run_cli, scan_json, scanned

from gpulint import __version__
from gpulint.api import Severity
from gpulint.inputs.discovery import discover
from gpulint.load.locations import Span
from gpulint.model.objects import ObjectRef
from gpulint.report import sarif
from gpulint.report.repopath import git_root
from gpulint.results.findings import FileReport, Finding, MappedLocation, RenderedFrom, Suppression
from gpulint.results.scanning import ScanConfig, ScanResult
from gpulint.scan.engine import scan
from gpulint.scan.registry import load_rules

BAD = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
  namespace: ml
spec:
  template:
    spec:
      containers:
      - name: cuda
        image: registry.example.com/train:1
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: all
"""
GOOD = ACK_EXAMPLE_POD
BAD_LINE, BAD_COLUMN = 13, 11   # the env entry `- name: NVIDIA_VISIBLE_DEVICES`


def scan_sarif(*args: str, input: str | None = None) -> tuple[int, dict, str]:
    code, out, err = run_cli("scan", "--format", "sarif", *args, input=input)
    return code, sarif_check.loads(out), err


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def outside_git(tmp_path: Path) -> Path:
    if git_root(tmp_path) is not None:
        pytest.skip(f"{tmp_path} is inside a git work tree")
    return tmp_path


# --- the shipped fixtures -----------------------------------------------------


@pytest.mark.parametrize("show_suppressed", [False, True])
def test_fixtures_tree_validates_and_matches_json(monkeypatch: pytest.MonkeyPatch, show_suppressed: bool) -> None:
    monkeypatch.chdir(ROOT)
    extra = ("--show-suppressed",) if show_suppressed else ()
    code, out, err = run_cli("scan", "--format", "sarif", *extra, "fixtures/")
    assert code == 1, err
    root = git_root(ROOT)
    # Every location is a file of the repository, every line hash the one upload-sarif computes.
    doc = sarif_check.loads(out, root=root)
    run = doc["runs"][0]
    _, report = scan_json("fixtures/")
    findings = [f for f in report["findings"] if show_suppressed or not f["suppressed"]]
    left_out = len(report["findings"]) - len(findings)
    assert len(run["results"]) == len(findings) > 0 and (show_suppressed or left_out > 0)
    rendered = 0
    for result, finding in zip(run["results"], findings):
        where = result["locations"][0]["physicalLocation"]
        region = where["region"]
        assert (result["ruleId"], result["level"]) == (finding["rule"], sarif.LEVELS[Severity(finding["severity"])])
        assert ("suppressions" in result) == finding["suppressed"]
        at = scanned(finding)   # the rendered position of rendered input
        source, variant = rendered_from(at["path"]) or (None, "")
        if source is not None:
            rendered += 1
            # Rendered Helm/Kustomize findings sit at their first mapped file (a template, values or
            # patch), else at line 1 of the chart's or kustomization's file; the rendered position is
            # in the message and a property, never a location.
            if finding["mapped"]:
                primary = finding["mapped"][0]
                expected = (primary["path"], (primary["line"], primary["column"], primary["end_line"],
                                              primary["end_column"]))
            else:
                anchor = next(f"{source}/{name}" for name in sarif._ANCHORS if (ROOT / source / name).is_file())
                expected = (anchor, (1, 1, 1, 1))
            span = (at["line"], at["column"])
            shown = f"{source} with {variant}" if variant else source
            assert f"(rendered output of {shown}, line {span[0]}, column {span[1]})" in result["message"]["text"]
            assert result["properties"]["renderedLocation"] == {
                "source": source, **({"values": variant} if variant else {}), "startLine": span[0], "startColumn": span[1],
                "endLine": at["end_line"], "endColumn": at["end_column"]}
        else:
            expected = (finding["path"], (finding["line"], finding["column"], finding["end_line"],
                                          finding["end_column"]))
            # Square brackets are escaped in every SARIF message (§3.11.6), so none reads as a link.
            assert result["message"]["text"] == finding["message"].replace("[", "\\[").replace("]", "\\]")
        assert where["artifactLocation"] == {"uri": expected[0], "uriBaseId": "%SRCROOT%"}
        assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == expected[1]
    assert rendered > 0
    notes = run["invocations"][0].get("toolExecutionNotifications", [])
    if show_suppressed:
        assert notes == []
    else:
        assert notes == [{"level": "note", "message": {"text": f"{left_out} suppressed results left out "
                          "(gpulint --show-suppressed includes them, with their suppressions)."}}]
    # Relative to the repository root, which is where CI and GitHub check it out.
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": root.as_uri() + "/"}}


def test_fixture_expectations_hold_in_sarif(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each fixture's `# expect:` markers, read back from SARIF regions."""
    monkeypatch.chdir(ROOT)
    checked = 0
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix in (".expect", ".fixed"):   # .fixed: a fix's golden result
            continue
        if {"charts", "kustomize"} & set(path.relative_to(FIXTURES).parts):
            continue  # rendered as a whole; their mapping is tested in test_helm/test_kustomize
        if path.name in ("kustomization.yaml", "kustomization.yml"):
            continue  # its directory is built (or not): tests/test_render_safety.py
        expected = expectations.read(path)
        rel = path.relative_to(ROOT).as_posix()
        _, doc, _ = scan_sarif("--show-suppressed", *expected.args, rel)
        got_active, got_suppressed = [], []
        for result in doc["runs"][0]["results"]:
            where = result["locations"][0]["physicalLocation"]
            assert where["artifactLocation"]["uri"] == rel
            item = (result["ruleId"], where["region"]["startLine"], where["region"]["startColumn"])
            (got_suppressed if result.get("suppressions") else got_active).append(item)
        assert (sorted(got_active), sorted(got_suppressed)) == (expected.active, expected.suppressed), rel
        checked += 1
    assert checked >= 10


# --- the rule table -------------------------------------------------------------


def test_every_registered_rule_is_described(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.yaml").write_text(GOOD)
    _, doc, _ = scan_sarif("good.yaml")
    rules = load_rules()
    driver = doc["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == sorted(rules)
    assert (driver["version"], driver["semanticVersion"]) == (__version__, __version__)
    for described in driver["rules"]:
        rule = rules[described["id"]]
        assert described["name"] == rule.name
        assert described["shortDescription"]["text"] == rule.summary
        section, full = sarif.doc_section(rule.doc, "What it does"), described["fullDescription"]["text"]
        # GitHub cuts descriptions at 1,024 characters; longer ones are cut at a sentence or line end.
        assert full == section or (len(section) > 1024 and section.startswith(full.rstrip("…")))
        # help is the rule's own documentation: exactly what `gpulint explain` prints.
        _, explained, _ = run_cli("explain", rule.id)
        assert described["help"] == {"text": explained, "markdown": explained}
        # The page of this very version: its release tag, never a branch that moves on.
        assert described["helpUri"] == f"https://github.com/gpulint/gpulint/blob/v{__version__}/docs/rules/{rule.id}.md"
        assert (ROOT / "docs" / "rules" / f"{rule.id}.md").is_file(), "run `python scripts/gen_rule_docs.py`"
        level = {"error": "error", "warning": "warning", "info": "note"}[rule.severity.value]
        assert described["defaultConfiguration"] == {"level": level, "enabled": rule.enabled_by_default}
        props = described["properties"]
        assert props["tags"][: len(rule.tags)] == list(rule.tags) and "gpu" in props["tags"]
        if "security" in rule.tags:     # every bypass rule (GPU000-GPU089) is a security rule
            assert props["security-severity"] == (rule.security_severity
                                                  or sarif.DERIVED_SECURITY_SEVERITY[rule.severity])
            assert "problem.severity" not in props
        else:                           # e.g. request-validity rules tagged `correctness`
            assert props["problem.severity"] == {"error": "error", "warning": "warning",
                                                 "info": "recommendation"}[rule.severity.value]
            assert "security-severity" not in props
        assert props["precision"] == rule.precision
    # Only the policy's bypass rules are security alerts; what could not be read, rendered or
    # checked (GPU000, GPU010, GPU011), suppressions (GPU09x) and symlinks (GPU099) are maintainability.
    by_id = {d["id"]: d["properties"] for d in driver["rules"]}
    assert sorted(i for i, p in by_id.items() if "security" in p["tags"]) == [
        "GPU001", "GPU002", "GPU003", "GPU004", "GPU005", "GPU006", "GPU007", "GPU008"]
    tooling = ["GPU000", "GPU010", "GPU011", "GPU090", "GPU091", "GPU092", "GPU099"]
    assert all("maintainability" in by_id[i]["tags"] and "security-severity" not in by_id[i] for i in tooling)
    # Precision from each rule's evidence: weaker evidence, lower precision.
    assert {i: p["precision"] for i, p in by_id.items() if p["precision"] != "high"} == {
        "GPU005": "medium", "GPU006": "medium", "GPU104": "medium"}


def test_rule_docs_pages_are_up_to_date() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_rule_docs
    finally:
        sys.path.pop(0)
    stale = gen_rule_docs.stale(gen_rule_docs.rule_docs())
    assert not stale, f"docs/rules is stale ({', '.join(stale)}): run `python scripts/gen_rule_docs.py`"


def test_selection_is_recorded_as_overrides_and_rule_indexes_stay(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD)
    _, full, _ = scan_sarif("bad.yaml")
    _, narrowed, _ = scan_sarif("--ignore", "GPU003", "bad.yaml")
    rules_full = full["runs"][0]["tool"]["driver"]["rules"]
    assert narrowed["runs"][0]["tool"]["driver"]["rules"] == rules_full   # ruleIndex means the same
    assert narrowed["runs"][0]["results"] == []
    index = [r["id"] for r in rules_full].index("GPU003")
    assert narrowed["runs"][0]["invocations"][0]["ruleConfigurationOverrides"] == [
        {"descriptor": {"id": "GPU003", "index": index}, "configuration": {"enabled": False}}]
    assert "ruleConfigurationOverrides" not in full["runs"][0]["invocations"][0]


# --- results ---------------------------------------------------------------------


def test_clean_scan_has_one_run_with_empty_results(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.yaml").write_text(GOOD)
    code, doc, err = scan_sarif("good.yaml")
    assert (code, err) == (0, "")
    run = doc["runs"][0]
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True}]
    assert "automationDetails" not in run


def test_result_fields_for_a_finding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "k8s").mkdir()
    (repo / "k8s" / "train.yaml").write_text(BAD)
    monkeypatch.chdir(repo)
    code, doc, _ = scan_sarif("k8s/train.yaml")
    assert code == 1
    run = doc["runs"][0]
    (result,) = run["results"]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert result["ruleId"] == "GPU003" and result["ruleIndex"] == rule_ids.index("GPU003")
    assert result["level"] == "error"
    assert result["message"]["text"].endswith('(Deployment ml/train, container "cuda")')
    (location,) = result["locations"]
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": "k8s/train.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": BAD_LINE, "startColumn": BAD_COLUMN, "endLine": 14, "endColumn": 21},
    }
    assert location["logicalLocations"] == [
        {"fullyQualifiedName": "ml/Deployment/train/container/cuda", "kind": "resource", "name": "cuda"}]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/"}}
    assert result["properties"]["fieldPath"] == "spec.template.spec.containers[name=cuda].env[name=NVIDIA_VISIBLE_DEVICES]"
    assert result["properties"]["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "train",
                                              "namespace": "ml"}
    assert "suppressions" not in result and "relatedLocations" not in result
    assert run["columnKind"] == "unicodeCodePoints"


def test_category_becomes_automation_details_id(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.yaml").write_text(GOOD)
    for given, expected in [("k8s", "k8s/"), ("gpulint/k8s/", "gpulint/k8s/"), ("a/b", "a/b/")]:
        _, doc, _ = scan_sarif("--category", given, "good.yaml")
        # Ends with '/': GitHub takes everything before the last '/' as the category.
        assert doc["runs"][0]["automationDetails"] == {"id": expected}


def test_fingerprint_ignores_lines_and_tells_containers_apart(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD)
    _, before, _ = scan_sarif("bad.yaml")
    (tmp_path / "bad.yaml").write_text("# a comment\n\n" + BAD.replace("image:", "imagePullPolicy: Always\n        image:"))
    _, after, _ = scan_sarif("bad.yaml")
    (tmp_path / "bad.yaml").write_text(BAD.replace("name: cuda", "name: other"))
    _, renamed, _ = scan_sarif("bad.yaml")
    fp = [d["runs"][0]["results"][0]["partialFingerprints"] for d in (before, after, renamed)]
    lines = [d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"]
             for d in (before, after)]
    assert lines[0] != lines[1]
    # Both fingerprints survive lines inserted above the finding; ours also tells the container apart.
    assert fp[0] == fp[1]
    assert fp[0]["gpulint/v1"] != fp[2]["gpulint/v1"]
    assert sorted(fp[0]) == ["gpulint/v1", "primaryLocationLineHash"]


def test_identical_identities_get_numbered_fingerprints() -> None:
    findings = [_finding(line=n, field_path="spec.containers[name=a].args") for n in (3, 9)]
    doc = _render(findings)
    prints = [r["partialFingerprints"]["gpulint/v1"] for r in doc["runs"][0]["results"]]
    assert prints[0].split(":")[0] == prints[1].split(":")[0]
    assert [p.split(":")[1] for p in prints] == ["1", "2"]


def test_output_is_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    first = run_cli("scan", "--format", "sarif", "fixtures/")[1]
    second = run_cli("scan", "--format", "sarif", "fixtures/")[1]
    assert first == second
    assert "Utc" not in first   # no startTimeUtc/endTimeUtc


# --- suppressions ------------------------------------------------------------------


@pytest.mark.parametrize("kind, sarif_kind", [("inline", "inSource"), ("annotation", "inSource"),
                                              ("config", "external"), ("baseline", "external"),
                                              ("system-component", "external")])
def test_suppressed_findings_carry_suppressions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                kind: str, sarif_kind: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD)
    rules = load_rules()
    reason = f"accepted by {kind}: the team reviewed it"

    def suppressor(finding: Finding, ctx: object) -> Suppression:
        return Suppression(kind, reason)

    config = ScanConfig(rules=list(rules.values()), all_rules=rules, suppressors=[suppressor])
    result = scan(discover(["bad.yaml"]).inputs, config)
    doc = json.loads(sarif.render(result, rules, show_suppressed=True))
    run = sarif_check.check(doc)
    (only,) = run["results"]
    assert only["suppressions"] == [{"kind": sarif_kind, "justification": reason, "properties": {"gpulint/kind": kind}}]
    assert only["ruleId"] == "GPU003"
    # By default a suppressed finding is no result at all (it could open an alert), only counted.
    run = sarif_check.check(json.loads(sarif.render(result, rules)))
    assert run["results"] == []
    assert run["invocations"][0]["toolExecutionNotifications"] == [
        {"level": "note", "message": {"text": "1 suppressed result left out "
                                      "(gpulint --show-suppressed includes them, with their suppressions)."}}]


# --- the cap ---------------------------------------------------------------------------


def test_results_are_capped_below_github_limit_with_a_notification() -> None:
    many = [_finding(line=n, severity=Severity.WARNING, container=f"c{n}") for n in range(1, 4801)]
    many[4700] = _finding(line=4701, severity=Severity.ERROR, container="worst")
    many[10].suppressed = Suppression("config", "accepted")
    doc = _render(many, show_suppressed=True)
    run = doc["runs"][0]
    assert sarif.DEFAULT_MAX_RESULTS < sarif.GITHUB_KEPT_RESULTS
    assert len(run["results"]) == sarif.DEFAULT_MAX_RESULTS
    kept_lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in run["results"]]
    assert kept_lines == sorted(kept_lines)             # report order is kept
    assert 4701 in kept_lines                           # the error beats the warnings after the cut
    assert 11 not in kept_lines                         # a suppressed result goes before an active one
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "warning"
    assert note["message"]["text"].startswith("300 of 4800 results were left out")


def test_cap_is_a_parameter() -> None:
    doc = _render([_finding(line=n, container=f"c{n}") for n in range(1, 8)], max_results=5)
    assert len(doc["runs"][0]["results"]) == 5
    assert "2 of 7" in doc["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


# --- where results point ------------------------------------------------------------


def test_uri_relative_to_git_root_from_a_subdirectory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "deploy" / "gpu").mkdir(parents=True)
    (repo / "deploy" / "gpu" / "train.yaml").write_text(BAD)
    monkeypatch.chdir(repo / "deploy")
    _, doc, _ = scan_sarif("gpu/train.yaml")
    artifact = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "deploy/gpu/train.yaml", "uriBaseId": "%SRCROOT%"}
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"


def test_uri_relative_to_git_root_when_run_from_outside(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    outside = outside_git(tmp_path)
    repo = make_repo(outside / "checkout")
    (repo / "train.yaml").write_text(BAD)
    (outside / "elsewhere").mkdir()
    monkeypatch.chdir(outside / "elsewhere")
    _, doc, _ = scan_sarif(str(repo / "train.yaml"))
    artifact = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "train.yaml", "uriBaseId": "%SRCROOT%"}
    assert doc["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/"}}


def test_uri_outside_git_is_relative_to_cwd_or_absolute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    outside = outside_git(tmp_path)
    (outside / "work" / "k8s").mkdir(parents=True)
    (outside / "work" / "k8s" / "bad.yaml").write_text(BAD)
    (outside / "other").mkdir()
    (outside / "other" / "far.yaml").write_text(BAD)
    monkeypatch.chdir(outside / "work")
    _, doc, _ = scan_sarif("k8s/bad.yaml", str(outside / "other" / "far.yaml"))
    artifacts = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in doc["runs"][0]["results"]]
    far = (outside / "other" / "far.yaml").resolve()
    assert sorted(artifacts, key=str) == sorted([
        {"uri": "k8s/bad.yaml", "uriBaseId": "%SRCROOT%"},
        {"uri": far.as_uri()},
    ], key=str)
    assert doc["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": (outside / "work").resolve().as_uri() + "/"}}


def test_two_repositories_get_two_base_ids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = make_repo(tmp_path / "home")
    other = make_repo(tmp_path / "other")
    (home / "a.yaml").write_text(BAD)
    (other / "b.yaml").write_text(BAD)
    monkeypatch.chdir(home)
    _, doc, _ = scan_sarif("a.yaml", str(other / "b.yaml"))
    artifacts = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in doc["runs"][0]["results"]]
    assert {"uri": "a.yaml", "uriBaseId": "%SRCROOT%"} in artifacts
    assert {"uri": "b.yaml", "uriBaseId": "ROOT1"} in artifacts
    assert doc["runs"][0]["originalUriBaseIds"]["ROOT1"] == {"uri": other.resolve().as_uri() + "/"}


def test_uri_is_percent_encoded_and_symlinks_resolved(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "gpu jobs").mkdir()
    (repo / "gpu jobs" / "train#1.yaml").write_text(BAD)
    (repo / "link.yaml").symlink_to(repo / "gpu jobs" / "train#1.yaml")
    monkeypatch.chdir(repo)
    _, doc, _ = scan_sarif("link.yaml")
    artifact = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"] == "gpu%20jobs/train%231.yaml"


def test_stdin_is_named_stdin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    _, doc, _ = scan_sarif("-", input=BAD)
    physical = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "stdin"}
    assert physical["region"]["startLine"] == BAD_LINE


def test_helm_template_in_repo_is_the_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    templates = repo / "charts" / "train" / "templates"
    templates.mkdir(parents=True)
    (templates / "deployment.yaml").write_text("# template\n" * 30)
    (repo / "charts" / "train" / "values.yaml").write_text("visible: all\n")
    monkeypatch.chdir(repo)
    finding = _finding(line=40, file="charts/train (rendered)", mapped=[
        MappedLocation("template", "charts/train/templates/deployment.yaml", Span(22, 9, 22, 30)),
        MappedLocation("values", "charts/train/values.yaml", Span(1, 10, 1, 13), "values.yaml: visible"),
        MappedLocation("template", "charts/missing.yaml", Span(1, 1, 1, 2)),
    ])
    doc = _render([finding])
    sarif_check.check(doc, root=repo)
    (result,) = doc["runs"][0]["results"]
    primary = result["locations"][0]["physicalLocation"]
    assert primary == {"artifactLocation": {"uri": "charts/train/templates/deployment.yaml", "uriBaseId": "%SRCROOT%"},
                       "region": {"startLine": 22, "startColumn": 9, "endLine": 22, "endColumn": 30}}
    # Related locations are files of the repository only; the rendered position is in words.
    (related,) = result["relatedLocations"]
    assert related["id"] == 1
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "charts/train/values.yaml"
    assert related["message"]["text"] == "values.yaml: visible"
    assert result["properties"]["renderedLocation"] == {
        "source": "charts/train", "startLine": 40, "startColumn": 11, "endLine": 40, "endColumn": 21}
    # GitHub links related locations embedded in the message as [text](id).
    assert result["message"]["text"].endswith(
        'container "cuda") (rendered output of charts/train, line 40, column 11). See [values.yaml: visible](1).')


def test_rendered_finding_without_a_mapped_file_sits_on_the_chart_file(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "charts" / "train").mkdir(parents=True)
    (repo / "charts" / "train" / "Chart.yaml").write_text("apiVersion: v2\nname: train\nversion: 1.0.0\n")
    (repo / "overlay").mkdir()
    (repo / "overlay" / "kustomization.yml").write_text("resources: []\n")
    monkeypatch.chdir(repo)
    doc = _render([_finding(line=7, file="charts/train (rendered)"), _finding(line=9, file="overlay (rendered)")])
    sarif_check.check(doc, root=repo)
    results = doc["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"] for r in results] == [
        {"artifactLocation": {"uri": "charts/train/Chart.yaml", "uriBaseId": "%SRCROOT%"},
         "region": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}},
        {"artifactLocation": {"uri": "overlay/kustomization.yml", "uriBaseId": "%SRCROOT%"},
         "region": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}},
    ]
    assert results[0]["message"]["text"].endswith("(rendered output of charts/train, line 7, column 11)")
    assert "relatedLocations" not in results[0]
    assert "(rendered)" not in json.dumps(doc)


def test_mapped_file_missing_keeps_the_rendered_position(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rendered.yaml").write_text(BAD)
    finding = _finding(line=13, file="rendered.yaml", mapped=[
        MappedLocation("template", "chart/templates/gone.yaml", Span(5, 1, 5, 9))])
    (result,) = _render([finding])["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "rendered.yaml"
    assert "relatedLocations" not in result


# --- the SARIF stream -------------------------------------------------------------------


def test_only_sarif_on_stdout_even_with_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD)
    code, out, err = run_cli("scan", "--format", "sarif", "bad.yaml", "missing.yaml")
    assert code == 2
    doc = sarif_check.loads(out)        # the whole of stdout is one SARIF document
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"] == [
        {"level": "error", "message": {"text": "missing.yaml: no such file or directory"}}]
    assert len(doc["runs"][0]["results"]) == 1
    assert "missing.yaml: no such file or directory" in err


def test_output_file_gets_the_sarif_and_stdout_stays_empty(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD)
    code, out, _ = run_cli("scan", "--format", "sarif", "--output", "out.sarif", "bad.yaml")
    assert (code, out) == (1, "")
    sarif_check.loads((tmp_path / "out.sarif").read_text())


def test_sarif_from_the_installed_console_script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Out of process: nothing else (warnings, logging) reaches stdout."""
    gpulint = shutil.which("gpulint", path=os.path.dirname(sys.executable))
    if gpulint is None:
        pytest.skip("the gpulint console script is not installed next to this python")
    (tmp_path / "bad.yaml").write_text(BAD)
    proc = subprocess.run([gpulint, "scan", "--format", "sarif", "--category", "k8s", "bad.yaml"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    doc = sarif_check.loads(proc.stdout)
    assert doc["runs"][0]["automationDetails"] == {"id": "k8s/"}


def test_corpus_sarif_validates(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(corpus)
    code, out, err = run_cli("scan", "--format", "sarif", ".")
    assert code in (0, 1), err
    sarif_check.loads(out)


# --- helpers ------------------------------------------------------------------------------


def _finding(line: int, file: str = "k8s/train.yaml", severity: Severity = Severity.ERROR,
             container: str = "cuda", field_path: str | None = None,
             mapped: list[MappedLocation] | None = None) -> Finding:
    return Finding(
        rule_id="GPU003", rule_name="visible-devices-env", severity=severity,
        message=f'NVIDIA_VISIBLE_DEVICES=all in env [x] (Deployment ml/train, container "{container}")',
        file=file, span=Span(line, 11, line, 21),
        obj=ObjectRef("apps/v1", "Deployment", "train", "ml"), container=container,
        field_path=field_path or f"spec.template.spec.containers[name={container}].env[name=NVIDIA_VISIBLE_DEVICES]",
        mapped=mapped or [], rendered=RenderedFrom(*render) if (render := rendered_from(file)) else None,
    )


def _render(findings: list[Finding], **kwargs: object) -> dict:
    result = ScanResult([FileReport(findings[0].file, "scanned", findings=findings)])
    doc = json.loads(sarif.render(result, load_rules(), **kwargs))  # type: ignore[arg-type]
    sarif_check.check(doc)
    return doc


def test_long_descriptions_are_cut_at_a_sentence_or_line_end() -> None:
    doc = "## What it does\nFinds things:\n- first item\n  wrapped.\n- second item.\n\nMore text here.\n## Why is this bad\nx\n"
    assert sarif.doc_section(doc, "What it does") == "Finds things:\n- first item wrapped.\n- second item.\n\nMore text here."
    long = ("A sentence that is long enough. " * 40).strip()
    cut = sarif._limit(long)
    assert len(cut) <= 1024 and cut.endswith("enough.") and long.startswith(cut)
    items = "Finds:\n" + "\n".join(f"- item number {n} without a full stop" for n in range(60))
    cut = sarif._limit(items)
    assert len(cut) <= 1024 and cut.endswith("without a full stop") and items.startswith(cut)
    assert sarif._limit("x" * 2000).endswith("…") and len(sarif._limit("x" * 2000)) == 1024


# --- GitHub's documented rules ------------------------------------------------------------

SARIF_SUPPORT = ("https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/"
                 "sarif-support-for-code-scanning")
LIMITS = "https://docs.github.com/en/code-security/code-scanning/troubleshooting-sarif-uploads/results-exceed-limit"
SECURITY_SEVERITY = {"critical": (9.0, 10.0), "high": (7.0, 8.9), "medium": (4.0, 6.9), "low": (0.1, 3.9)}


def _rules_of(doc: dict) -> list[dict]:
    return doc["runs"][0]["tool"]["driver"]["rules"]


def _results_of(doc: dict) -> list[dict]:
    return doc["runs"][0]["results"]


# (what GitHub's documentation says, where, a check of one SARIF log)
GITHUB_RULES = [
    ("version 2.1.0; at most 20 runs per file (we write one)", LIMITS,
     lambda d: d["version"] == "2.1.0" and len(d["runs"]) == 1),
    ("at most 25,000 rules per run", LIMITS, lambda d: len(_rules_of(d)) <= 25_000),
    ("at most 25,000 results per run, only the top 5,000 are kept (we cap at 4,500)", LIMITS,
     lambda d: len(_results_of(d)) <= sarif.DEFAULT_MAX_RESULTS < 5_000),
    ("at most 20 tags per rule, only 10 shown (all of ours are shown)", LIMITS,
     lambda d: all(len(r["properties"]["tags"]) <= 10 for r in _rules_of(d))),
    ("at most 1,000 locations per result, 100 shown", LIMITS,
     lambda d: all(len(r["locations"]) + len(r.get("relatedLocations", [])) <= 100 for r in _results_of(d))),
    ("tool.driver.name is required; semanticVersion is semver", SARIF_SUPPORT,
     lambda d: d["runs"][0]["tool"]["driver"]["name"] == "gpulint"),
    ("reportingDescriptor: id, shortDescription.text and fullDescription.text (1,024 characters shown), "
     "help.text are required", SARIF_SUPPORT,
     lambda d: all(r["id"] and 0 < len(r["shortDescription"]["text"]) <= 1024
                   and 0 < len(r["fullDescription"]["text"]) <= 1024 and r["help"]["text"] for r in _rules_of(d))),
    ("defaultConfiguration.level and result.level are note, warning or error", SARIF_SUPPORT,
     lambda d: all(r["defaultConfiguration"]["level"] in ("note", "warning", "error") for r in _rules_of(d))
     and all(r["level"] in ("note", "warning", "error") for r in _results_of(d))),
    ("properties.precision is very-high, high, medium or low", SARIF_SUPPORT,
     lambda d: all(r["properties"]["precision"] in ("very-high", "high", "medium", "low") for r in _rules_of(d))),
    ("security-severity (a score 0.1-10.0 as a string) only for rules tagged security; "
     "problem.severity error, warning or recommendation for the others", SARIF_SUPPORT,
     lambda d: all(("security-severity" in r["properties"]) == ("security" in r["properties"]["tags"])
                   and (0.1 <= float(r["properties"]["security-severity"]) <= 10.0
                        if "security" in r["properties"]["tags"]
                        else r["properties"]["problem.severity"] in ("error", "warning", "recommendation"))
                   for r in _rules_of(d))),
    ("result: ruleId, message.text and a location with artifactLocation.uri and region.startLine", SARIF_SUPPORT,
     lambda d: all(r["ruleId"] and r["message"]["text"] and r["locations"][0]["physicalLocation"]
                   ["artifactLocation"]["uri"] and r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
                   for r in _results_of(d))),
    ("partialFingerprints.primaryLocationLineHash: filled in by upload-sarif when absent, "
     "needed for an API upload", SARIF_SUPPORT,
     lambda d: all("primaryLocationLineHash" in r["partialFingerprints"] for r in _results_of(d))),
    ("relatedLocations are linked from the message as [text](id)", SARIF_SUPPORT,
     lambda d: all(f"]({loc['id']})" in r["message"]["text"] for r in _results_of(d)
                   for loc in r.get("relatedLocations", []))),
    ("runAutomationDetails.id: the category, up to the last /", SARIF_SUPPORT,
     lambda d: d["runs"][0]["automationDetails"]["id"].endswith("/")),
]


@pytest.mark.parametrize("rule, source, holds", GITHUB_RULES, ids=[rule[:40] for rule, _, _ in GITHUB_RULES])
def test_github_documented_rules(rule: str, source: str, holds: object, monkeypatch: pytest.MonkeyPatch,
                                 fixtures_sarif: dict) -> None:
    assert holds(fixtures_sarif), f"{rule} ({source})"  # type: ignore[operator]


@pytest.fixture(scope="module")
def fixtures_sarif() -> dict:
    import contextlib

    with contextlib.chdir(ROOT):
        code, out, err = run_cli("scan", "--format", "sarif", "--show-suppressed", "--category", "gpulint",
                                 "fixtures/")
    assert code == 1, err
    return sarif_check.loads(out)


def test_input_problems_are_not_security_alerts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    monkeypatch.chdir(repo)
    code, out, _ = run_cli("scan", "--format", "sarif", "broken.yaml")
    doc = sarif_check.loads(out, root=repo)
    (result,) = doc["runs"][0]["results"]
    rule = _rules_of(doc)[result["ruleIndex"]]
    assert (code, result["ruleId"], result["level"]) == (1, "GPU000", "error")
    assert "security" not in rule["properties"]["tags"] and "security-severity" not in rule["properties"]
    assert rule["properties"]["problem.severity"] == "error"
    assert rule["helpUri"] == f"https://github.com/gpulint/gpulint/blob/v{__version__}/docs/rules/GPU000.md"


def test_non_utf8_and_newline_file_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    odd = os.fsencode(repo) + b"/caf\xe9 \xff.yaml"
    with open(odd, "wb") as handle:
        handle.write(BAD.encode())
    (repo / "two\nlines.yaml").write_text(BAD)
    monkeypatch.chdir(repo)
    code, out, err = run_cli("scan", "--format", "sarif", ".")
    assert code == 1, err
    out.encode("utf-8")                                   # valid UTF-8 (no lone surrogate written)
    doc = sarif_check.loads(out, root=repo)
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"])
    assert uris == ["caf%E9%20%FF.yaml", "two%0Alines.yaml"]
    from urllib.parse import unquote_to_bytes

    assert os.path.isfile(os.fsencode(repo) + b"/" + unquote_to_bytes(uris[0]))   # lossless


def test_rule_docs_cite_the_policy_in_the_repository() -> None:
    """Rule docs (and so `explain` and SARIF help) link to docs/policy.md sections that exist, to no file
    outside the repository."""
    import re as regex

    policy = (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
    # GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens.
    anchors = {regex.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
               for h in regex.findall(r"^#+ (.+)$", policy, regex.M)}
    linked = 0
    for rule in load_rules().values():
        if not sarif.is_builtin(rule):
            continue
        assert "POLICY.md" not in rule.doc, rule.id
        for anchor in regex.findall(r"https://github\.com/gpulint/gpulint/blob/main/docs/policy\.md#([\w-]+)",
                                    rule.doc):
            assert anchor in anchors, (rule.id, anchor)
            linked += 1
    assert linked >= 13
    # The policy cites public sources only, and every rule it names has its page.
    assert "ack-default-gpu-scheduling" not in policy and "../shared" not in policy
    for rule_id in regex.findall(r"\]\(rules/(GPU\d{3})\.md\)", policy):
        assert (ROOT / "docs" / "rules" / f"{rule_id}.md").is_file()


def test_line_hashes_read_only_files_of_the_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    outside = outside_git(tmp_path)
    repo = make_repo(outside / "repo")
    (outside / "secret.yaml").write_text(BAD)
    (repo / "link.yaml").symlink_to(outside / "secret.yaml")
    (repo / "train.yaml").write_text(BAD)
    monkeypatch.chdir(repo)
    import builtins

    opened: list[str] = []
    real_open = builtins.open

    def spy(file: object, *args: object, **kwargs: object) -> object:
        opened.append(os.fspath(file))  # type: ignore[arg-type]
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", spy)
    doc = _render([_finding(line=BAD_LINE, file="train.yaml"), _finding(line=BAD_LINE, file="link.yaml")])
    monkeypatch.setattr(builtins, "open", real_open)
    by_uri = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in doc["runs"][0]["results"]}
    inside, through_link = by_uri.pop("train.yaml"), by_uri.popitem()[1]
    assert "primaryLocationLineHash" in inside["partialFingerprints"]
    assert "primaryLocationLineHash" not in through_link["partialFingerprints"]
    assert not any("secret" in name for name in opened)


@pytest.mark.parametrize("many", [True, False])   # results of every rule's fixtures; none
def test_the_log_written_result_by_result_is_its_compact_encoding(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path, many: bool) -> None:
    """sarif.write encodes the log around its results and each result apart: the text is what
    encoding the whole log at once gives (compact, keys in order, one line)."""
    rules = load_rules()
    if many:
        monkeypatch.chdir(ROOT)
        target = str((FIXTURES / "rules").relative_to(ROOT))
    else:
        monkeypatch.chdir(tmp_path)
        (tmp_path / "good.yaml").write_text(GOOD)
        target = "good.yaml"
    result = scan(discover([target]).inputs, ScanConfig(rules=list(rules.values()), all_rules=rules))
    text = sarif.render(result, rules)
    doc = json.loads(text)
    assert text == json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert (len(doc["runs"][0]["results"]) > 1) is many
    assert "gpulint results" not in text
