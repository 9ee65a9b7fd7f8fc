"""bench/accuracy/run.py: the comparison of a scan with hand judgements, on a tiny tree made here (no network)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SPEC = importlib.util.spec_from_file_location("accuracy_run", ROOT / "bench" / "accuracy" / "run.py")
acc = importlib.util.module_from_spec(SPEC)
sys.modules["accuracy_run"] = acc  # dataclasses look their module up by name
SPEC.loader.exec_module(acc)

ENV_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: env-gpu
spec:
  containers:
    - name: app
      image: busybox
      env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: all
"""
PRIV_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: priv-gpu
spec:
  containers:
    - name: app
      image: busybox
      securityContext:
        privileged: true
      resources:
        limits:
          nvidia.com/gpu: 1
"""
CUDA_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: cuda
spec:
  containers:
    - name: app
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
"""
HEADER = "repo\tpath\tline\trule\tverdict\tclass\treason\n"
JUDGED = [
    # GPU003 is reported at line 10 (the `- name:` line): one line away still matches.
    ("owner/demo", "env.yaml", 11, "GPU003", "true", "", "env var"),
    # Judged exempt (infrastructure) but reported active: a regression.
    ("owner/demo", "priv.yaml", 10, "GPU006", "exempt", "infra", "pretend infrastructure"),
    # Judged true, no longer reported: a regression.
    ("owner/demo", "priv.yaml", 2, "GPU001", "true", "", "pretend host access"),
    # Judged false, no longer reported: resolved.
    ("owner/demo", "env.yaml", 4, "GPU005", "false", "ngc-prefix", "pretend false positive"),
    # A bypass in a file gpulint does not read: still missed.
    ("owner/demo", "notes.txt", 1, "GPU003", "miss", "outside-values", "debatable: a note"),
]


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "trees" / "owner+demo"
    tree.mkdir(parents=True)
    (tree / "env.yaml").write_text(ENV_POD)
    (tree / "priv.yaml").write_text(PRIV_POD)
    (tree / "cuda.yaml").write_text(CUDA_POD)
    (tree / "notes.txt").write_text("NVIDIA_VISIBLE_DEVICES=0 is set by the deploy script\n")
    (tmp_path / "repos.tsv").write_text("repo\tcommit\tkind\twhy\nowner/demo\t" + "0" * 40 + "\tsynthetic\ttest\n")
    (tmp_path / "judgements.tsv").write_text(HEADER + "".join("\t".join(map(str, r)) + "\n" for r in JUDGED))
    return tree


def test_compare_a_scanned_tree_with_its_judgements(tmp_path):
    tree = _tree(tmp_path)
    files, found = acc.normalise(acc.scan(tree, acc.default_gpulint()), tree.name)
    assert files == 3  # notes.txt is no input gpulint reads
    assert [(f.path, f.line, f.rule, f.suppressed) for f in found] == [
        ("cuda.yaml", 8, "GPU005", False), ("env.yaml", 10, "GPU003", False), ("priv.yaml", 10, "GPU006", False)]

    cmp = acc.compare("owner/demo", files, found, acc.read_judgements(tmp_path / "judgements.tsv"))
    assert [(j.path, j.line, f.line) for j, f in cmp.still["true"]] == [("env.yaml", 11, 10)]
    assert [(f.path, f.rule) for f in cmp.new] == [("cuda.yaml", "GPU005")]
    assert [(j.path, j.rule, why) for j, why in cmp.regressions] == [
        ("priv.yaml", "GPU006", f"now active: error {found[2].message}"),
        ("priv.yaml", "GPU001", "true finding no longer reported")]
    assert [(j.path, j.rule) for j in cmp.resolved] == [("env.yaml", "GPU005")]
    assert [(j.path, j.rule) for j in cmp.misses_left] == [("notes.txt", "GPU003")]
    assert cmp.fixed_misses == []
    # Two real bypasses judged true (GPU003, GPU001) and one miss; only the GPU003 is found.
    assert acc.bypass_rate([cmp], cmp_judgements(tmp_path), debatable=True) == (1, 3)
    assert acc.bypass_rate([cmp], cmp_judgements(tmp_path), debatable=False) == (1, 2)


def cmp_judgements(tmp_path):
    return acc.read_judgements(tmp_path / "judgements.tsv")


def test_main_prints_the_table_and_writes_json(tmp_path, capsys):
    _tree(tmp_path)
    out = tmp_path / "result.json"
    code = acc.main(["--repos", str(tmp_path / "repos.tsv"), "--judgements", str(tmp_path / "judgements.tsv"),
                     "--trees", str(tmp_path / "trees"), "--work", str(tmp_path / "work"), "--json", str(out)])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert [c.strip() for c in lines[0].split("|")[1:-1]] == [
        "repository", "files", "findings", "true", "false", "noise", "new", "misses", "info", "suppressed"]
    assert [c.strip() for c in lines[2].split("|")[1:-1]] == ["owner/demo", "3", "3", "1", "0", "0", "1", "1", "0", "0"]
    assert "real bypasses found (all): 1/3 = 33.3 %" in lines
    assert json.loads(out.read_text())["measured"] == [{
        "repo": "owner/demo", "files": 3, "findings": 3, "true": 1, "false": 0, "noise": 0, "new": 1, "misses": 1,
        "info": 0, "suppressed": 0, "fixed_misses": 0, "regressions": 2}]


def test_a_miss_is_fixed_by_any_bypass_rule_at_its_place_and_suppressed_true_is_a_regression():
    j = [acc.Judgement("o/r", "values.yaml", 9, "GPU003", "miss", "outside-values", ""),
         acc.Judgement("o/r", "ds.yaml", 20, "GPU002", "true", "", ""),
         acc.Judgement("o/r", "ds.yaml", 30, "GPU006", "exempt", "infra", ""),
         acc.Judgement("o/r", "far.yaml", 1, "GPU003", "miss", "", "")]
    found = [acc.Found("values.yaml", 10, "GPU004", "error", False, "m"),
             acc.Found("ds.yaml", 20, "GPU002", "error", True, "m"),
             acc.Found("ds.yaml", 30, "GPU006", "error", True, "m"),
             acc.Found("far.yaml", 4, "GPU003", "error", False, "m")]  # 3 lines away: not the judged place
    cmp = acc.compare("o/r", 3, found, j)
    assert [(x.path, f.rule) for x, f in cmp.fixed_misses] == [("values.yaml", "GPU004")]
    assert cmp.count("true") == 1  # a found miss is a true finding
    assert [(x.path, why) for x, why in cmp.regressions] == [("ds.yaml", "true finding no longer reported (now suppressed)")]
    assert [(f.path, f.line) for f in cmp.new] == [("far.yaml", 4)]
    assert [x.path for x in cmp.misses_left] == ["far.yaml"]


def test_info_findings_are_counted_apart_never_judged():
    judged = [acc.Judgement("o/r", "t.yaml", 1, "GPU011", "noise", "template-noise", ""),
              acc.Judgement("o/r", "e.yaml", 10, "GPU003", "true", "", "")]
    found = [acc.Found("t.yaml", 1, "GPU011", "info", False, "m"),
             acc.Found("e.yaml", 10, "GPU003", "info", False, "m"),
             acc.Found("u.yaml", 3, "GPU011", "info", False, "m")]
    cmp = acc.compare("o/r", 3, found, judged)
    assert (cmp.active, cmp.new, len(cmp.info)) == ([], [], 3)
    assert [j.path for j in cmp.resolved] == ["t.yaml"]
    assert [(j.path, why) for j, why in cmp.regressions] == [("e.yaml", "true finding no longer reported (now info)")]


def test_a_dup_counts_as_true_but_never_as_a_bypass_or_a_regression():
    judged = [acc.Judgement("o/r", "values.yaml", 35, "GPU003", "miss", "outside-values", ""),
              acc.Judgement("o/r", "chart/templates/d.tpl", 103, "GPU003", "dup", "", "same bypass as values.yaml:35"),
              acc.Judgement("o/r", "other/templates/d.tpl", 7, "GPU003", "dup", "", "same bypass as x")]
    found = [acc.Found("values.yaml", 35, "GPU003", "error", False, "m"),
             acc.Found("chart/templates/d.tpl", 103, "GPU003", "error", False, "m")]
    cmp = acc.compare("o/r", 2, found, judged)
    assert cmp.count("true") == 2 and cmp.new == [] and cmp.regressions == []  # the found miss and the dup
    assert acc.bypass_rate([cmp], judged, debatable=True) == (1, 1)


def test_rendered_findings_are_keyed_by_the_file_a_user_edits():
    report = {"summary": {"files": 2}, "findings": [
        {"rule": "GPU005", "severity": "warning", "message": "m", "suppressed": False,
         "path": "o+r/chart (rendered with ci/a-values.yaml)", "line": 57,
         "mapped": [{"role": "values", "path": "o+r/chart/values.yaml", "line": 3},
                    {"role": "template", "path": "o+r/chart/templates/deploy.yaml", "line": 31}]},
        {"rule": "GPU005", "severity": "warning", "message": "m", "suppressed": False,
         "path": "o+r/chart (rendered)", "line": 12,
         "mapped": [{"role": "template", "path": "o+r/chart/templates/deploy.yaml", "line": 31}]},
        {"rule": "GPU001", "severity": "error", "message": "m", "suppressed": True,
         "path": "o+r/app (rendered)", "line": 45, "mapped": [{"role": "origin", "path": "o+r/app/ds.yaml", "line": 69}]},
        {"rule": "GPU010", "severity": "warning", "message": "m", "suppressed": False, "path": "o+r", "line": 1}]}
    files, found = acc.normalise(report, "o+r")
    assert files == 2
    assert [(f.path, f.line, f.rule, f.suppressed) for f in found] == [
        (".", 1, "GPU010", False), ("app/ds.yaml", 69, "GPU001", True), ("chart/templates/deploy.yaml", 31, "GPU005", False)]
    assert found[2].others == (("chart/values.yaml", 3),)


def test_a_judgement_still_matches_when_the_finding_moves_to_another_place_it_names():
    judged = [acc.Judgement("o/r", "chart/templates/deploy.yaml", 31, "GPU005", "true", "", ""),
              acc.Judgement("o/r", "chart/values.yaml", 40, "GPU003", "miss", "outside-values", "")]
    moved = [acc.Found("chart/values.yaml", 3, "GPU005", "warning", False, "m", (("chart/templates/deploy.yaml", 31),)),
             acc.Found("chart/templates/env.yaml", 9, "GPU003", "error", False, "m", (("chart/values.yaml", 41),))]
    cmp = acc.compare("o/r", 1, moved, judged)
    assert [(j.path, f.path) for j, f in cmp.still["true"]] == [("chart/templates/deploy.yaml", "chart/values.yaml")]
    assert [(j.path, f.path) for j, f in cmp.fixed_misses] == [("chart/values.yaml", "chart/templates/env.yaml")]
    assert cmp.new == [] and cmp.regressions == []


def test_bad_verdict_is_a_clear_error(tmp_path):
    bad = tmp_path / "j.tsv"
    bad.write_text(HEADER + "o/r\tx.yaml\t1\tGPU003\tmaybe\t\t\n")
    with pytest.raises(SystemExit, match=r"j.tsv:2: unknown verdict 'maybe'"):
        acc.read_judgements(bad)


def test_work_folder_inside_the_repository_is_refused(tmp_path, capsys):
    _tree(tmp_path)
    code = acc.main(["--repos", str(tmp_path / "repos.tsv"), "--judgements", str(tmp_path / "judgements.tsv"),
                     "--work", str(ROOT / "bench" / "accuracy" / "trees")])
    assert code == 2
    assert "inside this repository" in capsys.readouterr().err


def test_the_kept_judgements_cover_the_pinned_repositories():
    repos = {r["repo"] for r in acc.read_tsv(acc.HERE / "repos.tsv")}
    judgements = acc.read_judgements(acc.HERE / "judgements.tsv")
    assert len(repos) >= 10
    assert {j.repo for j in judgements} <= repos
    assert all(len(r["commit"]) == 40 for r in acc.read_tsv(acc.HERE / "repos.tsv"))
