"""Accuracy on public repositories outside the corpus: scan each at its pinned commit, compare to hand judgements.

    python bench/accuracy/run.py [--trees DIR] [--mirrors DIR] [--work DIR] [--gpulint CMD]
                                 [--only OWNER/NAME] [--json FILE] [--details]

`repos.tsv` pins each repository (owner/name, commit, kind, why chosen); `judgements.tsv` holds one row per
finding judged by hand and per bypass gpulint missed (repo, path, line, rule, verdict, class, reason):

- `true`: a finding a user must and can fix; `false`: a finding whose claim is wrong; `noise`: a warning or
  error nobody can act on; `exempt`: a finding correctly reported as suppressed (infrastructure);
- `miss`: a real bypass gpulint did not report (the rule is the one that should have fired);
- `dup`: a true finding that reports again a bypass counted at another row (named in the reason): counted as
  true in the table, never as a bypass of its own, and not a regression when a version does not report it.

A repository's tree comes, in this order, from `--trees DIR/<owner>+<name>` (already unpacked), from a bare
git mirror `--mirrors DIR/<owner>+<name>[/repo]` (blobs missing from a partial mirror are left out and
counted), or from GitHub with plain `git fetch` of the pinned commit. Where none works (no network here) the
repository is reported as not measured, with the reason; nothing is guessed. Trees go to `--work` (default:
a temporary folder), never into this repository: only coordinates and judgements are kept here.

Each tree is scanned whole with `gpulint scan --no-cache -f json --exit-zero`. A finding is keyed by the
file a user edits (for rendered input, its template or kustomize origin), line and rule; findings repeated by
several renders count once. The comparison prints, per repository: files, findings (active warnings and
errors, unique), true/false/noise among them, new (not judged yet), misses left, info findings (never judged:
they fail no CI run), suppressed; then every new finding, fixed
miss, resolved false/noise finding and regression (a true finding lost, an exempt one now active). Real
bypasses are the `true` findings of the bypass rules (GPU001-GPU008) plus the misses; the rate found is
printed with and without the rows whose reason starts with "debatable".
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

BYPASS_RULES = {f"GPU00{i}" for i in range(1, 9)}
VERDICTS = ("true", "false", "noise", "exempt", "miss", "dup")
# A judged line still matches a finding this many lines away (a fix may move the reported node, e.g. from
# the `value:` line to the `- name:` line of one env entry).
LINE_SLACK = 2


@dataclass(frozen=True)
class Judgement:
    repo: str
    path: str
    line: int
    rule: str
    verdict: str
    cls: str
    reason: str

    @property
    def debatable(self) -> bool:
        return self.reason.lower().startswith("debatable")


@dataclass(frozen=True)
class Found:
    path: str
    line: int
    rule: str
    severity: str
    suppressed: bool
    message: str
    # Other places the finding names (template, values, origin): a judgement made at one of them still
    # matches when a change of gpulint moves the primary location from one to another.
    others: tuple[tuple[str, int], ...] = ()

    def places(self) -> tuple[tuple[str, int], ...]:
        return ((self.path, self.line), *self.others)


@dataclass
class Comparison:
    repo: str
    files: int = 0
    active: list[Found] = field(default_factory=list)  # warnings and errors
    info: list[Found] = field(default_factory=list)
    suppressed: list[Found] = field(default_factory=list)
    still: dict[str, list[tuple[Judgement, Found]]] = field(default_factory=dict)  # verdict -> still reported
    new: list[Found] = field(default_factory=list)
    fixed_misses: list[tuple[Judgement, Found]] = field(default_factory=list)
    misses_left: list[Judgement] = field(default_factory=list)
    resolved: list[Judgement] = field(default_factory=list)  # judged false/noise, no longer active
    regressions: list[tuple[Judgement, str]] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        """Findings still reported with this verdict; a found miss and a dup are true findings too."""
        extra = len(self.still.get("dup", [])) + len(self.fixed_misses) if verdict == "true" else 0
        return len(self.still.get(verdict, [])) + extra


# ---------------------------------------------------------------- inputs


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_judgements(path: Path) -> list[Judgement]:
    out = []
    for n, row in enumerate(read_tsv(path), start=2):
        if row["verdict"] not in VERDICTS:
            raise SystemExit(f"{path}:{n}: unknown verdict {row['verdict']!r} (one of {', '.join(VERDICTS)})")
        out.append(Judgement(row["repo"], row["path"], int(row["line"]), row["rule"], row["verdict"],
                             row.get("class") or "", row.get("reason") or ""))
    return out


def _user_file(finding: dict) -> tuple[str, int]:
    """The file and line a user edits: rendered input points at its template or kustomize origin."""
    path, line = finding["path"], finding["line"]
    if " (" in path:  # "chart (rendered with ...)", "dir (rendered)": not a file
        for mapped in finding.get("mapped") or []:
            if mapped.get("role") in ("template", "origin"):
                return mapped["path"], mapped["line"]
        path = path.split(" (", 1)[0]
    return path, line


def normalise(report: dict, root: str) -> tuple[int, list[Found]]:
    """The summary's file count and the findings of a JSON report, paths relative to the scanned root,
    one per (path, line, rule, suppressed)."""
    root = root.rstrip("/")

    def relative(path: str) -> str:
        if path == root:
            return "."
        return path[len(root) + 1:] if path.startswith(root + "/") else path

    seen: dict[tuple, Found] = {}
    for f in report.get("findings", []):
        path, line = _user_file(f)
        others = tuple(dict.fromkeys((relative(m["path"]), int(m["line"])) for m in f.get("mapped") or []
                                     if " (" not in m["path"]))
        found = Found(relative(path), int(line), f["rule"], f["severity"], bool(f["suppressed"]), f["message"],
                      tuple(o for o in others if o != (relative(path), int(line))))
        seen.setdefault((found.path, found.line, found.rule, found.suppressed), found)
    findings = sorted(seen.values(), key=lambda x: (x.path, x.line, x.rule, x.suppressed))
    return int(report.get("summary", {}).get("files", 0)), findings


# ---------------------------------------------------------------- comparison


def _take(candidates: list[Judgement], found: Found, used: set[int], rules: set[str] | None = None):
    """The judgement for a finding: same rule (or one of `rules`), same file as any place the finding
    names, the nearest line within LINE_SLACK (the primary place on a tie); each judgement matches once."""
    best, best_dist = None, None
    for j in candidates:
        if id(j) in used:
            continue
        if (j.rule != found.rule) if rules is None else (found.rule not in rules):
            continue
        for rank, (path, line) in enumerate(found.places()):
            if path != j.path or abs(j.line - line) > LINE_SLACK:
                continue
            dist = (abs(j.line - line), rank)  # nearest line first, then the primary place
            if best_dist is None or dist < best_dist:
                best, best_dist = j, dist
    if best is not None:
        used.add(id(best))
    return best


def compare(repo: str, files: int, findings: list[Found], judgements: list[Judgement]) -> Comparison:
    mine = [j for j in judgements if j.repo == repo]
    cmp = Comparison(repo, files)
    # Info findings never fail a CI run (the issue allows uncertainty reported as info): they are counted
    # apart, never judged; a judged false/noise finding that became info is resolved, a true one lost.
    cmp.active = [f for f in findings if not f.suppressed and f.severity != "info"]
    cmp.info = [f for f in findings if not f.suppressed and f.severity == "info"]
    cmp.suppressed = [f for f in findings if f.suppressed]
    judged = [j for j in mine if j.verdict != "miss"]
    misses = [j for j in mine if j.verdict == "miss"]
    used: set[int] = set()
    matched_active: set[int] = set()
    for f in cmp.active:
        j = _take(judged, f, used)
        if j is None:
            j = _take(misses, f, used) or _take(misses, f, used, BYPASS_RULES if f.rule in BYPASS_RULES else set())
        if j is None:
            cmp.new.append(f)
            continue
        matched_active.add(id(j))
        if j.verdict == "miss":
            cmp.fixed_misses.append((j, f))
        elif j.verdict == "exempt":
            cmp.regressions.append((j, f"now active: {f.severity} {f.message}"))
        else:
            cmp.still.setdefault(j.verdict, []).append((j, f))
    for f in cmp.suppressed:
        _take([j for j in judged if id(j) not in matched_active], f, used)
    as_info: set[int] = set()
    for f in cmp.info:
        j = _take([j for j in judged if id(j) not in matched_active], f, used)
        if j is not None:
            as_info.add(id(j))
    for j in mine:
        if id(j) in matched_active:
            continue
        if j.verdict == "miss":
            cmp.misses_left.append(j)
        elif j.verdict in ("false", "noise"):
            cmp.resolved.append(j)
        elif j.verdict == "true":
            now = " (now info)" if id(j) in as_info else " (now suppressed)" if id(j) in used else ""
            cmp.regressions.append((j, "true finding no longer reported" + now))
    return cmp


def bypass_rate(comparisons: list[Comparison], judgements: list[Judgement], *, debatable: bool) -> tuple[int, int]:
    """(found, total) real bypasses: judged-true findings of bypass rules, plus misses."""
    measured = {c.repo for c in comparisons}
    real = [j for j in judgements if j.repo in measured and (j.debatable is False or debatable)
            and (j.verdict == "miss" or (j.verdict == "true" and j.rule in BYPASS_RULES))]
    reported = {j for c in comparisons for j, _ in c.still.get("true", []) + c.fixed_misses}
    found = sum(1 for j in real if j in reported)
    return found, len(real)


# ---------------------------------------------------------------- trees and scans


def _git(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})


def _extract(git_dir: Path, commit: str, dest: Path) -> tuple[int, int]:
    """Write the tree of `commit` to dest, leaving out blobs a partial mirror lacks: (written, missing)."""
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", "--full-tree", commit],
                             capture_output=True, check=True).stdout
    entries = []
    for item in listing.split(b"\0"):
        if item:
            meta, path = item.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob":
                entries.append((mode, sha.decode(), path.decode("utf-8", "surrogateescape")))
    batch = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                           input=b"".join(sha.encode() + b"\n" for _, sha, _ in entries),
                           capture_output=True, check=True).stdout
    written = missing = pos = 0
    for mode, sha, path in entries:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        data, pos = batch[pos:pos + size], pos + size + 1
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == b"120000":
            os.symlink(data.decode("utf-8", "surrogateescape"), target)
        else:
            target.write_bytes(data)
            if mode == b"100755":
                target.chmod(0o755)
        written += 1
    return written, missing


def get_tree(repo: str, commit: str, *, trees: Path | None, mirrors: Path | None, work: Path) -> tuple[Path | None, str]:
    """The unpacked tree of repo at commit and how it was had, or (None, why not)."""
    slug = repo.replace("/", "+", 1)
    if trees is not None and (trees / slug).is_dir():
        return trees / slug, f"unpacked tree {trees / slug}"
    dest = work / slug
    if dest.exists():
        shutil.rmtree(dest)
    if mirrors is not None:
        for git_dir in (mirrors / slug / "repo", mirrors / slug):
            if (git_dir / "objects").is_dir():
                if _git(f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}^{{commit}}").returncode:
                    return None, f"mirror {git_dir} lacks commit {commit}"
                dest.mkdir(parents=True)
                written, missing = _extract(git_dir, commit, dest)
                return dest, f"mirror {git_dir}: {written} files" + (f", {missing} blobs absent" if missing else "")
    dest.mkdir(parents=True)
    url = f"https://github.com/{repo}.git"
    try:
        steps = (("init", "-q"), ("fetch", "-q", "--depth", "1", url, commit), ("checkout", "-q", "FETCH_HEAD"))
        for step in steps:
            done = _git(*step, cwd=dest, timeout=900)
            if done.returncode:
                shutil.rmtree(dest, ignore_errors=True)
                why = (done.stderr.strip().splitlines() or ["no message"])[-1]
                return None, f"cannot fetch {url} at {commit} ({why}); pass --trees or --mirrors"
    except subprocess.TimeoutExpired:
        shutil.rmtree(dest, ignore_errors=True)
        return None, f"fetching {url} timed out; pass --trees or --mirrors"
    shutil.rmtree(dest / ".git", ignore_errors=True)  # scan the tree as unpacked, like the others
    return dest, f"fetched {url}"


def default_gpulint() -> list[str]:
    beside = Path(sys.executable).with_name("gpulint")
    return [str(beside)] if beside.exists() else ["gpulint"]


def scan(tree: Path, gpulint: list[str]) -> dict:
    """gpulint's JSON report of the whole tree, scanned from its parent so paths start with its name."""
    done = subprocess.run([*gpulint, "scan", "--no-cache", "-f", "json", "--exit-zero", tree.name],
                          cwd=tree.parent, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"gpulint failed on {tree} (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


# ---------------------------------------------------------------- output


def table(comparisons: list[Comparison], unmeasured: dict[str, str]) -> list[str]:
    head = ("repository", "files", "findings", "true", "false", "noise", "new", "misses", "info", "suppressed")
    rows = [head]
    total = [0] * (len(head) - 1)
    for c in comparisons:
        cells = [c.files, len(c.active), c.count("true"), c.count("false"),
                 c.count("noise"), len(c.new), len(c.misses_left), len(c.info), len(c.suppressed)]
        total = [a + b for a, b in zip(total, cells)]
        rows.append((c.repo, *map(str, cells)))
    rows.append(("all", *map(str, total)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["| " + " | ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
                                for i, cell in enumerate(r)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|")
    for repo, why in unmeasured.items():
        lines.append(f"not measured: {repo}: {why}")
    return lines


def details(comparisons: list[Comparison]) -> list[str]:
    out = []
    for c in comparisons:
        def add(title, items):
            if items:
                out.append(f"{c.repo}: {title}")
                out.extend(f"  {item}" for item in items)
        add("new (not judged)", [f"{f.path}:{f.line} {f.rule} {f.severity}: {f.message[:160]}" for f in c.new])
        add("fixed misses", [f"{j.path}:{j.line} {j.rule} (found as {f.rule} at line {f.line})" for j, f in c.fixed_misses])
        add("regressions", [f"{j.path}:{j.line} {j.rule} [{j.verdict}]: {why}" for j, why in c.regressions])
        add("resolved false/noise", [f"{j.path}:{j.line} {j.rule} [{j.verdict}, {j.cls}]" for j in c.resolved])
        add("false/noise still reported", [f"{j.path}:{j.line} {j.rule} [{j.verdict}, {j.cls}]"
                                           for v in ("false", "noise") for j, _ in c.still.get(v, [])])
        add("misses left", [f"{j.path}:{j.line} {j.rule} [{j.cls}]" for j in c.misses_left])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, default=HERE / "repos.tsv")
    parser.add_argument("--judgements", type=Path, default=HERE / "judgements.tsv")
    parser.add_argument("--trees", type=Path, help="folder of unpacked trees named <owner>+<name>")
    parser.add_argument("--mirrors", type=Path, help="folder of bare git mirrors named <owner>+<name>[/repo]")
    parser.add_argument("--work", type=Path, help="where fetched trees go (default: a temporary folder)")
    parser.add_argument("--gpulint", help="gpulint command (default: the one beside this Python, else on PATH)")
    parser.add_argument("--only", action="append", default=[], help="measure only this owner/name (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the comparison as JSON to this file")
    parser.add_argument("--details", action="store_true", help="list new findings, fixed misses, regressions...")
    args = parser.parse_args(argv)

    repos = [r for r in read_tsv(args.repos) if not args.only or r["repo"] in args.only]
    judgements = read_judgements(args.judgements)
    gpulint = args.gpulint.split() if args.gpulint else default_gpulint()
    work = args.work or Path(tempfile.mkdtemp(prefix="gpulint-accuracy-"))
    if work.resolve().is_relative_to(ROOT):
        print(f"--work {work} is inside this repository; fetched files must stay outside it", file=sys.stderr)
        return 2
    comparisons, unmeasured = [], {}
    for r in repos:
        tree, how = get_tree(r["repo"], r["commit"], trees=args.trees, mirrors=args.mirrors, work=work)
        print(f"{r['repo']}: {how}", file=sys.stderr)
        if tree is None:
            unmeasured[r["repo"]] = how
            continue
        files, findings = normalise(scan(tree, gpulint), tree.name)
        comparisons.append(compare(r["repo"], files, findings, judgements))
    print("\n".join(table(comparisons, unmeasured)))
    for label, debatable in (("all", True), ("without debatable rows", False)):
        found, total = bypass_rate(comparisons, judgements, debatable=debatable)
        rate = f"{100 * found / total:.1f} %" if total else "n/a"
        print(f"real bypasses found ({label}): {found}/{total} = {rate}")
    if args.details:
        print("\n".join(details(comparisons)))
    if args.json:
        args.json.write_text(json.dumps({
            "measured": [{"repo": c.repo, "files": c.files, "findings": len(c.active), "true": c.count("true"),
                          "false": c.count("false"), "noise": c.count("noise"), "new": len(c.new),
                          "misses": len(c.misses_left), "info": len(c.info), "suppressed": len(c.suppressed),
                          "fixed_misses": len(c.fixed_misses), "regressions": len(c.regressions)}
                         for c in comparisons],
            "not_measured": unmeasured}, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
