"""Which rules run: defaults, `--select`, `--extend-select`, `--ignore` (ruff-like).

A code may be a full rule id (GPU003), a prefix (GPU0, GPU1), a rule name
(visible-devices-env) or ALL. `--select` replaces the default set; a rule that
is off by default runs only when selected explicitly (by id, name or prefix).
"""

from __future__ import annotations

from typing import Iterable

from gpulint.api import Rule


class SelectionError(ValueError):
    pass


def split_codes(values: Iterable[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or ():
        out.extend(code.strip() for code in value.split(",") if code.strip())
    return out


def _matches(code: str, rule: Rule) -> bool:
    upper = code.upper()
    return upper == "ALL" or rule.id.startswith(upper) or code == rule.name


def _check_known(codes: list[str], rules: dict[str, Rule], option: str) -> None:
    for code in codes:
        if not any(_matches(code, rule) for rule in rules.values()):
            raise SelectionError(f"{option}: unknown rule code {code!r} (see `gpulint rules`)")


def select_rules(rules: dict[str, Rule], select: list[str] | None = None,
                 extend_select: list[str] | None = None, ignore: list[str] | None = None) -> list[Rule]:
    select = select or []
    extend_select = extend_select or []
    ignore = ignore or []
    _check_known(select, rules, "--select")
    _check_known(extend_select, rules, "--extend-select")
    _check_known(ignore, rules, "--ignore")
    chosen = []
    for rule in rules.values():
        if select:
            on = any(_matches(code, rule) for code in select)
        else:
            on = rule.enabled_by_default
        on = on or any(_matches(code, rule) for code in extend_select)
        if any(_matches(code, rule) for code in ignore):
            on = False
        if on:
            chosen.append(rule)
    return chosen
