"""`--jobs N` gives the bytes `--jobs 1` gives: reports, baselines, cross-file suppressions, errors.

Small scans stay in one process, so these tests lower parallel.MIN_BYTES (and
the batch size, so that files that depend on each other land in different
workers). Workers are forked from the test process and inherit its patches.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, ENV_POD, FIXTURES, KLOG_HEADER, ROOT, mask_klog_headers, run_cli

from gpulint.api import Rule, Severity, ValueAt, Violation
from gpulint.config.selection import select_rules
from gpulint.inputs.discovery import discover
from gpulint.results.scanning import ScanConfig
from gpulint.scan import overlap, parallel, registry
from gpulint.scan.engine import scan
from gpulint.scan.reader import InputReader
from gpulint.scan.registry import load_rules

sys.path.insert(0, str(ROOT / "bench"))
from gen_corpus import generate  # noqa: E402

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="parallel scans need the fork start method")


@pytest.fixture(autouse=True)
def _always_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)


def _both(*args: str, input: str | None = None) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    one = run_cli("scan", "--jobs", "1", *args, input=input)
    two = run_cli("scan", "--jobs", "2", *args, input=input)
    return one, two


@pytest.mark.parametrize("fmt", ["json", "sarif", "text", "github"])
def test_reports_are_the_same_bytes(fmt: str) -> None:
    one, two = _both("--format", fmt, "--show-suppressed", "--select", "ALL", str(FIXTURES))
    assert one[0] in (0, 1) and one[1]
    assert one == two


# gpulint builds kustomizations with kustomize, or with `kubectl kustomize` when
# there is no kustomize; kubectl (klog) frames its errors with the time and its pid.
_KUSTOMIZE = shutil.which("kustomize") or shutil.which("kubectl")
_KLOG_FRAMED = _KUSTOMIZE is not None and Path(_KUSTOMIZE).name.startswith("kubectl")
# An unreachable proxy: kustomize's fetch of a remote resource fails the same way
# with or without network access (and the test never downloads anything).
_NO_NETWORK = {name: "http://127.0.0.1:9" for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")}


def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in _NO_NETWORK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)


@pytest.mark.parametrize("target", [
    "corpus",
    "generated",
])
def test_the_corpus_and_a_generated_corpus_give_the_same_report(target: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if target == "corpus":
        if not CORPUS.is_dir():
            pytest.skip("../shared/corpus is not present (it lives beside the repository, not in it)")
        _offline(monkeypatch)
        path = str(CORPUS)
    else:
        generate(tmp_path, files=150, big_docs=80)
        path = str(tmp_path)
    one, two = _both("--format", "sarif", path)
    assert one[0] in (0, 1)
    assert one == two


def test_the_corpus_gives_the_same_report_but_for_kubectl_times(corpus: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The strict xfail above, with kubectl's klog headers (time, pid) masked: all the
    rest of the corpus's report is the same bytes with --jobs 1 and --jobs 2."""
    _offline(monkeypatch)
    one, two = _both("--format", "sarif", str(corpus))
    assert one[0] in (0, 1) and one[0] == two[0]
    assert (mask_klog_headers(one[1]), one[2]) == (mask_klog_headers(two[1]), two[2])
    framed = len(KLOG_HEADER.findall(one[1]))
    print(f"\nklog headers masked: {framed}")
    assert framed <= 1   # masked at most in the one failing (remote) kustomization's message


def test_a_parallel_scan_really_uses_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pids: set[int] = set()
    real = parallel._Work.scan

    def scan_and_note(self: parallel._Work, batch: list[int]) -> dict:
        out = real(self, batch)
        for report, *_rest in out.values():
            report.file += f"@{os.getpid()}"
        return out

    monkeypatch.setattr(parallel._Work, "scan", scan_and_note)
    # (Not while renders run: this process would scan every plain file meanwhile, see test_overlap.py.)
    monkeypatch.setattr(overlap, "wanted", lambda *args: False)
    rules = load_rules()
    config = ScanConfig(rules=select_rules(rules), all_rules=rules)
    result = scan(discover([str(FIXTURES / "rules")]).inputs, config, jobs=2)
    pids = {int(report.file.rsplit("@", 1)[1]) for report in result.files}
    assert os.getpid() in pids and len(pids) == 2   # this process and one forked worker


def test_small_scans_stay_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_BYTES", 1 << 20)
    rules = load_rules()
    config = ScanConfig(rules=select_rules(rules), all_rules=rules)
    inputs = discover([str(FIXTURES / "rules")]).inputs
    assert parallel.workers_for(inputs, config, InputReader(), 8) == 1
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    assert parallel.workers_for(inputs, config, InputReader(), 8) == 8
    assert parallel.workers_for(inputs, config, InputReader(), 1) == 1


# --- state that crosses files ------------------------------------------------------------

_SCRIPTS = """apiVersion: v1
kind: ConfigMap
metadata: {name: scripts, namespace: ml}
data:
  run.sh: |
    #!/bin/sh
    docker run --gpus all trainer  # gpulint: ignore[GPU002] launcher host, reviewed
    docker run --gpus all other  # gpulint: ignore[GPU001] wrong code: unused
"""

_WORKLOAD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: ml}}
spec:
  template:
    spec:
      containers:
      - name: c
        image: docker:24-cli
        volumeMounts: [{{name: s, mountPath: /s}}]
      volumes: [{{name: s, configMap: {{name: scripts}}}}]
"""


def _cross_file_tree(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "a-workload.yaml").write_text(_WORKLOAD.format(name="launcher"))
    (root / "m-other.yaml").write_text(_WORKLOAD.format(name="other"))
    (root / "z-scripts.yaml").write_text(_SCRIPTS)
    return root


def test_inline_suppressions_used_from_another_file(tmp_path: Path) -> None:
    """The directive sits in z-scripts.yaml; the findings come from scanning the workload files."""
    root = _cross_file_tree(tmp_path)
    one, two = _both("--format", "json", "--show-suppressed", "--extend-select", "GPU092", str(root))
    assert one == two
    findings = json.loads(one[1])["findings"]
    unused = [f for f in findings if f["rule"] == "GPU092"]
    assert [(f["line"], "GPU001" in f["message"]) for f in unused] == [(8, True)]
    inline = [f for f in findings if (f["suppression"] or {}).get("kind") == "inline"]
    assert {(f["rule"], f["line"]) for f in inline} == {("GPU002", 7)} and len(inline) == 2


def test_write_baseline_and_use_it(tmp_path: Path) -> None:
    root = _cross_file_tree(tmp_path / "tree")
    baselines = []
    for jobs in ("1", "2"):
        path = tmp_path / f"baseline-{jobs}.json"
        code, out, err = run_cli("scan", "--jobs", jobs, "--format", "json", "--write-baseline", str(path),
                                 str(FIXTURES / "rules"), str(root))
        assert code == 0, err
        baselines.append(path.read_bytes())
    assert baselines[0] == baselines[1]
    one, two = _both("--format", "json", "--show-suppressed", "--baseline", str(tmp_path / "baseline-1.json"),
                     str(FIXTURES / "rules"), str(root))
    assert one == two and one[0] == 0


def test_baseline_counts_are_taken_in_scan_order(tmp_path: Path) -> None:
    """Two workloads of the same identity in two files run the same mounted script: one
    baseline entry with count 1 covers the finding met first, whichever worker meets it."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "z-scripts.yaml").write_text(_SCRIPTS.replace("  # gpulint: ignore[GPU002] launcher host, reviewed", ""))
    (root / "a.yaml").write_text(_WORKLOAD.format(name="same"))
    (root / "b.yaml").write_text(_WORKLOAD.format(name="same"))
    baseline = tmp_path / "baseline.json"
    run_cli("scan", "--jobs", "1", "--write-baseline", str(baseline), str(root))
    data = json.loads(baseline.read_text())
    for entry in data["entries"]:
        entry["count"] = 1
    baseline.write_text(json.dumps(data))
    one, two = _both("--format", "json", "--show-suppressed", "--baseline", str(baseline), str(root))
    assert one == two
    findings = [f for f in json.loads(one[1])["findings"] if f["rule"] == "GPU002" and f["line"] == 7]
    assert [f["suppressed"] for f in findings] == [True, False]


def test_stdin_with_files(tmp_path: Path) -> None:
    text = (FIXTURES / "core" / "anchors.yaml").read_text()
    one, two = _both("--format", "json", "-", str(FIXTURES / "rules" / "GPU006"), input=text)
    assert one == two and json.loads(one[1])["summary"]["files"] > 2


# --- failures ---------------------------------------------------------------------------


class _FakeEntryPoint:
    def __init__(self, name: str, target: object) -> None:
        self.name, self.value, self._target = name, f"tests:{name}", target

    def load(self) -> object:
        return self._target


def _boom(workload, ctx):  # noqa: ANN001, ANN202
    if workload.name == "launcher":
        raise KeyError("a bug")
    yield Violation("plugin saw this workload", ValueAt(workload.obj.path("metadata", "name")))


def test_a_bug_in_a_worker_is_reported_like_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = list(registry._entry_points())
    doc = "What it does\n## What it does\n-\n## Why is this bad\n-\n## Example\n-\n## Use instead\n-\n## References\n-\n"
    rule = Rule(id="GPU198", name="boom-plugin", severity=Severity.WARNING, summary="test plugin", doc=doc,
                check=_boom)
    monkeypatch.setattr(registry, "_entry_points", lambda: real + [_FakeEntryPoint("boom", rule)])
    root = _cross_file_tree(tmp_path)
    one, two = _both("--format", "json", str(root), str(FIXTURES / "rules" / "GPU006"))
    assert one == two
    assert one[0] == 2 and "internal error: KeyError" in one[2]


def test_a_worker_that_dies_is_replaced_by_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    real = parallel._run_batch

    def die_in_workers(batch: list[int]) -> dict:
        if os.getpid() != parent:
            os._exit(3)
        return real(batch)

    monkeypatch.setattr(parallel, "_run_batch", die_in_workers)
    root = _cross_file_tree(tmp_path)
    one, two = _both("--format", "json", "--show-suppressed", "--extend-select", "GPU092", str(root),
                     str(FIXTURES / "rules"))
    assert one == two and one[0] == 1


def test_half_of_the_index_pass_is_read_by_a_helper_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.load.yamlload import DEFAULT_LIMITS
    from gpulint.scan import indexing

    parent = os.getpid()
    real = indexing.index_input

    def noting(item, reader, limits):  # noqa: ANN001, ANN202
        found = real(item, reader, limits)
        objects, errors, data, chunks, size, split = found
        return [*objects], [*errors, f"@{os.getpid()}"], data, chunks, size, split

    monkeypatch.setattr(indexing, "index_input", noting)
    inputs = discover([str(FIXTURES / "rules")]).inputs
    sizes = [os.path.getsize(item.real) if item.kind == "manifest" else None for item in inputs]
    errors: list[str] = []
    indexing.build_index(inputs, InputReader(), DEFAULT_LIMITS, errors, sizes)
    pids = {int(e[1:]) for e in errors}
    assert parent in pids and len(pids) == 2
    manifests = sum(1 for item in inputs if item.kind == "manifest")
    assert len(errors) == manifests  # each manifest read once, by one of them


def test_a_helper_that_dies_leaves_its_share_to_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def die(positions: list[int]) -> dict:
        os._exit(3)

    monkeypatch.setattr(parallel, "_index_share", die)
    root = _cross_file_tree(tmp_path)
    one, two = _both("--format", "json", "--show-suppressed", str(root), str(FIXTURES / "rules"),
                     str(FIXTURES / "workloads"))
    assert one == two and one[0] == 1


def test_the_default_takes_only_the_cpus_other_work_leaves_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "cpus", lambda: 2)
    for load, expected in ((0.0, 2), (0.6, 2), (1.2, 1), (8.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert parallel.default_jobs() == expected, load
    monkeypatch.setattr(parallel, "cpus", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 0.0, 0.0))
    assert parallel.default_jobs() == 5

    def no_load_average() -> tuple:
        raise OSError("not available")

    monkeypatch.setattr(os, "getloadavg", no_load_average)
    assert parallel.default_jobs() == 8


# --- one large stream, scanned in parts ----------------------------------------------------


def _small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sizes scaled down: files over 64 KB are streamed, over 128 KB split in 32 KB parts."""
    from gpulint.load import decode

    monkeypatch.setattr(decode, "WHOLE_MAX", 64 << 10)
    monkeypatch.setattr(parallel, "SPLIT_MIN", 128 << 10)
    monkeypatch.setattr(parallel, "PART_BYTES", 32 << 10)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)


def _stream(path: Path, extra: str = "") -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from gen_corpus import big_stream
    finally:
        sys.path.remove(str(ROOT / "bench"))
    big_stream(path, 1)
    with open(path, "a") as handle:
        handle.write(extra)
    return path


def test_split_points_cut_at_document_starts_with_their_line_numbers(tmp_path: Path) -> None:
    path = _stream(tmp_path / "big.yaml")
    data = path.read_bytes()
    points = parallel.split_points(str(path), 64 << 10)
    assert points is not None and len(points) > 4
    assert points[0][:1] == (0,) and points[-1][1] == len(data)
    for (start, end, line, number), following in zip(points, points[1:] + [None]):
        assert start == 0 or data[start - 1:start + 4] == b"\n---\n"
        assert line == data.count(b"\n", 0, start)
        assert following is None or following[0] == end
        assert number == points.index((start, end, line, number)) << 32
    (tmp_path / "crlf.yaml").write_bytes(data.replace(b"\n", b"\r\n"))
    assert parallel.split_points(str(tmp_path / "crlf.yaml"), 64 << 10) is None
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbf" + data)
    assert parallel.split_points(str(tmp_path / "bom.yaml"), 64 << 10) is None


@pytest.mark.parametrize("extra", ["", "---\nkind: [broken\n", "---\n# gpulint: ignore[GPU001]\n"])
def test_a_large_stream_in_parts_gives_the_report_of_one_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               extra: str) -> None:
    _small_parts(monkeypatch)
    parts: list[int] = []
    real = parallel._Work.scan_part

    def noting(self: parallel._Work, i: int, part: tuple) -> object:
        parts.append(part[0])
        return real(self, i, part)

    monkeypatch.setattr(parallel._Work, "scan_part", noting)
    _stream(tmp_path / "big.yaml", extra)
    (tmp_path / "other.yaml").write_text(ENV_POD.format(name="p", value="all"))
    for fmt in ("json", "sarif"):
        one, two = _both("--format", fmt, "--show-suppressed", "--extend-select", "GPU092", str(tmp_path))
        assert one == two and one[0] == 1
    assert parts   # split: this process scanned parts too (a forked worker's are not noted here)
