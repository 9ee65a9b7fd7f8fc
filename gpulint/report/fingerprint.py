"""A line-independent identity for a finding, shared by the reports that track findings
across commits (SARIF's `partialFingerprints`, GitLab Code Quality's `fingerprint`)."""

from __future__ import annotations

import hashlib

from gpulint.results.findings import Finding


class Fingerprints:
    """Rule, file, object, container, field path: what stays when lines are inserted above.

    Two findings with the same identity (e.g. two commands in one script) get `:1`, `:2`...
    in report order, as GitHub's own fingerprints do.
    """

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def of(self, finding: Finding, path: str) -> str:
        """The fingerprint of `finding` located in `path` (as the report names the file)."""
        obj = finding.obj
        identity = "\0".join([
            finding.rule_id, path,
            "" if obj is None else f"{obj.kind}/{obj.namespace or ''}/{obj.name}",
            finding.container or "", finding.field_path,
        ])
        digest = hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        count = self._seen[digest] = self._seen.get(digest, 0) + 1
        return f"{digest}:{count}"
