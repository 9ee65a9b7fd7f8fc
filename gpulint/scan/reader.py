"""Reading inputs: each file's bytes once, charts and kustomizations rendered once.

The index pass hands the bytes (and the ConfigMap/Secret documents it parsed) of
small files to the scan through the reader, so a file is never read twice.

Renders run in the background, several at once (start_renders: threads, each
waiting on its `helm` or `kustomize` process), while the scan reads its other
inputs; `rendered` hands each over in the scan's order, the same result as a
render made then. Identical chart renders of the scan run once (render.tools.SharedRuns).
"""

from __future__ import annotations

import io
import sys
import time
from typing import IO, TYPE_CHECKING, Any

from gpulint.config.render import RenderOptions
from gpulint.inputs.discovery import Input
from gpulint.load import decode as decode_mod
from gpulint.load.decode import read_small_file
from gpulint.load.yamlload import ParsedChunks
from gpulint.results.inputkind import InputKind

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from gpulint.render import Rendered
    from gpulint.render.tools import SharedRuns



class InputReader:
    """Opens inputs; stdin can only be read once, so it is kept (on disk when large).

    Charts and kustomizations are rendered once, for the index pass and the scan.
    The bytes of small files the index pass reads are kept (up to CACHE_MAX in
    all) and handed to the scan, which then does not open them again.
    """

    CACHE_MAX = 64 << 20
    # The documents the index pass parsed (ConfigMaps, Secrets) are kept for the
    # scan too, up to this many characters in all of those the index does not
    # hold anyway (a large ConfigMap's: the index keeps its text only); their
    # data takes a few times the size of their text.
    PARSED_MAX = 16 << 20

    def __init__(self, render_options: RenderOptions | None = None) -> None:
        self._stdin: IO[bytes] | None = None
        self._render_options = render_options or RenderOptions()
        self._rendered: dict[tuple, Rendered] = {}
        self._kept: dict[str, bytes] = {}
        self._kept_size = 0
        self._parsed: dict[str, ParsedChunks] = {}
        self._split: dict[str, list] = {}
        self._parsed_size = 0
        self._pending: dict[tuple, Future] = {}     # renders started in the background, not handed over yet
        self._pool: ThreadPoolExecutor | None = None
        self._shared: SharedRuns | None = None

    @property
    def render_options(self) -> RenderOptions:
        """How this reader renders charts and kustomizations (a fix's re-render uses the same)."""
        return self._render_options

    # --- renders ---------------------------------------------------------------------------

    def start_renders(self, inputs: list[Input], workers: int) -> None:
        """Render the charts and kustomizations of `inputs` in the background, in their order,
        `workers` at a time (each a thread waiting on its renderer's process)."""
        todo: dict[tuple, Input] = {}
        for item in inputs:
            key = (str(item.real), item.values)
            if item.kind.rendered and key not in self._rendered and key not in self._pending:
                todo.setdefault(key, item)
        if not todo:
            return
        from concurrent.futures import ThreadPoolExecutor

        from gpulint.render import tools

        tools.resume_running()
        shared = self._runs()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="gpulint-render")
        for key, item in todo.items():
            self._pending[key] = self._pool.submit(self._render, item, shared)

    def finish_renders(self, interrupted: bool = False) -> None:
        """Wait until no render runs in the background (before a fork: no thread may run then; the
        finished ones are still handed over). `interrupted`: the scan stops, its renderers are killed."""
        if self._pool is None:
            return
        from gpulint.render import tools

        if interrupted:
            tools.stop_running()
        try:
            self._pool.shutdown(wait=True, cancel_futures=interrupted)
        finally:
            self._pool = None
            if interrupted:
                self._pending.clear()
                tools.resume_running()

    def renders_running(self) -> bool:
        """Whether a render started in the background has not finished yet (scan/overlap.py scans
        plain inputs meanwhile)."""
        return any(not future.done() for future in self._pending.values())

    def render_ready(self, item: Input) -> bool:
        """Whether `rendered(item)` would not wait for its render to finish."""
        key = (str(item.real), item.values)
        future = self._pending.get(key)
        return key in self._rendered or future is not None and future.done()

    def render_started(self, item: Input) -> None:
        """Called when the scan first needs `item`'s render (a hook for progress reports)."""

    def render_done(self, item: Input, seconds: float, failed: bool) -> None:
        """Called when `item`'s render is handed to the scan; `seconds`: how long it took to make."""

    def _runs(self) -> SharedRuns:
        if self._shared is None:
            from gpulint.render.tools import SharedRuns

            self._shared = SharedRuns()
        return self._shared

    def _render(self, item: Input, shared: Any) -> tuple[Rendered, float]:
        """`item` rendered (in any thread), and the seconds it took."""
        from gpulint.render import render

        started = time.monotonic()
        rendered = render(item.kind, item.real, item.display, self._render_options, item.values, shared)
        return rendered, time.monotonic() - started

    def keep_parsed(self, item: Input, chunks: ParsedChunks, size: int, split: list | None = None) -> None:
        """Remember the chunks the index pass parsed in a file whose bytes are kept (`size`: the characters
        of those whose documents the index does not hold anyway), and where it cut the file's text into
        documents (indexing.Split: far smaller than the chunks)."""
        key = str(item.real)
        if key in self._kept and self._parsed_size + size <= self.PARSED_MAX:
            self._parsed[key] = chunks
            if split is not None:
                self._split[key] = split
            self._parsed_size += size

    def parsed(self, item: Input) -> ParsedChunks | None:
        """What keep_parsed kept for `item`, handed over once."""
        return self._parsed.pop(str(item.real), None) if self._parsed else None

    def split(self, item: Input) -> list | None:
        """The split keep_parsed kept for `item`, handed over once."""
        return self._split.pop(str(item.real), None) if self._split else None

    def kept_size(self, item: Input) -> int | None:
        """The size of a file whose bytes are kept (None: not kept)."""
        data = self._kept.get(str(item.real)) if self._kept else None
        return None if data is None else len(data)

    def keep(self, item: Input, data: bytes) -> None:
        """Remember a file's bytes, read whole by the index pass, for the scan."""
        if item.kind is InputKind.MANIFEST and item.real is not None and self._kept_size + len(data) <= self.CACHE_MAX:
            self._kept[str(item.real)] = data
            self._kept_size += len(data)

    def rendered(self, item: Input) -> Rendered:
        """`item` rendered: started in the background (waited for), else made now."""
        key = (str(item.real), item.values)
        if key not in self._rendered:
            self.render_started(item)
            future = self._pending.pop(key, None)
            rendered, seconds = future.result() if future is not None else self._render(item, self._runs())
            self.render_done(item, seconds, rendered.failure is not None)
            if item.values is not None and rendered.problems:
                rendered = self._problems_once(item, rendered)
            if item.values is not None and rendered.failure is not None:
                rendered = self._once(item, rendered)
            self._rendered[key] = rendered
        return self._rendered[key]

    def _once(self, item: Input, rendered: Rendered) -> Rendered:
        """A chart's other render that fails as its defaults do is reported once, with the
        defaults; one that fails on its own says which values it was rendered with."""
        from gpulint.record import replace

        failure = rendered.failure
        assert failure is not None and item.values is not None
        defaults = self.rendered(replace(item, values=None)).failure
        if defaults is not None and (defaults.message, defaults.file, defaults.span) == (
                failure.message, failure.file, failure.span):
            return replace(rendered, failure=replace(failure, repeat=True))
        message = f"{failure.message} (rendered with {item.values.label})"
        return replace(rendered, failure=replace(failure, message=message))

    def _problems_once(self, item: Input, rendered: Rendered) -> Rendered:
        """Problems a chart's other render shares with its defaults (dependencies left out, a
        stand-in version) are reported once, with the defaults."""
        from gpulint.record import replace

        assert item.values is not None
        said = {(p.message, p.file, p.span) for p in self.rendered(replace(item, values=None)).problems}
        return replace(rendered, problems=[p for p in rendered.problems
                                           if (p.message, p.file, p.span) not in said])

    def small(self, item: Input) -> bytes | None:
        """The bytes of a manifest whole, when small: kept ones (handed over once) or read
        at once from a small regular file; None when it is to be read as a stream (open)."""
        if item.kind is not InputKind.MANIFEST or item.real is None:
            return None
        data = self._hand_over(item)
        return data if data is not None else read_small_file(item.real)

    def open(self, item: Input) -> IO[bytes]:
        """A binary stream of the input, positioned at its start, for a `with` block
        (a plain object, not a generator: the scan opens every input twice)."""
        if item.kind is InputKind.STDIN:
            if self._stdin is None:
                import shutil
                import tempfile

                spool = tempfile.SpooledTemporaryFile(max_size=decode_mod.WHOLE_MAX)
                shutil.copyfileobj(sys.stdin.buffer, spool)
                self._stdin = spool  # type: ignore[assignment]
            assert self._stdin is not None
            self._stdin.seek(0)
            return _Kept(self._stdin)  # type: ignore[return-value]
        assert item.real is not None
        data = self._hand_over(item)
        return io.BytesIO(data) if data is not None else open(item.real, "rb")

    def _hand_over(self, item: Input) -> bytes | None:
        """The kept bytes of `item`, handed over once (None: not kept)."""
        data = self._kept.pop(str(item.real), None) if self._kept else None
        if data is not None:
            self._kept_size -= len(data)
        return data

    def read(self, item: Input) -> bytes:
        with self.open(item) as stream:
            return stream.read()


class _Kept:
    """A stream handed out for a `with` block that leaves it open (stdin, read again later)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def __enter__(self) -> IO[bytes]:
        return self.stream

    def __exit__(self, *exc: object) -> None:
        return None
