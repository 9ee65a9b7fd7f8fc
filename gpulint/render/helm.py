"""Helm charts: render with `helm template`, map rendered objects back to templates and values.

Rendering is offline: gpulint never runs `helm dependency update`, so a chart
whose dependencies are not in `charts/` is rendered without them (chartfix.py),
and Helm's configuration lives in a temporary directory. Helm writes
`# Source: <chart>/templates/<file>` before each document; that names the
template, and the chart tree on disk turns it into a repository path.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Any, Callable

from gpulint.api import KeyAt, Severity, TextAt, ValueAt
from gpulint.config.render import ChartValues
from gpulint.lazypattern import lazy
from gpulint.load.locations import Span
from gpulint.load.regular import read_regular
from gpulint.load.yamlload import Document, load_documents
from gpulint.model.objects import KubeObject, helm_source
from gpulint.record import replace
from gpulint.render.base import (
    CHART_FILE,
    Rendered,
    RenderFailure,
    RenderOptions,
    chart_dirs,
    join_display,
    rendered_name,
)
from gpulint.render.chartvalues import variant_name
from gpulint.render.boundary import inside, repository_root
from gpulint.render.chartcopy import copy_chart
from gpulint.render.chartfix import STAND_IN, ChartFile, ChartFix, Dependency, apply, learn
from gpulint.render.helmschema import remote_schema_reference
from gpulint.render.mapping import TemplateMapper
from gpulint.render.overlay import edited
from gpulint.render.template import Template
from gpulint.render.tools import (
    RunResult,
    SharedRuns,
    ToolMissing,
    real_path,
    replace_paths,
    run,
    scratch_dir,
    value_at,
    which,
)
from gpulint.render.values import (
    SetEntry,
    ValuesChain,
    ValuesFile,
    parse_set,
    read_values_file,
)
from gpulint.results.findings import STATUS_CHART, MappedLocation

INSTALL_HINT = ("install Helm 3 (https://helm.sh/docs/intro/install/) or pass --helm PATH, "
                "or render it yourself: `helm template RELEASE {chart} | gpulint scan -`")
_TEMPLATE_ERROR_RE = lazy(r"template: ([^:\s]+):(\d+):(\d+):")
# `fail` and `required`: execution error at (gpu-app/templates/x.yaml:3:4): message
_MISSING_DEPENDENCY_RE = lazy(r"missing in charts/ directory: ([^;\n]+)")
_EXECUTION_ERROR_RE = lazy(r"execution error at \(([^:\s()]+):(\d+):(\d+)\)")
TEMPLATE_READ_MAX = 16 << 20    # a chart file larger than this is not read for mapping
_PARSE_ERROR_RE = lazy(r"(?:YAML parse error on|error converting YAML to JSON.*? in) ([^:\s]+)")


# --- the chart on disk ----------------------------------------------------------


class Chart:
    """A chart directory: its name, values, subcharts and templates."""

    def __init__(self, real: Path, display: str, repository: Path | None = None) -> None:
        self.real = real
        self.display = display
        self.repository = repository or repository_root(real)   # nothing outside it is read
        self.name = (_chart_name(real) if self.readable(real / CHART_FILE) else None) or real.name
        self._subcharts: dict[str, Chart] | None = None
        self._templates: dict[Path, Template] = {}
        self._values: ValuesFile | None = None
        self._helpers: dict[str, tuple[Template, tuple[int, int]]] | None = None

    def subcharts(self) -> dict[str, "Chart"]:
        """Unpacked subcharts in charts/, by chart name and by the alias a dependency gives one
        (archives cannot be mapped). Helm names an aliased subchart's templates and values by
        its alias (`parent/charts/<alias>/templates/x.yaml`); its files stay in its own folder."""
        if self._subcharts is None:
            self._subcharts = {}
            charts_dir = self.real / "charts"
            if charts_dir.is_dir():
                for entry in sorted(charts_dir.iterdir()):
                    if (entry / CHART_FILE).is_file() and self.readable(entry):
                        sub = Chart(entry, join_display(self.display, f"charts/{entry.name}"), self.repository)
                        self._subcharts.setdefault(sub.name, sub)
            for alias, name in self._aliases():
                sub = self._subcharts.get(name)
                if sub is not None and alias not in self._subcharts:
                    aliased = Chart(sub.real, sub.display, self.repository)
                    aliased.name = alias
                    self._subcharts[alias] = aliased
        return self._subcharts

    def _aliases(self) -> list[tuple[str, str]]:
        """(alias, chart name) of the dependencies Chart.yaml gives an alias."""
        path = self.real / CHART_FILE
        if not self.readable(path):
            return []
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        for doc in load_documents(text):
            deps = doc.data.get("dependencies") if isinstance(doc, Document) and isinstance(doc.data, dict) else None
            return [(dep["alias"], dep["name"]) for dep in (deps if isinstance(deps, list) else [])
                    if isinstance(dep, dict) and isinstance(dep.get("alias"), str) and isinstance(dep.get("name"), str)]
        return []

    def readable(self, path: Path) -> bool:
        """Whether `path` (symlinks resolved) is inside the repository."""
        return inside(path, self.repository)

    def values(self) -> ValuesFile:
        if self._values is None:
            path = self.real / "values.yaml"
            shown = join_display(self.display, "values.yaml")
            self._values = read_values_file(path, shown) if self.readable(path) else ValuesFile(shown, None)
        return self._values

    def template(self, path: Path) -> Template | None:
        if path not in self._templates:
            if not self.readable(path):
                return None
            try:
                text = read_regular(path, TEMPLATE_READ_MAX).decode("utf-8", errors="replace")
            except OSError:
                return None
            rel = path.relative_to(self.real).as_posix()
            self._templates[path] = Template(path, join_display(self.display, rel), text)
        return self._templates[path]

    def resolve(self, source: str) -> tuple[list["Chart"], Path] | None:
        """`gpu-app/charts/sub/templates/x.yaml` -> (chart chain top..sub, template file)."""
        parts = source.split("/")
        if not parts or parts[0] != self.name:
            return None
        chain = [self]
        rest = parts[1:]
        while len(rest) >= 2 and rest[0] == "charts":
            sub = chain[-1].subcharts().get(rest[1])
            if sub is None:
                return None
            chain.append(sub)
            rest = rest[2:]
        path = chain[-1].real.joinpath(*rest)
        return (chain, path) if path.is_file() else None

    def helper(self, name: str) -> tuple[Template, tuple[int, int]] | None:
        """Where `define "name"` is: in this chart or any subchart (defines are global)."""
        if self._helpers is None:
            self._helpers = {}
            for chart in self._all_charts():
                templates_dir = chart.real / "templates"
                if not templates_dir.is_dir():
                    continue
                for path in sorted(templates_dir.rglob("*")):
                    if (not path.is_file() or path.suffix not in (".tpl", ".yaml", ".yml", ".txt")
                            or not chart.readable(path)):
                        continue
                    try:
                        if b"define" not in read_regular(path, TEMPLATE_READ_MAX):
                            continue
                    except OSError:
                        continue
                    tpl = chart.template(path)
                    if tpl is None:
                        continue
                    for define, body in tpl.defines().items():
                        self._helpers.setdefault(define, (tpl, body))
        return self._helpers.get(name)

    def _all_charts(self) -> list["Chart"]:
        out = [self]
        for sub in self.subcharts().values():
            out.extend(sub._all_charts())
        return out


def _chart_name(real: Path) -> str | None:
    try:
        text = read_regular(real / CHART_FILE, TEMPLATE_READ_MAX).decode("utf-8", errors="replace")
    except OSError:
        return None
    for doc in load_documents(text):
        if isinstance(doc, Document) and isinstance(doc.data, dict) and isinstance(doc.data.get("name"), str):
            return doc.data["name"]
        break
    return None


# --- rendering ------------------------------------------------------------------


def render_chart(real: Path, display: str, options: RenderOptions, values: ChartValues | None = None,
                 shared: SharedRuns | None = None) -> Rendered:
    """`helm template` of the chart at `real`; `values`: one more render's values files
    and --set pairs (given after the command line's), None for the chart's defaults.

    What keeps Helm from loading the chart offline although its templates are fine (a
    placeholder version, dependencies not in charts/) is changed in the private copy
    (render/chartfix.py) and reported; a chart that still does not render has its
    templates read as literal text (Rendered.literal, defaults render only).

    `shared`: the scan's runs, so that a chart rendered with the same values as another
    render of the scan (the same chart contents, values files of the same contents, the
    same settings) is not rendered again: Helm's output depends on nothing else."""
    name = rendered_name(display) if values is None else variant_name(display, values)
    extra = values or ChartValues()
    chart_file = join_display(display, CHART_FILE)
    repository = repository_root(real, options.scan_roots)
    problems, plain = _root_files(real, display, chart_file)
    chart = Chart(real, display, repository)
    user_files = [read_values_file(Path(v), v) for v in options.values]
    user_files += [read_values_file(Path(f), shown) for f, shown in zip(extra.files, extra.shown)]
    for user_file, path in zip(user_files, (*options.values, *extra.files)):
        user_file.editable = inside(Path(path), repository)   # a fix edits nothing outside the repository

    def not_rendered(failure: RenderFailure) -> Rendered:
        literal = literal_templates(chart) if values is None else []
        return Rendered(name, failure=failure, problems=problems, literal=literal)

    try:
        helm = which(options.helm, "helm")
    except ToolMissing as missing:
        return not_rendered(RenderFailure(
            f"Helm chart not rendered: {missing}; {INSTALL_HINT.format(chart=display)}",
            chart_file, Span(1, 1, 1, 1), STATUS_CHART))
    with scratch_dir() as scratch:
        copied = copy_chart(real, repository, Path(scratch) / "chart")
        # What the copy left out, named (never silently): (files, what one is, what several are, why).
        for left, one, several, why in (
                (copied.outside, "a symbolic link", "symbolic links",
                 "to outside the repository (gpulint reads nothing outside the repository it scans)"),
                (copied.special, "not a regular file", "not regular files",
                 "(a named pipe, socket or device; gpulint reads regular files only)")):
            if left:
                shown = ", ".join(join_display(display, rel) for rel in left)
                problems.append(RenderFailure(f"rendered without {shown}: {several if len(left) > 1 else one} {why}",
                                              chart_file, Span(1, 1, 1, 1), STATUS_CHART))
        argv = [helm, "template", "--namespace", options.namespace or "default"]
        given = [_as_edited(values_file, Path(scratch), i) for i, values_file in enumerate((*options.values, *extra.files))]
        for values_file in given:
            argv += ["--values", values_file]
        for assignment in (*options.sets, *extra.sets):
            argv += ["--set", assignment]
        if options.skip_tests:
            argv.append("--skip-tests")
        if options.kube_version:
            argv += ["--kube-version", options.kube_version]
        remote = remote_schema_reference(copied.root)
        if remote is not None:
            # Helm would fetch it to validate the values: validation is skipped instead.
            if not _supports(helm, "--skip-schema-validation", Path(scratch)):
                return not_rendered(RenderFailure(
                    f"Helm chart not rendered: {remote[0]} references {remote[1]}, which Helm would fetch "
                    "(gpulint never fetches; Helm 3.16 or later renders it without schema validation)",
                    join_display(display, remote[0]), Span(1, 1, 1, 1), STATUS_CHART))
            argv.append("--skip-schema-validation")
        argv += ["--", options.release, str(copied.root)]
        sets = [entry for text in (*options.sets, *extra.sets) for entry in parse_set(text)]
        fix = ChartFix()
        chart_yaml: ChartFile | None = None      # read once Helm refuses the chart (rarely)
        own_namespace: str | None = None         # the namespace of a chart that refuses `default`
        # Each attempt Helm refuses for what the copy can change is followed by one more
        # (a placeholder version hides the missing dependencies until it is replaced).
        for attempt in range(3):
            result = _run_shared(shared, argv, tuple(given), copied, real, options.timeout,
                                 scratch, attempt=attempt, memory=options.memory)
            if result.ok:
                break
            message = replace_paths(result.message, [(str(copied.root), display),
                                                     (scratch, "(temporary directory)"),
                                                     (str(real_path(real)), display)])
            if chart_yaml is None:
                chart_yaml = ChartFile(copied.root)
                conditions = ValuesChain.build([chart.values()], [], user_files, [])
            if own_namespace is None and options.namespace is None and _refuses_namespace(message):
                # gpulint chose `default`, which the chart refuses: render it for a namespace of its own,
                # as `helm install --namespace` would (an explicit --helm-namespace is kept as given).
                own_namespace = _namespace_for(chart.name or real.name)
                argv[argv.index("--namespace") + 1] = own_namespace
                continue
            if not (learn(message, chart_yaml, fix, conditions, sets) and apply(chart_yaml, fix)):
                break
        if own_namespace is not None and result.ok:
            problems.append(RenderFailure(
                f"the chart refuses the namespace `default`, which gpulint renders for unless told: it was "
                f"rendered for namespace {own_namespace!r} instead and checked (give yours with --helm-namespace)",
                chart_file, Span(1, 1, 1, 1), STATUS_CHART, severity=Severity.INFO))
        if chart_yaml is not None:
            problems += _fix_problems(fix, chart_yaml, display)
        if not result.ok:
            return not_rendered(_failure(message, real, display, chart_file, options, repository))
    mapper = HelmMapper(result.stdout, lambda n: chart if n == chart.name else None, user_files, sets)
    return Rendered(name, result.stdout, mapper, problems=problems, plain=plain, sources=copied.digest.hexdigest())


def _refuses_namespace(message: str) -> bool:
    """Whether Helm's error is a chart refusing the namespace it was rendered for (a `fail` naming it)."""
    lower = message.lower()
    return "execution error at" in lower and "namespace" in lower


def _namespace_for(name: str) -> str:
    """A valid namespace (a DNS label) made from a chart's name."""
    label = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63].strip("-")
    return label if label and label != "default" else "gpulint"


def _fix_problems(fix: ChartFix, chart_yaml: ChartFile, display: str) -> list[RenderFailure]:
    """What the private copy changed, each said where it is written: a stand-in version
    (info: everything was checked) and dependencies left out (their manifests were not)."""
    out = []
    for stand_in in fix.stand_ins:
        written = (f"`{stand_in.field}: {stand_in.shown}` in Chart.yaml is not a {stand_in.field} Helm can load "
                   "(a placeholder a release tool fills in?)" if stand_in.shown else
                   f"Chart.yaml has no `{stand_in.field}`, which Helm requires")
        out.append(RenderFailure(
            f"{written}: the chart was rendered with the stand-in {stand_in.field} {STAND_IN} in gpulint's "
            "private copy; its templates were checked as usual",
            join_display(display, CHART_FILE), stand_in.span, STATUS_CHART, text=chart_yaml.text,
            severity=Severity.INFO))
    if fix.left_out:
        first = fix.left_out[0]
        names = ", ".join(dep.name for dep in fix.left_out)
        states = "; ".join(_dependency_state(dep) for dep in fix.left_out)
        text = chart_yaml.text if first.file == CHART_FILE else chart_yaml.req_text
        if all(dep.enabled is False for dep in fix.left_out):
            # Helm would not render them with these values either: nothing went unchecked.
            out.append(RenderFailure(
                f"chart dependencies missing in charts/: {names} ({states}): the chart was rendered without "
                "them, as Helm renders it with these values; values that enable them are checked only once "
                f"they are vendored (`helm dependency build {display}`)",
                join_display(display, first.file), first.span, STATUS_CHART, text=text, severity=Severity.INFO))
            return out
        out.append(RenderFailure(
            f"chart dependencies missing in charts/: {names} ({states}): the chart was rendered without them, "
            "so what they render was not checked; gpulint renders offline and never fetches dependencies: "
            f"run `helm dependency build {display}` first",
            join_display(display, first.file), first.span, STATUS_CHART, text=text))
    return out


def _dependency_state(dep: Dependency) -> str:
    """Whether Helm would render the dependency with these values, and why."""
    if dep.enabled is None:
        return f"{dep.name} is enabled with these values"
    state = "enabled" if dep.enabled else "disabled"
    return f"{dep.name} is {state} by {dep.condition or 'its tags'} with these values"


def literal_templates(chart: Chart) -> list[tuple[str, Path, str | None]]:
    """The files Helm would render of a chart and its unpacked subcharts (all under
    `templates/` but partials, `_*`, and NOTES.txt), to read as literal text."""
    out: list[tuple[str, Path, str | None]] = []
    for each in chart._all_charts():
        templates = each.real / "templates"
        if not templates.is_dir() or not each.readable(templates):
            continue
        for path in sorted(templates.rglob("*")):
            if (path.name.startswith("_") or path.name == "NOTES.txt" or not path.is_file()
                    or not each.readable(path)):
                continue
            out.append((join_display(each.display, path.relative_to(each.real).as_posix()), path, None))
    return out


def _run_shared(shared: SharedRuns | None, argv: list[str], files: tuple[str, ...], copied: Any, real: Path,
                timeout: float, scratch: str, attempt: int = 0, memory: int | None = None) -> RunResult:
    """`helm template` (run()), or the result of an identical run of the scan (`shared`), its
    message naming this run's temporary directory as the identical run's named its own.
    `attempt`: the how-manieth run of this render (a retry runs on a changed copy)."""
    if shared is None:
        return run(argv, None, timeout, Path(scratch), memory)

    def start() -> tuple[RunResult, str]:
        return run(argv, None, timeout, Path(scratch), memory), scratch

    key = (attempt, *_run_key(argv, files, copied))
    result, owner_scratch = shared.run(key, (str(real_path(real)), tuple(map(_real, files))), start)
    if owner_scratch != scratch and result.message:
        result = replace(result, message=result.message.replace(owner_scratch, scratch))
    return result


def _run_key(argv: list[str], files: tuple[str, ...], copied: Any) -> tuple:
    """What `helm template` output depends on: the command line with each values file given by
    its contents and the chart by its copy's digest and directory name (the copy's path, in
    the temporary directory, is the same but for that directory)."""
    contents = {}
    for path in files:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise OSError("not a regular file")     # (a named pipe would stall the read)
            with open(path, "rb") as handle:
                contents[path] = ("values", hashlib.sha256(handle.read()).hexdigest())
        except OSError:
            contents[path] = ("unread", path)       # not shared with another path
    key: list[Any] = []
    for i, arg in enumerate(argv):
        if i > 0 and argv[i - 1] == "--values" and arg in contents:
            key.append(contents[arg])
        elif arg == str(copied.root) and i == len(argv) - 1:
            key.append(("chart", copied.root.name, copied.digest.hexdigest()))
        else:
            key.append(arg)
    return tuple(key)


def _real(path: str) -> str:
    return os.path.realpath(path)


# Files at a chart's root that are the chart's own (not templates Helm would render).
_CHART_OWN = ("chart.yaml", "chart.lock", "requirements.yaml", "requirements.lock", "values.schema.json")


def _root_files(real: Path, display: str,
                chart_file: str) -> tuple[list[RenderFailure], list[tuple[str, Path, str | None]]]:
    """A chart without `templates/` renders nothing: its YAML files at the root (where templates
    were meant to be, or plain manifests) are scanned as they are, and the chart is reported."""
    if (real / "templates").is_dir():
        return [], []
    files = []
    for entry in sorted(real.iterdir()):
        lower = entry.name.lower()
        if (lower.endswith((".yaml", ".yml", ".json")) and lower not in _CHART_OWN
                and not lower.startswith("values") and entry.is_file() and not entry.is_symlink()):
            files.append((join_display(display, entry.name), entry, None))
    if not files:
        return [], []
    names = ", ".join(shown.rsplit("/", 1)[-1] for shown, _path, _text in files[:3]) + (
        f" and {len(files) - 3} more" if len(files) > 3 else "")
    problem = RenderFailure(f"chart has no templates/ directory: Helm renders nothing from it; the YAML "
                            f"files at its root ({names}) were scanned as they are (templates belong in "
                            "templates/)", chart_file, Span(1, 1, 1, 1), STATUS_CHART)
    return [problem], files


def _as_edited(values_file: str, scratch: Path, index: int) -> str:
    """The values file helm is to read: a copy in the scratch directory when a fix under test
    edits it (render/overlay.py), else the file given."""
    data = edited(values_file)
    if data is None:
        return values_file
    copy = scratch / f"edited-values-{index}.yaml"
    copy.write_bytes(data)
    return str(copy)


_SUPPORTED: dict[tuple[str, str], bool] = {}


def _supports(helm: str, flag: str, scratch: Path) -> bool:
    """Whether `helm template` knows `flag` (asked once per helm and flag)."""
    key = (helm, flag)
    if key not in _SUPPORTED:
        result = run([helm, "template", "--help"], None, 10, scratch)
        _SUPPORTED[key] = result.ok and flag in result.stdout
    return _SUPPORTED[key]


def _failure(message: str, real: Path, display: str, chart_file: str, options: RenderOptions,
             repository: Path | None = None) -> RenderFailure:
    chart = Chart(real, display, repository)
    missing = _MISSING_DEPENDENCY_RE.search(message)
    if missing:
        names = missing.group(1).strip()
        return RenderFailure(
            f"helm template failed: chart dependencies missing in charts/: {names} (gpulint renders offline "
            f"and never fetches dependencies: run `helm dependency build {display}` first)",
            chart_file, _dependency_span(real, names.split(",")[0].strip(), chart), STATUS_CHART)
    text = f"helm template failed: {message}{_hint(message, options)}"
    for pattern in (_TEMPLATE_ERROR_RE, _EXECUTION_ERROR_RE):
        match = pattern.search(message)
        if match:
            resolved = chart.resolve(match.group(1))
            if resolved is not None:
                tpl = resolved[0][-1].template(resolved[1])
                if tpl is not None:
                    line, col = int(match.group(2)), int(match.group(3))
                    return RenderFailure(text, tpl.display, Span(line, col, line, col + 1), STATUS_CHART)
    match = _PARSE_ERROR_RE.search(message)
    if match:
        resolved = chart.resolve(match.group(1))
        if resolved is not None:
            tpl = resolved[0][-1].template(resolved[1])
            if tpl is not None:
                return RenderFailure(text, tpl.display, Span(1, 1, 1, 1), STATUS_CHART)
    return RenderFailure(text, chart_file, Span(1, 1, 1, 1), STATUS_CHART)


def _dependency_span(real: Path, name: str, chart: Chart) -> Span:
    """Where Chart.yaml names the dependency `name` (its `name:` value), else its first line."""
    path = real / CHART_FILE
    if chart.readable(path):
        try:
            text = read_regular(path, TEMPLATE_READ_MAX).decode("utf-8", errors="replace")
        except OSError:
            text = ""
        for doc in load_documents(text):
            if isinstance(doc, Document) and isinstance(doc.data, dict):
                deps = doc.data.get("dependencies")
                for i, dep in enumerate(deps if isinstance(deps, list) else []):
                    if isinstance(dep, dict) and dep.get("name") == name:
                        return doc.span(("dependencies", i, "name")) or Span(1, 1, 1, 1)
            break
    return Span(1, 1, 1, 1)


def _hint(message: str, options: RenderOptions) -> str:
    """Which option supplies what a chart refused to render without."""
    lower = message.lower()
    if "incompatible with kubernetes" in lower:
        current = f"Kubernetes {options.kube_version}" if options.kube_version else "helm's default Kubernetes version"
        return f" (rendered for {current}: give the cluster's version with --kube-version or kube-version)"
    if not any(sign in lower for sign in ("execution error at", "nil pointer evaluating", "values don't meet",
                                          "required", "namespace")):
        return ""
    if "namespace" in lower:
        current = options.namespace or "default"
        return f" (rendered for namespace {current!r}: give the chart's namespace with --helm-namespace)"
    return " (the chart needs values: give them with --values FILE or --set KEY=VALUE)"


# --- mapping --------------------------------------------------------------------


class HelmMapper:
    """Maps objects of `helm template` output (one stream) to templates and values."""

    def __init__(self, text: str, chart_for: Callable[[str], Chart | None],
                 user_files: list[ValuesFile], sets: list[SetEntry]) -> None:
        self._text = text
        self._chart_for = chart_for
        self._user_files = user_files
        self._sets = sets
        self._positions: dict[int, tuple[int, int, int, int]] | None = None

    def prepare(self, obj: KubeObject) -> None:
        return None

    def map(self, obj: KubeObject, where: Any) -> list[MappedLocation]:
        if not obj.template or not isinstance(where, (KeyAt, ValueAt, TextAt)):
            return []
        chart = self._chart_for(obj.template.split("/", 1)[0])
        resolved = chart.resolve(obj.template) if chart is not None else None
        if resolved is None:
            return []
        chain, path = resolved
        tpl = chain[-1].template(path)
        if tpl is None:
            return []
        region = self._region(tpl, obj)
        values = ValuesChain.build([c.values() for c in chain], [c.name for c in chain[1:]],
                                   self._user_files, self._sets)
        mapper = TemplateMapper(chain[0].helper, values)
        rel = tuple(where.path)[len(obj.base):]
        target = None
        if isinstance(where, TextAt):
            value = value_at(obj.doc.data, tuple(where.path))
            if isinstance(value, str):
                target = value[where.start:where.end].split("\n", 1)[0] or None
        return mapper.locate(tpl, region, obj.data, rel, target)

    def _region(self, tpl: Template, obj: KubeObject) -> tuple[int, int]:
        """Lines of the template that produced `obj` (a template may emit several documents)."""
        regions = tpl.regions()
        if len(regions) <= 1:
            return regions[0] if regions else (0, len(tpl.lines))
        ordinal, count, kind_ordinal, kind_count = self._position(obj)
        if len(regions) == count:
            return regions[ordinal]
        kind = obj.ref.kind
        with_kind = [r for r in regions if _region_kind(tpl, r) == kind]
        if len(with_kind) == 1:
            return with_kind[0]
        if len(with_kind) == kind_count and kind_count:
            return with_kind[kind_ordinal]
        return (0, len(tpl.lines))

    def _position(self, obj: KubeObject) -> tuple[int, int, int, int]:
        """(n-th document of its template, documents of that template, same for its kind)."""
        if self._positions is None:
            keys: list[tuple[int, str | None, Any]] = []
            for doc in load_documents(self._text):
                if isinstance(doc, Document):
                    kind = doc.data.get("kind") if isinstance(doc.data, dict) else None
                    keys.append((doc.index, helm_source(doc), kind))
            totals: dict[Any, int] = {}
            for _index, source, kind in keys:
                totals[source] = totals.get(source, 0) + 1
                totals[(source, kind)] = totals.get((source, kind), 0) + 1
            seen: dict[Any, int] = {}
            self._positions = {}
            for index, source, kind in keys:
                nth, nth_kind = seen.get(source, 0), seen.get((source, kind), 0)
                self._positions[index] = (nth, totals[source], nth_kind, totals[(source, kind)])
                seen[source], seen[(source, kind)] = nth + 1, nth_kind + 1
        return self._positions.get(obj.doc.index, (0, 1, 0, 1))


def _region_kind(tpl: Template, region: tuple[int, int]) -> str | None:
    lines = [tpl.lines[n] for n in range(*region) if tpl.lines[n].yaml]
    if not lines:
        return None
    level = min(line.key_col for line in lines)
    for line in lines:
        if line.key == "kind" and line.key_col == level and "\x01" not in line.inline_value:
            return line.inline_value.split(" #", 1)[0].strip().strip("\"'")
    return None




# --- piped output ---------------------------------------------------------------


def find_local_chart(name: str, cwd: Path | None = None) -> Chart | None:
    """The chart `name` near the working directory: `.`, `./NAME` or `./charts/NAME`."""
    base = cwd or Path(".")
    for rel in chart_dirs(name, str(base)):
        directory = base / rel
        if _chart_name(directory) == name:
            display = "." if rel == "." else rel
            return Chart(directory, display)
    return None


def source_mapper(text: str, options: RenderOptions) -> HelmMapper:
    """A mapper for Helm output read from a file or stdin (`helm template ... | gpulint scan -`)."""
    cache: dict[str, Chart | None] = {}

    def chart_for(name: str) -> Chart | None:
        if name not in cache:
            cache[name] = find_local_chart(name)
        return cache[name]

    user_files = [read_values_file(Path(v), v) for v in options.values]
    sets = [entry for t in options.sets for entry in parse_set(t)]
    return HelmMapper(text, chart_for, user_files, sets)
