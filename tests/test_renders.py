"""Renders in parallel: charts and kustomizations render several at once (bounded by --jobs),
identical chart renders run once, and the report is the bytes a `--jobs 1` scan gives,
failures and timeouts included.

The trees come from bench/gen_corpus.py's repository generator, made small (the
benchmark's figure 7 times the full one). helm and kustomize are real (tooling.find_tool).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest
from conftest import ENV_POD, ROOT, mask_klog_headers, run_cli, scanned
from tooling import process_gone, sleeper

from gpulint.config.render import RenderOptions
from gpulint.inputs.discovery import discover, with_chart_values
from gpulint.render import tools
from gpulint.scan import parallel
from gpulint.scan.reader import InputReader

sys.path.insert(0, str(ROOT / "bench"))
from gen_corpus import generate_repository  # noqa: E402

# A chart template setting NVIDIA_VISIBLE_DEVICES from values (`all` by default).
POD = ENV_POD.replace("{value}", '{{{{ .Values.devices | default "all" }}}}')


def _tree(tmp_path: Path) -> tuple[Path, list[tuple[str, ...]]]:
    """A small repository: 2 × 3 overlays, 2 charts with ci values (one with a duplicate file),
    a chart vendored twice, plain manifests."""
    root = tmp_path / "repo"
    renders = generate_repository(root, plain=6, overlays=2, charts=2)
    return root, renders


def _distinct_helm_runs(renders: list[tuple[str, ...]]) -> int:
    """Helm renders of the tree that differ in chart contents or values contents."""
    seen = set()
    for render in renders:
        if render[0] == "helm":
            chart = Path(render[1])
            files = tuple(sorted((p.relative_to(chart).as_posix(), p.read_bytes()) for p in chart.rglob("*")
                                 if p.is_file() and p.parent.name != "ci"))
            seen.add((files, Path(render[2]).read_bytes() if render[2] else None))
    return len(seen)


def _logging_helm(tmp_path: Path, helm: str) -> tuple[Path, Path]:
    """A helm that writes down each of its command lines, then runs the real one."""
    log = tmp_path / "helm.log"
    wrapper = tmp_path / "bin" / "helm"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {helm} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


def _template_runs(log: Path) -> int:
    return sum(1 for line in log.read_text().splitlines() if line.startswith("template ") and "--help" not in line)


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_repository_gives_the_same_bytes_with_any_jobs(helm: str, kustomize: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    root, _renders = _tree(tmp_path)
    args = ["--no-cache", "--helm", helm, "--kustomize", kustomize, "--format", fmt, str(root)]
    one = run_cli("scan", "--jobs", "1", *args)
    assert one[0] == 1 and one[1]
    assert run_cli("scan", "--jobs", "2", *args) == one
    assert run_cli("scan", *args) == one
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)      # workers forked once the renders are done
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    assert run_cli("scan", "--jobs", "2", *args) == one
    if fmt == "json":
        report = json.loads(one[1])
        rendered = {f["path"] for f in report["findings"] if "(rendered" in f["path"]} | {
            m["path"] for f in report["findings"] for m in f["mapped"]}
        # Both vendored copies of the shared chart are reported, each at its own files.
        assert any("team-a/charts/shared-worker/" in path for path in rendered)
        assert any("team-b/charts/shared-worker/" in path for path in rendered)


def test_identical_renders_run_once(helm: str, kustomize: str, tmp_path: Path) -> None:
    root, renders = _tree(tmp_path)
    wrapper, log = _logging_helm(tmp_path, helm)
    chart_inputs = sum(1 for render in renders if render[0] == "helm")
    distinct = _distinct_helm_runs(renders)
    assert distinct < chart_inputs     # the vendored copy and the duplicate ci file
    code, out, _err = run_cli("scan", "--no-cache", "--jobs", "2", "--helm", str(wrapper), "--kustomize", kustomize,
                              "--format", "json", str(root))
    assert code == 1
    assert _template_runs(log) == distinct

    # The same report as when every render runs for itself.
    log.unlink()
    original = tools.SharedRuns.run
    try:
        tools.SharedRuns.run = lambda self, key, paths, start: start()   # type: ignore[method-assign]
        alone = run_cli("scan", "--no-cache", "--jobs", "2", "--helm", str(wrapper), "--kustomize", kustomize,
                        "--format", "json", str(root))
    finally:
        tools.SharedRuns.run = original   # type: ignore[method-assign]
    assert _template_runs(log) == chart_inputs
    assert alone == (code, out, _err)


def test_a_reused_render_keeps_its_own_name_and_values_file(helm: str, tmp_path: Path) -> None:
    """Two values files with the same contents: one run; each render's findings name its own file."""
    repo = tmp_path / "repo"
    chart = repo / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "ci").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    (chart / "templates" / "pod.yaml").write_text(POD.format(name="p"))
    (chart / "values.yaml").write_text("devices: none\n")
    for name in ("a-values.yaml", "b-values.yaml"):
        (chart / "ci" / name).write_text("devices: all\n")
    wrapper, log = _logging_helm(tmp_path, helm)
    code, out, _err = run_cli("scan", "--no-cache", "--helm", str(wrapper), "--format", "json", str(repo))
    assert code == 1 and _template_runs(log) == 2      # the defaults, and one for both ci files
    findings = json.loads(out)["findings"]
    assert [(f["rule"], scanned(f)["path"], scanned(f)["line"], scanned(f)["column"],
             [(m["role"], m["path"], m["line"]) for m in f["mapped"]])
            for f in findings] == [
        ("GPU003", f"{repo / 'app'} (rendered with ci/{name})", 12, 7,
         [("template", str(chart / "templates" / "pod.yaml"), 10), ("values", str(chart / "ci" / name), 1)])
        for name in ("a-values.yaml", "b-values.yaml")]


def test_charts_that_differ_render_apart(helm: str, tmp_path: Path) -> None:
    """Copies of a chart render once; a copy that differs (in its values.yaml) renders for itself."""
    repo = tmp_path / "repo"
    for where, devices in (("x", "all"), ("y", "all"), ("z", "void")):
        chart = repo / where / "app"
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
        (chart / "templates" / "pod.yaml").write_text(POD.format(name="p"))
        (chart / "values.yaml").write_text(f"devices: {devices}\n")
    wrapper, log = _logging_helm(tmp_path, helm)
    _code, out, _err = run_cli("scan", "--no-cache", "--helm", str(wrapper), "--format", "json", str(repo))
    assert _template_runs(log) == 2
    found = [(f["rule"], scanned(f)["path"], [m["path"] for m in f["mapped"]]) for f in json.loads(out)["findings"]]
    assert found == [("GPU003", f"{repo / where / 'app'} (rendered)",
                      [str(repo / where / "app" / "templates" / "pod.yaml"), str(repo / where / "app" / "values.yaml")])
                     for where in ("x", "y")]


# --- failures ------------------------------------------------------------------------------


def _failing_tree(tmp_path: Path) -> Path:
    """Charts and kustomizations that fail: a template error (in two identical copies), a values
    file that fails on its own, a missing resource."""
    repo = tmp_path / "repo"
    for where in ("a", "b"):
        chart = repo / where / "broken"
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: broken\nversion: 0.1.0\n")
        (chart / "templates" / "pod.yaml").write_text("kind: Pod\nname: {{ .Values.x | nosuchfunction }}\n")
    picky = repo / "picky"
    (picky / "templates").mkdir(parents=True)
    (picky / "ci").mkdir()
    (picky / "Chart.yaml").write_text("apiVersion: v2\nname: picky\nversion: 0.1.0\n")
    (picky / "values.yaml").write_text("devices: none\n")
    (picky / "templates" / "pod.yaml").write_text(
        POD.format(name="p") + '{{- if .Values.strict }}{{ required "size is required" .Values.size }}{{ end }}\n')
    (picky / "ci" / "strict-values.yaml").write_text("strict: true\n")
    (picky / "ci" / "gpu-values.yaml").write_text("devices: all\n")
    for name in ("one", "two"):
        overlay = repo / "k8s" / name
        overlay.mkdir(parents=True)
        (overlay / "kustomization.yaml").write_text("resources:\n- missing.yaml\n")
    return repo


def test_render_failures_in_parallel_are_reported_as_before(helm: str, kustomize: str, tmp_path: Path) -> None:
    repo = _failing_tree(tmp_path)
    args = ["--no-cache", "--helm", helm, "--kustomize", kustomize, "--format", "json", str(repo)]
    one = run_cli("scan", "--jobs", "1", *args)
    for other in (run_cli("scan", "--jobs", "2", *args), run_cli("scan", *args)):
        assert (other[0], mask_klog_headers(other[1])) == (one[0], mask_klog_headers(one[1]))
    findings = json.loads(one[1])["findings"]
    gpu010 = [(f["path"], f["line"], f["column"]) for f in findings if f["rule"] == "GPU010"]
    assert gpu010 == [
        (str(repo / "a" / "broken" / "Chart.yaml"), 1, 1),
        (str(repo / "b" / "broken" / "Chart.yaml"), 1, 1),
        (str(repo / "k8s" / "one" / "kustomization.yaml"), 2, 3),
        (str(repo / "k8s" / "two" / "kustomization.yaml"), 2, 3),
        (str(repo / "picky" / "templates" / "pod.yaml"), 12, 27),
    ]
    messages = {f["path"]: f["message"] for f in findings if f["rule"] == "GPU010"}
    for where in ("a", "b"):   # the same chart, failing: each copy reported at its own files
        assert messages[str(repo / where / "broken" / "Chart.yaml")] == (
            'helm template failed: parse error at (broken/templates/pod.yaml:2): function "nosuchfunction" '
            "not defined; the chart was not rendered, so its 1 template file was read as literal text instead: "
            "only its literal text was checked, each action read as a placeholder")
    assert messages[str(repo / "picky" / "templates" / "pod.yaml")] == (
        "helm template failed: execution error at (picky/templates/pod.yaml:12:27): size is required (the chart "
        "needs values: give them with --values FILE or --set KEY=VALUE) (rendered with ci/strict-values.yaml)")
    for name in ("one", "two"):
        message = messages[str(repo / "k8s" / name / "kustomization.yaml")]
        assert message.startswith("kustomize build failed: accumulating resources: ")
        assert f"{repo / 'k8s' / name / 'missing.yaml'}: no such file or directory" in message
        assert "temporary" not in message
    assert [(f["rule"], scanned(f)["path"]) for f in findings if f["rule"] != "GPU010"] == [
        ("GPU003", f"{repo / 'picky'} (rendered with ci/gpu-values.yaml)")]


def _slow_tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    for name in ("c1", "c2", "c3"):
        chart = repo / name
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
        (chart / "templates" / "pod.yaml").write_text(POD.format(name=name))
    for name in ("k1", "k2"):
        (repo / name).mkdir()
        (repo / name / "kustomization.yaml").write_text("resources: []\n")
    return repo


def test_timeouts_in_parallel_are_reported_and_stop_every_renderer(tmp_path: Path) -> None:
    repo = _slow_tree(tmp_path)
    helm, helm_pids = sleeper(tmp_path, "helm")
    kustomize, kustomize_pids = sleeper(tmp_path, "kustomize")
    args = ["--no-cache", "--helm", str(helm), "--kustomize", str(kustomize), "--render-timeout", "1",
            "--format", "json", str(repo)]
    one = run_cli("scan", "--jobs", "1", *args)
    two = run_cli("scan", "--jobs", "3", *args)
    assert one == two and one[0] == 1
    findings = json.loads(two[1])["findings"]
    assert [(f["rule"], f["path"]) for f in findings] == [
        ("GPU010", str(repo / name / "Chart.yaml")) for name in ("c1", "c2", "c3")] + [
        ("GPU010", str(repo / name / "kustomization.yaml")) for name in ("k1", "k2")]
    assert all(f["message"].startswith(("helm template failed: helm did not finish within 1 seconds and was stopped",
                                         "kustomize build failed: kustomize did not finish within 1 seconds"))
               for f in findings)
    pids = [int(pid) for path in (helm_pids, kustomize_pids) for pid in path.read_text().split()]
    assert len(pids) == 2 * 5
    assert all(process_gone(pid) for pid in pids)          # every process group, not only the scripts


def test_an_interrupted_scan_leaves_no_renderer_running(tmp_path: Path) -> None:
    repo = _slow_tree(tmp_path)
    helm, helm_pids = sleeper(tmp_path, "helm")
    options = RenderOptions(helm=str(helm), timeout=120, scan_roots=(str(repo),))
    inputs = [item for item in with_chart_values(discover([str(repo)]).inputs) if item.kind == "chart"]
    reader = InputReader(options)
    reader.start_renders(inputs, 2)
    for _ in range(200):                   # both running renderers have started their child
        if helm_pids.exists() and len(helm_pids.read_text().split()) == 2:
            break
        time.sleep(0.05)
    reader.finish_renders(interrupted=True)
    pids = [int(pid) for pid in helm_pids.read_text().split()]
    assert len(pids) == 2 and all(process_gone(pid) for pid in pids)   # killed, the third never started
    # The next scan of this process renders again.
    assert InputReader(RenderOptions(helm=shutil.which("true") or "/bin/true", scan_roots=(str(repo),))).rendered(
        inputs[0]).failure is None


def test_renders_run_jobs_at_a_time_and_one_per_cpu_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "cpus", lambda: 4)
    assert parallel.render_workers(None, 10) == 4
    assert parallel.render_workers(None, 3) == 3
    assert parallel.render_workers(1, 10) == 1
    assert parallel.render_workers(2, 10) == 2
    assert parallel.render_workers(8, 0) == 1


def test_a_failed_run_is_shared_by_renders_of_the_same_files_only(helm: str, tmp_path: Path) -> None:
    """A configured `charts:` entry naming a ci values file renders what the ci file renders:
    one run, each render's failure reported with its own name. A copy of the chart elsewhere
    fails on its own run, its message naming its own files."""
    repo = _failing_tree(tmp_path)
    shutil.rmtree(repo / "a")
    shutil.rmtree(repo / "k8s")
    shutil.copytree(repo / "picky", repo / "vendor" / "picky")
    (repo / ".gpulint.yaml").write_text("charts:\n- path: picky\n  values: [picky/ci/strict-values.yaml]\n")
    wrapper, log = _logging_helm(tmp_path, helm)
    code, out, _err = run_cli("scan", "--no-cache", "--jobs", "2", "--helm", str(wrapper), "--format", "json",
                              str(repo))
    # b/broken once; picky: defaults, gpu, strict (shared by the configured entry); the vendored
    # copy: defaults and gpu shared with picky, strict failing on its own.
    assert code == 1 and _template_runs(log) == 5
    failed = [(f["path"], f["line"], f["message"].rsplit(" (rendered with ", 1)[-1])
              for f in json.loads(out)["findings"] if f["rule"] == "GPU010" and "picky" in f["path"]]
    assert failed == [
        (str(repo / "picky" / "templates" / "pod.yaml"), 12, f"{repo / 'picky' / 'ci' / 'strict-values.yaml'})"),
        (str(repo / "picky" / "templates" / "pod.yaml"), 12, "ci/strict-values.yaml)"),
        (str(repo / "vendor" / "picky" / "templates" / "pod.yaml"), 12, "ci/strict-values.yaml)")]


def test_a_shared_failure_names_each_renders_own_paths(tmp_path: Path) -> None:
    """A message naming the private copy reads, for a render that took another's run, as its own run's."""
    from gpulint.render.helm import render_chart

    repo = _slow_tree(tmp_path)
    helm = tmp_path / "helm"
    helm.write_text('#!/bin/sh\neval last=\\${$#}\necho "Error: cannot load $last/Chart.yaml" >&2\nexit 1\n')
    helm.chmod(0o755)
    options = RenderOptions(helm=str(helm), scan_roots=(str(repo),))
    shared = tools.SharedRuns()
    first, second = (render_chart(repo / "c1", shown, options, None, shared) for shown in ("c1", "again/c1"))
    assert shared.runs == 1
    assert first.failure is not None and second.failure is not None
    assert first.failure.message == "helm template failed: cannot load c1/Chart.yaml"
    assert second.failure.message == "helm template failed: cannot load again/c1/Chart.yaml"
