"""What rendering hands the engine: text to scan, a mapper back to repo files, or a failure."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterator, Protocol

from gpulint.api import Severity
from gpulint.config.render import DEFAULT_RELEASE, RenderOptions
from gpulint.load.locations import Span
from gpulint.model.objects import KubeObject
from gpulint.record import record
from gpulint.results.findings import MappedLocation, RenderedFrom

if TYPE_CHECKING:
    from pathlib import Path   # imported by the renderers; Helm output read from a file needs none

__all__ = ["DEFAULT_RELEASE", "Mapper", "Rendered", "RenderFailure", "RenderOptions", "rendered_name"]


class Mapper(Protocol):
    """Turns a finding on rendered output into locations in files a human edits."""

    def prepare(self, obj: KubeObject) -> None:
        """Called for every object before rules run (e.g. to restore its origin)."""

    def map(self, obj: KubeObject, where: Any) -> list[MappedLocation]:
        """Template/values/origin locations of the node `where` points at, most specific first."""


@record(eq=True, repr=True)
class RenderFailure:
    # (its repr is part of the result cache's key: scan/cache.py)
    __slots__ = ("message", "file", "span", "status", "text", "line_offset", "repeat", "severity")
    message: str
    file: str          # display path the error is reported at (Chart.yaml, a template, kustomization.yaml)
    span: Span
    status: str        # the input's outcome in the summary
    # The text around `span` in `file` (from file line line_offset + 1), so that a
    # `# gpulint: ignore[GPU010]` comment there applies; None when there is none to read.
    text: str | None
    line_offset: int
    # The same failure as the chart's defaults render, already reported there: one
    # more render of the chart (render/chartvalues.py) only counts in the summary.
    repeat: bool
    # Another severity than the rule's (an info note: what gpulint changed to render, nothing unchecked).
    severity: Severity | None

    def __init__(self, message: str, file: str, span: Span, status: str, text: str | None = None,
                 line_offset: int = 0, repeat: bool = False, severity: Severity | None = None) -> None:
        self.message = message
        self.file = file
        self.span = span
        self.status = status
        self.text = text
        self.line_offset = line_offset
        self.repeat = repeat
        self.severity = severity


@record(eq=True, repr=True)
class Rendered:
    __slots__ = ("display", "text", "mapper", "failure", "problems", "plain", "literal", "sources")
    display: str                    # the name findings on the rendered text carry
    text: str | None
    mapper: Mapper | None
    failure: RenderFailure | None       # nothing was rendered, and why
    # Problems that did not stop the input from being scanned (or that say why it was not
    # rendered while its local files were scanned as they are), reported once each.
    problems: list[RenderFailure]
    # Scanned as plain manifests instead of a build: (display path, real path, text; None: the file's).
    plain: list[tuple[str, Path, str | None]]
    # A chart that did not render: its templates, read as literal text (each action a
    # placeholder, as a loose template is), (display path, real path, None); its failure says so.
    literal: list[tuple[str, Path, str | None]]
    # A digest of every file the render read (chart copy, kustomization files): what a finding's
    # template, values or origin lines depend on besides the rendered text (the result cache's key).
    sources: str

    def __init__(self, display: str, text: str | None = None, mapper: Mapper | None = None,
                 failure: RenderFailure | None = None, problems: list[RenderFailure] | None = None,
                 plain: list[tuple[str, Path, str | None]] | None = None,
                 literal: list[tuple[str, Path, str | None]] | None = None, sources: str = "") -> None:
        self.display = display
        self.text = text
        self.mapper = mapper
        self.failure = failure
        self.problems = [] if problems is None else problems
        self.plain = [] if plain is None else plain
        self.literal = [] if literal is None else literal
        self.sources = sources


CHART_FILE = "Chart.yaml"


def chart_places(name: str) -> tuple[str, ...]:
    """Where the chart `name` of piped Helm output is looked for, relative to the working directory.
    None for `.`, `..` or no name: the stream's `# Source:` comments would lead outside it."""
    if name in ("", ".", ".."):
        return ()
    return (".", name, f"charts/{name}")


def chart_dirs(name: str, base: str = ".") -> Iterator[str]:
    """The places of chart `name` (chart_places) that hold a Chart.yaml, under `base`, in turn."""
    return (rel for rel in chart_places(name) if os.path.isfile(os.path.join(base, rel, CHART_FILE)))


def rendered_name(display: str) -> str:
    """`charts/gpu-app` -> `charts/gpu-app (rendered)`: never a temporary path."""
    return RenderedFrom.of(display).name


def join_display(display: str, rel: str) -> str:
    """A path under `display` as the user would write it."""
    import posixpath

    if display in ("", "."):
        return posixpath.normpath(rel)
    return posixpath.normpath(display.rstrip("/") + "/" + rel)
