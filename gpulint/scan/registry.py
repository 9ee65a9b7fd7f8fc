"""Rule discovery through the `gpulint.rules` entry-point group (built-ins too).

An entry point may name a `Rule`, a module defining `RULE` (or `RULES`), or a
package whose modules do; a third-party package registers rules the same way
the built-ins are registered.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Iterable

from gpulint.api import Rule
from gpulint.lazypattern import lazy

GROUP = "gpulint.rules"


class RegistryError(Exception):
    """A plugin could not be loaded or declares a clashing rule."""


def _entry_points() -> Iterable:
    found = _read_entry_points(GROUP)
    if found is not None:
        return found
    from importlib.metadata import entry_points

    return entry_points(group=GROUP)


class EntryPoint:
    """An entry point read from an `entry_points.txt` (loads like importlib.metadata's)."""

    _PATTERN = lazy(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")

    def __init__(self, name: str, value: str, group: str) -> None:
        self.name = name
        self.value = value
        self.group = group

    def load(self) -> object:
        if _is_dotted_name(self.value):   # a module (`gpulint.rules`): no pattern to compile
            module, attrs = self.value, ""
        else:
            match = self._PATTERN.match(self.value)
            if match is None:
                raise ValueError(f"malformed entry point {self.value!r}")
            module, attrs = match.group("module"), match.group("attr") or ""
        target: object = importlib.import_module(module)
        for attr in filter(None, attrs.split(".")):
            target = getattr(target, attr)
        return target


def _is_dotted_name(value: str) -> bool:
    """Whether `value` is all `[\\w.]` (what the pattern's `module` group takes), so matches it whole."""
    return value != "" and all(c.isalnum() or c in "._" for c in value)


def _read_entry_points(group: str) -> list[EntryPoint] | None:
    """The `group` entry points of the distributions on sys.path, as importlib.metadata
    finds them (the first distribution of each normalised name wins), without importing
    importlib.metadata (a noticeable part of a small scan's start-up). None when the
    environment holds what this reader does not handle (zipped or egg paths, other
    distribution finders): importlib.metadata then does the work."""
    from importlib.machinery import PathFinder

    if any(hasattr(finder, "find_distributions") and finder is not PathFinder for finder in sys.meta_path):
        return None
    seen: set[str] = set()
    found: list[EntryPoint] = []
    for entry in sys.path:
        root = entry or "."
        if root.lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return None  # a zip file on sys.path
        except OSError:
            continue
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            name = _normalized(low.rpartition(".")[0].partition("-")[0])
            if name in seen:
                continue
            seen.add(name)
            try:
                with open(os.path.join(root, child, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            found.extend(_group_entries(text, group))
    return found


def _normalized(name: str) -> str:
    """re.sub(r"[-_.]+", "_", name), without compiling a pattern for it: each run of separators one `_`."""
    name = name.translate(_SEPARATORS)
    while "__" in name:
        name = name.replace("__", "_")
    return name


_SEPARATORS = str.maketrans("-.", "__")


def _group_entries(text: str, group: str) -> list[EntryPoint]:
    """The `group` section of an entry_points.txt (parsed as importlib.metadata.Sectioned does)."""
    out = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section == group:
            name, _, value = line.partition("=")
            out.append(EntryPoint(name.strip(), value.strip(), group))
    return out


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
            for name in _package_modules(target):
                if name.startswith("_"):
                    continue
                try:
                    module = importlib.import_module(f"{target.__name__}.{name}")
                except Exception as error:
                    raise RegistryError(f"cannot import rule module {target.__name__}.{name}: {error}") from None
                found.extend(_module_rules(module))
        if found:
            return found
    if isinstance(target, (list, tuple)) and all(isinstance(r, Rule) for r in target):
        return list(target)
    raise RegistryError(f"entry point {where} does not name a Rule, a rule module or a rule package")


def _package_modules(package: ModuleType) -> list[str]:
    """The names of a package's modules and subpackages, sorted (pkgutil.iter_modules's
    answer, without importing pkgutil and inspect on every scan's start-up)."""
    from importlib.machinery import all_suffixes

    suffixes = sorted(all_suffixes(), key=len, reverse=True)  # `.cpython-311-x86_64-linux-gnu.so` before `.so`
    names: set[str] = set()
    for directory in package.__path__:
        try:
            entries = os.listdir(directory)
        except NotADirectoryError:  # inside a zip archive: only pkgutil knows how to list it
            import pkgutil

            return sorted({info.name for info in pkgutil.iter_modules(package.__path__)})
        except OSError:
            continue
        for entry in entries:
            suffix = next((s for s in suffixes if entry.endswith(s)), None)
            if suffix is not None:
                stem = entry[: -len(suffix)]
                if stem != "__init__" and stem.isidentifier():
                    names.add(stem)
            elif entry.isidentifier() and os.path.isfile(os.path.join(directory, entry, "__init__.py")):
                names.add(entry)
    return sorted(names)


def _module_rules(module: ModuleType) -> list[Rule]:
    found = []
    rule = getattr(module, "RULE", None)
    if isinstance(rule, Rule):
        found.append(rule)
    found.extend(r for r in getattr(module, "RULES", ()) if isinstance(r, Rule))
    return found
