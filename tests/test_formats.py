"""`--format junit` and `--format gitlab`, validated against the schemas their readers publish
(tests/schemas/README.md says where each comes from), and the JSON report's schema_version."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from conftest import BAD_POD, ROOT, run_cli, scan_json
from repo_copy import git

SCHEMAS = ROOT / "tests" / "schemas"
GOOD = BAD_POD.replace("value: all", "value: void")
SUPPRESSED = BAD_POD.replace("    - name: NVIDIA_VISIBLE_DEVICES\n",
                             "    # gpulint: ignore[GPU003] burn-in test\n    - name: NVIDIA_VISIBLE_DEVICES\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "k8s").mkdir(parents=True)
    (root / "k8s" / "bad.yaml").write_text(BAD_POD)
    (root / "k8s" / "good.yaml").write_text(GOOD)
    (root / "k8s" / "suppressed.yaml").write_text(SUPPRESSED)
    (root / "k8s" / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    git("init", "-q", cwd=root)
    monkeypatch.chdir(root)
    return root


def _junit(*args: str) -> tuple[int, str, ET.Element]:
    import xmlschema

    code, out, err = run_cli("scan", "--format", "junit", *args)
    xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd")).validate(out)
    return code, out, ET.fromstring(out)


def test_junit_one_case_per_file_one_failure_per_finding(repo: Path) -> None:
    code, out, root = _junit("k8s")
    assert code == 1
    (suite,) = root.findall("testsuite")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert sorted(cases) == ["k8s/bad.yaml", "k8s/broken.yaml", "k8s/good.yaml", "k8s/suppressed.yaml"]
    assert (root.get("tests"), root.get("failures"), suite.get("tests"), suite.get("failures")) == ("4", "2", "4", "2")
    (failure,) = cases["k8s/bad.yaml"].findall("failure")
    assert failure.get("type") == "GPU003"
    assert failure.text.startswith("k8s/bad.yaml:10:7: GPU003 [error] NVIDIA_VISIBLE_DEVICES=all in env")
    assert failure.get("message") == failure.text.split(" [error] ", 1)[1]
    assert [f.get("type") for f in cases["k8s/broken.yaml"].findall("failure")] == ["GPU000"]
    assert list(cases["k8s/good.yaml"]) == [] and list(cases["k8s/suppressed.yaml"]) == []
    # The same input, the same bytes.
    assert _junit("k8s")[1] == out


def test_junit_lists_suppressed_findings_as_skipped_when_asked(repo: Path) -> None:
    _, _, root = _junit("--show-suppressed", "k8s/suppressed.yaml")
    (case,) = root.iter("testcase")
    (skipped,) = case.findall("skipped")
    assert skipped.get("message") == "suppressed (inline): burn-in test"
    assert skipped.text.startswith("k8s/suppressed.yaml:11:7: GPU003 [error]")
    assert root.get("failures") == "0"


def test_junit_stays_valid_whatever_the_names(repo: Path) -> None:
    name = os.fsdecode(b'weird <&"\x01\n\xe9>.yaml')
    (repo / name).write_text(BAD_POD)
    code, out, root = _junit(name)
    (case,) = root.iter("testcase")
    assert case.get("name") == "weird <&\"\\x01\\n\\xe9>.yaml"
    assert "\x01" not in out and code == 1


def _gitlab(*args: str) -> tuple[int, list[dict]]:
    code, out, _ = run_cli("scan", "--format", "gitlab", *args)
    issues = json.loads(out)
    schema = json.loads((SCHEMAS / "gitlab-codeclimate.json").read_text())
    for issue in issues:
        jsonschema.validate(issue, schema)
        # What GitLab's documentation asks beyond its schema.
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(issue["check_name"], str) and isinstance(issue["location"]["lines"]["begin"], int)
        assert not issue["location"]["path"].startswith("/")
    return code, issues


def test_gitlab_issues_with_stable_fingerprints(repo: Path) -> None:
    code, issues = _gitlab("k8s")
    assert code == 1
    assert [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"], i["severity"]) for i in issues] \
        == [("GPU003", "k8s/bad.yaml", 10, "major"), ("GPU000", "k8s/broken.yaml", 4, "major")]
    assert issues[0]["categories"] == ["Security"] and issues[1]["categories"] == ["Clarity"]
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    # Lines inserted above move the finding, not its fingerprint: GitLab sees the same issue.
    (repo / "k8s" / "bad.yaml").write_text("# a comment\n# another\n" + BAD_POD)
    _, moved = _gitlab("k8s")
    assert moved[0]["location"]["lines"]["begin"] == 12
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]
    # Another container is another issue.
    (repo / "k8s" / "bad.yaml").write_text(BAD_POD.replace("- name: app", "- name: other"))
    _, other = _gitlab("k8s")
    assert other[0]["fingerprint"] != issues[0]["fingerprint"]


def test_gitlab_paths_are_relative_to_the_repository(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "k8s")
    _, issues = _gitlab("bad.yaml")
    assert [i["location"]["path"] for i in issues] == ["k8s/bad.yaml"]


def test_gitlab_clean_scan_is_an_empty_array(repo: Path) -> None:
    code, out, _ = run_cli("scan", "--format", "gitlab", "k8s/good.yaml", "k8s/suppressed.yaml")
    assert (code, out) == (0, "[]\n")


def test_json_report_has_its_own_schema_version(repo: Path) -> None:
    from importlib.resources import files

    from gpulint.report.json_report import SCHEMA_VERSION

    code, report = scan_json("k8s")
    assert code == 1 and report["schema_version"] == SCHEMA_VERSION == 1
    assert list(report)[:2] == ["version", "schema_version"]
    jsonschema.validate(report, json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text()))


def test_the_published_schema_is_the_shipped_one() -> None:
    """docs/json-report.md links docs/schemas/report.schema.json: the package's schema, byte for byte."""
    assert (ROOT / "docs" / "schemas" / "report.schema.json").read_bytes() == \
        (ROOT / "gpulint" / "schemas" / "report.schema.json").read_bytes()
