"""The README documents every rule, and its test command is the one CI runs."""

from __future__ import annotations

import re

from conftest import ROOT

from gpulint.scan.registry import load_rules


def test_readme_rule_table_lists_every_rule() -> None:
    text = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| (GPU\d{3}) \| ([a-z0-9-]+) \| (error|warning|info) \|", text, re.M)
    documented = {rule_id: (name, severity) for rule_id, name, severity in rows}
    registered = {r.id: (r.name, r.severity.value) for r in load_rules().values()}
    assert documented == registered


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"Run the test suite.*?```sh\n(.*?)\n```", readme, re.S)
    assert block is not None
    command = block.group(1).strip()
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in ci_lines
