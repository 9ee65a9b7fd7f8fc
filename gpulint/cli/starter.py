"""The configuration `gpulint init` writes: commented, valid as written, defaults shown.

Generated from the registered rules and the shared settings, so it lists
exactly the rules and lists of the installed gpulint (plugins included).
"""

from __future__ import annotations

import json
from typing import Mapping

from gpulint.api import Rule
from gpulint.knowledge.gpu import DEFAULT_SETTINGS


def starter_config(rules: Mapping[str, Rule]) -> str:
    """A commented configuration that validates as written; defaults shown in comments."""
    out = [
        "# gpulint configuration: https://github.com/gpulint/gpulint#configuration",
        "# Found in the scanned path's directory or any parent up to the repository root.",
        "# Every key is optional. Command-line options override what is set here.",
        "",
        "# Rules to run instead of the defaults: ids (GPU003), prefixes (GPU1), names, or ALL.",
        "# select: [ALL]",
        "# Rules to run in addition (e.g. GPU092 unused-suppression, off by default).",
        "extend-select: []",
        "# Rules not to run.",
        "ignore: []",
        "",
        "# Lowest severity of an active finding that fails the run: error, warning, info or never.",
        "fail-on: warning",
        "",
        "# Paths not to scan: globs relative to this file, matched against the path, its",
        "# parent directories and each name in it (`vendor` skips every vendor/ directory).",
        "exclude: []",
        "",
        "# Findings recorded with `gpulint scan --write-baseline FILE` are suppressed.",
        "# baseline: .gpulint-baseline.json",
        "",
        "# Helm charts are rendered with their defaults and once per chart-testing values",
        "# file (ci/*-values.yaml in the chart). Each entry here adds a render of a chart:",
        "# values files (later ones win) and --set pairs, paths relative to this file.",
        "# charts: [{path: charts/inference, values: [deploy/prod-values.yaml], set: [gpu.count=0]}]",
        "# Seconds one helm or kustomize run may take before it is stopped and reported (GPU010).",
        "# render-timeout: 30",
        "",
        "# Per-rule severity, enabled and options (uncomment `rules:` and the rules to change).",
        "# rules:",
    ]
    for rule in rules.values():
        default = "on" if rule.enabled_by_default else "off by default"
        out.append(f"#   {rule.id}:  # {rule.name} ({default})")
        out.append(f"#     severity: {rule.severity.value}")
        if rule.options:
            out.append("#     options:")
            for name, value in rule.options.items():
                out.append(f"#       {name}: {json.dumps(value)}")
    out += [
        "",
        "# Shared lists the rules consult (shell-style globs). `KEY` replaces the built-in",
        "# list shown here, `extend-KEY` adds to it. Uncomment `settings:` to change one.",
        "# settings:",
    ]
    for key, values in DEFAULT_SETTINGS.items():
        out.extend(_flow_list(f"#   {key}: ", values))
    out += [
        "#   extend-gpu-images: [\"registry.example.com/ml/*\"]",
        "",
        "# Findings this project accepts, each with the reason (required). Matchers are",
        "# globs (or lists of globs): rules, path (as exclude), namespace, kind, name, container, image.",
        "# Uncomment `exemptions:` and an entry to add one.",
        "# exemptions:",
        "#   - rules: [GPU003]",
        "#     namespace: node-acceptance",
        "#     kind: Job",
        "#     name: gpu-burn-*",
        "#     reason: acceptance test run on cordoned nodes before they join the pool",
        "",
    ]
    return "\n".join(out)


def _flow_list(head: str, values: list[str], width: int = 100) -> list[str]:
    """`head["a", "b", ...]` wrapped at `width`, continuation lines aligned under the first item."""
    lines: list[str] = []
    current = head + "["
    indent = "#" + " " * (len(head) - 1 + 1)
    for i, value in enumerate(values):
        item = json.dumps(value) + ("," if i < len(values) - 1 else "")
        if len(current) + len(item) + 1 > width and not current.endswith("["):
            lines.append(current.rstrip())
            current = indent
        current += item + " "
    lines.append(current.rstrip() + "]")
    return lines
