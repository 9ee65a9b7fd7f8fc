"""Scanning plain inputs while renders run (gpulint/scan/overlap.py): it happens, and the
result is byte for byte the one of a scan made after every render."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_cli

from gpulint.load.yamlload import Limits, load_documents
from gpulint.model.index import ConfigIndex, source_of
from gpulint.model.objects import objects_in
from gpulint.scan import engine, overlap, parallel

CHART_CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: chart-env}
data:
  devices: all
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shared-env}
data:
  devices: all
"""

CHART_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}-app}
spec:
  selector: {matchLabels: {app: chart-app}}
  template:
    metadata: {labels: {app: chart-app}}
    spec:
      containers:
      - name: reads-plain
        image: registry.example.com/app:1.0
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          valueFrom:
            configMapKeyRef: {name: plain-env, key: devices}
"""

KUSTOMIZATION = """\
resources: [deploy.yaml]
configMapGenerator:
- name: kust-env
  literals: [devices=all]
  options: {disableNameSuffixHash: true}
"""

KUST_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: kust-app}
spec:
  selector: {matchLabels: {app: kust-app}}
  template:
    metadata: {labels: {app: kust-app}}
    spec:
      containers:
      - name: reads-generated
        image: registry.example.com/app:1.0
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          valueFrom:
            configMapKeyRef: {name: kust-env, key: devices}
      - name: reads-plain
        image: registry.example.com/app:1.0
        envFrom:
        - configMapRef: {name: plain-env}
"""

CONSUMER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: main
        image: registry.example.com/app:1.0
        env:
        - name: NVIDIA_VISIBLE_DEVICES
          valueFrom:
            configMapKeyRef: {{name: {configmap}, key: devices}}
"""

PLAIN_CONFIGMAPS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: plain-env}
data:
  devices: all
  NVIDIA_VISIBLE_DEVICES: all
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shared-env}
data:
  devices: void
"""

INDEPENDENT = """\
apiVersion: v1
kind: Pod
metadata: {name: alone}
spec:
  containers:
  - name: main
    image: registry.example.com/app:1.0
    env:
    - {name: NVIDIA_VISIBLE_DEVICES, value: all}
"""


def _tree(root: Path) -> Path:
    """Plain files and renders that read each other's ConfigMaps: a plain Deployment reads one only the
    chart defines (a-reads-chart), one reads a name both define (b-reads-shared: the chart's comes
    later in the scan and replaces the plain one), one reads a plain ConfigMap (d-reads-plain), one
    reads none (e-alone); the chart and the kustomization read the plain ConfigMap."""
    chart = root / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpuchart\nversion: 0.1.0\n")
    (chart / "templates" / "configmap.yaml").write_text(CHART_CONFIGMAP)
    (chart / "templates" / "deployment.yaml").write_text(CHART_DEPLOYMENT)
    kust = root / "kust"
    kust.mkdir()
    (kust / "kustomization.yaml").write_text(KUSTOMIZATION)
    (kust / "deploy.yaml").write_text(KUST_DEPLOYMENT)
    (root / "a-reads-chart.yaml").write_text(CONSUMER.format(name="reads-chart", configmap="chart-env"))
    (root / "b-reads-shared.yaml").write_text(CONSUMER.format(name="reads-shared", configmap="shared-env"))
    (root / "b-configmaps.yaml").write_text(PLAIN_CONFIGMAPS)
    (root / "d-reads-plain.yaml").write_text(CONSUMER.format(name="reads-plain", configmap="plain-env"))
    (root / "e-alone.yaml").write_text(INDEPENDENT)
    return root


PLAIN = ("a-reads-chart.yaml", "b-configmaps.yaml", "b-reads-shared.yaml", "d-reads-plain.yaml", "e-alone.yaml")


def _gated_helm(tmp_path: Path, helm: str) -> tuple[Path, Path, Path]:
    """A helm whose `template` runs wait until `release` exists (and fail after 60 s without it),
    writing down in `log` when they go on."""
    release, log = tmp_path / "release", tmp_path / "order.log"
    wrapper = tmp_path / "bin" / "helm"
    wrapper.parent.mkdir()
    wrapper.write_text(f"""#!/bin/sh
if [ "$1" = template ] && [ "$2" != --help ]; then
  n=0
  while [ ! -e {release} ]; do
    n=$((n + 1))
    if [ $n -gt 1200 ]; then echo "never released" >&2; exit 1; fi
    sleep 0.05
  done
  echo "render goes on" >> {log}
fi
exec {helm} "$@"
""")
    wrapper.chmod(0o755)
    return wrapper, release, log


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict:
    """Notes each plain file scanned (in `log`, and in `scanned` in this process) and, once all of
    them are, creates `release`; counts the early scans kept and made again."""
    state: dict = {"scanned": [], "kept": 0, "again": 0, "release": None, "log": None}
    real_scan = engine.scan_input

    def scan_input(item, *args, **kwargs):  # type: ignore[no-untyped-def]
        report = real_scan(item, *args, **kwargs)
        if not item.kind.rendered and state["release"] is not None:
            name = Path(item.display).name
            state["scanned"].append(name)
            with open(state["log"], "a") as log:
                log.write(f"scanned {name}\n")
            if set(PLAIN) <= set(state["scanned"]):
                state["release"].touch()
        return report

    real_same = overlap.same_answers

    def same_answers(asked, index):  # type: ignore[no-untyped-def]
        kept = real_same(asked, index)
        state["kept" if kept else "again"] += 1
        return kept

    monkeypatch.setattr(engine, "scan_input", scan_input)
    monkeypatch.setattr(overlap, "same_answers", same_answers)
    return state


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_plain_files_are_scanned_before_the_renders_finish(helm: str, kustomize: str, tmp_path: Path,
                                                           spied: dict, jobs: str) -> None:
    root = _tree(tmp_path / "repo")
    wrapper, release, log = _gated_helm(tmp_path, helm)
    spied["release"], spied["log"] = release, log
    code, out, err = run_cli("scan", "--no-cache", "--jobs", jobs, "--helm", str(wrapper), "--kustomize", kustomize,
                             "--format", "json", str(root))
    assert code == 1, err
    # The chart's render could only go on once every plain file had been scanned.
    lines = log.read_text().splitlines()
    assert lines[:len(PLAIN)] == [f"scanned {name}" for name in PLAIN]
    assert lines[len(PLAIN)] == "render goes on"
    assert not [f for f in json.loads(out)["findings"] if f["rule"] == "GPU010"]
    # Two plain files looked up a name the chart's render defines: scanned again once it was in.
    assert spied["again"] == 2 and sorted(spied["scanned"][len(PLAIN):]) == ["a-reads-chart.yaml",
                                                                             "b-reads-shared.yaml"]
    assert spied["kept"] >= len(PLAIN) - 2    # (and the renders' outputs scanned as they came in)


def _findings(out: str) -> list[tuple[str, str, int, int, str]]:
    return [(f["rule"], Path(f["path"]).name, f["line"], f["column"], f["message"])
            for f in json.loads(out)["findings"]]


@pytest.mark.parametrize("fmt", ["json", "text", "sarif"])
def test_the_output_is_the_same_with_and_without_overlap(helm: str, kustomize: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, spied: dict,
                                                          fmt: str) -> None:
    root = _tree(tmp_path / "repo")
    wrapper, release, log = _gated_helm(tmp_path, helm)
    spied["release"], spied["log"] = release, log
    args = ["--no-cache", "--kustomize", kustomize, "--format", fmt, "--show-suppressed", str(root)]
    overlapped = {jobs: run_cli("scan", "--jobs", jobs, "--helm", str(wrapper), *args) for jobs in ("1", "2")}
    assert spied["kept"] and spied["again"]
    real_wanted = overlap.wanted
    monkeypatch.setattr(overlap, "wanted", lambda *a: False)
    after = run_cli("scan", "--jobs", "1", "--helm", str(wrapper), *args)
    assert after[0] == 1
    assert overlapped["1"] == after
    assert overlapped["2"] == after
    # What is left once the renders are in scanned by forked workers.
    monkeypatch.setattr(overlap, "wanted", real_wanted)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "BATCH_FILES", 1)
    release.unlink()
    kept = spied["kept"]
    assert run_cli("scan", "--jobs", "2", "--helm", str(wrapper), *args) == after
    assert spied["kept"] > kept


def test_the_findings_read_configmaps_across_plain_and_rendered_files(helm: str, kustomize: str, tmp_path: Path,
                                                                      spied: dict) -> None:
    root = _tree(tmp_path / "repo")
    wrapper, release, log = _gated_helm(tmp_path, helm)
    spied["release"], spied["log"] = release, log
    code, out, _err = run_cli("scan", "--no-cache", "--jobs", "1", "--helm", str(wrapper), "--kustomize", kustomize,
                              "--format", "json", str(root))
    found = [(rule, name, line, column, _defined_at(message, root)) for rule, name, line, column, message
             in _findings(out)]
    # Every consumer resolved against the whole scan's ConfigMaps: chart-env only the chart defines,
    # shared-env the chart's (later in the scan than the plain one, which says `void`), plain-env the
    # plain file's, read by the chart, the kustomization and a plain file; a plain file reading none.
    assert code == 1
    assert found == [
        ("GPU004", "a-reads-chart.yaml", 13, 11, "chart (rendered):7"),
        ("GPU004", "b-reads-shared.yaml", 13, 11, "chart (rendered):14"),
        ("GPU004", "deployment.yaml", 13, 11, "b-configmaps.yaml:5"),
        ("GPU004", "d-reads-plain.yaml", 13, 11, "b-configmaps.yaml:5"),
        ("GPU003", "e-alone.yaml", 9, 7, None),
        ("GPU004", "deploy.yaml", 13, 11, "kust (rendered):3"),
        ("GPU004", "deploy.yaml", 19, 11, "b-configmaps.yaml:6"),
    ]


def _defined_at(message: str, root: Path) -> str | None:
    """Where the ConfigMap a finding names is defined (file:line, relative to `root`)."""
    found = re.search(r"\(defined at (.*?:\d+)\)", message)
    return found.group(1).replace(f"{root}/", "") if found else None


def _source(text: str):  # type: ignore[no-untyped-def]
    doc = next(iter(load_documents(text, Limits())))
    return source_of(next(iter(objects_in("f.yaml", doc))))


def test_an_early_answer_stands_only_if_the_whole_index_gives_it() -> None:
    plain = _source("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n")
    partial = ConfigIndex()
    partial.add_source(plain)
    recorded = overlap.RecordedIndex(partial)
    assert recorded.lookup("configMap", None, "a") is plain
    assert recorded.lookup("configMap", None, "b") is None
    assert recorded.claim_classes("ResourceClaim", None, "c") is None
    asked = list(recorded.asked)
    same = ConfigIndex()
    same.add_source(plain)
    assert overlap.same_answers(asked, same)
    # A render defines the name looked up in vain.
    more = ConfigIndex()
    more.add_source(plain)
    more.add_source(_source("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"))
    assert not overlap.same_answers(asked, more)
    # A render later in the scan replaces the ConfigMap found (even with the same content).
    replaced = ConfigIndex()
    replaced.add_source(plain)
    replaced.add_source(_source("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"))
    assert not overlap.same_answers(asked, replaced)
    # Anything asked past the index's API cannot be checked: the scan is made again.
    recorded.asked = []
    assert recorded._items is not None
    assert not overlap.same_answers(recorded.asked, same)
    recorded.asked = []
    assert len(recorded) == 1 and [s for s in recorded] == [plain]
    assert overlap.same_answers(recorded.asked, same) and not overlap.same_answers(recorded.asked, more)
