"""The engine: strings the stages together for one scan, in one process or several.

`run(ScanRequest(...)) -> ScanOutcome` is the library's entry point (request.py, runner.py).
"""

from __future__ import annotations

from gpulint.scan.request import RequestError, ScanObserver, ScanOutcome, ScanRequest

__all__ = ["RequestError", "ScanObserver", "ScanOutcome", "ScanRequest", "run"]


def run(request: ScanRequest) -> ScanOutcome:
    """Run the scan `request` asks for (see runner.run). Raises RequestError for a request that cannot run."""
    from gpulint.scan.runner import run as run_request

    return run_request(request)
