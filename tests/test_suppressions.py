"""Suppressions: inline comments, object annotations, config exemptions, their order, visibility."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Iterator

import jsonschema
import pytest
from conftest import BAD_POD, run_cli, scan_json

from gpulint.api import DOC_HEADINGS, KeyAt, LineAt, Rule, Severity, Violation
from gpulint.scan.runconfig import CliOptions, plan
from gpulint.config.settings import default_config, load_config
from gpulint.inputs.discovery import discover
from gpulint.results.findings import Suppression
from gpulint.results.scanning import ScanResult
from gpulint.scan.engine import scan
from gpulint.scan.registry import load_rules
from gpulint.suppress.inline import parse_directive

_DOC = "\n".join(f"## {heading}\ntest" for heading in DOC_HEADINGS)


def _host_pid(workload, ctx) -> Iterator[Violation]:  # a pod-level finding, no container
    for pod in workload.pod_specs:
        if pod.host_pid:
            yield Violation("hostPID", KeyAt(pod.path + ("hostPID",)))


def _dockerfile_env(dockerfile, ctx) -> Iterator[Violation]:
    for pair in dockerfile.env():
        if pair.key == "NVIDIA_VISIBLE_DEVICES" and pair.value == "all":
            ins = pair.instruction
            yield Violation("ENV all", LineAt(ins.line, ins.column, ins.line, ins.column + 3))


TEST_RULES = {
    "GPU150": Rule(id="GPU150", name="test-host-pid", severity=Severity.ERROR, summary="t", doc=_DOC,
                   check=_host_pid),
    "GPU151": Rule(id="GPU151", name="test-dockerfile-env", severity=Severity.ERROR, summary="t", doc=_DOC,
                   check_dockerfile=_dockerfile_env),
}


def _scan(paths: list[str], config_file: Path | None = None, system=None, **cli) -> ScanResult:
    rules = {**load_rules(), **TEST_RULES}
    project = load_config(config_file, rules) if config_file else default_config()
    run = plan(rules, project, CliOptions(**cli), system=system)
    return scan(discover(paths).inputs, run.scan)


def _outcomes(result: ScanResult) -> list[tuple]:
    return [(f.rule_id, f.span.line, f.suppressed.kind if f.suppressed else None,
             f.suppressed.reason if f.suppressed else None) for f in result.findings]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


# --- parsing comments ----------------------------------------------------------


@pytest.mark.parametrize("line, codes, reason, own_line", [
    ("# gpulint: ignore[GPU003] the reason", ("GPU003",), "the reason", True),
    ("  - name: X  # gpulint: ignore[GPU003, GPU006] -- why", ("GPU003", "GPU006"), "why", False),
    ("#gpulint:ignore[visible-devices-env]: why", ("visible-devices-env",), "why", True),
    ("# GPULINT: Ignore[GPU003] why  # expect: GPU003", ("GPU003",), "why", True),
    ("# gpulint: ignore[GPU003]", ("GPU003",), "", True),
    ("# gpulint: ignore see issue #12", (), "see issue #12", True),
    ("# gpulint: ignore[] nothing", (), "nothing", True),
    ("# gpulint: ignore [GPU003] space before the codes", ("GPU003",), "space before the codes", True),
    ("RUN make # gpulint: ignore[GPU004 GPU005] build step", ("GPU004", "GPU005"), "build step", False),
])
def test_parse_directive(line: str, codes: tuple, reason: str, own_line: bool) -> None:
    directive = parse_directive(line, 7)
    assert directive is not None
    assert (directive.codes, directive.reason, directive.own_line, directive.line) == (codes, reason, own_line, 7)
    assert directive.column == line.index("#") + 1


@pytest.mark.parametrize("line", [
    "value: a#gpulint: ignore[GPU003] x",        # not a comment
    "# gpulint: ignored[GPU003] x",              # another word
    "# gpulint: ignore-next[GPU003] x",
    "# pylint: ignore[GPU003]",
])
def test_not_a_directive(line: str) -> None:
    assert parse_directive(line, 1) is None


# --- inline comments -----------------------------------------------------------

INLINE = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: a
    image: registry.example.com/app:1
    env:
    - name: NVIDIA_VISIBLE_DEVICES   # gpulint: ignore[GPU003] same line
      value: all
  - name: b
    image: registry.example.com/app:1
    env:
    # gpulint: ignore[GPU079, visible-devices-env] line above, by name
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
  - name: c
    image: registry.example.com/app:1
    env:
    - {name: OTHER, value: x}   # gpulint: ignore[GPU003] trailing: only for its own line
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
  - name: d
    image: registry.example.com/app:1
    env:
    # gpulint: ignore[GPU003] two lines above does not count

    - name: NVIDIA_VISIBLE_DEVICES
      value: all
"""


def test_inline_comments(repo: Path) -> None:
    (repo / "p.yaml").write_text(INLINE)
    assert _outcomes(_scan([str(repo / "p.yaml")])) == [
        ("GPU003", 10, "inline", "same line"),
        ("GPU003", 16, "inline", "line above, by name"),
        ("GPU003", 22, None, None),
        ("GPU003", 29, None, None),
    ]


def test_inline_comment_inside_a_multi_document_file_uses_file_lines(repo: Path) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + INLINE
    (repo / "p.yaml").write_text(text)
    assert [(rule, line, kind) for rule, line, kind, _ in _outcomes(_scan([str(repo / "p.yaml")]))] == [
        ("GPU003", 14, "inline"), ("GPU003", 20, "inline"), ("GPU003", 26, None), ("GPU003", 33, None)]


def test_inline_comments_with_crlf_line_ends(repo: Path) -> None:
    (repo / "p.yaml").write_bytes(INLINE.replace("\n", "\r\n").encode())
    assert [(o[1], o[3]) for o in _outcomes(_scan([str(repo / "p.yaml")]))] == [
        (10, "same line"), (16, "line above, by name"), (22, None), (29, None)]


def test_dockerfile_inline_comments(repo: Path) -> None:
    (repo / "Dockerfile").write_text(
        "FROM registry.example.com/base:1\n"
        "# gpulint: ignore[GPU151] base image for the burn-in job only\n"
        "ENV NVIDIA_VISIBLE_DEVICES=all\n"
        "#   gpulint: ignore[test-dockerfile-env] by name\n"
        "ENV NVIDIA_VISIBLE_DEVICES all\n"
        "ENV NVIDIA_VISIBLE_DEVICES=all\n")
    assert _outcomes(_scan([str(repo / "Dockerfile")], select=["GPU151"])) == [
        ("GPU151", 3, "inline", "base image for the burn-in job only"),
        ("GPU151", 5, "inline", "by name"),
        ("GPU151", 6, None, None),
    ]


def test_a_directive_cannot_silence_the_report_about_itself(repo: Path) -> None:
    (repo / "p.yaml").write_text(INLINE.replace(
        "# gpulint: ignore[GPU003] same line", "# gpulint: ignore[GPU003,GPU090]"))
    outcomes = _outcomes(_scan([str(repo / "p.yaml")]))
    assert ("GPU003", 10, "inline", "no reason given") in outcomes
    assert ("GPU090", 10, None, None) in outcomes


def test_unused_inline_codes_are_reported_only_when_enabled(repo: Path) -> None:
    (repo / "p.yaml").write_text(INLINE)
    assert not [f for f in _scan([str(repo / "p.yaml")]).findings if f.rule_id == "GPU092"]
    unused = [(f.span.line, f.span.column, f.message)
              for f in _scan([str(repo / "p.yaml")], extend_select=["GPU092"]).findings if f.rule_id == "GPU092"]
    assert unused == [
        (15, 5, "unused suppression: GPU079 (unknown rule); remove it from "
                "`# gpulint: ignore[GPU079,visible-devices-env]`"),
        (21, 33, "unused suppression: GPU003 (no such finding here); remove it from `# gpulint: ignore[GPU003]`"),
        (27, 5, "unused suppression: GPU003 (no such finding here); remove it from `# gpulint: ignore[GPU003]`"),
    ]


# --- annotations -----------------------------------------------------------------

RAY = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
spec:
  headGroupSpec:
    template:
      spec:
        hostPID: true
        containers:
        - name: head
          image: rayproject/ray:2.9.0
          env:
          - name: NVIDIA_VISIBLE_DEVICES
            value: all
  workerGroupSpecs:
  - groupName: gpu
    template:
      metadata:
        annotations:
          gpulint.io/ignore: "GPU003 GPU150"
          gpulint.io/ignore-reason: "worker image is the vendor's benchmark"
      spec:
        hostPID: true
        containers:
        - name: worker
          image: rayproject/ray:2.9.0
          env:
          - name: NVIDIA_VISIBLE_DEVICES
            value: all
"""


def test_pod_template_annotation_covers_only_its_pod(repo: Path) -> None:
    (repo / "rc.yaml").write_text(RAY)
    reason = "worker image is the vendor's benchmark"
    assert _outcomes(_scan([str(repo / "rc.yaml")])) == [
        ("GPU150", 9, None, None),
        ("GPU003", 14, None, None),
        ("GPU150", 24, "annotation", reason),      # pod-level: matched by field path
        ("GPU003", 29, "annotation", reason),      # container-level: matched by container
    ]


def test_workload_annotation_covers_every_pod(repo: Path) -> None:
    text = RAY.replace("metadata:\n  name: rc\n", "metadata:\n  name: rc\n  annotations:\n"
                       "    gpulint.io/ignore: GPU150\n    gpulint.io/ignore-reason: all pods share the host\n")
    (repo / "rc.yaml").write_text(text)
    outcomes = _outcomes(_scan([str(repo / "rc.yaml")]))
    assert [(o[0], o[2], o[3]) for o in outcomes if o[0] == "GPU150"] == [
        ("GPU150", "annotation", "all pods share the host"),
        ("GPU150", "annotation", "all pods share the host"),   # the workload's comes first
    ]


def test_annotations_are_read_per_workload(repo: Path) -> None:
    """The ignore annotations are read once per workload (model/ignores.py): the items of one List
    document are workloads of their own, each silenced by its own annotation only."""
    pod = ("- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: {name}\n{annotations}  spec:\n"
           "    containers:\n    - name: c\n      image: registry.example.com/app:1\n"
           "      env: [{{name: NVIDIA_VISIBLE_DEVICES, value: all}}]\n")
    annotated = ("    annotations:\n      gpulint.io/ignore: GPU003\n"
                 "      gpulint.io/ignore-reason: {reason}\n")
    (repo / "list.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        + pod.format(name="a", annotations=annotated.format(reason="first"))
        + pod.format(name="b", annotations="")
        + pod.format(name="c", annotations=annotated.format(reason="third"))
        + pod.format(name="d", annotations=""))
    assert [(o[0], o[2], o[3]) for o in _outcomes(_scan([str(repo / "list.yaml")]))] == [
        ("GPU003", "annotation", "first"),
        ("GPU003", None, None),
        ("GPU003", "annotation", "third"),
        ("GPU003", None, None),
    ]


# --- precedence and visibility ---------------------------------------------------

PRECEDENCE_POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ml
  annotations:
    gpulint.io/ignore: GPU003
    gpulint.io/ignore-reason: from the annotation
spec:
  containers:
  - name: a
    image: registry.example.com/app:1
    env:
    - name: NVIDIA_VISIBLE_DEVICES  # gpulint: ignore[GPU003] from the comment
      value: all
"""


def test_precedence_inline_annotation_config_system_baseline(repo: Path) -> None:
    pod = repo / "p.yaml"
    config = repo / ".gpulint.yaml"
    config.write_text("exemptions:\n- namespace: ml\n  reason: from the config\n")
    pod.write_text(PRECEDENCE_POD)

    def system(finding, ctx):
        return Suppression("system-component", "from the system list")

    def reason(**cli) -> tuple:
        (finding,) = _scan([str(pod)], config if config.exists() else None, system=system, **cli).findings
        return finding.suppressed.kind, finding.suppressed.reason

    assert reason() == ("inline", "from the comment")
    pod.write_text(PRECEDENCE_POD.replace("  # gpulint: ignore[GPU003] from the comment", ""))
    assert reason() == ("annotation", "from the annotation")
    pod.write_text(PRECEDENCE_POD.replace("  # gpulint: ignore[GPU003] from the comment", "")
                   .replace("    gpulint.io/ignore: GPU003\n    gpulint.io/ignore-reason: from the annotation\n",
                            "    team: ml\n"))
    assert reason() == ("config", "from the config")
    config.unlink()
    assert reason() == ("system-component", "from the system list")
    assert run_cli("scan", "--write-baseline", str(repo / "b.json"), str(pod))[0] == 0
    assert reason(baseline=str(repo / "b.json")) == ("system-component", "from the system list")
    result = _scan([str(pod)], baseline=str(repo / "b.json"))
    assert [(f.suppressed.kind, f.suppressed.reason) for f in result.findings] == [
        ("baseline", f"in baseline {repo / 'b.json'}")]


def test_suppressed_findings_stay_visible(repo: Path) -> None:
    (repo / "p.yaml").write_text(INLINE)
    code, report = scan_json(str(repo / "p.yaml"))
    assert code == 1
    suppressed = [f for f in report["findings"] if f["suppressed"]]
    assert [(f["line"], f["suppression"]) for f in suppressed] == [
        (10, {"kind": "inline", "reason": "same line"}),
        (16, {"kind": "inline", "reason": "line above, by name"}),
    ]
    assert report["summary"]["suppressed"] == 2
    assert report["summary"]["findings"] == 2
    report_schema = json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text())
    jsonschema.validate(report, report_schema)
    _code, out, _err = run_cli("scan", str(repo / "p.yaml"))
    assert ":10:" not in out
    assert out.splitlines()[-1].endswith("2 suppressed (--show-suppressed to list).")
    _code, out, _err = run_cli("scan", "--show-suppressed", str(repo / "p.yaml"))
    (line10,) = [line for line in out.splitlines() if ":10:" in line]
    assert line10.endswith('(Pod p, container "a") [suppressed (inline): same line]')


# --- config exemptions -----------------------------------------------------------


def test_exemption_image_matches_pod_level_findings_through_any_container(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "exemptions:\n- rules: [GPU150]\n  image: nvcr.io/nvidia/k8s/dcgm-exporter:*\n  reason: exporter\n"
        "- container: head\n  reason: never for pod-level findings\n")
    (repo / "ds.yaml").write_text("""apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm}
spec:
  template:
    spec:
      hostPID: true
      containers:
      - {name: exporter, image: "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5"}
""")
    (repo / "rc.yaml").write_text(RAY.replace("gpulint.io/ignore:", "x-ignore:"))
    assert _outcomes(_scan([str(repo)], repo / ".gpulint.yaml", select=["GPU003", "GPU150"])) == [
        ("GPU150", 7, "config", "exporter"),
        ("GPU150", 9, None, None),                 # pod-level: `container` does not match it
        ("GPU003", 14, "config", "never for pod-level findings"),
        ("GPU150", 24, None, None),
        ("GPU003", 29, None, None),
    ]


def test_exemption_by_path_glob_relative_to_the_configuration(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / "k8s" / "burn-in").mkdir(parents=True)
    (project / "k8s" / "apps").mkdir()
    (project / ".gpulint.yaml").write_text(
        "exemptions:\n"
        "- path: k8s/burn-in\n  reason: acceptance tests on cordoned nodes\n"
        "- path: ['*.generated.yaml']\n  rules: [GPU003]\n  reason: generated; fixed upstream\n")
    for name in ("k8s/burn-in/job.yaml", "k8s/apps/app.yaml", "k8s/apps/x.generated.yaml"):
        (project / name).write_text(BAD_POD)
    monkeypatch.chdir(tmp_path)   # paths on the command line are relative to here, globs to the configuration
    _, report = scan_json("project")
    assert [(f["path"], f["suppression"] and f["suppression"]["reason"]) for f in report["findings"]] == [
        ("project/k8s/apps/app.yaml", None),
        ("project/k8s/apps/x.generated.yaml", "generated; fixed upstream"),
        ("project/k8s/burn-in/job.yaml", "acceptance tests on cordoned nodes"),
    ]
    (project / ".gpulint.yaml").write_text("exemptions:\n- path: 7\n  reason: x\n")
    code, _, err = run_cli("scan", "project")
    assert code == 2 and "path" in err


def test_a_text_may_hold_a_directive_only_after_a_hash() -> None:
    from gpulint.suppress.inline import _may_hold_directive, parse_directive

    assert not _may_hold_directive("kind: Pod\nmetadata: {name: gpulint: ignore}\n")   # no comment at all
    assert not _may_hold_directive("b: gpulint: ignore  # note\n")   # the words before the comment
    assert _may_hold_directive("kind: Pod\nx: 1  # GpUlInT: IGNORE[GPU001] why\n")
    assert _may_hold_directive("# head\n# gpulint:   ignore\n")
    assert not _may_hold_directive("# Source: t.yaml\nkind: Pod\nx: gpulint: ignore\n")   # not on a comment line
    comments = "".join(f"# note {n}\n" for n in range(20))
    assert _may_hold_directive(comments + "x: 1  # gpulint: ignore[GPU001]\n")
    assert _may_hold_directive("# a\n" + comments[:40] + "x: 1 #\tGPULINT: ignore\n")
    assert not _may_hold_directive(comments + "x: 1  # no\n")
    assert parse_directive("x: 1  # GpUlInT: IGNORE[GPU001] why", 2).codes == ("GPU001",)
    assert parse_directive("key: gpulint:   ignore", 2) is None
