"""The renders of a chart: its defaults, its chart-testing values files, and configured values.

A repository keeps values for its charts beside them: chart-testing's
`ci/*-values.yaml` inside the chart (each one a render `ct lint` checks), and
values files or --set pairs named in the configuration's `charts:` entries.
A chart is rendered once with its defaults and once per such set of values;
findings of each render carry its own name, e.g.
`charts/app (rendered with ci/gpu-values.yaml)`, and a finding that comes from
an override file points at that file's line (render/values.py).
"""

from __future__ import annotations

import os
from typing import Iterable

from gpulint.config.render import ChartValues, ConfiguredChart
from gpulint.results.findings import RenderedFrom

CI_DIR = "ci"
CI_SUFFIX = "-values.yaml"


def variant_name(display: str, values: ChartValues) -> str:
    """`charts/app (rendered with ci/gpu-values.yaml, --set a=b)`."""
    return RenderedFrom.of(display, values.label).name


def chart_values(real: str, display: str, configured: Iterable[ConfiguredChart] = ()) -> list[ChartValues]:
    """The renders of the chart at `real` besides its defaults, in a fixed order: its
    `ci/*-values.yaml` files by name, then the configuration's entries for it in order.

    Only regular files inside the chart count as ci values (a symlink leading out of
    the scanned tree is not followed).
    """
    out: list[ChartValues] = []
    chart_real = os.path.realpath(real)
    ci_dir = os.path.join(real, CI_DIR)
    try:
        names = sorted(entry.name for entry in os.scandir(ci_dir)
                       if entry.name.endswith(CI_SUFFIX) and entry.is_file(follow_symlinks=False))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(ci_dir, name)
        if not os.path.realpath(path).startswith(chart_real + os.sep):
            continue
        shown = f"{CI_DIR}/{name}" if display in ("", ".") else f"{display.rstrip('/')}/{CI_DIR}/{name}"
        out.append(ChartValues.of((path,), (shown,), label=f"{CI_DIR}/{name}"))
    for entry in configured:
        if os.path.realpath(entry.chart) == chart_real and entry.values not in out:
            out.append(entry.values)
    return out
