"""Compare two gpulint installations' reports, byte for byte.

A refactoring must not change what users see: this runs both on the same
inputs in every report format and says which outputs differ.

    python bench/compare_outputs.py --old /path/to/old/gpulint [--new gpulint] [PATH...]

Default inputs: fixtures/, ../shared/corpus (when present) and the benchmark corpus
(generated into a temporary folder by bench/gen_corpus.py). Exit code 1 when any output differs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("text", "json", "sarif", "github")


def _run(gpulint: str, fmt: str, jobs: str, path: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    done = subprocess.run([gpulint, "scan", "--format", fmt, "--jobs", jobs, "--show-suppressed", path],
                          capture_output=True, env=env, cwd=ROOT, timeout=900)
    return b"exit %d\n" % done.returncode + done.stdout + b"\n--stderr--\n" + done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the gpulint executable to compare against")
    parser.add_argument("--new", default=shutil.which("gpulint") or "gpulint")
    parser.add_argument("--jobs", default="1,2", help="comma-separated --jobs values to compare")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    paths = list(args.paths)
    with tempfile.TemporaryDirectory() as tmp:
        if not paths:
            paths = ["fixtures"]
            if (ROOT.parent / "shared" / "corpus").is_dir():
                paths.append(str(ROOT.parent / "shared" / "corpus"))
            bench = Path(tmp) / "bench"
            subprocess.run([sys.executable, str(ROOT / "bench" / "gen_corpus.py"), str(bench)], check=True,
                           stdout=subprocess.DEVNULL)
            paths.append(str(bench))
        differ = 0
        for path in paths:
            for fmt in FORMATS:
                for jobs in args.jobs.split(","):
                    old, new = _run(args.old, fmt, jobs, path), _run(args.new, fmt, jobs, path)
                    same = old == new
                    differ += not same
                    print(f"{'same' if same else 'DIFFERENT':9} {fmt:6} --jobs {jobs} {path} ({len(new)} bytes)")
    print(f"{differ} outputs differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
