"""`gpulint policy export`: the configuration in force as an admission policy.

The configuration is found as `gpulint scan .` finds it (or given with
--config): its selected rules, severities, rule options, shared settings and
exemptions make the policy, so CI and the cluster enforce the same thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from gpulint.admission.policy import Plan, documents
from gpulint.admission.render import export_text
from gpulint.api import Rule
from gpulint.config.settings import ConfigError, default_config, find_config, load_config
from gpulint.scan.runconfig import CliOptions, choose_rules
from gpulint.suppress.systemcomponents import builtin_components


class PolicyError(Exception):
    """A usage or configuration problem: the message is shown, the exit code is 2."""


def plan_from_config(rules: Mapping[str, Rule], config_file: str | None, default_exemptions: bool = True
                     ) -> tuple[Plan, str]:
    """The export plan and how the configuration is shown in the header."""
    if config_file is not None and not Path(config_file).is_file():
        raise PolicyError(f"{config_file}: no such configuration file")
    try:
        path = Path(config_file) if config_file is not None else find_config(["."])
        project = load_config(path, rules) if path is not None else default_config()
    except ConfigError as error:
        raise PolicyError("\n".join(str(p) for p in error.problems)) from None
    chosen = choose_rules(rules, project, CliOptions())
    plan = Plan(
        rules=chosen,
        options={rid: dict(rc.options) for rid, rc in project.rules.items() if rc.options},
        severities={rid: rc.severity for rid, rc in project.rules.items() if rc.severity is not None},
        settings=project.settings,
        exemptions=list(project.exemptions),
        components=builtin_components() if default_exemptions else (),
        roles=default_exemptions,
        fail_on=project.fail_on or "warning",
    )
    shown = path.as_posix() if path is not None else "none found, the defaults"
    return plan, shown


def export(rules: Mapping[str, Rule], output_format: str, action: str, config_file: str | None = None,
           default_exemptions: bool = True) -> str:
    if output_format not in ("vap", "kyverno"):
        raise PolicyError(f"--format: {output_format!r} is not one of vap, kyverno")
    if action not in ("deny", "warn", "audit"):
        raise PolicyError(f"--action: {action!r} is not one of deny, warn, audit")
    plan, shown = plan_from_config(rules, config_file, default_exemptions)
    if not plan.exported():
        raise PolicyError("no enabled rule has an admission form: nothing to export")
    return export_text(plan, documents(plan, output_format, action), output_format, action, shown)
