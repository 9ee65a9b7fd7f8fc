"""The `gpulint` console script: `gpulint scan` is parsed without building the Typer application.

`gpulint scan` runs on every commit (pre-commit) and every push (CI). Building
the Typer application imports pydantic: measured (medians of 15-21 interleaved
runs), a one-file scan through it took 5.6 to 6 times `python -c "import
ruamel.yaml"`, against 2.5 to 2.7 times this way (the budget is 3). So `scan` goes straight to its argparse command line (scancmd.main),
and everything else (other commands, `gpulint --help`, `--version`) to Typer,
whose `scan` command hands its arguments to the same function.

After a scan the objects left are frozen (gc.freeze) before the interpreter
exits: its final collection otherwise walks every one of them, which took a
tenth to a quarter of a one-file scan (3.0x `import ruamel.yaml` without,
2.7x with, on a loaded machine). Nothing is skipped: atexit handlers
run, streams are flushed and closed as usual.
"""

from __future__ import annotations

import sys

from gpulint.cli import GC_THRESHOLD


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["scan"]:
        import gc

        # Importing the scan makes tens of thousands of objects and no garbage: at the
        # default threshold the collector walked them about thirty times first.
        gc.set_threshold(max(gc.get_threshold()[0], GC_THRESHOLD))
        from gpulint.cli.scancmd import main as scan_main

        code = scan_main(args[1:])
        gc.freeze()
        sys.exit(code)
    from gpulint.cli.app import main as app_main

    app_main()


if __name__ == "__main__":
    main()
