"""Command-line options + project configuration -> what one scan runs with.

Precedence: built-in defaults, then the configuration file, then the command
line. Rule selection is layered like ruff's: each layer's `select` replaces the
set chosen so far, `extend-select` adds to it and `ignore` removes from it; in
the configuration, `rules: {ID: {enabled: ...}}` applies after its
select/ignore. GPU000 (invalid input) is reported unless a layer ignores it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Mapping

from gpulint.api import Rule
from gpulint.config.render import RenderOptions
from gpulint.config.selection import select_rules
from gpulint.load.yamlload import DEFAULT_LIMITS, Limits
from gpulint.record import record
from gpulint.results.scanning import ScanConfig, Suppressor
from gpulint.suppress.annotation_ignore import AnnotationSuppressions
from gpulint.suppress.core import about_suppressions, pipeline
from gpulint.suppress.inline import InlineSuppressions

if TYPE_CHECKING:  # the baseline and configuration modules load when a scan uses them
    from pathlib import Path

    from gpulint.config.settings import ProjectConfig
    from gpulint.suppress.baseline import BaselineWriter


@record
class CliOptions:
    """The rule selection options of the command line."""
    __slots__ = ("select", "extend_select", "ignore", "exclude", "fail_on", "baseline", "baseline_root",
                 "write_baseline")
    select: list[str] | None              # None: not given
    extend_select: list[str]
    ignore: list[str]
    exclude: list[str]
    fail_on: str | None
    baseline: str | None
    baseline_root: str | None             # the folder the baseline's paths are relative to (default: its own)
    write_baseline: str | None

    # extend_select, ignore, exclude: None is [] (nothing given).
    def __init__(self, select: list[str] | None = None, extend_select: list[str] | None = None,
                 ignore: list[str] | None = None, exclude: list[str] | None = None, fail_on: str | None = None,
                 baseline: str | None = None, baseline_root: str | None = None,
                 write_baseline: str | None = None) -> None:
        self.select = select
        self.extend_select = [] if extend_select is None else extend_select
        self.ignore = [] if ignore is None else ignore
        self.exclude = [] if exclude is None else exclude
        self.fail_on = fail_on
        self.baseline = baseline
        self.baseline_root = baseline_root
        self.write_baseline = write_baseline


@record
class RunPlan:
    """What a scan runs with: its configuration, exit threshold and baseline writer."""
    __slots__ = ("scan", "fail_on", "project", "writer")
    scan: ScanConfig
    fail_on: str
    project: ProjectConfig
    writer: BaselineWriter | None

    def __init__(self, scan: ScanConfig, fail_on: str, project: ProjectConfig,
                 writer: BaselineWriter | None = None) -> None:
        self.scan = scan
        self.fail_on = fail_on
        self.project = project
        self.writer = writer


def _matching(rules: Mapping[str, Rule], codes: list[str] | None) -> set[str]:
    return {rule.id for rule in select_rules(dict(rules), codes)} if codes else set()


def choose_rules(rules: Mapping[str, Rule], project: ProjectConfig, cli: CliOptions) -> list[Rule]:
    """The enabled rules, in id order. A rule kept when selecting others (GPU000, GPU010) is on
    unless a layer ignores or disables it (kept_on).

    Raises SelectionError for an unknown code on the command line (the
    configuration's codes were checked when it was loaded).
    """
    select_rules(dict(rules), cli.select, cli.extend_select, cli.ignore)  # unknown CLI codes fail here
    enable = {rid for rid, rc in project.rules.items() if rc.enabled is True}
    disable = {rid for rid, rc in project.rules.items() if rc.enabled is False}
    layers = [
        (project.select, project.extend_select, project.ignore, enable, disable),
        (cli.select, cli.extend_select, cli.ignore, set(), set()),
    ]
    on = {rule.id for rule in rules.values() if rule.enabled_by_default}
    for select, extend, ignore, extra_on, extra_off in layers:
        selected = _matching(rules, select)
        if select is not None:
            on = selected
        added = _matching(rules, extend) | extra_on | selected
        removed = _matching(rules, ignore) | extra_off
        on = (on | added) - removed
    return [rule for rid, rule in rules.items()
            if (kept_on(rules, project, cli, rid) if rule.kept_when_selecting_others else rid in on)]


def kept_on(rules: Mapping[str, Rule], project: ProjectConfig, cli: CliOptions, rule_id: str) -> bool:
    """Whether a rule kept when selecting others (GPU000 invalid input, GPU010 render failed) is on:
    always, unless a layer ignores or disables it (a later layer selecting it turns it back on);
    `--select` of other rules does not turn it off, so nothing unread goes unsaid."""
    own = project.rules.get(rule_id)
    layers = [
        ((project.select or []) + project.extend_select, project.ignore, own.enabled if own else None),
        ((cli.select or []) + cli.extend_select, cli.ignore, None),
    ]
    reported = True
    for added, ignored, enabled in layers:
        if enabled is False or rule_id in _matching(rules, ignored):
            reported = False
        elif enabled is True or rule_id in _matching(rules, added):
            reported = True
    return reported


def plan(rules: Mapping[str, Rule], project: ProjectConfig, cli: CliOptions,
         system: Suppressor | None = None, render: RenderOptions | None = None,
         limits: Limits = DEFAULT_LIMITS) -> RunPlan:
    """Build the ScanConfig; `system` is the system-component suppressor, if any;
    `render` the Helm/Kustomize settings (default: RenderOptions()), `limits` the loader's.

    Raises SelectionError (bad CLI code) and BaselineError (unreadable baseline).
    """
    chosen = choose_rules(rules, project, cli)
    about = about_suppressions(rules.values())
    inline = InlineSuppressions(about)
    annotations = AnnotationSuppressions(about)
    writer = None
    baseline: Suppressor | None = None
    if cli.write_baseline or cli.baseline or project.baseline is not None:
        from pathlib import Path

        from gpulint.suppress.baseline import BaselineSuppressor, BaselineWriter
    if cli.write_baseline:
        writer = BaselineWriter(Path(cli.write_baseline), cli.write_baseline)
        baseline = writer
    elif cli.baseline:
        baseline = BaselineSuppressor(Path(cli.baseline), cli.baseline,
                                      Path(cli.baseline_root) if cli.baseline_root else None)
    elif project.baseline is not None:
        baseline = BaselineSuppressor(project.baseline, _display(project.baseline))
    config = ScanConfig(
        rules=chosen,
        all_rules=dict(rules),
        options={rid: dict(rc.options) for rid, rc in project.rules.items() if rc.options},
        severities={rid: rc.severity for rid, rc in project.rules.items() if rc.severity is not None},
        settings=project.settings,
        suppressors=pipeline(
            inline=inline,
            annotation=annotations,
            config=_config_exemptions(project),
            system=system,
            baseline=baseline,
        ),
        hooks=[inline, annotations],
        render=render if render is not None else RenderOptions(),
        limits=limits,
    )
    fail_on = cli.fail_on or project.fail_on or "warning"
    return RunPlan(config, fail_on, project, writer)


def _config_exemptions(project: ProjectConfig) -> Suppressor | None:
    if not project.exemptions:
        return None
    from gpulint.suppress.config_exemptions import ConfigExemptions

    return ConfigExemptions(project.exemptions, project.root)


def _display(path: Path) -> str:
    from pathlib import Path

    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive (Windows)
        return str(path)
