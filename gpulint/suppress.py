"""Suppression: deciding that a finding is reported as suppressed, and why.

The engine hands every finding to the configured suppressors in order; the first
that returns a `Suppression` wins. A suppressed finding is never dropped: it is
counted, shown with `--show-suppressed`, marked in JSON and SARIF.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from gpulint.findings import Finding, Suppression
from gpulint.model import Container, Workload
from gpulint.objects import KubeObject


@dataclass
class SuppressionContext:
    """What a suppressor may consult about a finding."""

    workload: Workload | None          # None for input errors and Dockerfiles
    container: Container | None
    obj: KubeObject | None
    text: str | None                   # text of the document (or Dockerfile) the finding is in
    line_offset: int                   # 0-based file line of the first line of `text`

    def line(self, number: int) -> str | None:
        """Text of 1-based file line `number`, when it is inside `text`."""
        if self.text is None:
            return None
        index = number - 1 - self.line_offset
        lines = self.text.splitlines()
        return lines[index] if 0 <= index < len(lines) else None


Suppressor = Callable[[Finding, SuppressionContext], Optional[Suppression]]


def apply(finding: Finding, ctx: SuppressionContext, suppressors: list[Suppressor]) -> Finding:
    for suppressor in suppressors:
        verdict = suppressor(finding, ctx)
        if verdict is not None:
            finding.suppressed = verdict
            break
    return finding
