"""Hostile repositories built in tmp_path: a scan reads nothing outside the directories it is given.

A canary secret sits beside the repository; links out of the repository point at it, at `/` and
at `/proc`. The canary must never reach any output format, and the scan must finish (a walk of `/`
or `/proc` would not).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BAD_POD, ENV_POD, run_cli

from gpulint.results.findings import STATUSES

CANARY = "canary-7f3a9c-secret"
FORMATS = ("text", "json", "sarif", "github")


def _hostile_repo(tmp_path: Path) -> Path:
    """A repository with one bad Pod and symlinks out of it; the canary lives outside."""
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "token.yaml").write_text(ENV_POD.format(name="leak", value=CANARY))
    repo = tmp_path / "repo"
    (repo / "k8s").mkdir(parents=True)
    (repo / "k8s" / "pod.yaml").write_text(BAD_POD)
    (repo / "root").symlink_to("/")
    (repo / "proc").symlink_to("/proc")
    (repo / "k8s" / "leak.yaml").symlink_to("../../outside/token.yaml")
    (repo / "k8s" / "secrets").symlink_to(secret)            # a directory outside, absolute
    (repo / "same.yaml").symlink_to("k8s/pod.yaml")          # inside: followed
    (repo / "loop.yaml").symlink_to("loop.yaml")              # a loop (inside, unreadable)
    (repo / "notes.txt").symlink_to("/etc/hostname")          # outside, but not a file gpulint scans
    return repo


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_canary_outside_the_repository_never_reaches_the_output(tmp_path: Path, fmt: str) -> None:
    repo = _hostile_repo(tmp_path)
    code, out, err = run_cli("scan", "--format", fmt, str(repo))
    assert code == 1, err  # the Pod in the repository is still found
    assert CANARY not in out and CANARY not in err
    assert "GPU003" in out
    assert "GPU099" in out


def test_links_out_of_the_root_are_counted_and_say_where_they_point(tmp_path: Path) -> None:
    repo = _hostile_repo(tmp_path)
    code, out, err = run_cli("scan", "--format", "json", str(repo))
    report = json.loads(out)
    summary = report["summary"]
    assert summary["files"] == sum(summary[k] for k in STATUSES)
    assert summary["outside_root"] == 4  # root, proc, k8s/leak.yaml, k8s/secrets (notes.txt is no manifest)
    notes = sorted((f["path"], f["severity"], f["message"]) for f in report["findings"] if f["rule"] == "GPU099")
    assert notes == [
        (f"{repo}/k8s/leak.yaml", "info",
         "symlink to ../../outside/token.yaml points outside the scanned directory: not followed"),
        (f"{repo}/k8s/secrets", "info",
         f"symlink to {tmp_path}/outside points outside the scanned directory: not followed"),
        (f"{repo}/proc", "info", "symlink to /proc points outside the scanned directory: not followed"),
        (f"{repo}/root", "info", "symlink to / points outside the scanned directory: not followed"),
    ]
    # The link inside the repository is followed; the Pod is scanned once (same file), the loop reported.
    assert sorted((f["path"], f["rule"]) for f in report["findings"] if f["rule"] != "GPU099") == [
        (f"{repo}/k8s/pod.yaml", "GPU003"), (f"{repo}/loop.yaml", "GPU000")]
    assert code == 1  # GPU000 for the loop; info findings alone do not fail


def test_a_root_link_in_the_scanned_directory_does_not_stall_the_scan(tmp_path: Path) -> None:
    """In a separate process with a time limit: a walk of `/` would take minutes."""
    repo = _hostile_repo(tmp_path)
    done = subprocess.run([sys.executable, "-m", "gpulint", "scan", "--format", "json", "."], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["summary"]["outside_root"] == 4
    assert CANARY not in done.stdout + done.stderr


def test_a_path_given_explicitly_is_read_as_given(tmp_path: Path) -> None:
    """The user names the link: it is trusted (only links found while walking are held to the root)."""
    repo = _hostile_repo(tmp_path)
    code, out, _err = run_cli("scan", "--format", "json", str(repo / "k8s" / "leak.yaml"))
    assert code == 1
    assert CANARY in out


def test_a_link_to_a_sibling_inside_a_scanned_parent_is_followed(tmp_path: Path) -> None:
    """The root is the directory given: scanning the parent brings the link's target inside it."""
    repo = _hostile_repo(tmp_path)
    (repo / "root").unlink()
    (repo / "proc").unlink()
    code, out, _err = run_cli("scan", "--format", "json", str(tmp_path))
    report = json.loads(out)
    assert report["summary"]["outside_root"] == 0
    assert CANARY in out  # outside/token.yaml is part of this scan


def test_kernel_filesystems_are_never_walked(tmp_path: Path) -> None:
    """Even when the root contains them: a link into /proc from a scan of /proc's parent stays out."""
    (tmp_path / "dev").symlink_to("/dev")
    (tmp_path / "pod.yaml").write_text(BAD_POD)
    code, out, _err = run_cli("scan", "--format", "json", str(tmp_path))
    report = json.loads(out)
    assert report["summary"]["outside_root"] == 1
    assert report["summary"]["scanned"] == 1
    code, out, _err = run_cli("scan", "--format", "json", "/proc/self")
    report = json.loads(out)
    assert report["summary"]["files"] == report["summary"]["outside_root"] == 1
    assert [f["message"] for f in report["findings"]] == [
        "kernel filesystem directory (/proc, /sys or /dev): not scanned"]


def test_gpu080_can_be_turned_off_and_still_counts(tmp_path: Path) -> None:
    repo = _hostile_repo(tmp_path)
    code, out, _err = run_cli("scan", "--format", "json", "--ignore", "GPU099", str(repo))
    report = json.loads(out)
    assert report["summary"]["outside_root"] == 4
    assert not [f for f in report["findings"] if f["rule"] == "GPU099"]


def test_the_scan_report_is_the_same_whatever_the_jobs(tmp_path: Path) -> None:
    repo = _hostile_repo(tmp_path)
    for name in ("a", "b", "c"):
        (repo / f"{name}.yaml").write_text(BAD_POD * 50)
    outputs = {run_cli("scan", "--format", "json", "--jobs", str(jobs), str(repo))[1] for jobs in (1, 2)}
    assert len(outputs) == 1




# `--output` naming an input: a usage error, and the input survives.

def _clash(tmp_path: Path, args: list[str], output: str, cwd: Path | None = None) -> tuple[int, str]:
    previous = os.getcwd()
    os.chdir(cwd or tmp_path)
    try:
        code, out, err = run_cli("scan", "--format", "json", "-o", output, *args)
    finally:
        os.chdir(previous)
    return code, err


def test_output_naming_the_input_file_is_refused(tmp_path: Path) -> None:
    pod = tmp_path / "in.yaml"
    pod.write_text(BAD_POD)
    code, err = _clash(tmp_path, ["in.yaml"], "in.yaml")
    assert code == 2
    assert err.strip() == ("gpulint: error: --output in.yaml: is in.yaml, which this scan reads; "
                           "the report would replace it (write it elsewhere)")
    assert pod.read_text() == BAD_POD


@pytest.mark.parametrize("output", ["./k8s/../in.yaml", "link.yaml", "hard.yaml", "{abs}"])
def test_output_naming_an_input_another_way_is_refused(tmp_path: Path, output: str) -> None:
    pod = tmp_path / "in.yaml"
    pod.write_text(BAD_POD)
    (tmp_path / "k8s").mkdir()
    (tmp_path / "link.yaml").symlink_to("in.yaml")
    os.link(pod, tmp_path / "hard.yaml")
    code, err = _clash(tmp_path, ["in.yaml"], output.format(abs=pod))
    assert code == 2, err
    assert "which this scan reads" in err
    assert pod.read_text() == BAD_POD


def test_output_naming_a_file_found_by_walking_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k8s").mkdir()
    pod = tmp_path / "k8s" / "pod.yaml"
    pod.write_text(BAD_POD)
    code, err = _clash(tmp_path, ["k8s"], "k8s/pod.yaml")
    assert code == 2 and "is k8s/pod.yaml" in err
    assert pod.read_text() == BAD_POD


def test_output_inside_a_chart_or_naming_the_configuration_is_refused(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("a: 1\n")
    code, err = _clash(tmp_path, ["chart"], "chart/values.yaml")
    assert code == 2 and "is chart," in err
    assert (chart / "values.yaml").read_text() == "a: 1\n"
    (tmp_path / ".gpulint.yaml").write_text("fail-on: error\n")
    (tmp_path / "pod.yaml").write_text(BAD_POD)
    code, err = _clash(tmp_path, ["pod.yaml"], ".gpulint.yaml")
    assert code == 2 and "which this scan reads" in err
    assert (tmp_path / ".gpulint.yaml").read_text() == "fail-on: error\n"


def test_output_naming_a_file_a_kustomization_reads_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n- pod.yaml\n")
    (base / "pod.yaml").write_text(BAD_POD)
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n- ../base\n")
    code, err = _clash(tmp_path, ["overlay"], "base/pod.yaml")
    assert code == 2, err
    assert (base / "pod.yaml").read_text() == BAD_POD


def test_output_elsewhere_in_the_scanned_tree_is_written(tmp_path: Path) -> None:
    """A previous SARIF report beside the manifests is not an input: it is replaced as usual."""
    (tmp_path / "pod.yaml").write_text(BAD_POD)
    (tmp_path / "report.sarif").write_text("old")
    code, _err = _clash(tmp_path, ["."], "report.sarif")
    assert code == 1
    assert json.loads((tmp_path / "report.sarif").read_text())["summary"]["findings"] == 1


def test_a_configuration_linked_from_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    """Configuration errors quote what they read: a link to a secret would print it."""
    (tmp_path / "secret.yaml").write_text(f"select: [{CANARY}]\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pod.yaml").write_text(BAD_POD)
    (repo / ".gpulint.yaml").symlink_to("../secret.yaml")
    code, out, err = run_cli("scan", str(repo))
    assert code == 2
    assert CANARY not in out + err
    assert err == (f"gpulint: error: {repo}/.gpulint.yaml: a symlink to ../secret.yaml, outside the repository: "
                   "not read (name it with --config to use it)\n")
    (repo / "conf").mkdir()  # a link inside the repository is followed
    (repo / "conf" / "gpulint.yaml").write_text("fail-on: never\n")
    (repo / ".gpulint.yaml").unlink()
    (repo / ".gpulint.yaml").symlink_to("conf/gpulint.yaml")
    code, out, err = run_cli("scan", str(repo))
    assert code == 0, err


def test_piped_helm_output_never_leads_the_chart_lookup_out_of_the_working_directory(tmp_path: Path) -> None:
    """`# Source: ../templates/pod.yaml` names the chart `..`: the folder above is not looked at,
    even when it holds a Chart.yaml of that name."""
    from gpulint.render.base import chart_places
    from gpulint.render.helm import find_local_chart

    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: ..\nversion: 0.1.0\n")
    work = tmp_path / "work"
    work.mkdir()
    assert [chart_places(name) for name in ("..", ".", "")] == [(), (), ()]
    assert chart_places("gpu") == (".", "gpu", "charts/gpu")
    assert find_local_chart("..", cwd=work) is None
    stream = work / "out.yaml"
    stream.write_text("---\n# Source: ../templates/pod.yaml\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                      "spec:\n  containers:\n    - name: c\n      image: x\n"
                      "      env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n")
    done = subprocess.run([sys.executable, "-m", "gpulint", "scan", "--no-cache", "--format", "json", "out.yaml"],
                          cwd=work, capture_output=True, text=True)
    [finding] = json.loads(done.stdout)["findings"]
    assert (finding["rule"], finding["line"], finding.get("mapped", [])) == ("GPU003", 10, [])
