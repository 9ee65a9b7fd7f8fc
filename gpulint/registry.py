"""Rule discovery through the `gpulint.rules` entry-point group (built-ins too).

An entry point may name a `Rule`, a module defining `RULE` (or `RULES`), or a
package whose modules do; a third-party package registers rules the same way
the built-ins are registered.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Iterable

from gpulint.api import Rule

GROUP = "gpulint.rules"


class RegistryError(Exception):
    """A plugin could not be loaded or declares a clashing rule."""


def _entry_points() -> Iterable:
    from importlib.metadata import entry_points

    return entry_points(group=GROUP)


def load_rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    names: dict[str, str] = {}
    for ep in sorted(_entry_points(), key=lambda e: (e.name, e.value)):
        try:
            target = ep.load()
        except Exception as error:  # a broken plugin must not look like a gpulint crash
            raise RegistryError(f"cannot load rule plugin {ep.name!r} ({ep.value}): {error}") from None
        for rule in _rules_of(target, ep.value):
            if rule.id in rules:
                raise RegistryError(f"rule {rule.id} is registered twice (again by {ep.value})")
            if rule.name in names:
                raise RegistryError(f"rule name {rule.name!r} is used by {names[rule.name]} and {rule.id}")
            rules[rule.id] = rule
            names[rule.name] = rule.id
    return dict(sorted(rules.items()))


def _rules_of(target: object, where: str) -> list[Rule]:
    if isinstance(target, Rule):
        return [target]
    if isinstance(target, ModuleType):
        found = _module_rules(target)
        if hasattr(target, "__path__"):  # a package: every module in it
            for info in sorted(pkgutil.iter_modules(target.__path__), key=lambda m: m.name):
                if info.name.startswith("_"):
                    continue
                try:
                    module = importlib.import_module(f"{target.__name__}.{info.name}")
                except Exception as error:
                    raise RegistryError(f"cannot import rule module {target.__name__}.{info.name}: {error}") from None
                found.extend(_module_rules(module))
        if found:
            return found
    if isinstance(target, (list, tuple)) and all(isinstance(r, Rule) for r in target):
        return list(target)
    raise RegistryError(f"entry point {where} does not name a Rule, a rule module or a rule package")


def _module_rules(module: ModuleType) -> list[Rule]:
    found = []
    rule = getattr(module, "RULE", None)
    if isinstance(rule, Rule):
        found.append(rule)
    found.extend(r for r in getattr(module, "RULES", ()) if isinstance(r, Rule))
    return found
