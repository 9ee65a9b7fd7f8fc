"""The result cache (gpulint.scan.cache): same bytes as a scan, keyed by all a result depends on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from gpulint.scan import cache as cache_mod
from gpulint.scan import engine

_WORKLOAD = """apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  template:
    spec:
      containers:
      - name: main
        image: python:3.12-slim
        envFrom:
        - configMapRef: {name: gpu-env}
"""

_CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata: {name: gpu-env, namespace: ml}
data:
  NVIDIA_VISIBLE_DEVICES: %s
"""


@pytest.fixture
def cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The cache on, in a folder of this test's own; returns the folder."""
    monkeypatch.delenv("GPULINT_NO_CACHE", raising=False)
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder / "gpulint"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.json")) if folder.exists() else []


class _Scans:
    """Counts the scans really run (not answered from the cache)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = engine._scan

        def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(engine, "_scan", counting)


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_a_cached_result_gives_the_bytes_of_a_scan_without_cache(fmt: str, cached: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    scans = _Scans(monkeypatch)
    target = str(FIXTURES / "rules")
    uncached = run_cli("scan", "--no-cache", "--jobs", "1", "--show-suppressed", "--format", fmt, target)
    assert scans.count == 1 and _entries(cached) == []
    first = run_cli("scan", "--show-suppressed", "--format", fmt, target)
    second = run_cli("scan", "--show-suppressed", "--format", fmt, target)
    assert scans.count == 2                       # the second was read from the cache
    assert len(_entries(cached)) == 1
    assert uncached == first == second and uncached[0] == 1


def _workload_and_config(folder: Path) -> Path:
    """`folder` holding a workload and the ConfigMap it takes NVIDIA_VISIBLE_DEVICES=all from."""
    folder.mkdir(parents=True)
    (folder / "a-workload.yaml").write_text(_WORKLOAD)
    (folder / "z-config.yaml").write_text(_CONFIGMAP % "all")
    return folder


def test_changing_a_referenced_configmap_changes_the_findings(cached: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    scans = _Scans(monkeypatch)
    root = _workload_and_config(tmp_path / "repo")
    code, out, _err = run_cli("scan", "--format", "json", str(root))
    assert code == 1 and [f["rule"] for f in json.loads(out)["findings"]] == ["GPU004"]
    (root / "z-config.yaml").write_text(_CONFIGMAP % "void")   # the workload's file is unchanged
    code, out, _err = run_cli("scan", "--format", "json", str(root))
    assert code == 0 and json.loads(out)["findings"] == []
    assert scans.count == 2
    (root / "z-config.yaml").write_text(_CONFIGMAP % "all")    # back: the first entry again
    code, out, _err = run_cli("scan", "--format", "json", str(root))
    assert code == 1 and scans.count == 2


def test_options_and_configuration_are_part_of_the_key(cached: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    scans = _Scans(monkeypatch)
    root = _workload_and_config(tmp_path / "repo")
    assert run_cli("scan", "--format", "json", str(root))[0] == 1
    assert run_cli("scan", "--format", "json", "--ignore", "GPU004", str(root))[0] == 0
    (root / ".gpulint.yaml").write_text("ignore: [GPU004]\n")
    assert run_cli("scan", "--format", "json", str(root))[0] == 0
    assert scans.count == 3
    assert run_cli("scan", "--format", "text", str(root))[0] == 0   # only the report differs: cached
    assert scans.count == 3


def test_a_baseline_named_by_the_configuration_is_part_of_the_key(cached: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline the configuration names (outside the scanned folder) decides which findings are
    suppressed: changing it scans again instead of answering with the verdicts of the old one."""
    root = tmp_path / "repo"
    manifests = _workload_and_config(root / "k8s")
    assert run_cli("scan", "--no-cache", "--write-baseline", str(root / "base.json"), str(manifests))[0] == 0
    (root / ".gpulint.yaml").write_text("baseline: base.json\n")
    scans = _Scans(monkeypatch)
    assert run_cli("scan", "--format", "json", str(manifests))[0] == 0        # all in the baseline
    recorded = json.loads((root / "base.json").read_text())
    (root / "base.json").write_text(json.dumps({**recorded, "entries": []}))
    code, out, err = run_cli("scan", "--format", "json", str(manifests))
    assert scans.count == 2, err
    assert code == 1 and json.loads(out)["summary"]["findings"] == 1


def test_a_corrupt_or_foreign_entry_is_ignored(cached: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    scans = _Scans(monkeypatch)
    target = str(FIXTURES / "rules" / "GPU004")
    expected = run_cli("scan", "--format", "json", target)
    [entry] = _entries(cached)
    stored = json.loads(entry.read_text())
    bad_entries = [
        b"\x00garbage",
        json.dumps({**stored, "key": "0" * 64}).encode(),                   # recorded under another key
        json.dumps({**stored, "format": 99}).encode(),
        json.dumps({**stored, "result": {"files": [{"file": 1}]}}).encode(),   # malformed
        json.dumps({**stored, "result": {"files": [{**stored["result"]["files"][0],
                                                    "findings": [["GPU004"]]}]}}).encode(),
    ]
    for number, bad in enumerate(bad_entries, start=2):
        entry.write_bytes(bad)
        assert run_cli("scan", "--format", "json", target) == expected
        assert scans.count == number                    # scanned again, and stored again
        assert json.loads(entry.read_text()) == stored


def test_no_cache_and_the_environment_variable_bypass_it(cached: Path, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    target = str(FIXTURES / "rules" / "GPU004")
    run_cli("scan", "--no-cache", target)
    monkeypatch.setenv("GPULINT_NO_CACHE", "1")
    run_cli("scan", target)
    assert _entries(cached) == []
    monkeypatch.delenv("GPULINT_NO_CACHE")
    run_cli("scan", "--cache-dir", str(tmp_path / "elsewhere"), target)
    assert _entries(cached) == [] and len(_entries(tmp_path / "elsewhere")) == 1
    run_cli("scan", target)
    assert len(_entries(cached)) == 1


def test_writing_a_baseline_always_scans(cached: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scans = _Scans(monkeypatch)
    target = str(FIXTURES / "rules" / "GPU004")
    for _ in range(2):
        baseline = tmp_path / "baseline.json"
        baseline.unlink(missing_ok=True)
        run_cli("scan", "--write-baseline", str(baseline), target)
        assert baseline.exists()
    assert scans.count == 2


def test_the_default_folder_is_the_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_mod.default_dir() == str(tmp_path / "xdg" / "gpulint")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_mod.default_dir() == str(tmp_path / "home" / ".cache" / "gpulint")


def test_an_answer_from_the_cache_writes_nothing(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unchanged re-scan reads its entry and leaves it as it is: no second write."""
    target = str(FIXTURES / "rules" / "GPU004")
    run_cli("scan", "--format", "json", target)
    [entry] = _entries(cached)
    before = entry.stat()
    stored = []
    monkeypatch.setattr(cache_mod.ResultCache, "store", lambda self, key, result: stored.append(key))
    run_cli("scan", "--format", "json", target)
    after = entry.stat()
    assert stored == []
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert sorted(cached.rglob("*.tmp")) == []


def _scan_inputs(root: Path) -> tuple[list, object]:
    from gpulint.inputs.discovery import discover
    from gpulint.results.scanning import ScanConfig

    return discover([str(root)]).inputs, ScanConfig(rules=[])


def test_a_large_file_is_keyed_by_its_content_read_as_a_stream(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    """A file too large to read whole is hashed chunk by chunk (never whole in memory), and
    not kept for the scan; its content still decides the key."""
    from gpulint.load import decode
    from gpulint.scan.reader import InputReader

    monkeypatch.setattr(decode, "WHOLE_MAX", 64)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "big.yaml").write_text(_CONFIGMAP % ("x" * 100))
    (root / "small.yaml").write_text("a: 1\n")
    inputs, config = _scan_inputs(root)
    cache = cache_mod.ResultCache(str(tmp_path / "cache"), "context")
    reader = InputReader()
    first = cache.key(inputs, config, reader)
    assert reader.kept_size(inputs[0]) is None and reader.kept_size(inputs[1]) == 5
    assert cache.key(inputs, config, InputReader()) == first
    (root / "big.yaml").write_text(_CONFIGMAP % ("x" * 99 + "y"))    # same size, other bytes
    assert cache.key(inputs, config, InputReader()) != first


def _one_finding_entry(cached: Path) -> tuple[Path, dict]:
    run_cli("scan", "--format", "json", str(FIXTURES / "rules" / "GPU004"))
    [entry] = _entries(cached)
    return entry, json.loads(entry.read_text())


@pytest.mark.parametrize(("field", "bad"), [
    (0, 4),                                    # rule id
    (2, "fatal"),                              # not a severity
    (2, ["error"]),
    (3, None),                                 # message
    (5, [1, 2, 3]),                            # span of three
    (5, [1, 2, 3, "4"]),
    (5, [1, 2, 3, True]),                      # a bool is no line number
    (6, ["v1", "Pod", 7, None]),               # object name
    (6, ["v1", "Pod", "a", 3]),                # object namespace
    (7, 3),                                    # container
    (9, {"template": 3}),                      # source
    (9, [["template", "x"]]),
    (10, ["inline"]),                          # suppression
    (10, ["inline", None]),
    (11, [["template", "a.yaml", [1, 1, 1], ""]]),   # mapped location
    (11, [["template", "a.yaml", [1, 1, 1, 2], None]]),
])
def test_every_field_of_a_cached_finding_is_checked(cached: Path, field: int, bad: object) -> None:
    entry, stored = _one_finding_entry(cached)
    report = next(r for r in stored["result"]["files"] if r["findings"])
    finding = report["findings"][0]
    key = stored["key"]
    cache = cache_mod.ResultCache(str(cached), "")
    assert cache.load(key) is not None
    finding[field] = bad
    entry.write_text(json.dumps(stored))
    assert cache.load(key) is None


@pytest.mark.parametrize("field", ["file", "status", "documents", "objects", "workloads"])
def test_every_field_of_a_cached_file_report_is_checked(cached: Path, field: str) -> None:
    entry, stored = _one_finding_entry(cached)
    stored["result"]["files"][0][field] = 1.5 if field in ("file", "status") else "1"
    entry.write_text(json.dumps(stored))
    assert cache_mod.ResultCache(str(cached), "").load(stored["key"]) is None


def test_loading_an_entry_leaves_the_collector_as_it_was(cached: Path) -> None:
    import gc

    entry, stored = _one_finding_entry(cached)
    cache = cache_mod.ResultCache(str(cached), "")
    assert gc.isenabled()
    assert cache.load(stored["key"]) is not None and gc.isenabled()
    entry.write_bytes(b"\x00garbage")
    assert cache.load(stored["key"]) is None and gc.isenabled()
    gc.disable()
    try:
        cache.load(stored["key"])
        assert not gc.isenabled()
    finally:
        gc.enable()


_CUDA_POD = """apiVersion: v1
kind: Pod
metadata: {name: cuda, namespace: ml}
spec:
  containers:
  - name: main
    image: nvidia/cuda:12.4.0-base-ubuntu22.04
"""


def test_a_result_without_fixes_answers_only_scans_that_show_none(cached: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A text report shows no fixes, so its scan resolves none; the JSON report after it must not be
    answered with that result, but a text report after a JSON one may be."""
    from gpulint.scan import dispatch

    scans = _Scans(monkeypatch)
    attached: list[str] = []
    real_attach = dispatch.attach_fix
    monkeypatch.setattr(dispatch, "attach_fix", lambda finding, *args: (attached.append(finding.rule_id),
                                                                         real_attach(finding, *args)))
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "pod.yaml").write_text(_CUDA_POD)
    root = str(tmp_path / "repo")
    assert run_cli("scan", "--format", "text", root)[0] == 1
    assert scans.count == 1 and attached == []                  # no fix resolved for a text report
    code, out, _err = run_cli("scan", "--format", "json", root)
    assert scans.count == 2 and attached == ["GPU005"]         # scanned again, with its fix
    [finding] = json.loads(out)["findings"]
    assert finding["fix"]["edits"][0]["text"] == "\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: void"
    assert run_cli("scan", "--format", "json", root)[1] == out
    assert run_cli("scan", "--format", "text", root)[0] == 1
    assert scans.count == 2                                      # both answered from the JSON scan's entry
    run_cli("scan", "--no-cache", "--format", "github", "--diff", root)
    assert attached == ["GPU005", "GPU005"]                      # --diff needs the fix whatever the format
