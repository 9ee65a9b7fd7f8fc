"""Rendering Helm charts and Kustomize directories, and mapping findings back to their sources.

The engine hands a chart or kustomization input to `render()` and gets the
rendered text to scan plus a mapper; every finding on that text is then given
its template/values/origin locations by `mapper.map()`. Output read from stdin
or a file that carries Helm's `# Source:` comments gets a mapper too, when the
chart it came from is found next to the working directory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulint.render.base import (
    DEFAULT_RELEASE,
    Mapper,
    Rendered,
    RenderFailure,
    RenderOptions,
)
from gpulint.results.inputkind import InputKind

if TYPE_CHECKING:
    from gpulint.config.render import ChartValues
    from gpulint.render.tools import SharedRuns

__all__ = ["DEFAULT_RELEASE", "Mapper", "Rendered", "RenderFailure", "RenderOptions", "render",
           "source_mapper"]


def render(kind: InputKind, real: "object", display: str, options: RenderOptions,
           values: "ChartValues | None" = None, shared: "SharedRuns | None" = None) -> Rendered:
    """Render a "chart" or "kustomization" input (a chart with `values`: one of its
    renders besides the defaults, see render/chartvalues.py). `shared`: the scan's
    renderer runs (render.tools.SharedRuns), so that identical chart renders run once;
    a function of a scan may call it from several threads at once."""
    from pathlib import Path

    path = Path(str(real))
    if kind is InputKind.CHART:
        from gpulint.render.helm import render_chart

        return render_chart(path, display, options, values, shared)
    from gpulint.render.kustomizebuild import render_kustomization

    return render_kustomization(path, display, options)


def source_mapper(text: str, options: RenderOptions) -> Mapper | None:
    """A mapper for already-rendered Helm output (stdin or a file), or None without `# Source:`."""
    if "# Source:" not in text:
        return None
    from gpulint.render.piped import source_mapper as piped_source_mapper

    return piped_source_mapper(text, options)
