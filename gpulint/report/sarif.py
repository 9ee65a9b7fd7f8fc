"""SARIF 2.1.0 output, shaped for GitHub code scanning.

Built from sarif-om's classes and serialised here (sarif-om has no writer).
What GitHub reads, and why each choice below (the README's "GitHub code
scanning" section says it for users):

- exactly one run, `results: []` when clean (GitHub rejects several runs of one
  tool and category in one upload);
- every registered rule in `tool.driver.rules`, in id order, so `ruleIndex` is
  stable across runs and configurations; rules not run here are marked through
  `invocations[0].ruleConfigurationOverrides`, rules off by default through
  `defaultConfiguration.enabled: false`; `helpUri` is the rule's page in
  docs/rules/;
- suppressed findings are left out (code scanning does not reliably honour
  `suppressions`, so each could open an alert), with a note saying how many;
  `--show-suppressed` includes them with their `suppressions`;
- problems with the input or the tools (GPU000: unreadable files, a chart helm
  cannot render) are results of a rule not tagged `security`: they show as
  ordinary errors at the file and line to fix, never as security alerts;
- one physical location per result, at a file of the repository, relative to
  it (`%SRCROOT%`), with a full region; for generated input (Helm/Kustomize)
  the first mapped file that exists in the repository is the location, other
  mapped files related locations, and the position in the rendered output goes
  into the message and the `renderedLocation` property (a finding nothing maps
  back from sits on line 1 of the chart's Chart.yaml or the kustomization file);
- `primaryLocationLineHash` computed as upload-sarif computes it (linehash.py),
  plus a line-independent fingerprint under `gpulint/v1`;
- results capped below GitHub's 5,000 kept results, most severe first, with a
  notification saying how many were left out;
- no timestamps or other run-dependent data: the same input gives the same
  bytes; names that are not UTF-8 are percent-encoded in URIs and `\\udcNN`
  escapes elsewhere (safetext.py).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import IO, Any, Iterable, Mapping

import attr
import sarif_om as om

from gpulint import __version__
from gpulint.api import Rule, Severity
from gpulint.load.locations import Span
from gpulint.report import RULE_DOCS_URI
from gpulint.report.fingerprint import Fingerprints
from gpulint.report.linehash import FileLineHashes
from gpulint.report.repopath import Locator, RepoPath
from gpulint.report.safetext import json_safe
from gpulint.results.findings import Finding
from gpulint.results.scanning import ScanResult

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/gpulint/gpulint"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "gpulint/v1"
LINE_HASH_KEY = "primaryLocationLineHash"
assert FINGERPRINT_KEY < LINE_HASH_KEY   # the order a result's partialFingerprints are written in
GITHUB_KEPT_RESULTS = 5000          # GitHub keeps this many results per run and drops the rest
DEFAULT_MAX_RESULTS = 4500          # ours: below that, leaving room for notifications to be seen
GITHUB_DESCRIPTION_LIMIT = 1024     # shortDescription / fullDescription

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# GitHub: 9.0+ critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low.
DERIVED_SECURITY_SEVERITY = {Severity.ERROR: "7.5", Severity.WARNING: "5.0", Severity.INFO: "2.0"}
# GitHub's `problem.severity` for rules not tagged `security`.
PROBLEM_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "recommendation"}
# Suppressions written in the manifest itself; everything else (config files,
# allowlists, baselines, recognised system components) is external.
IN_SOURCE_SUPPRESSIONS = frozenset({"inline", "annotation"})
_MAPPED_ROLE_WORDS = {"template": "Helm template", "values": "Helm values", "origin": "Kustomize source"}


def render(
    result: ScanResult,
    rules: Mapping[str, Rule],
    enabled: Iterable[str] | None = None,
    category: str | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    problems: Iterable[str] = (),
    locator: Locator | None = None,
    show_suppressed: bool = False,
) -> str:
    """The SARIF log of a scan as JSON text.

    `rules` is every registered rule, `enabled` the ids run (default: all),
    `problems` tool-level errors (e.g. missing paths) that, like the scan's
    internal errors, become error notifications and make the run unsuccessful.
    """
    import io

    out = io.StringIO()
    write(result, rules, out, enabled, category, max_results, problems, locator, show_suppressed)
    return out.getvalue()


def write(
    result: ScanResult,
    rules: Mapping[str, Rule],
    out: IO[str],
    enabled: Iterable[str] | None = None,
    category: str | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    problems: Iterable[str] = (),
    locator: Locator | None = None,
    show_suppressed: bool = False,
) -> None:
    """Write what `render` gives to `out`, result by result: the log's text is never held
    whole (the JSON encoder's pieces of 5 MB of results and their join took memory, and
    the page faults of a fresh process's memory are time)."""
    data = to_json(build(result, rules, enabled, category, max_results, problems, locator, show_suppressed))
    [run] = data["runs"]
    results = run["results"]
    run["results"] = _RESULTS_MARK
    ordered = {key: data[key] for key in ("$schema", "version", "runs")}
    # Compact: json's C encoder (with `indent` it falls back to pure Python, which
    # made SARIF several times slower to write than the scan's JSON report).
    head, tail = _encode(ordered).split(_encode(_RESULTS_MARK))
    out.write(head + "[")
    separator = ""
    for item in results:
        out.write(separator + _encode(item))
        separator = ","
    out.write("]" + tail + "\n")


def _encode(value: Any) -> str:
    """Compact JSON, `\\udcNN` for lone surrogates (safetext.py): the same bytes piece by piece as whole."""
    return json_safe(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


_RESULTS_MARK = "\0gpulint results\0"   # where the results go (no result or name is this text)


def build(
    result: ScanResult,
    rules: Mapping[str, Rule],
    enabled: Iterable[str] | None = None,
    category: str | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    problems: Iterable[str] = (),
    locator: Locator | None = None,
    show_suppressed: bool = False,
) -> om.SarifLog:
    locator = locator or Locator()
    ordered = sorted(rules.values(), key=lambda r: r.id)
    index = {rule.id: i for i, rule in enumerate(ordered)}
    enabled_ids = set(index) if enabled is None else set(enabled)

    findings = result.findings
    suppressed = 0
    if not show_suppressed:
        # Code scanning does not reliably honour `suppressions`: a suppressed
        # result could open an alert. Left out unless asked for.
        active = [f for f in findings if f.suppressed is None]
        suppressed, findings = len(findings) - len(active), active
    kept = _cap(findings, max_results)
    bases = _BaseIds(locator)
    fingerprints = Fingerprints()
    line_hashes = _LineHashes()
    results = _Ready(_result(f, index, bases, fingerprints, line_hashes) for f in kept)

    notifications = [_notification(message, "error") for message in problems]
    notifications += [_notification(message, "error") for message in result.internal_errors]
    if suppressed:
        notifications.append(_notification(
            f"{suppressed} suppressed result{'' if suppressed == 1 else 's'} left out "
            "(gpulint --show-suppressed includes them, with their suppressions).", "note"))
    if len(kept) < len(findings):
        notifications.append(_notification(
            f"{len(findings) - len(kept)} of {len(findings)} results were left out of this SARIF file: "
            f"it holds at most {max_results} (GitHub code scanning keeps {GITHUB_KEPT_RESULTS:,} per run). "
            "The most severe results are kept, unsuppressed before suppressed; run gpulint with "
            "--format json or text to see them all, or narrow the scan with --select/--ignore/--exclude.",
            "warning"))
    invocation = om.Invocation(
        execution_successful=not any(n.level == "error" for n in notifications),
        tool_execution_notifications=notifications,
        rule_configuration_overrides=[
            om.ConfigurationOverride(
                descriptor=om.ReportingDescriptorReference(id=rule.id, index=index[rule.id]),
                # level=None: sarif-om defaults it to "warning", which would override the rule's level.
                configuration=om.ReportingConfiguration(enabled=rule.id in enabled_ids, level=None),
            )
            for rule in ordered if (rule.id in enabled_ids) != rule.enabled_by_default
        ],
    )
    run = om.Run(
        tool=om.Tool(driver=om.ToolComponent(
            name="gpulint",
            version=__version__,
            semantic_version=__version__,
            information_uri=INFORMATION_URI,
            organization="gpulint",
            rules=[_descriptor(rule) for rule in ordered],
        )),
        automation_details=om.RunAutomationDetails(id=category_id(category)) if category else None,
        invocations=[invocation],
        original_uri_base_ids=bases.declarations(),
        column_kind="unicodeCodePoints",
        results=results,
    )
    return om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])


def category_id(category: str) -> str:
    """`runAutomationDetails.id` for a category.

    GitHub reads the id as `category/run-id`: everything up to the last `/` is
    the category. A trailing `/` makes the whole text the category, with no
    run id (which would differ between runs and defeat the category).
    """
    return category if category.endswith("/") else category + "/"


# --- rules -------------------------------------------------------------------


def _descriptor(rule: Rule) -> om.ReportingDescriptor:
    tags = list(dict.fromkeys((*rule.tags, "gpu")))
    properties: dict[str, Any] = {"tags": tags, "precision": rule.precision}
    if "security" in tags:
        properties["security-severity"] = rule.security_severity or DERIVED_SECURITY_SEVERITY[rule.severity]
    else:
        properties["problem.severity"] = PROBLEM_SEVERITY[rule.severity]
    documentation = rule.documentation
    return om.ReportingDescriptor(
        id=rule.id,
        name=rule.name,
        short_description=om.MultiformatMessageString(text=_limit(rule.summary)),
        full_description=om.MultiformatMessageString(text=_limit(doc_section(rule.doc, "What it does") or rule.summary)),
        help=om.MultiformatMessageString(text=documentation, markdown=documentation),
        help_uri=RULE_DOCS_URI.format(id=rule.id) if is_builtin(rule) else None,
        default_configuration=om.ReportingConfiguration(
            level=LEVELS[rule.severity], enabled=rule.enabled_by_default),
        properties=properties,
    )


_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s")


def doc_section(doc: str, heading: str) -> str:
    """The text under `## heading` in a rule's documentation, unwrapped.

    Lines of a paragraph are joined; list items stay one per line; paragraphs
    are separated by a blank line.
    """
    import textwrap

    text = textwrap.dedent(doc)
    match = re.search(rf"^## {re.escape(heading)}[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if match is None:
        return ""
    paragraphs = []
    for block in re.split(r"\n\s*\n", match.group(1).strip()):
        items: list[str] = []
        for line in block.splitlines():
            line = " ".join(line.split())
            if not line:
                continue
            if items and not _LIST_ITEM.match(line):
                items[-1] += " " + line
            else:
                items.append(line)
        if items:
            paragraphs.append("\n".join(items))
    return "\n\n".join(paragraphs)


def _limit(text: str, limit: int = GITHUB_DESCRIPTION_LIMIT) -> str:
    """GitHub cuts descriptions at 1024 characters; cut at a sentence or line end ourselves."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    end = max(cut.rfind(". ") + 1, cut.rfind(".\n") + 1, cut.rfind("\n"))
    return cut[:end].rstrip() if end > limit // 2 else cut.rstrip() + "…"


def is_builtin(rule: Rule) -> bool:
    """A rule shipped in gpulint's own `rules/` package (its docs are in docs/rules/)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("gpulint.rules.") and getattr(module, "RULE", None) is rule:
            return True
    return False


# --- results -----------------------------------------------------------------


def _cap(findings: list[Finding], limit: int) -> list[Finding]:
    """At most `limit` findings, the most important ones, in their report order."""
    if len(findings) <= limit:
        return findings
    ranked = sorted(range(len(findings)), key=lambda i: (
        findings[i].suppressed is not None, -findings[i].severity.rank, i))
    keep = sorted(ranked[:limit])
    return [findings[i] for i in keep]


def _result(finding: Finding, index: Mapping[str, int], bases: "_BaseIds",
            fingerprints: Fingerprints, line_hashes: "_LineHashes") -> dict[str, Any]:
    """One result as JSON data (keys in SARIF's sorted order, as to_json writes sarif-om objects).

    Results are the bulk of a log: they are written as plain data, not through
    sarif-om and its attrs reflection, which took most of the time of a large report."""
    locator = bases.locator
    primary = next((m for m in finding.mapped if locator.exists_in_repo(m.file)), None)
    related: list[dict[str, Any]] = []
    message = finding.message
    properties = _result_properties(finding)
    source = finding.rendered.target if finding.rendered is not None else None
    if primary is not None:
        path, span = locator.locate(primary.file), primary.span
    elif source is not None and (anchor := _anchor(source, locator)) is not None:
        # Nothing maps back to a file: the chart's or kustomization's own file
        # stands for the rendered output (never the name of a file that does not exist).
        path, span = locator.locate(anchor), _FIRST_LINE
    else:  # the position read is all there is (a manifest, stdin)
        path, span = locator.locate(finding.file), finding.span
    where = _physical(path, span, bases)
    if source is not None or primary is not None:
        # The position in the rendered output goes into the message and a property.
        span = finding.span
        shown = locator.locate(source).relative if source is not None else locator.locate(finding.file).relative
        variant = finding.rendered.values if finding.rendered is not None else ""
        shown_render = f"{shown} with {variant}" if variant else shown
        message += f" (rendered output of {shown_render}, line {span.line}, column {span.column})"
        properties["renderedLocation"] = {"source": shown, **({"values": variant} if variant else {}), "startLine": span.line, "startColumn": span.column,
                                          "endLine": span.end_line, "endColumn": span.end_column}
    for mapped in finding.mapped:
        if mapped is not primary and locator.exists_in_repo(mapped.file):
            related.append({
                "id": len(related) + 1,
                "message": {"text": mapped.description or _MAPPED_ROLE_WORDS.get(mapped.role, mapped.role)},
                "physicalLocation": _physical(locator.locate(mapped.file), mapped.span, bases),
            })
    # Square brackets are escaped in every message (SARIF §3.11.6): text from the tree (a container's
    # name, a file name) must never read as an embedded link `[text](url)`.
    message = _escape_link(message)
    if related:
        # GitHub links related locations that the message embeds as [text](id).
        links = ", ".join(f"[{_escape_link(loc['message']['text'])}]({loc['id']})" for loc in related)
        message += f"{'' if message.endswith('.') else '.'} See {links}."

    location: dict[str, Any] = {}
    logical = _logical(finding)
    if logical:
        location["logicalLocations"] = logical
    location["physicalLocation"] = where
    partial = {FINGERPRINT_KEY: fingerprints.of(finding, where["artifactLocation"]["uri"])}
    # Only files of the repository the SARIF is for (%SRCROOT%), as upload-sarif
    # hashes only files of its checkout: nothing outside it is read.
    line_hash = (line_hashes.of(path, where["region"]["startLine"])
                 if where["artifactLocation"].get("uriBaseId") == SRCROOT else None)
    if line_hash is not None:
        partial[LINE_HASH_KEY] = line_hash
    result: dict[str, Any] = {
        "kind": "fail",
        "level": LEVELS[finding.severity],
        "locations": [location],
        "message": {"text": message},
        "partialFingerprints": partial,   # its keys in sorted order (see FINGERPRINT_KEY)
    }
    if properties:
        result["properties"] = properties
    if related:
        result["relatedLocations"] = related
    result["ruleId"] = finding.rule_id
    rule_index = index.get(finding.rule_id, -1)
    if rule_index != -1:
        result["ruleIndex"] = rule_index
    suppressions = _suppressions(finding)
    if suppressions:
        result["suppressions"] = suppressions
    if finding.fix is not None and finding.fix.file is not None:   # a Helm values file's, or a kustomization file's, edits
        in_place, path = locator.exists_in_repo(finding.fix.file), locator.locate(finding.fix.file)
    else:
        in_place = primary is None and source is None
    fixes = _fixes(finding, in_place, path, bases)
    if fixes:
        result = {"fixes": fixes, **result}   # the first key in sorted order
    return result


def _fixes(finding: Finding, in_place: bool, path: RepoPath, bases: "_BaseIds") -> list[dict[str, Any]]:
    """The finding's fix as SARIF `fixes`: one artifact change of `path`, a replacement per text edit
    (an empty deleted region inserts). Only for findings located in the file itself, and for fixes
    made in a chart's values file of the repository (an artifact change may name any artifact,
    SARIF 2.1.0 §3.55.2, §3.56.2)."""
    fix = finding.fix
    if fix is None or not in_place:
        return []
    replacements = []
    for edit in fix.edits:
        s = edit.span
        replacements.append({"deletedRegion": {"endColumn": s.end_column, "endLine": s.end_line,
                                               "startColumn": s.column, "startLine": s.line},
                             "insertedContent": {"text": edit.text}})
    return [{"artifactChanges": [{"artifactLocation": bases.artifact(path), "replacements": replacements}],
             "description": {"text": f"{fix.title} ({fix.applicability} fix)"},
             "properties": {"applicability": fix.applicability}}]


_FIRST_LINE = Span(1, 1, 1, 1)
# The file that defines rendered input, in the order helm and kustomize look for them.
_ANCHORS = ("Chart.yaml", "kustomization.yaml", "kustomization.yml", "Kustomization")


def _anchor(directory: str, locator: Locator) -> str | None:
    for name in _ANCHORS:
        path = os.path.join(directory, name)
        if locator.exists_in_repo(path):
            return path
    return None


class _LineHashes:
    """GitHub's `primaryLocationLineHash` of locations in files of a repository (see linehash.py).

    Each file is read once while its results are written (results come file by
    file); a symlink is read at its resolved path, which must lie in the
    repository (RepoPath.root is None otherwise)."""

    KEEP = 16

    def __init__(self) -> None:
        self._files: dict[str, FileLineHashes | None] = {}

    def of(self, path: RepoPath, line: int) -> str | None:
        if path.root is None:
            return None
        key = os.path.join(path.root, path.relative)
        hashes = self._files.get(key, False)
        if hashes is False:
            if len(self._files) >= self.KEEP:   # results come file by file: keep a few, not all
                del self._files[next(iter(self._files))]
            hashes = self._files[key] = self._read(key)
        return None if hashes is None else hashes.get(line)

    @staticmethod
    def _read(path: str) -> FileLineHashes | None:
        try:
            if not os.path.isfile(path):
                return None
            with open(path, "rb") as handle:
                return FileLineHashes(handle.read())
        except OSError:
            return None


def _physical(path: RepoPath, span: Any, bases: "_BaseIds") -> dict[str, Any]:
    line, column = max(span.line, 1), max(span.column, 1)
    end_line = max(span.end_line, line)
    end_column = max(span.end_column, 1)
    if end_line == line:
        end_column = max(end_column, column)
    return {"artifactLocation": bases.artifact(path),
            "region": {"endColumn": end_column, "endLine": end_line, "startColumn": column, "startLine": line}}


def _logical(finding: Finding) -> list[dict[str, Any]]:
    obj = finding.obj
    if obj is None:
        return []
    parts = ([obj.namespace] if obj.namespace else []) + [obj.kind, obj.name]
    name = obj.name
    if finding.container:
        parts += ["container", finding.container]
        name = finding.container
    return [{"fullyQualifiedName": "/".join(parts), "kind": "resource", "name": name}]


def _suppressions(finding: Finding) -> list[dict[str, Any]]:
    if finding.suppressed is None:
        return []
    kind = "inSource" if finding.suppressed.kind in IN_SOURCE_SUPPRESSIONS else "external"
    # No `status`: absent means accepted (sarif-om even names it `state`, a
    # pre-2.1.0 draft name the final schema rejects).
    return [{"justification": finding.suppressed.reason, "kind": kind,
             "properties": {"gpulint/kind": finding.suppressed.kind}}]


def _result_properties(finding: Finding) -> dict[str, Any]:
    props: dict[str, Any] = {}
    if finding.obj is not None:
        obj = finding.obj
        props["object"] = {"apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name}
        if obj.namespace is not None:
            props["object"]["namespace"] = obj.namespace
    if finding.container:
        props["container"] = finding.container
    if finding.field_path:
        props["fieldPath"] = finding.field_path
    if finding.source:
        props["source"] = finding.source.as_dict()
    return props


def _escape_link(text: str) -> str:
    """Square brackets in a message with embedded links are escaped (SARIF §3.11.6)."""
    return text.replace("[", "\\[").replace("]", "\\]")


def _notification(text: str, level: str) -> om.Notification:
    return om.Notification(message=om.Message(text=_escape_link(text)), level=level)


class _BaseIds:
    """`uriBaseId`s: %SRCROOT% for the current repository, ROOT1.. for others."""

    def __init__(self, locator: Locator) -> None:
        self.locator = locator
        # %SRCROOT% is the repository the command runs in; run from outside any
        # repository, it is the first root used. Others are numbered in order of
        # first use, so the output stays deterministic.
        self._home = locator.cwd_repository
        self._ids: dict = {}
        self._artifacts: dict[RepoPath, dict[str, str]] = {}

    def id_for(self, path: RepoPath) -> str | None:
        if path.root is None:
            return None
        if path.root not in self._ids:
            if path.root == self._home or (self._home is None and not self._ids):
                self._ids[path.root] = SRCROOT
            else:
                self._ids[path.root] = f"ROOT{sum(1 for v in self._ids.values() if v != SRCROOT) + 1}"
        return self._ids[path.root]

    def artifact(self, path: RepoPath) -> dict[str, str]:
        """The `artifactLocation` of `path`, made once per file (results share it: it is
        only read, then written out)."""
        artifact = self._artifacts.get(path)
        if artifact is None:
            artifact = self._artifacts[path] = {"uri": path.uri}
            base = self.id_for(path)
            if base is not None:
                artifact["uriBaseId"] = base
        return artifact

    def declarations(self) -> dict[str, om.ArtifactLocation]:
        # A base URI must end with a slash (SARIF §3.14.14).
        return {name: om.ArtifactLocation(uri=root.as_uri().rstrip("/") + "/") for root, name in self._ids.items()}


# --- serialisation -----------------------------------------------------------


class _Ready(list):
    """Items that are JSON data already (results): to_json leaves them as they are."""


def to_json(value: Any) -> Any:
    """sarif-om objects -> plain JSON data with SARIF's property names.

    Unset properties are left out: None, empty lists and maps, sarif-om's -1
    "no index" sentinels and values equal to a list default. Explicit values
    equal to a SARIF default (a result's `level: warning`) are kept. Properties
    of SARIF objects are sorted by name, so the output is stable and diffable.
    """
    if type(value) is _Ready:
        return value
    if attr.has(type(value)):
        out: dict[str, Any] = {}
        for field in attr.fields(type(value)):
            item = getattr(value, field.name)
            if _unset(item, field, type(value)):
                continue
            out[field.metadata.get("schema_property_name", field.name)] = to_json(item)
        return dict(sorted(out.items()))
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


# Empty but meaningful: a clean run says `results: []` (GitHub needs the key).
_KEEP_EMPTY = frozenset({(om.Run, "results")})


def _unset(item: Any, field: attr.Attribute, owner: type) -> bool:
    if item is None:
        return True
    if isinstance(item, (list, tuple, dict)) and not item:
        return (owner, field.name) not in _KEEP_EMPTY
    default = field.default
    if isinstance(default, attr.Factory):  # type: ignore[arg-type]
        return item == default.factory()
    return isinstance(default, (int, float)) and not isinstance(default, bool) and default == -1 and item == -1
