"""The mapper of Helm output read from a file or stdin, made without importing Helm's machinery.

`helm template ... | gpulint scan -` (or such output saved to a file) maps a
finding back to its chart only where the chart sits next to the working
directory (render/helm.py's `find_local_chart`). Most such streams have none
there, yet building the mapper imported render/helm.py and with it the renderer
(subprocess, tempfile, shutil, hashlib): about 80 million instructions, 3 % of
a 1,000-document cold scan that holds one such stream. So the mapper is made
when a finding's chart may be found, and a stream without one maps nothing, as
the mapper would have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpulint.render.base import chart_dirs

if TYPE_CHECKING:
    from gpulint.config.render import RenderOptions
    from gpulint.model.objects import KubeObject
    from gpulint.render.base import Mapper
    from gpulint.results.findings import MappedLocation


def source_mapper(text: str, options: RenderOptions) -> Mapper:
    """A mapper for Helm output; values files and --set given are read now, as Helm's mapper
    reads them when it is made."""
    if options.values or options.sets:
        from gpulint.render.helm import source_mapper as helm_source_mapper

        return helm_source_mapper(text, options)
    return _WhenChartNearby(text, options)


class _WhenChartNearby:
    """render/helm.py's mapper, made the first time a finding's chart may be next to the working
    directory (a Chart.yaml where it looks); until then no finding maps, as with that mapper."""

    def __init__(self, text: str, options: RenderOptions) -> None:
        self._text = text
        self._options = options
        self._mapper: Mapper | None = None
        self._absent: set[str] = set()  # chart names with no Chart.yaml in their places

    def prepare(self, obj: KubeObject) -> None:
        return None

    def map(self, obj: KubeObject, where: Any) -> list[MappedLocation]:
        if self._mapper is None:
            if not obj.template:
                return []
            name = obj.template.split("/", 1)[0]
            if name in self._absent:
                return []
            if next(chart_dirs(name), None) is None:
                self._absent.add(name)
                return []
            from gpulint.render.helm import source_mapper as helm_source_mapper

            self._mapper = helm_source_mapper(self._text, self._options)
        return self._mapper.map(obj, where)
