"""gpulint benchmark: speed as ratios against baselines measured in the same run.

    python bench/run.py [--files N] [--big-docs N] [--references N] [--repeat N] [--jobs N] [--memory-mb N]
                        [--skip-memory] [--gpulint PATH] [--checkov PATH] [--corpus DIR] [--check]
                        [--instructions] [--only 7]

Machines here are noisy, so every figure is a ratio against a baseline timed
in the same run, on the same files:

1. end-to-end `gpulint scan --jobs 1` vs the floor: PyYAML's C compose
   (`yaml.compose_all(..., Loader=yaml.CSafeLoader)`) of the same files, timed
   inside a fresh interpreter, start-up excluded (target: gpulint takes at most
   1.7 times as long, "i.e. >= 60 % of the floor's speed" in the issue: 0.588);
   1b. linear cost: CPU time per document (start-up taken off) of a corpus of
   ConfigMaps, Secrets and workloads whose references miss the index
   (gen_corpus.generate_references) at N/4 and N documents (target: the larger
   at most 1.10x the smaller per document; equal work per round, see
   _per_document_growth; --instructions counts instructions with valgrind);
   1c. SARIF vs JSON: the same `--jobs 1` scan written with `--format sarif`
   and with `--format json`, run in turn (target: at most 1.1 times as long);
2. `--jobs N` vs `--jobs 1` on the same corpus (target >= 1.7x with 2 CPUs);
3. start-up: `gpulint scan one-file.yaml` vs `python -c "import ruamel.yaml"`
   (target <= 3x);
4. memory: peak RSS scanning a generated `helm template`-style stream of
   200 MB, 28 % of its documents ConfigMaps (gen_corpus.big_stream; target < 300 MB);
5. Checkov's kubernetes framework on the same corpus, when `checkov` is
   installed (never a gpulint dependency: install it in a separate venv and
   pass --checkov PATH, or have it on PATH);
6. the result cache: an unchanged re-scan vs `--no-cache`, run in turn, in
   wall time (target >= 10x).
2b. the default `--jobs` vs `--jobs 1` on the benchmark corpus and the
   index-lookup corpus of figure 1b (target: never slower).
7. renders: `gpulint scan --no-cache` of a repository-shaped tree
   (gen_corpus.generate_repository: 3 kustomize bases × 12 overlays, 6 small
   charts with chart-testing values, one chart vendored twice, a ci values file
   identical to another, 40 plain manifests) against the sum of the times of
   the renders a scan once ran one after the other (each `helm template` and
   `kubectl kustomize`/`kustomize build` timed alone, in turn, in the same run;
   identical renders counted each time), with `--jobs 1`, the default and
   `--jobs 2` (target: the default never slower than `--jobs 1`). Needs helm
   and kubectl or kustomize on PATH (or in .ci/bin); skipped, saying so, without.
   `--only 7` runs this figure alone.
8. cold first scan: `--no-cache --jobs 1` against the floor of figure 1 on
   first-scan corpora of 1k, 5k, 20k and 50k documents (gen_corpus.generate_cold:
   workloads reading ConfigMaps of other files, scripts in ConfigMaps, JSON lists,
   a large stream; `--cold-sizes`), both timed in turn as processes (start-up
   included on both sides, as the issue's figures were), medians of `--repeat`
   rounds with their spread (target >= 0.60 of the floor's speed at every size),
   the same ratio by user + system CPU time (shown, not judged: it does not grow
   when other processes share the machine), peak RSS; 8c. the floor timed inside its interpreter instead (stricter); and
   8b. the cost per document at the largest size against the smallest, divided
   by the same growth of the floor (timed inside its interpreter) in the same run
   (target within 10 %: a host that slows between the sizes slows both; the
   scan's own growth is shown beside it). `--only 8` runs it alone (`--only 3,8`
   with the start-up figure).

Figures 1-4 pass `--no-cache` (when the gpulint timed has it): they time scans.

The corpus comes from bench/gen_corpus.py (deterministic). PyYAML must be
importable by this Python (`pip install pyyaml`) for the floor. Commands run
with bytecode caching on (PYTHONDONTWRITEBYTECODE removed) after a warm-up
run, as an installed tool runs. `--gpulint` times another gpulint (e.g. an
older version, to compare); `--check` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen_corpus import big_stream, generate, generate_cold, generate_references, generate_repository  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}
ENV["NO_COLOR"] = "1"


def _run(cmd: list[str]) -> float:
    """Wall time of one run (exit status 0/1 is fine: findings)."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return elapsed


def _timed(cmd: list[str], repeat: int) -> float:
    """Median wall time after one warm-up run (which also writes bytecode caches)."""
    _run(cmd)
    return statistics.median(_run(cmd) for _ in range(repeat))


_FLOOR_SCRIPT = (
    "import sys, time, yaml\n"
    "files = sys.argv[1:]\n"
    "t = time.perf_counter(); n = 0\n"
    "for f in files:\n"
    "    with open(f, encoding='utf-8') as h: text = h.read()\n"
    "    for node in yaml.compose_all(text, Loader=yaml.CSafeLoader): n += 1\n"
    "print(time.perf_counter() - t, n)\n"
)


def _floor_run(files: list[Path]) -> tuple[float, int, float, float]:
    """One PyYAML C compose of every file in a fresh interpreter, measured by a fresh parent: the
    seconds inside it (its start-up excluded), the documents, and the wall and user + system CPU
    seconds of the whole process (start-up and `import yaml` included, as a scan's process is timed)."""
    probe = ("import resource, subprocess, sys, time\n"
             "start = time.perf_counter()\n"
             "proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "wall = time.perf_counter() - start\n"
             "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(proc.returncode, wall, usage.ru_utime + usage.ru_stime, proc.stdout.strip())\n"
             "sys.stderr.write(proc.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", probe, sys.executable, "-c", _FLOOR_SCRIPT, *map(str, files)],
                          capture_output=True, text=True, env=ENV)
    fields = proc.stdout.split()
    if len(fields) != 5 or fields[0] != "0":
        raise SystemExit(f"PyYAML floor failed (is pyyaml installed?): {proc.stderr[-1000:]}")
    return float(fields[3]), int(fields[4]), float(fields[1]), float(fields[2])


def _floor_seconds(files: list[Path], repeat: int) -> tuple[float, int, float]:
    """_floor_run after a warm-up, `repeat` times: the median seconds inside the interpreter, the
    documents, and the median wall seconds of the whole process."""
    runs = [_floor_run(files) for _ in range(repeat + 1)]
    return statistics.median(r[0] for r in runs[1:]), runs[0][1], statistics.median(r[2] for r in runs[1:])


def _cpu_seconds(cmd: list[str], times: int = 1) -> float:
    """User + system CPU time of `times` runs of `cmd`, one after another (from a fresh parent:
    only its children count). CPU time, unlike wall time, does not grow when other processes
    share the machine."""
    probe = ("import resource, subprocess, sys\n"
             "for _ in range(int(sys.argv[1])):\n"
             "    rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL).returncode\n"
             "    if rc not in (0, 1): break\n"
             "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(rc, usage.ru_utime + usage.ru_stime)\n")
    proc = subprocess.run([sys.executable, "-c", probe, str(times), *cmd], capture_output=True, text=True, env=ENV)
    rc, seconds = proc.stdout.split()
    if int(rc) not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({rc}): {proc.stderr[-2000:]}")
    return float(seconds)


def _interleaved_cpu(cmds: list[list[str]], repeat: int) -> list[float]:
    """Median CPU seconds of each command, the commands run in turn `repeat` times after a warm-up."""
    for cmd in cmds:
        _cpu_seconds(cmd)
    runs = [[_cpu_seconds(cmd) for cmd in cmds] for _ in range(repeat)]
    return [statistics.median(run[i] for run in runs) for i in range(len(cmds))]


def _per_document_growth(gpulint: str, base_cmd: list[str], work: Path, sizes: tuple[int, int],
                         repeat: int, instructions: bool = False) -> tuple[str, str, bool]:
    """Figure 1b: CPU per document of a scan whose index lookups miss, at two sizes.

    A scan of the first file alone (40 documents) is taken off both: the start-up and
    what loads on first use, so that what is compared is what each further document
    costs; a lookup that scanned the index made the larger corpus cost more per document.

    How it is timed, and why: on a shared machine (2 virtual CPUs, other jobs, time
    stolen by the host) one scan's CPU time varies by 15-30 % from run to run, and a
    longer run meets more of the disturbance than a short one. Timing the two sizes
    once each and taking medians (as this figure first did) reported 0.86x to 1.35x
    for the same code in one afternoon, 1.31x in the README's run, while the
    instructions executed per document (valgrind, below) were 0.996x: the growth
    was the measurement's. So each round now times equal amounts of work: the
    smaller corpus scanned 4 times in a row (as many documents as the larger, as
    long a run) against the larger once, the 40-document scan 4 times for the
    start-up, the three in turn; the figure is the median of the rounds' ratios
    (a round's three runs meet the same load), shown with their range.

    `instructions` (--instructions, needs valgrind): count the instructions each
    scan executes instead (cachegrind, one run each: deterministic, the machine's
    load does not enter; takes minutes)."""
    small, large = sizes
    one = work / "references-one"
    first = generate_references(one, 40)
    dirs = []
    for docs in sizes:
        target = work / f"references-{docs}"
        generate_references(target, docs)
        dirs.append(target)
    cmds = [[*base_cmd, str(one)], [*base_cmd, str(dirs[0])], [*base_cmd, str(dirs[1])]]
    name = f"1b. CPU per document, index lookups that miss, {small} vs {large} docs"
    if instructions:
        start, n_small, n_large = (_instructions(cmd) for cmd in cmds)
        per_small, per_large = (n_small - start) / (small - first), (n_large - start) / (large - first)
        growth = per_large / per_small
        return (name, f"{growth:.3f}x ({per_small / 1e3:.0f}k vs {per_large / 1e3:.0f}k instructions per document, "
                      f"counted by valgrind; target within 10 %)", 0.9 <= growth <= 1.10)
    times = max(1, round(large / small))
    for cmd in cmds:
        _cpu_seconds(cmd)   # warm-up
    rounds = []
    for _ in range(max(5, repeat)):
        start = _cpu_seconds(cmds[0], times) / times
        t_small = _cpu_seconds(cmds[1], times) / times
        t_large = _cpu_seconds(cmds[2])
        rounds.append(((t_large - start) / (large - first), (t_small - start) / (small - first), start))
    ratios = sorted(per_large / per_small for per_large, per_small, _ in rounds)
    growth = statistics.median(ratios)
    per_large, per_small, start = (statistics.median(r[i] for r in rounds) for i in range(3))
    return (name, f"{growth:.2f}x, rounds {ratios[0]:.2f}-{ratios[-1]:.2f}x ({per_small * 1e6:.0f} us vs "
                  f"{per_large * 1e6:.0f} us per document, a {first}-document scan's {start:.2f} s taken off; "
                  f"target within 10 %)", 0.9 <= growth <= 1.10)


def _instructions(cmd: list[str]) -> int:
    """Instructions one run of `cmd` executes, counted by valgrind's cachegrind."""
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                               f"--cachegrind-out-file={folder}/out", *cmd],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    match = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if match is None:
        raise SystemExit(f"valgrind gave no instruction count: {proc.stderr[-1000:]}")
    return int(match.group(1).replace(",", ""))


def _peak_rss_mb(cmd: list[str]) -> float:
    """Peak RSS of `cmd`, measured from a fresh parent so no earlier child counts."""
    probe = ("import resource, subprocess, sys\n"
             "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
             "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    proc = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, env=ENV)
    rc, kib = proc.stdout.split()
    if int(rc) not in (0, 1):
        raise SystemExit(f"memory run failed ({rc}): {proc.stderr[-2000:]}")
    return int(kib) / 1024


def machine() -> str:
    """CPU, memory, OS and the versions that matter, in one line."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
                break
    except OSError:
        pass
    versions = [f"Python {platform.python_version()}"]
    for module, attr in (("ruamel.yaml", "__version__"), ("yaml", "__version__")):
        try:
            versions.append(f"{module} {getattr(__import__(module, fromlist=['x']), attr)}")
        except ImportError:
            pass
    return f"{cpu}, {cpus} CPUs{memory}; {platform.system()} {platform.release()}; {', '.join(versions)}"


def _supports(gpulint: str, flag: str) -> bool:
    proc = subprocess.run([gpulint, "scan", "--help"], capture_output=True, text=True, env=ENV)
    return flag in proc.stdout


def _supports_jobs(gpulint: str) -> bool:
    return _supports(gpulint, "--jobs")


def _wall_and_cpu(cmd: list[str]) -> tuple[float, float]:
    """Wall and user + system CPU seconds of one run of `cmd`, measured by a fresh parent."""
    probe = ("import resource, subprocess, sys, time\n"
             "start = time.perf_counter()\n"
             "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
             "wall = time.perf_counter() - start\n"
             "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(rc, wall, usage.ru_utime + usage.ru_stime)\n")
    proc = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, env=ENV)
    rc, wall, cpu = proc.stdout.split()
    if int(rc) not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({rc}): {proc.stderr[-2000:]}")
    return float(wall), float(cpu)


def _paired(base: list[str], other: list[str], repeat: int) -> tuple[float, float, float, float, list[float]]:
    """`base` and `other` run in turn `repeat` times after a warm-up of each: the median wall
    and CPU seconds of each, and each round's wall ratio base / other, sorted (a round's two
    runs meet the same load on a shared machine)."""
    _wall_and_cpu(base)
    _wall_and_cpu(other)
    rounds = [(_wall_and_cpu(base), _wall_and_cpu(other)) for _ in range(repeat)]
    ratios = sorted(b[0] / o[0] for b, o in rounds)
    wall_base, cpu_base, wall_other, cpu_other = (statistics.median(r[i][j] for r in rounds)
                                                  for i in (0, 1) for j in (0, 1))
    return wall_base, cpu_base, wall_other, cpu_other, ratios


def _cache_figure(gpulint: str, corpus: Path, work: Path, repeat: int) -> tuple[str, str, bool]:
    """Figure 6: an unchanged re-scan answered by the result cache vs a scan without it,
    in wall time (the target's measure), the two run in turn; CPU time shown too."""
    folder = work / "cache"
    warm = [gpulint, "scan", "--jobs", "1", "--format", "json", "--cache-dir", str(folder), str(corpus)]
    cold = [gpulint, "scan", "--jobs", "1", "--format", "json", "--no-cache", str(corpus)]
    _run(warm)  # fills the cache
    wall_cold, cpu_cold, wall_warm, cpu_warm, ratios = _paired(cold, warm, max(5, repeat))
    speedup = statistics.median(ratios)
    return ("6. unchanged re-scan from the result cache vs --no-cache (--jobs 1)",
            f"{speedup:.1f}x faster, rounds {ratios[0]:.1f}-{ratios[-1]:.1f}x ({wall_warm:.2f} s vs {wall_cold:.2f} s; "
            f"CPU {cpu_warm:.2f} s vs {cpu_cold:.2f} s, {cpu_cold / cpu_warm:.1f}x; target >= 10x)", speedup >= 10)


def _sarif_figure(gpulint: str, corpus: Path, repeat: int, no_cache: list[str]) -> tuple[str, str, bool]:
    """Figure 1c: the same scan written as SARIF vs as JSON (--jobs 1, no cache: both scan)."""
    scan = [gpulint, "scan", "--jobs", "1", *no_cache]
    sarif = [*scan, "--format", "sarif", str(corpus)]
    json_ = [*scan, "--format", "json", str(corpus)]
    wall_sarif, cpu_sarif, wall_json, cpu_json, ratios = _paired(sarif, json_, repeat)
    ratio = statistics.median(ratios)
    return ("1c. --format sarif vs --format json, same scan (--jobs 1)",
            f"{ratio:.3f}x its time, rounds {ratios[0]:.3f}-{ratios[-1]:.3f}x ({wall_sarif:.2f} s vs {wall_json:.2f} s; "
            f"CPU {cpu_sarif / cpu_json:.3f}x; target <= 1.1x)", ratio <= 1.1)


def _default_jobs_figure(gpulint: str, corpora: list[Path], repeat: int, no_cache: list[str]) -> tuple[str, str, bool]:
    """Figure 2b: a scan without --jobs vs --jobs 1 on each corpus (never slower)."""
    worst = None
    parts = []
    for corpus in corpora:
        one = [gpulint, "scan", "--jobs", "1", *no_cache, "--format", "json", str(corpus)]
        default = [gpulint, "scan", *no_cache, "--format", "json", str(corpus)]
        t_one, t_default = _timed(one, repeat), _timed(default, repeat)
        ratio = t_one / t_default
        worst = ratio if worst is None else min(worst, ratio)
        parts.append(f"{corpus.name}: {ratio:.2f}x ({t_default:.2f} s vs {t_one:.2f} s)")
    return ("2b. default --jobs vs --jobs 1, each corpus", "; ".join(parts) + " (target >= 0.97x: never slower, "
            "within noise)", worst is not None and worst >= 0.97)


def _renderers() -> tuple[str | None, str | None]:
    """helm, and kustomize or kubectl: on PATH, else in the repository's .ci/bin."""
    ci_bin = HERE.parent / ".ci" / "bin"

    def find(name: str) -> str | None:
        return shutil.which(name) or (str(ci_bin / name) if (ci_bin / name).is_file() else None)

    return find("helm"), find("kustomize") or find("kubectl")


def _render_seconds(renders: list[tuple[str, ...]], helm: str, kustomize: str) -> float:
    """The renders run one after the other, each as gpulint once ran it (wall time, summed)."""
    total = 0.0
    for render in renders:
        if render[0] == "helm":
            cmd = [helm, "template", "--namespace", "default"]
            if render[2]:
                cmd += ["--values", render[2]]
            cmd += ["--", "release-name", render[1]]
        elif Path(kustomize).name.startswith("kubectl"):
            cmd = [kustomize, "kustomize", render[1]]
        else:
            cmd = [kustomize, "build", render[1]]
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
        total += time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-1000:]}")
    return total


def _renders_figure(gpulint: str, work: Path, repeat: int) -> tuple[str, str, bool | None]:
    """Figure 7: a repository's renders, in parallel and shared, vs their times one after the other."""
    helm, kustomize = _renderers()
    name = "7. renders: repository-shaped tree"
    if helm is None or kustomize is None:
        missing = " and ".join(tool for tool, found in (("helm", helm), ("kubectl or kustomize", kustomize))
                               if found is None)
        return name, f"skipped: {missing} not on PATH nor in .ci/bin", None
    tree = work / "repository"
    renders = generate_repository(tree)
    builds = sum(1 for render in renders if render[0] == "kustomize")
    charts = len(renders) - builds
    files = sum(1 for p in tree.rglob("*") if p.is_file())
    base = [gpulint, "scan", "--no-cache", "--helm", helm, "--kustomize", kustomize, "--format", "json"]
    cmds = {"--jobs 1": [*base, "--jobs", "1", str(tree)], "default": [*base, str(tree)],
            "--jobs 2": [*base, "--jobs", "2", str(tree)]}
    for cmd in cmds.values():
        _run(cmd)                     # warm-up (bytecode caches, the tools' first start)
    times: dict[str, list[float]] = {"renders": [], **{label: [] for label in cmds}}
    for _ in range(repeat):           # in turn: a slow spell of the machine hits every command alike
        times["renders"].append(_render_seconds(renders, helm, kustomize))
        for label, cmd in cmds.items():
            times[label].append(_run(cmd))
    median = {label: statistics.median(values) for label, values in times.items()}
    renders_sum, one, default = median["renders"], median["--jobs 1"], median["default"]
    parts = [f"{label} {median[label]:.2f} s = {median[label] / renders_sum:.2f}x the renders' sum"
             for label in cmds]
    return (f"{name} ({builds} kustomize builds, {charts} chart renders, {files} files)",
            f"renders one after the other {renders_sum:.2f} s; " + "; ".join(parts)
            + f"; default {one / default:.2f}x as fast as --jobs 1, --jobs 2 {one / median['--jobs 2']:.2f}x "
            "(target: default never slower than --jobs 1, >= 0.97x)", one / default >= 0.97)


def _cold_figure(gpulint: str, work: Path, sizes: list[int], repeat: int) -> list[tuple[str, str, bool | None]]:
    """Figure 8: a first scan, cold (`--no-cache --jobs 1`, JSON to /dev/null), against the floor
    (PyYAML's C compose of the same files in one process) at each size of `sizes` documents
    (gen_corpus.generate_cold), the two timed in turn as processes, start-up included on both sides,
    `repeat` rounds, medians; 8c shows the floor timed inside its interpreter (its start-up taken
    off, the scan's kept: the stricter figure of earlier runs); then the cost per document (a
    one-file scan's time taken off) at the largest size against the smallest, and each size's peak
    RSS. Wall time, as a user waits for it."""
    results: list[tuple[str, str, bool | None]] = []
    per_doc: list[tuple[int, float, float]] = []   # documents, the scan's and the floor's seconds per document
    one_dir = work / "cold-one"
    generate_cold(one_dir, 1)
    one = next(p for p in one_dir.rglob("*.yaml") if p.stat().st_size)
    start = _timed([gpulint, "scan", "--no-cache", "--jobs", "1", "--format", "json", str(one)], max(5, repeat))
    for size in sizes:
        corpus = work / f"cold-{size}"
        docs = generate_cold(corpus, size)
        files = sorted(p for p in corpus.rglob("*") if p.is_file())
        cmd = [gpulint, "scan", "--no-cache", "--jobs", "1", "--format", "json", str(corpus)]
        _run(cmd)   # warm-up (bytecode)
        _floor_run(files)
        floors, insides, scans, floor_cpus, scan_cpus = [], [], [], [], []
        for _ in range(repeat):
            inside, _, process, process_cpu = _floor_run(files)
            floors.append(process)
            insides.append(inside)
            floor_cpus.append(process_cpu)
            wall, cpu = _wall_and_cpu(cmd)
            scans.append(wall)
            scan_cpus.append(cpu)
        floor, inside, scan = statistics.median(floors), statistics.median(insides), statistics.median(scans)
        spread = sorted(f / s for f, s in zip(floors, scans))
        cpu_ratio = statistics.median(floor_cpus) / statistics.median(scan_cpus)
        rss = _peak_rss_mb(cmd)
        per_doc.append((docs, (scan - start) / docs, inside / docs))
        results.append((f"8. cold first scan vs PyYAML C compose, {docs} docs ({len(files)} files)",
                        f"{floor / scan:.2f} of its speed, rounds {spread[0]:.2f}-{spread[-1]:.2f} ({scan:.2f} s vs "
                        f"{floor:.2f} s; by CPU time {cpu_ratio:.2f}; peak RSS {rss:.0f} MB; target >= 0.60)",
                        floor / scan >= 0.60))
        results.append((f"8c. the same, the floor's start-up taken off ({docs} docs)",
                        f"{inside / scan:.2f} of its speed ({scan:.2f} s vs {inside:.2f} s inside the interpreter; "
                        "the scan's own start-up kept)", None))
        shutil.rmtree(corpus, ignore_errors=True)
    if len(per_doc) > 1:
        (small, small_cost, small_floor), (large, large_cost, large_floor) = per_doc[0], per_doc[-1]
        own, floor_growth = large_cost / small_cost, large_floor / small_floor
        growth = own / floor_growth
        results.append((f"8b. cold cost per document, {large} vs {small} docs, against the floor's",
                        f"{growth:.2f}x (the scan's {own:.2f}x: {small_cost * 1e6:.0f} us vs {large_cost * 1e6:.0f} us, "
                        f"a one-file scan's {start * 1000:.0f} ms taken off; the floor's {floor_growth:.2f}x: "
                        f"{small_floor * 1e6:.0f} us vs {large_floor * 1e6:.0f} us; target within 10 %)",
                        growth <= 1.10))
    return results


def _print_results(results: list[tuple[str, str, bool | None]], check: bool) -> int:
    width = max(len(r[0]) for r in results)
    missed = False
    for name, value, ok in results:
        mark = "" if ok is None else ("  ok" if ok else "  MISSED")
        missed |= ok is False
        print(f"{name:<{width}}  {value}{mark}")
    return 1 if check and missed else 0


def _startup_figure(gpulint: str, corpus: Path, repeat: int, no_cache: list[str]) -> tuple[str, str, bool]:
    """Figure 3: a one-file scan against `python -c "import ruamel.yaml"`, timed in turn."""
    one = corpus / "manifests" / "deployment" / "00000.yaml"
    base = _timed([sys.executable, "-c", "import ruamel.yaml"], max(15, repeat * 5))
    start = _timed([gpulint, "scan", *no_cache, str(one)], max(15, repeat * 5))
    return ("3. start-up: scan one file vs `python -c \"import ruamel.yaml\"`",
            f"{start / base:.2f}x ({start * 1000:.0f} ms vs {base * 1000:.0f} ms; target <= 3x)", start / base <= 3)


def main() -> int:
    parser = argparse.ArgumentParser(description="gpulint benchmark (ratios against same-run baselines)")
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--big-docs", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--references", type=int, default=12000,
                        help="documents of the larger index-lookup corpus (figure 1b; the smaller has a quarter)")
    parser.add_argument("--instructions", action="store_true",
                        help="figure 1b by instructions counted with valgrind (deterministic; minutes)")
    parser.add_argument("--jobs", type=int, default=None, help="workers for figure 2 (default: the CPUs)")
    parser.add_argument("--memory-mb", type=int, default=200)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--gpulint", help="the gpulint executable to time (default: gpulint on PATH)")
    parser.add_argument("--checkov", help="checkov executable (default: checkov on PATH, if any)")
    parser.add_argument("--corpus", type=Path, help="an existing gen_corpus.py output to use instead")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--only", help="only these figures, comma-separated (`7` and `8` can be run alone)")
    parser.add_argument("--cold-sizes", default="1000,5000,20000,50000",
                        help="document counts of the cold first-scan corpora (figure 8)")
    args = parser.parse_args()

    gpulint = args.gpulint or shutil.which("gpulint")
    if gpulint is None:
        raise SystemExit("gpulint is not on PATH: pip install . first")
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    jobs = args.jobs or cpus
    work = Path(tempfile.mkdtemp(prefix="gpulint-bench-"))
    results: list[tuple[str, str, bool | None]] = []
    print(f"machine: {machine()}", flush=True)
    only = set(args.only.split(",")) if args.only else None
    cold_sizes = [int(n) for n in args.cold_sizes.split(",") if n]
    if only is not None and only <= {"3", "7", "8"}:
        try:
            alone: list[tuple[str, str, bool | None]] = []
            if "3" in only:   # the file it scans is the first of a one-file corpus as of the full one
                generate(work / "corpus", 1, 0)
                alone.append(_startup_figure(gpulint, work / "corpus", args.repeat,
                                             ["--no-cache"] if _supports(gpulint, "--no-cache") else []))
            if "8" in only:
                alone += _cold_figure(gpulint, work, cold_sizes, args.repeat)
            if "7" in only:
                alone.append(_renders_figure(gpulint, work, args.repeat))
            return _print_results(alone, args.check)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    try:
        corpus = args.corpus or work / "corpus"
        if args.corpus is None:
            generate(corpus, args.files, args.big_docs)
        files = sorted(p for p in corpus.rglob("*") if p.is_file())
        size_mb = sum(p.stat().st_size for p in files) / 1e6

        floor, docs, _ = _floor_seconds(files, args.repeat)
        no_cache = ["--no-cache"] if _supports(gpulint, "--no-cache") else []   # figures 1-4 time scans
        single_cmd = [gpulint, "scan", *no_cache, "--format", "json", str(corpus)]
        if _supports_jobs(gpulint):
            single_cmd[2:2] = ["--jobs", "1"]
        single = _timed(single_cmd, args.repeat)
        ratio = floor / single
        # The issue states the target twice: ">= 60 % of the floor's speed, i.e. at most
        # 1.7x its time" (1 / 1.7 is 0.588): the time ratio is what is checked, both are shown.
        results.append((f"1. end-to-end --jobs 1 vs PyYAML C compose ({docs} docs, {len(files)} files, {size_mb:.0f} MB)",
                        f"{single / floor:.2f}x its time, {ratio:.3f} of its speed "
                        f"({single:.2f} s vs {floor:.2f} s; target <= 1.7x)", single / floor <= 1.7))

        results.append(_per_document_growth(gpulint, single_cmd[:-1], work, (args.references // 4, args.references),
                                            args.repeat, args.instructions))
        results.append(_sarif_figure(gpulint, corpus, args.repeat, no_cache))

        if _supports_jobs(gpulint):
            parallel = _timed([gpulint, "scan", "--jobs", str(jobs), *no_cache, "--format", "json", str(corpus)],
                              args.repeat)
            speedup = single / parallel
            results.append((f"2. --jobs {jobs} vs --jobs 1, same corpus",
                            f"{speedup:.2f}x the rate ({parallel:.2f} s; target >= 1.7x with 2 CPUs)",
                            speedup >= 1.7 if jobs >= 2 else None))
            results.append(_default_jobs_figure(gpulint, [corpus, work / f"references-{args.references}"],
                                                args.repeat, no_cache))
        else:
            results.append(("2. --jobs N vs --jobs 1", "this gpulint has no --jobs", None))

        results.append(_startup_figure(gpulint, corpus, args.repeat, no_cache))

        if not args.skip_memory:
            big = work / "big.yaml"
            big_stream(big, args.memory_mb)   # 28 % ConfigMaps, each named apart: the index holds them all
            cmd = [gpulint, "scan", *no_cache, "--format", "json", str(big)]
            rss = _peak_rss_mb(cmd)
            results.append((f"4. peak RSS scanning a {args.memory_mb} MB multi-document file",
                            f"{rss:.0f} MB (target < 300 MB)", rss < 300))

        if no_cache:
            results.append(_cache_figure(gpulint, corpus, work, args.repeat))

        checkov = args.checkov or shutil.which("checkov")
        if checkov:
            seconds = statistics.median(
                _run([checkov, "-d", str(corpus), "--framework", "kubernetes", "--quiet", "--compact"])
                for _ in range(1))
            results.append(("5. Checkov kubernetes framework, same corpus",
                            f"gpulint --jobs 1 is {seconds / single:.1f}x faster ({seconds:.1f} s vs {single:.2f} s)",
                            None))
        else:
            results.append(("5. Checkov", "not installed (install it in a separate venv, pass --checkov PATH)",
                            None))
        if only is None or "7" in only:
            results.append(_renders_figure(gpulint, work, args.repeat))
        if only is None or "8" in only:
            results.extend(_cold_figure(gpulint, work, cold_sizes, args.repeat))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _print_results(results, args.check)


if __name__ == "__main__":
    raise SystemExit(main())
