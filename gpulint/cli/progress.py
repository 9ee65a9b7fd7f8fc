"""What a scan tells its user while it runs: a progress line on a terminal, --verbose, --quiet.

On a terminal (stderr is one), a scan that has run for PROGRESS_AFTER seconds
shows one line on stderr, rewritten in place and erased at the end: charts and
kustomizations rendered, files scanned. It is redrawn when something happens
(a render starts or ends, a file is scanned), never from a thread or a signal:
a scan forks workers, and a timer there would write from several processes.
Only the process that made it writes (a forked worker's copy stays silent).

`--verbose` adds a line on stderr per render (with its time) and per file not
scanned (with the reason), on a terminal or not. `--quiet` turns the line off.
Nothing here goes to stdout: the report there stays byte-identical.
"""

from __future__ import annotations

import os
import time
from typing import IO, Any, Iterable

from gpulint.report.safetext import no_commands, printable, printable_path
from gpulint.inputs.discovery import Input
from gpulint.results.findings import (
    STATUS_BINARY,
    STATUS_CHART,
    STATUS_ERROR,
    STATUS_NOT_KUBERNETES,
)
from gpulint.results.inputkind import InputKind
from gpulint.results.scanning import ScanResult

PROGRESS_AFTER = 1.0     # seconds before the line appears: quick scans print nothing extra
REDRAW_EVERY = 0.1       # seconds between redraws at most
_ERASE = "\r\033[K"
_NOT_SCANNED = {STATUS_NOT_KUBERNETES: "not Kubernetes (no apiVersion and kind)", STATUS_BINARY: "binary",
                STATUS_ERROR: "unreadable", STATUS_CHART: "Helm chart not rendered"}


class Progress:
    """The progress line and the --verbose lines of one scan."""

    def __init__(self, stream: IO[str] | None, inputs: list[Input], *, line: bool, verbose: bool,
                 clock: Any = time.monotonic) -> None:
        self.stream = stream
        self.line = line and stream is not None
        self.verbose = verbose and stream is not None
        self.clock = clock
        self.started = clock()
        self.pid = os.getpid()
        self.inputs_found(inputs)
        self.rendered = 0
        self.scanned = 0
        self.current = ""
        self._drawn = 0.0
        self._shown = False

    # --- events (a gpulint.scan.ScanObserver) ---------------------------------------------------

    def inputs_found(self, inputs: list[Input]) -> None:
        self.files = len(inputs)
        self.renders = sum(1 for item in inputs if item.kind.rendered)

    def render_started(self, item: Input) -> None:
        self.current = f"rendering {printable_path(item.display)}"
        self._draw(force=True)

    def render_done(self, item: Input, seconds: float, failed: bool) -> None:
        self.rendered += 1
        self.current = ""
        if self.verbose:
            tool = "helm template" if item.kind is InputKind.CHART else "kustomize build"
            outcome = "failed" if failed else "rendered"
            self._say(f"gpulint: {outcome} {printable_path(item.display)} ({tool}) in {seconds:.2f} s")
        self._draw(force=True)

    def file_scanned(self, done: int, total: int) -> None:
        self.scanned = done
        self._draw()

    def finished(self, result: ScanResult, skipped: Iterable[tuple[str, str]] = ()) -> None:
        """After the scan (and `erase`): --verbose names the files not scanned, with the reason:
        what discovery left out (`skipped`: excludes, special files) and what could not be scanned."""
        if self.verbose:
            left = [(report.file, _NOT_SCANNED[report.status]) for report in result.files
                    if report.status in _NOT_SCANNED]
            for path, reason in sorted([*left, *skipped]):
                self._say(f"gpulint: not scanned: {printable_path(path)}: {printable(reason)}")

    # --- drawing -------------------------------------------------------------------------------

    def text(self) -> str:
        parts = []
        if self.renders:
            parts.append(f"{self.rendered}/{self.renders} charts and kustomizations rendered")
        parts.append(f"{self.scanned}/{self.files} files scanned")
        if self.current:
            parts.append(self.current)
        return "gpulint: " + ", ".join(parts)

    def _draw(self, force: bool = False) -> None:
        if not self.line or os.getpid() != self.pid:
            return
        now = self.clock()
        if now - self.started < PROGRESS_AFTER or (not force and now - self._drawn < REDRAW_EVERY):
            return
        self._drawn = now
        self._shown = True
        self._write(_ERASE + self.text())

    def erase(self) -> None:
        """Take the progress line away (before the report, or when the scan fails)."""
        self._erase()

    def _erase(self) -> None:
        if self._shown and os.getpid() == self.pid:
            self._write(_ERASE)
            self._shown = False

    def _say(self, message: str) -> None:
        if os.getpid() != self.pid:
            return
        shown = self._shown
        self._erase()
        self._write(no_commands(message) + "\n")     # (names are the tree's: see report/safetext.py)
        if shown:
            self._draw(force=True)

    def _write(self, text: str) -> None:
        assert self.stream is not None
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # stderr went away: the scan goes on without it
            self.line = self.verbose = False
