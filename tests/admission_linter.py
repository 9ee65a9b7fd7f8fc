"""The linter's side of the differential test: every object a scan sees, and its active findings.

"Active" as the policy can know it: suppressed neither by a system component nor
by a configuration exemption. Comments and annotations that silence a finding
(`# gpulint: ignore`, `gpulint.io/ignore`) and baselines are the repository's,
not the object's: the scan here runs without them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpulint.config.settings import ProjectConfig, default_config
from gpulint.inputs.discovery import discover
from gpulint.results.scanning import ScanConfig
from gpulint.scan.engine import scan
from gpulint.scan.registry import load_rules
from gpulint.scan.runconfig import CliOptions, choose_rules
from gpulint.suppress.config_exemptions import ConfigExemptions
from gpulint.suppress.core import pipeline
from gpulint.suppress.systemcomponents import system_component_suppressor


@dataclass
class Seen:
    file: str
    data: dict
    namespace: str
    rules: dict[str, list[str]] = field(default_factory=dict)   # active findings: rule id -> messages
    suppressed: dict[str, list[str]] = field(default_factory=dict)  # rule id -> suppression reasons


class _Collector:
    """A scan hook keeping every object with pod specs (the workloads) of every document."""

    def __init__(self) -> None:
        self.objects: list[tuple[str, Any]] = []

    def text_done(self, report: Any, text: str, line_offset: int, config: Any) -> None:
        pass

    def document_done(self, report: Any, doc: Any, workloads: list, config: Any) -> None:
        for workload in workloads:
            self.objects.append((workload.obj.file, workload.obj))

    def scan_done(self, result: Any, config: Any) -> None:
        pass


def scan_objects(paths: list[str], project: ProjectConfig | None = None) -> tuple[list[Seen], int]:
    """(objects with their findings, objects left out because their identity repeats in a file)."""
    project = project or default_config()
    rules = load_rules()
    chosen = choose_rules(rules, project, CliOptions())
    collector = _Collector()
    config = ScanConfig(
        rules=chosen, all_rules=rules,
        options={rid: dict(rc.options) for rid, rc in project.rules.items() if rc.options},
        severities={rid: rc.severity for rid, rc in project.rules.items() if rc.severity is not None},
        settings=project.settings,
        suppressors=pipeline(config=ConfigExemptions(project.exemptions, project.root) if project.exemptions else None,
                             system=system_component_suppressor(settings=project.settings, rules=rules)),
        hooks=[collector],
    )
    found = discover(paths)
    result = scan(found.inputs, config, jobs=1)
    by_key: dict[tuple, list[Seen]] = {}
    for file, obj in collector.objects:
        seen = Seen(file, obj.data, obj.ref.namespace or "")
        by_key.setdefault((file, obj.ref), []).append(seen)
    for finding in result.findings:
        if finding.obj is None:
            continue
        for seen in by_key.get((finding.file, finding.obj), []):
            if finding.suppressed is None:
                seen.rules.setdefault(finding.rule_id, []).append(finding.message)
            else:
                seen.suppressed.setdefault(finding.rule_id, []).append(finding.suppressed.reason)
    unique = [group[0] for group in by_key.values() if len(group) == 1]
    repeated = sum(len(group) for group in by_key.values() if len(group) > 1)
    return unique, repeated


def fixture_paths(root: Path) -> list[str]:
    return [str(root)]
