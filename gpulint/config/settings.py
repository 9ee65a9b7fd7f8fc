"""Project configuration: where it is, what it says, and whether it says it right.

A configuration is `.gpulint.yaml` (or `.gpulint.yml`), or the `[tool.gpulint]`
table of a `pyproject.toml`. It is checked twice: first against the JSON Schema
shipped in the package (keys and value types), then against the registered
rules (rule codes, option names and option types), because plugins add rules
the schema cannot know. Every problem names the file, the line and the key.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from gpulint.api import Rule, Severity
from gpulint.config.render import ChartValues, ConfiguredChart
from gpulint.knowledge.gpu import DEFAULT_SETTINGS
from gpulint.lazypattern import lazy
from gpulint.record import record, set_field

if TYPE_CHECKING:  # imported where a configuration file is read: a plain scan needs none of it
    from pathlib import Path

CONFIG_FILES = (".gpulint.yaml", ".gpulint.yml")   # in order of precedence
PYPROJECT = "pyproject.toml"
EXTEND = "extend-"
EXEMPTION_MATCHERS = ("path", "namespace", "kind", "name", "container", "image")

# Where a path of the configuration data was written: (line, column) or None.
Locator = Callable[[tuple, bool], "tuple[int, int] | None"]


@record(frozen=True)
class ConfigProblem:
    """A configuration error at file:line:column."""
    __slots__ = ("file", "line", "column", "message")
    file: str
    line: int | None
    column: int | None
    message: str

    def __init__(self, file: str, line: int | None, column: int | None, message: str) -> None:
        set_field(self, "file", file)
        set_field(self, "line", line)
        set_field(self, "column", column)
        set_field(self, "message", message)

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


class ConfigError(Exception):
    """A configuration gpulint refuses to use (a usage error, exit code 2)."""

    def __init__(self, problems: list[ConfigProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@record
class RuleConfig:
    """The configuration of one rule (None: not set)."""
    __slots__ = ("severity", "enabled", "options")
    severity: Severity | None
    enabled: bool | None
    options: dict[str, Any]

    def __init__(self, severity: Severity | None = None, enabled: bool | None = None,
                 options: dict[str, Any] | None = None) -> None:
        self.severity = severity
        self.enabled = enabled
        self.options = {} if options is None else options


@record(frozen=True)
class Exemption:
    """Findings a project accepts, and why. A matcher left out matches anything."""

    __slots__ = ("reason", "rules", "path", "namespace", "kind", "name", "container", "image")
    reason: str
    rules: frozenset[str] | None          # rule ids; None: every rule
    path: tuple[str, ...] | None          # globs matched as `exclude` is (see path_matches)
    namespace: tuple[str, ...] | None     # globs, any may match
    kind: tuple[str, ...] | None
    name: tuple[str, ...] | None
    container: tuple[str, ...] | None
    image: tuple[str, ...] | None

    def __init__(self, reason: str, rules: frozenset[str] | None = None, path: tuple[str, ...] | None = None,
                 namespace: tuple[str, ...] | None = None, kind: tuple[str, ...] | None = None,
                 name: tuple[str, ...] | None = None, container: tuple[str, ...] | None = None,
                 image: tuple[str, ...] | None = None) -> None:
        set_field(self, "reason", reason)
        set_field(self, "rules", rules)
        set_field(self, "path", path)
        set_field(self, "namespace", namespace)
        set_field(self, "kind", kind)
        set_field(self, "name", name)
        set_field(self, "container", container)
        set_field(self, "image", image)


@record
class ProjectConfig:
    """The project's configuration file, read (or the defaults)."""
    __slots__ = ("file", "root", "select", "extend_select", "ignore", "rules", "settings", "exclude", "fail_on",
                 "exemptions", "baseline", "charts", "render_timeout", "kube_version", "fix", "unsafe_fixes",
                 "fixable", "unfixable")
    file: Path | None                   # None: no configuration, defaults
    root: str | Path                    # relative paths are relative to this (default: the working directory)
    select: list[str] | None
    extend_select: list[str]
    ignore: list[str]
    rules: dict[str, RuleConfig]        # by rule id
    settings: dict[str, list[str]]      # every shared setting, resolved
    exclude: list[str]
    fail_on: str | None
    exemptions: list[Exemption]
    baseline: Path | None
    charts: list[ConfiguredChart]       # extra renders of Helm charts
    render_timeout: int | None          # seconds per helm/kustomize run
    kube_version: str | None            # the Kubernetes version charts are rendered for
    fix: bool                           # `--fix` by default
    unsafe_fixes: bool                  # `--unsafe-fixes` by default
    fixable: list[str] | None           # rule codes whose fixes may apply (None: all)
    unfixable: list[str]

    def __init__(self, file: Path | None = None, root: str | Path | None = None, select: list[str] | None = None,
                 extend_select: list[str] | None = None, ignore: list[str] | None = None,
                 rules: dict[str, RuleConfig] | None = None, settings: dict[str, list[str]] | None = None,
                 exclude: list[str] | None = None, fail_on: str | None = None,
                 exemptions: list[Exemption] | None = None, baseline: Path | None = None,
                 charts: list[ConfiguredChart] | None = None, render_timeout: int | None = None,
                 kube_version: str | None = None, fix: bool = False, unsafe_fixes: bool = False,
                 fixable: list[str] | None = None, unfixable: list[str] | None = None) -> None:
        self.file = file
        self.root = os.getcwd() if root is None else root
        self.select = select
        self.extend_select = [] if extend_select is None else extend_select
        self.ignore = [] if ignore is None else ignore
        self.rules = {} if rules is None else rules
        self.settings = {} if settings is None else settings
        self.exclude = [] if exclude is None else exclude
        self.fail_on = fail_on
        self.exemptions = [] if exemptions is None else exemptions
        self.baseline = baseline
        self.charts = [] if charts is None else charts
        self.render_timeout = render_timeout
        self.kube_version = kube_version
        self.fix = fix
        self.unsafe_fixes = unsafe_fixes
        self.fixable = fixable
        self.unfixable = [] if unfixable is None else unfixable

    def excludes(self, path: Path) -> bool:
        """Whether an `exclude` glob matches `path` (or a directory holding it).

        Globs are matched against the path relative to `root`, each of its
        parent directories, and each name in it, so `vendor` skips every
        `vendor` directory and `k8s/generated/*` one subtree.
        """
        if not self.exclude:
            return False
        return path_matches(path, [_clean_glob(p) for p in self.exclude], self.root)


def path_matches(path: str | Path, patterns: Sequence[str], root: str | Path) -> bool:
    """Whether a glob of `patterns` matches `path` relative to `root`, one of its parent
    directories or one of its names (`exclude` and the exemptions' `path`)."""
    from pathlib import Path

    try:
        rel = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(root)))
    except ValueError:
        return False
    parts = rel.parts
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))] + list(parts)
    return any(fnmatch.fnmatch(c, p) for p in patterns for c in candidates)


def _clean_glob(pattern: str) -> str:
    """`./vendor/` -> `vendor`: globs are relative to the configuration's directory."""
    pattern = pattern.replace("\\", "/").rstrip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern


def default_config(root: str | Path | None = None) -> ProjectConfig:
    return ProjectConfig(root=root or os.getcwd(), settings=resolve_settings({}))


# --- finding the configuration -------------------------------------------------


def find_config(paths: Sequence[str], cwd: Path | None = None) -> Path | None:
    """The configuration nearest to the first scanned path (the current directory for stdin).

    Each directory from there upwards is searched for `.gpulint.yaml`,
    `.gpulint.yml`, then a `pyproject.toml` with a `[tool.gpulint]` table; the
    search stops after the repository root (a directory holding `.git`) or at
    the filesystem root. One configuration applies to the whole run.
    """
    here = os.path.abspath(cwd if cwd is not None else os.getcwd())
    first = next((p for p in paths if p != "-"), None)
    directory = os.path.abspath(os.path.join(here, first)) if first else here
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:  # (os.path, not pathlib: a scan without a configuration never imports it)
        for name in CONFIG_FILES:
            if os.path.isfile(os.path.join(directory, name)):
                return _shown(_inside_repository(os.path.join(directory, name), here), here)
        pyproject = os.path.join(directory, PYPROJECT)
        if os.path.isfile(pyproject) and _has_tool_table(_inside_repository(pyproject, here)):
            return _shown(pyproject, here)
        if os.path.exists(os.path.join(directory, ".git")):
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return None


def _inside_repository(path: str, cwd: str) -> str:
    """`path`, a configuration found in the scanned tree; refused (ConfigError) when it is a symlink
    leading out of its repository (the nearest directory above it holding `.git`, else its own
    directory): the tree is untrusted, and messages about a file outside it would show its content."""
    if not os.path.islink(path):
        return path
    top = directory = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(os.path.join(directory, ".git")):
        parent = os.path.dirname(directory)
        if parent == directory:
            directory = top
            break
        directory = parent
    real, root = os.path.realpath(path), os.path.realpath(directory)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        shown = str(_shown(path, cwd))
        raise ConfigError([ConfigProblem(shown, None, None, f"a symlink to {os.readlink(path)}, outside the "
                                         "repository: not read (name it with --config to use it)")])
    return path


def _shown(path: str, cwd: str) -> Path:
    """Relative to the current directory when inside it, as messages show it."""
    from pathlib import Path

    try:
        return Path(path).relative_to(cwd)
    except ValueError:
        return Path(path)


# A `[tool.gpulint]` table header (compiled when a pyproject.toml is read).
_TOOL_TABLE_RE = lazy(r"^\s*\[\s*tool\s*\.\s*[\"']?gpulint[\"']?\s*[\].]", re.M)


def _has_tool_table(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return False
    return bool(_TOOL_TABLE_RE.search(text))


# --- loading -------------------------------------------------------------------


# The most a configuration found in the scanned tree may set `render-timeout` to (seconds): the
# tree is a pull request's, and an hour per render would let it hold a CI runner that long.
IN_TREE_RENDER_TIMEOUT_MAX = 120


def load_config(path: Path, rules: Mapping[str, Rule], from_tree: bool = False,
                root: Path | None = None) -> ProjectConfig:
    """Read and check the configuration at `path` (YAML, or pyproject.toml). `from_tree`: found in
    the scanned tree (not named with --config), so untrusted: the files it names must be inside its
    repository, and its render-timeout is capped at IN_TREE_RENDER_TIMEOUT_MAX. `root`: the folder
    its relative paths name files in (default: its own folder); a trusted configuration copied out
    of a checkout (--config-root) names files of that checkout, which must then be inside its
    repository too: the checkout may be an untrusted pull request's."""
    display = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        detail = getattr(error, "strerror", None) or str(error)
        raise ConfigError([ConfigProblem(display, None, None, f"cannot read configuration: {detail}")]) from None
    if path.name == PYPROJECT:
        data, locate = _read_pyproject(display, text)
    else:
        data, locate = _read_yaml(display, text)
    from pathlib import Path

    held = from_tree or root is not None
    root = Path(os.path.abspath(root if root is not None else Path(os.path.abspath(path)).parent))
    return parse_config(data, display, locate, root, rules, file=path, from_tree=from_tree, held=held)


def _read_yaml(display: str, text: str) -> tuple[Any, Locator]:
    from gpulint.load.yamlload import Document, LoadError, load_documents

    docs = list(load_documents(text))
    for doc in docs:
        if isinstance(doc, LoadError):
            raise ConfigError([ConfigProblem(display, doc.line, doc.column, doc.message)])
    if not docs:
        return {}, _no_locations
    if len(docs) > 1:
        raise ConfigError([ConfigProblem(display, docs[1].start_line, 1,  # type: ignore[union-attr]
                                         "a configuration file holds a single YAML document")])
    doc = docs[0]
    assert isinstance(doc, Document)
    if doc.problems:
        raise ConfigError([ConfigProblem(display, p.span.line, p.span.column, p.message) for p in doc.problems])

    def locate(path: tuple, key: bool) -> tuple[int, int] | None:
        if key and path:
            span = doc.span(path, key=True)
            if span is not None:
                return span.line, span.column
        while True:
            span = doc.span(path)
            if span is not None:
                return span.line, span.column
            if not path:
                return None
            path = path[:-1]

    return doc.data, locate


def _no_locations(path: tuple, key: bool) -> None:
    return None


def _read_pyproject(display: str, text: str) -> tuple[Any, Locator]:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # 3.10: no TOML parser in the standard library
        if _TOOL_TABLE_RE.search(text):
            raise ConfigError([ConfigProblem(
                display, None, None,
                "[tool.gpulint] in pyproject.toml needs Python 3.11 or later (tomllib); "
                "on Python 3.10 put the configuration in .gpulint.yaml")]) from None
        raise ConfigError([ConfigProblem(display, None, None, "has no [tool.gpulint] table")]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        line, column = (int(match.group(1)), int(match.group(2))) if match else (None, None)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise ConfigError([ConfigProblem(display, line, column, f"invalid TOML: {message}")]) from None
    tool = data.get("tool")
    if not isinstance(tool, dict) or "gpulint" not in tool:
        raise ConfigError([ConfigProblem(display, None, None, "has no [tool.gpulint] table")])
    return tool["gpulint"], _toml_locator(text)


def _toml_locator(text: str) -> Locator:
    """Best effort: the line of the deepest key of `path` inside [tool.gpulint...] tables."""
    lines = text.splitlines()
    header_re = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?")

    def locate(path: tuple, key: bool) -> tuple[int, int] | None:
        names = [str(p) for p in path if isinstance(p, str)]
        section = ""
        first_line = None
        fallback = None
        wanted = ".".join(["tool", "gpulint", *names])
        for number, line in enumerate(lines, start=1):
            header = header_re.match(line)
            if header:
                section = re.sub(r"[\"'\s]", "", header.group(1))
                if section.startswith("tool.gpulint") and first_line is None:
                    first_line = number
                if names and section == wanted:
                    return number, line.index("[") + 1
                continue
            if not section.startswith("tool.gpulint") or not names:
                continue
            found = re.search(rf"(^|[{{,\s])[\"']?{re.escape(names[-1])}[\"']?\s*=", line)
            if found:
                column = found.start() + (1 if found.group(1) else 0) + 1
                if section == ".".join(["tool", "gpulint", *names[:-1]]):
                    return number, column
                fallback = fallback or (number, column)
        if fallback:
            return fallback
        return (first_line, 1) if first_line else None

    return locate


# --- checking ------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def schema() -> dict:
    import json
    from gpulint.load.packaged import read_text

    return json.loads(read_text("gpulint", "schemas/config.schema.json"))


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def parse_config(data: Any, display: str, locate: Locator, root: Path, rules: Mapping[str, Rule],
                 file: Path | None = None, from_tree: bool = False, held: bool | None = None) -> ProjectConfig:
    """Validate configuration data and turn it into a ProjectConfig (`from_tree`: see load_config;
    `held`: the files it names must be inside the repository of `root`, default `from_tree`)."""
    held = from_tree if held is None else held
    if data is None:
        data = {}
    checker = _Checker(display, locate)
    checker.from_tree = from_tree
    for error in _validator().iter_errors(data):
        checker.schema_error(error)
    checker.raise_if_any()

    config = ProjectConfig(file=file, root=root)
    config.select = checker.codes(data, "select", rules) if "select" in data else None
    config.extend_select = checker.codes(data, "extend-select", rules)
    config.ignore = checker.codes(data, "ignore", rules)
    config.fail_on = data.get("fail-on")
    config.exclude = list(data.get("exclude", []))
    if "baseline" in data:
        config.baseline = root / data["baseline"]
        if held:
            checker.held(("baseline",), "`baseline`", str(config.baseline), root)
    config.render_timeout = data.get("render-timeout")
    config.kube_version = data.get("kube-version")
    if from_tree and config.render_timeout is not None:
        config.render_timeout = min(config.render_timeout, IN_TREE_RENDER_TIMEOUT_MAX)
    config.fix = bool(data.get("fix", False))
    config.unsafe_fixes = bool(data.get("unsafe-fixes", False))
    config.fixable = checker.codes(data, "fixable", rules) if "fixable" in data else None
    config.unfixable = checker.codes(data, "unfixable", rules)
    config.rules = checker.rule_configs(data.get("rules", {}), rules)
    config.settings = resolve_settings(data.get("settings", {}))
    config.exemptions = checker.exemptions(data.get("exemptions", []), rules)
    config.charts = checker.charts(data.get("charts", []), root, held)
    checker.raise_if_any()
    return config


def repository_of(directory: str | Path) -> str:
    """The nearest directory holding `.git` at or above `directory`, else `directory` (resolved)."""
    real = os.path.realpath(directory)
    current = real
    while not os.path.exists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return real
        current = parent
    return current


def _relative_name(path: str, root: Path) -> str:
    """`path` as the configuration would write it: relative to its directory (never resolved, so
    a message shows no more of the file system than the configuration itself does)."""
    return os.path.relpath(os.path.abspath(path), os.path.abspath(root))


def _as_shown(path: str) -> str:
    """A configured file as findings name it: relative to the working directory when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def resolve_settings(section: Mapping[str, list]) -> dict[str, list[str]]:
    """Built-in lists, then `KEY` replaces and `extend-KEY` adds (in that order)."""
    settings = {key: list(value) for key, value in DEFAULT_SETTINGS.items()}
    for key in DEFAULT_SETTINGS:
        if key in section:
            settings[key] = [str(v) for v in section[key]]
        for item in section.get(EXTEND + key, ()):
            if item not in settings[key]:
                settings[key].append(str(item))
    return settings


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def dotted(path: Sequence) -> str:
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def _describe_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


_TYPE_WORDS = {"object": "a mapping", "array": "a list", "string": "a string", "boolean": "true or false",
               "integer": "an integer", "number": "a number", "null": "null"}


class _Checker:
    """Collects problems with their positions, so a user sees all of them at once."""

    def __init__(self, display: str, locate: Locator) -> None:
        self.display = display
        self.locate = locate
        self.problems: list[ConfigProblem] = []
        self.from_tree = True   # the configuration is the scanned tree's (else one whose paths name it)

    def add(self, path: tuple, message: str, key: bool = False) -> None:
        where = self.locate(tuple(path), key)
        line, column = where if where else (None, None)
        problem = ConfigProblem(self.display, line, column, message)
        if problem not in self.problems:
            self.problems.append(problem)

    def raise_if_any(self) -> None:
        if self.problems:
            ordered = sorted(self.problems, key=lambda p: (p.line or 0, p.column or 0))
            raise ConfigError(ordered)

    # JSON Schema errors, said in the configuration's own words.
    def schema_error(self, error: Any) -> None:
        path = tuple(error.absolute_path)
        kind = error.validator
        name = dotted(path)
        at = f"`{name}`: " if name else ""
        if kind == "additionalProperties" and isinstance(error.instance, dict):
            allowed = sorted(error.schema.get("properties", {}))
            for key in error.instance:
                if key in allowed:
                    continue
                import difflib

                hint = difflib.get_close_matches(str(key), allowed, n=1)
                suggestion = f"; did you mean `{hint[0]}`?" if hint else f"; known keys: {', '.join(allowed)}"
                place = f" in `{name}`" if name else ""
                self.add(path + (key,), f"unknown key `{key}`{place}{suggestion}", key=True)
        elif kind == "propertyNames" or "propertyNames" in error.schema_path:
            self.add(path + (error.instance,), f"`{error.instance}` in `{name}` is not a rule id or name", key=True)
        elif kind == "required":
            for key in error.validator_value:
                if isinstance(error.instance, dict) and key not in error.instance:
                    self.add(path, f"{at}missing required key `{key}`")
        elif kind == "minProperties" and len(path) == 2 and path[0] == "exemptions":
            self.add(path, f"{at}an exemption needs at least one of rules, {', '.join(EXEMPTION_MATCHERS)} "
                           "besides its reason (to accept a finding everywhere, ignore its rule)")
        elif kind == "type":
            expected = error.validator_value
            words = " or ".join(_TYPE_WORDS.get(t, t) for t in (expected if isinstance(expected, list) else [expected]))
            if not path:
                self.add(path, f"the configuration must be a mapping of keys, not {_describe_type(error.instance)}")
            else:
                self.add(path, f"{at}expected {words}, got {_describe_type(error.instance)}")
        elif kind == "enum":
            choices = ", ".join(str(c) for c in error.validator_value)
            import json

            self.add(path, f"{at}{json.dumps(error.instance)} is not one of {choices}")
        elif kind == "pattern" and path and path[-1] == "reason":
            self.add(path, f"{at}the reason must not be empty")
        elif kind == "pattern":
            self.add(path, f"{at}{error.instance!r} is not a rule code (an id such as GPU003, a prefix "
                           "such as GPU1, a rule name, or ALL)")
        elif kind in ("minLength", "minItems"):
            self.add(path, f"{at}must not be empty")
        elif kind == "anyOf":
            self.add(path, f"{at}expected a glob or a non-empty list of globs, got {_describe_type(error.instance)}")
        else:
            self.add(path, f"{at}{error.message}")

    # Checks that need the registered rules.
    def codes(self, data: Mapping, key: str, rules: Mapping[str, Rule], base: tuple = ()) -> list[str]:
        from gpulint.config.selection import SelectionError, select_rules

        values = [str(v) for v in data.get(key, [])]
        for i, code in enumerate(values):
            try:
                select_rules(dict(rules), [code])
            except SelectionError:
                self.add(base + (key, i), f"`{dotted(base + (key,))}`: unknown rule code `{code}` "
                                          "(see `gpulint rules`)")
        return values

    def rule_configs(self, section: Mapping, rules: Mapping[str, Rule]) -> dict[str, RuleConfig]:
        by_name = {rule.name: rule for rule in rules.values()}
        out: dict[str, RuleConfig] = {}
        for code, entry in section.items():
            rule = rules.get(str(code).upper()) if str(code).upper().startswith("GPU") else by_name.get(code)
            if rule is None:
                import difflib

                hint = difflib.get_close_matches(str(code), [*rules, *by_name], n=1)
                suggestion = f"; did you mean `{hint[0]}`?" if hint else " (see `gpulint rules`)"
                self.add(("rules", code), f"`rules`: unknown rule `{code}`{suggestion}", key=True)
                continue
            if rule.id in out:
                self.add(("rules", code), f"`rules`: {rule.id} ({rule.name}) is configured twice", key=True)
                continue
            entry = entry or {}
            options = dict(entry.get("options", {}))
            for option, value in options.items():
                where = ("rules", code, "options", option)
                if option not in rule.options:
                    known = ", ".join(f"`{o}`" for o in rule.options) or "none"
                    self.add(where, f"`{dotted(where)}`: {rule.id} ({rule.name}) has no option `{option}`; "
                                    f"its options: {known}", key=True)
                elif not _same_type(rule.options[option], value):
                    default = rule.options[option]
                    self.add(where, f"`{dotted(where)}`: expected {_describe_type(default)} "
                                    f"(default {_json(default)}), got {_describe_type(value)}")
            severity = entry.get("severity")
            out[rule.id] = RuleConfig(
                severity=Severity(severity) if severity else None,
                enabled=entry.get("enabled"),
                options=options,
            )
        return out

    def held(self, where: tuple, what: str, path: str, root: Path) -> bool:
        """Whether `path`, named by a configuration found in the scanned tree, resolves inside that
        tree's repository; else a problem (the tree is untrusted: a chart's template could echo a
        values file from anywhere, a runner's credentials included, into a finding)."""
        repository = repository_of(root)
        real = os.path.realpath(path)
        if real == repository or real.startswith(repository.rstrip(os.sep) + os.sep):
            return True
        why = ("a configuration found in the scanned tree names files inside it only (give a trusted one with "
               "--config)" if self.from_tree else "--config-root names a checkout, which may be untrusted: the "
               "configuration names files inside its repository only")
        self.add(where, f"{what}: {_relative_name(path, root)} is outside the repository; {why}")
        return False

    def charts(self, items: list, root: Path, from_tree: bool = False) -> list[ConfiguredChart]:
        """`charts:` entries; the chart and its values files must exist (relative to `root`), and,
        in a configuration from the scanned tree, be inside its repository."""
        out = []
        for i, item in enumerate(items):
            chart = os.path.join(root, item["path"])
            if from_tree and not self.held(("charts", i, "path"), f"`charts[{i}].path`", chart, root):
                continue
            if not os.path.isfile(os.path.join(chart, "Chart.yaml")):
                self.add(("charts", i, "path"), f"`charts[{i}].path`: {item['path']} is no chart directory "
                         "(no Chart.yaml in it)")
                continue
            files, shown = [], []
            for j, name in enumerate(item.get("values", [])):
                path = os.path.join(root, name)
                if from_tree and not self.held(("charts", i, "values", j), f"`charts[{i}].values[{j}]`", path, root):
                    continue
                if not os.path.isfile(path):
                    self.add(("charts", i, "values", j), f"`charts[{i}].values[{j}]`: no such file: {name}")
                files.append(path)
                shown.append(_as_shown(path))
            out.append(ConfiguredChart(os.path.abspath(chart),
                                       ChartValues.of(tuple(files), tuple(shown), tuple(item.get("set", [])))))
        return out

    def exemptions(self, items: list, rules: Mapping[str, Rule]) -> list[Exemption]:
        from gpulint.config.selection import select_rules

        out = []
        for i, item in enumerate(items):
            codes = self.codes(item, "rules", rules, base=("exemptions", i))
            ids = None
            if codes:
                try:
                    ids = frozenset(rule.id for rule in select_rules(dict(rules), codes))
                except ValueError:
                    ids = frozenset()
            matchers = {key: _globs(item[key]) for key in EXEMPTION_MATCHERS if key in item}
            if "path" in matchers:
                matchers["path"] = tuple(_clean_glob(p) for p in matchers["path"])
            out.append(Exemption(reason=item["reason"].strip(), rules=ids, **matchers))
        return out


def _globs(value: str | list) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(str(v) for v in value)


def _same_type(default: Any, value: Any) -> bool:
    """Whether an option value has the type of the rule's default."""
    if default is None:
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, (list, tuple)):
        if not isinstance(value, list):
            return False
        kinds = {type(v) for v in default}
        return not kinds or all(type(v) in kinds for v in value)
    if isinstance(default, dict):
        return isinstance(value, dict)
    return True

