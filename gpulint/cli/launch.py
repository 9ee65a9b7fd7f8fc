"""The `gpulint` console script: plain scans start without Typer.

`gpulint scan ...` is run by pre-commit on every commit and by CI on every
push; building the Typer application (which imports Click and pydantic) costs
several times what the scan of a small change does. So a command line that
`scanopts.parse` fully understands runs the scan implementation directly;
anything else (other commands, --help, --version, a usage error) goes to the
Typer application in cli.py, which owns all messages about the command line.
Both front ends take the options from the same declaration (scanopts.OPTIONS)
and call the same implementation (scancmd.run_scan), and the outcome of
exceptions mirrors what Typer does with them: exit 130 on Ctrl-C, 1 on a
closed pipe, a one-line internal error otherwise.

A scan run this way ends with os._exit once its output is flushed: the
interpreter's teardown (freeing every module and object) took 8 of the 50 ms a
one-file scan took, and nothing is left for it to do: reports and baselines
are written and closed, worker processes joined, no atexit handler of gpulint's
is pending.
"""

from __future__ import annotations

import errno
import os
import sys


def main() -> None:
    import gc

    # Off from the start: the first collection would go over everything the
    # interpreter's start-up made, and one more before os._exit over all a small
    # scan made (together 4.6 of 44 ms). run_scan turns it on for large inputs.
    gc.disable()
    args = sys.argv[1:]
    values = None
    if args and args[0] == "scan":
        from gpulint.cli import scanopts

        values = scanopts.parse(args[1:])
    if values is None:
        from gpulint.cli.app import main as typer_main

        gc.enable()
        typer_main()
        return
    _exit(_run(values))


def _run(values: dict) -> int:
    try:
        from gpulint.cli.scancmd import echo_err, run_scan

        return run_scan(values)
    except KeyboardInterrupt:
        return 130
    except EOFError:
        from gpulint.cli.scancmd import echo_err

        echo_err("")
        echo_err("Aborted!")
        return 1
    except OSError as error:
        if error.errno != errno.EPIPE:
            return _internal(error)
        _pacify()
        return 1
    except Exception as error:  # never show a traceback to the user
        return _internal(error)


def _exit(code: int) -> None:
    """Flush what the scan printed and leave without the interpreter's teardown."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except OSError as error:  # the reader went away: as with any closed pipe
            if error.errno != errno.EPIPE:
                raise
            code = code or 1
    os._exit(code)


def _internal(error: BaseException) -> int:
    from gpulint.cli.scancmd import EXIT_ERROR, echo_err

    echo_err(f"gpulint: internal error: {type(error).__name__}: {error} — this is a bug; "
             "please report it at https://github.com/gpulint/gpulint/issues")
    return EXIT_ERROR


class _Pacified:
    """Like Click's PacifyFlushWrapper: a stream whose flush ignores a closed pipe."""

    def __init__(self, wrapped: object) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()  # type: ignore[attr-defined]
        except OSError as error:
            if error.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> object:
        return getattr(self.wrapped, name)


def _pacify() -> None:
    sys.stdout = _Pacified(sys.stdout)  # type: ignore[assignment]
    sys.stderr = _Pacified(sys.stderr)  # type: ignore[assignment]


if __name__ == "__main__":
    main()
