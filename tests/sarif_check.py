"""Checks every SARIF document in the suite goes through.

`check(doc)` validates against the vendored OASIS schema (with the validator
its `$schema` names: draft-04) and then checks what GitHub code scanning needs
beyond the schema (see GITHUB_RULES in test_sarif.py for GitHub's documented
rules): one run, a complete rule table that `ruleIndex` points into, one
physical location with a full region and a relative or file URI, declared
base ids, our fingerprint and, for a file of a repository, the
`primaryLocationLineHash` upload-sarif would compute.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, unquote_to_bytes, urlsplit

import jsonschema

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "sarif-schema-2.1.0.json"
LEVELS = {"error", "warning", "note", "none"}
PRECISIONS = {"very-high", "high", "medium", "low"}
# RFC 3986 characters that may appear unescaped in a URI reference.
_URI_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")


@lru_cache(maxsize=1)
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def check(doc: dict, root: Path | None = None) -> dict:
    """Validate a SARIF log; returns its only run.

    With `root`, the directory %SRCROOT% stands for, every location must be a
    file there and every line hash must be the one upload-sarif computes."""
    errors = sorted(validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "SARIF does not validate:\n" + "\n".join(
        f"  {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20])
    assert doc["version"] == "2.1.0" and doc["$schema"].startswith("https://")
    assert len(doc["runs"]) == 1, "exactly one run (GitHub rejects several runs of one tool/category)"
    run = doc["runs"][0]
    assert isinstance(run["results"], list), "results is present, [] when clean"
    _check_driver(run["tool"]["driver"])
    bases = run.get("originalUriBaseIds", {})
    for base in bases.values():
        assert base["uri"].startswith("file:///") and base["uri"].endswith("/")
    rules = run["tool"]["driver"]["rules"]
    assert len(run["invocations"]) == 1
    assert isinstance(run["invocations"][0]["executionSuccessful"], bool)
    for result in run["results"]:
        _check_result(result, rules, bases)
        if root is not None:
            _check_in_repository(result, root)
    return run


def _check_in_repository(result: dict, root: Path) -> None:
    from gpulint.report.linehash import all_hashes

    for location in result["locations"] + result.get("relatedLocations", []):
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact.get("uriBaseId") == "%SRCROOT%", artifact
        path = root / os.fsdecode(unquote_to_bytes(artifact["uri"]))
        assert path.is_file(), f"{artifact['uri']} is not a file of the repository"
    physical = result["locations"][0]["physicalLocation"]
    path = root / os.fsdecode(unquote_to_bytes(physical["artifactLocation"]["uri"]))
    expected = list(all_hashes(path.read_bytes()))[physical["region"]["startLine"] - 1]
    assert result["partialFingerprints"]["primaryLocationLineHash"] == expected


def _check_driver(driver: dict) -> None:
    assert driver["name"] == "gpulint"
    assert driver["version"] and driver["semanticVersion"] == driver["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:[-+].*)?", driver["semanticVersion"])
    assert driver["informationUri"].startswith("https://")
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for rule in driver["rules"]:
        assert rule["name"] and len(rule["name"]) <= 255
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024
        assert 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        props = rule["properties"]
        assert props["precision"] in PRECISIONS
        if "security" in props["tags"]:
            assert isinstance(props["security-severity"], str)
            assert 0.0 < float(props["security-severity"]) <= 10.0


def _check_result(result: dict, rules: list, bases: dict) -> None:
    index = result["ruleIndex"]
    assert 0 <= index < len(rules) and rules[index]["id"] == result["ruleId"], "ruleIndex points at ruleId"
    assert result["level"] in LEVELS
    assert result["message"]["text"].strip()
    assert len(result["locations"]) == 1, "exactly one location: GitHub uses only the first"
    _check_physical(result["locations"][0]["physicalLocation"], bases)
    for related in result.get("relatedLocations", []):
        _check_physical(related["physicalLocation"], bases)
        assert related["message"]["text"]
    fingerprints = result["partialFingerprints"]
    assert re.fullmatch(r"[0-9a-f]{32}:\d+", fingerprints["gpulint/v1"])
    if "primaryLocationLineHash" in fingerprints:
        assert re.fullmatch(r"[0-9a-f]{1,16}:\d+", fingerprints["primaryLocationLineHash"])
        assert "uriBaseId" in result["locations"][0]["physicalLocation"]["artifactLocation"]
    for suppression in result.get("suppressions", []):
        assert suppression["kind"] in ("inSource", "external") and suppression["justification"]


def _check_physical(physical: dict, bases: dict) -> None:
    artifact = physical["artifactLocation"]
    uri = artifact["uri"]
    assert uri and _URI_CHARS.match(uri), f"not a URI reference: {uri!r}"
    if "uriBaseId" in artifact:
        assert artifact["uriBaseId"] in bases, "every uriBaseId is declared in originalUriBaseIds"
        assert not uri.startswith("/") and ".." not in unquote(uri).split("/"), uri
    elif urlsplit(uri).scheme:
        assert uri.startswith("file:///")
    region = physical["region"]
    for key in ("startLine", "startColumn", "endLine", "endColumn"):
        assert isinstance(region[key], int) and region[key] >= 1, (key, region)
    assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])


def loads(text: str, root: Path | None = None) -> dict:
    """Parse a SARIF stream (nothing but SARIF may be in it) and check it."""
    doc = json.loads(text)
    check(doc, root)
    return doc
