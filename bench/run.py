"""gpulint benchmark: speed as ratios against baselines measured in the same run.

    python bench/run.py [--files N] [--big-docs N] [--repeat N] [--skip-memory] [--check]

Machines here are noisy, so every figure is a ratio against a baseline timed
in the same run, on the same files:

1. end-to-end `gpulint scan --jobs 1` vs the floor: PyYAML's C compose
   (`yaml.compose_all(..., Loader=yaml.CSafeLoader)`) of the same files
   (target: gpulint reaches >= 60 % of the floor's speed);
2. `--jobs N` vs `--jobs 1` on the same corpus (target >= 1.7x on 2 cores);
3. start-up: `gpulint scan one-file.yaml` vs `python -c "import ruamel.yaml"`
   (target <= 1.5x);
4. memory: peak RSS scanning a generated 200 MB multi-document file
   (target < 300 MB);
5. Checkov's kubernetes framework on the same corpus, when `checkov` is
   installed in this environment (never a gpulint dependency).

The corpus comes from bench/gen_corpus.py (deterministic). PyYAML must be
installed in the benchmark environment (`pip install pyyaml`) for the floor.
`--check` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen_corpus import KINDS, generate, workload  # noqa: E402


def _timed(cmd: list[str], repeat: int, env: dict | None = None) -> float:
    """Median wall time of a command (its exit status 0/1 is fine: findings)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return statistics.median(times)


def _floor_seconds(files: list[Path], repeat: int) -> tuple[float, int]:
    """PyYAML C compose of every file, in a fresh interpreter (same footing as gpulint)."""
    script = (
        "import sys, time, yaml\n"
        "files = sys.argv[1:]\n"
        "t = time.perf_counter(); n = 0\n"
        "for f in files:\n"
        "    with open(f, encoding='utf-8') as h: text = h.read()\n"
        "    for node in yaml.compose_all(text, Loader=yaml.CSafeLoader): n += 1\n"
        "print(time.perf_counter() - t, n)\n"
    )
    results = []
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", script, *map(str, files)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"PyYAML floor failed (is pyyaml installed?): {proc.stderr[-1000:]}")
        seconds, docs = proc.stdout.split()
        results.append((float(seconds), int(docs)))
    return statistics.median(r[0] for r in results), results[0][1]


def _peak_rss_mb(cmd: list[str]) -> float:
    """Peak RSS of `cmd`, measured from a fresh parent so no earlier child counts."""
    probe = ("import resource, subprocess, sys\n"
             "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
             "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    proc = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True)
    rc, kib = proc.stdout.split()
    if int(rc) not in (0, 1):
        raise SystemExit(f"memory run failed ({rc}): {proc.stderr[-2000:]}")
    return int(kib) / 1024


def _big_file(path: Path, megabytes: int) -> None:
    import random

    rng = random.Random(11)
    docs = [workload(rng, KINDS[i % 9], i) + "\n" for i in range(200)]
    block = "".join("---\n" + d for d in docs).encode()
    with open(path, "wb") as handle:
        written = 0
        while written < megabytes * 1024 * 1024:
            handle.write(block)
            written += len(block)


def main() -> int:
    parser = argparse.ArgumentParser(description="gpulint benchmark (ratios against same-run baselines)")
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--big-docs", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    gpulint = shutil.which("gpulint")
    if gpulint is None:
        raise SystemExit("gpulint is not on PATH: pip install . first")
    work = Path(tempfile.mkdtemp(prefix="gpulint-bench-"))
    results: list[tuple[str, str, bool | None]] = []
    try:
        corpus = work / "corpus"
        generate(corpus, args.files, args.big_docs)
        files = sorted(p for p in corpus.rglob("*") if p.is_file())
        size_mb = sum(p.stat().st_size for p in files) / 1e6

        floor, docs = _floor_seconds(files, args.repeat)
        single = _timed([gpulint, "scan", "--jobs", "1", "--format", "json", str(corpus)], args.repeat)
        ratio = floor / single
        results.append((f"end-to-end vs PyYAML C compose ({docs} docs, {len(files)} files, {size_mb:.0f} MB)",
                        f"{ratio:.2f} of floor speed ({docs / floor:.0f} vs {docs / single:.0f} docs/s)",
                        ratio >= 0.60))

        parallel = _timed([gpulint, "scan", "--jobs", str(args.jobs), "--format", "json", str(corpus)], args.repeat)
        speedup = single / parallel
        results.append((f"--jobs {args.jobs} vs --jobs 1", f"{speedup:.2f}x",
                        speedup >= 1.7 if args.jobs >= 2 else None))

        one = corpus / "manifests" / "deployment" / "00000.yaml"
        base = _timed([sys.executable, "-c", "import ruamel.yaml"], max(10, args.repeat * 5))
        start = _timed([gpulint, "scan", str(one)], max(10, args.repeat * 5))
        results.append(("start-up: scan one file vs `import ruamel.yaml`",
                        f"{start / base:.2f}x ({start * 1000:.0f} ms vs {base * 1000:.0f} ms)",
                        start / base <= 1.5))

        if not args.skip_memory:
            big = work / "big.yaml"
            _big_file(big, 200)
            rss = _peak_rss_mb([gpulint, "scan", "--jobs", "1", "--format", "json", str(big)])
            results.append(("peak RSS scanning a 200 MB file", f"{rss:.0f} MB", rss < 300))

        checkov = shutil.which("checkov")
        if checkov:
            seconds = _timed([checkov, "-d", str(corpus), "--framework", "kubernetes", "--quiet", "--compact"], 1)
            results.append(("Checkov kubernetes framework, same corpus", f"gpulint is {seconds / single:.1f}x faster",
                            None))
        else:
            results.append(("Checkov", "not installed (pip install checkov in the bench venv to compare)", None))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {sys.platform}")
    width = max(len(r[0]) for r in results)
    missed = False
    for name, value, ok in results:
        mark = "" if ok is None else ("  ok" if ok else "  MISSED")
        missed |= ok is False
        print(f"{name:<{width}}  {value}{mark}")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
