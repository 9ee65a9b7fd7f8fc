"""Rendering untrusted charts and kustomizations: nothing fetched, nothing read outside the
repository, bounded time, and render problems reported once, as GPU010, the same on every run."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import ENV_POD, FIXTURES, run_cli, scan_json, scanned
from expectations import read
from tooling import process_gone, sleeper

from gpulint.render import tools
from gpulint.render.tools import clean_message

CANARY = "CANARY-7f3a9e"


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Listener:
    server = Listener()
    yield server
    server.close()


def _repo(tmp_path: Path) -> Path:
    """A repository (a git work tree) beside a secret that is not in it."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "token.txt").write_text(CANARY + "\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


def _chart(root: Path, name: str, templates: dict[str, str], extra: dict[str, str] | None = None) -> Path:
    chart = root / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    for file, text in templates.items():
        (chart / "templates" / file).write_text(text)
    for file, text in (extra or {}).items():
        (chart / file).write_text(text)
    return chart


def _hostile_network_repo(repo: Path, port: int) -> None:
    url = f"http://127.0.0.1:{port}"
    _chart(repo, "schema-ref", {"pod.yaml": ENV_POD.format(name="p", value="all")},
           {"values.schema.json": json.dumps({"type": "object", "properties": {"a": {"$ref": f"{url}/a.json"}}}),
            "values.yaml": "a: 1\n"})
    app = repo / "app"
    app.mkdir()
    (app / "pod.yaml").write_text(ENV_POD.format(name="local", value="all"))
    (app / "kustomization.yaml").write_text(
        f"resources:\n- {url}/remote.yaml\n- git::{url}/org/repo.git//deploy?ref=v1\n- pod.yaml\n"
        f"helmCharts:\n- name: gpu\n  repo: {url}/charts\n  version: 1.0.0\n")


def _without_defences(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the network namespace and dead proxies off: only gpulint's checks stand."""
    monkeypatch.setattr(tools, "offline_prefix", lambda: [])
    isolated = tools._isolated_env

    def no_proxies(scratch: Path) -> dict[str, str]:
        return {k: v for k, v in isolated(scratch).items() if "proxy" not in k.lower()}

    monkeypatch.setattr(tools, "_isolated_env", no_proxies)


# --- no network ---------------------------------------------------------------------


def test_nothing_is_fetched_by_gpulints_own_checks(helm: str, kustomize: str, listener: Listener, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    _hostile_network_repo(repo, listener.port)
    _without_defences(monkeypatch)
    code, report = scan_json("--helm", helm, "--kustomize", kustomize, str(repo))
    assert listener.connections == 0
    by_rule = sorted((f["rule"], Path(scanned(f)["path"]).relative_to(repo).as_posix(), scanned(f)["line"])
                     for f in report["findings"])
    assert by_rule == [
        ("GPU003", "app/pod.yaml", 10),                             # the local bypass is still found
        ("GPU003", "schema-ref (rendered)", 12),                    # rendered without the remote schema
        ("GPU010", "app/kustomization.yaml", 2),                    # once for the kustomization
    ]
    [remote] = [f for f in report["findings"] if f["rule"] == "GPU010"]
    assert remote["message"].startswith(f"remote resources not fetched: http://127.0.0.1:{listener.port}/remote.yaml")
    assert remote["severity"] == "warning" and code == 1


def test_a_packaged_subchart_schema_is_not_fetched_either(helm: str, listener: Listener, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    sub = _chart(tmp_path, "sub", {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n"},
                 {"values.schema.json": json.dumps({"$ref": f"http://127.0.0.1:{listener.port}/s.json"})})
    parent = _chart(repo, "parent", {"pod.yaml": ENV_POD.format(name="p", value="all")})
    (parent / "charts").mkdir()
    done = subprocess.run([helm, "package", str(sub), "-d", str(parent / "charts")], capture_output=True, check=False,
                          env={**os.environ, "HELM_CONFIG_HOME": str(tmp_path / "h"), "HELM_CACHE_HOME": str(tmp_path / "h"),
                               "HELM_DATA_HOME": str(tmp_path / "h")})
    assert done.returncode == 0, done.stderr
    _without_defences(monkeypatch)
    _code, report = scan_json("--helm", helm, str(parent))
    assert listener.connections == 0
    assert [(f["rule"], scanned(f)["line"]) for f in report["findings"]] == [("GPU003", 18)]   # after the subchart's ConfigMap


def test_renderers_have_no_network_where_the_system_allows(helm: str, kustomize: str, listener: Listener,
                                                           tmp_path: Path) -> None:
    """Defence in depth: even a renderer given a remote reference reaches nothing."""
    if not tools.offline_prefix():
        pytest.skip("this system does not let an unprivileged process make a network namespace")
    repo = _repo(tmp_path)
    _hostile_network_repo(repo, listener.port)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = tools.run([helm, "template", "x", str(repo / "schema-ref")], None, 30, scratch)
    assert not result.ok
    result = tools.run([kustomize, "kustomize", str(repo / "app")] if kustomize.endswith("kubectl")
                       else [kustomize, "build", str(repo / "app")], None, 30, scratch)
    assert not result.ok
    assert listener.connections == 0


def test_a_remote_kustomization_is_never_handed_to_the_tool(tmp_path: Path) -> None:
    """Not built means not run: a kustomize that records being run is never called."""
    record = tmp_path / "ran"
    fake = tmp_path / "kustomize"
    fake.write_text(f"#!/bin/sh\necho ran >> {record}\n")
    fake.chmod(0o755)
    repo = _repo(tmp_path)
    base = repo / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n- ssh://git@example.com/org/repo.git//k8s\n"
                                             "- example.com/org/repo\n- git::git@example.com:org/repo.git\n")
    overlay = repo / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources:\n- ../base\n- github.com/org/repo/deploy?ref=main\n- git@github.com:org/repo.git\n"
        "patches:\n- path: gpu.yaml\n")
    (overlay / "gpu.yaml").write_text(ENV_POD.format(name="patched", value="all"))
    _code, report = scan_json("--kustomize", str(fake), str(overlay))
    assert not record.exists()
    rows = sorted((f["rule"], Path(f["path"]).relative_to(repo).as_posix(), f["line"], f["column"])
                  for f in report["findings"])
    # One finding per kustomization naming remote references, the patch's bypass still found.
    assert rows == [("GPU003", "overlay/gpu.yaml", 10, 7), ("GPU010", "base/kustomization.yaml", 2, 3),
                    ("GPU010", "overlay/kustomization.yaml", 3, 3)]


def test_a_remote_reference_can_be_suppressed_where_it_is_written(tmp_path: Path) -> None:
    app = _repo(tmp_path) / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text(
        "# vendored and scanned in its own repository\nresources:\n"
        "- github.com/org/gpu-stack//deploy?ref=v1  # gpulint: ignore[GPU010] scanned upstream\n")
    code, report = scan_json(str(app))
    [finding] = report["findings"]
    assert code == 0 and finding["rule"] == "GPU010" and finding["line"] == 3
    assert finding["suppression"] == {"kind": "inline", "reason": "scanned upstream"}


def test_gpu010_fixtures(tmp_path: Path) -> None:
    # (Its charts/ are rendered with the real helm by tests/test_helm_offline.py.)
    directories = [path for path in sorted((FIXTURES / "rules" / "GPU010").iterdir()) if path.name != "charts"]
    _code, report = scan_json(*map(str, directories))
    found = sorted((f["path"], f["rule"], f["line"], f["column"]) for f in report["findings"])
    expected = sorted((str(path), rule, line, column) for directory in directories for path in directory.rglob("*.yaml")
                      for rule, line, column in read(path).active)
    assert found == expected and expected


# --- nothing outside the repository ------------------------------------------------


def test_a_secret_outside_the_repository_never_appears(helm: str, kustomize: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    secret = tmp_path / "x" / "token.txt"
    gen = repo / "k8s" / "gen"
    gen.mkdir(parents=True)
    (gen / "kustomization.yaml").write_text(
        "configMapGenerator:\n- name: env\n  files:\n  - NVIDIA_VISIBLE_DEVICES=../../../x/token.txt\n")
    linked = repo / "k8s" / "linked"
    linked.mkdir()
    (linked / "token.txt").symlink_to(secret)
    (linked / "kustomization.yaml").write_text("configMapGenerator:\n- name: env\n  envs:\n  - token.txt\n")
    generators = repo / "k8s" / "generators"
    generators.mkdir()
    (generators / "gen.yaml").write_text(
        "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: env\nfiles:\n- ../../../x/token.txt\n")
    (generators / "pod.yaml").write_text(ENV_POD.format(name="g", value="none"))
    (generators / "kustomization.yaml").write_text("generators:\n- gen.yaml\nresources:\n- pod.yaml\n")
    outside_base = repo / "k8s" / "outside-base"
    outside_base.mkdir()
    (tmp_path / "x" / "kustomization.yaml").write_text("resources:\n- token.txt\n")
    (outside_base / "kustomization.yaml").write_text("resources:\n- ../../../x\n")
    linked_base = repo / "k8s" / "linked-base"
    (linked_base / "base").mkdir(parents=True)
    (linked_base / "base" / "kustomization.yaml").symlink_to(tmp_path / "x" / "kustomization.yaml")
    (linked_base / "kustomization.yaml").write_text("resources:\n- base\n")
    chart = _chart(repo, "files-get", {"pod.yaml": ENV_POD.format(
        name="p", value='"{{ .Files.Get "token.txt" | trim }}"')})
    (chart / "token.txt").symlink_to(secret)
    (chart / "templates" / "leak.yaml").symlink_to(secret)
    outputs = []
    for fmt in ("json", "text", "sarif", "github"):
        code, out, err = run_cli("scan", "--format", fmt, "--helm", helm, "--kustomize", kustomize, str(repo))
        assert code == 1, err
        outputs.append(out + err)
        assert CANARY not in out + err, fmt
    report = json.loads(outputs[0])
    gpu010 = sorted(Path(f["path"]).relative_to(repo).as_posix() for f in report["findings"] if f["rule"] == "GPU010")
    assert gpu010 == ["files-get/Chart.yaml", "k8s/gen/kustomization.yaml", "k8s/generators/kustomization.yaml",
                      "k8s/linked-base/kustomization.yaml", "k8s/linked/kustomization.yaml",
                      "k8s/outside-base/kustomization.yaml"]
    assert any("outside the repository" in f["message"] for f in report["findings"] if f["rule"] == "GPU010")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_in_a_chart_is_left_out_and_named(helm: str, tmp_path: Path) -> None:
    """Helm would wait on it for ever; the copy leaves it out, and one GPU010 says so (never silently)."""
    repo = _repo(tmp_path)
    chart = _chart(repo, "piped", {"pod.yaml": ENV_POD.format(name="p", value="all")})
    os.mkfifo(chart / "templates" / "pipe.yaml")
    code, report = scan_json("--helm", helm, str(repo))
    assert code == 1
    found = sorted((f["rule"], Path(f["path"]).relative_to(repo).as_posix(), f["line"]) for f in report["findings"])
    assert found == [("GPU003", "piped/templates/pod.yaml", 10),
                     ("GPU010", "piped/Chart.yaml", 1)], found
    (message,) = [f["message"] for f in report["findings"] if f["rule"] == "GPU010"]
    assert f"rendered without {chart}/templates/pipe.yaml: not a regular file (a named pipe" in message, message


def test_a_build_is_never_retried_in_a_less_restricted_mode(kustomize: str, tmp_path: Path) -> None:
    """Argo CD / Flux style `../shared.env`, inside the repository: kustomize's load restrictor refuses
    it and gpulint never lifts the restrictor (a build that reads outside its directory could read
    anything the audit missed); one GPU010 says so and the kustomization's local files are scanned."""
    repo = _repo(tmp_path)
    (repo / "shared.env").write_text("NVIDIA_VISIBLE_DEVICES=all\n")
    app = repo / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("configMapGenerator:\n- name: env\n  envs:\n  - ../shared.env\n"
                                            "resources:\n- pod.yaml\n")
    (app / "pod.yaml").write_text(ENV_POD.format(name="p", value="all"))
    code, report = scan_json("--kustomize", kustomize, str(app))
    rows = [(f["rule"], f["severity"], Path(f["path"]).relative_to(repo).as_posix(), f["line"], f["column"])
            for f in report["findings"]]
    assert rows == [("GPU010", "warning", "app/kustomization.yaml", 1, 1), ("GPU003", "error", "app/pod.yaml", 10, 7)]
    assert "is not in or below" in report["findings"][0]["message"]
    assert report["findings"][0]["message"].endswith("its local resources and patches were scanned as they are")
    assert code == 1 and report["summary"]["scanned"] == report["summary"]["files"] == 1


# --- bounded time -----------------------------------------------------------------


def test_a_renderer_that_never_finishes_is_stopped(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _chart(repo, "slow", {"pod.yaml": ENV_POD.format(name="p", value="none")})
    app = repo / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("resources: []\n")
    helm, helm_pids = sleeper(tmp_path, "helm")
    kustomize, kustomize_pids = sleeper(tmp_path, "kustomize")
    started = time.monotonic()
    code, report = scan_json("--helm", str(helm), "--kustomize", str(kustomize), "--render-timeout", "1", str(repo))
    assert time.monotonic() - started < 15
    messages = sorted(f["message"] for f in report["findings"])
    assert code == 1 and len(messages) == 2
    assert messages[0].startswith("helm template failed: helm did not finish within 1 seconds and was stopped")
    assert messages[1].startswith("kustomize build failed: kustomize did not finish within 1 seconds and was stopped")
    for pids in (helm_pids, kustomize_pids):
        assert process_gone(int(pids.read_text()))          # the whole process group, not only the script


def test_the_timeout_comes_from_the_configuration(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _chart(repo, "slow", {"pod.yaml": ENV_POD.format(name="p", value="none")})
    (repo / ".gpulint.yaml").write_text("render-timeout: 1\n")
    helm, _pids = sleeper(tmp_path, "helm")
    _code, report = scan_json("--helm", str(helm), str(repo))
    [finding] = report["findings"]
    assert "within 1 seconds" in finding["message"]
    code, _out, err = run_cli("scan", "--render-timeout", "0", str(repo))
    assert code == 2
    (repo / ".gpulint.yaml").write_text("render-timeout: soon\n")
    code, _out, err = run_cli("scan", str(repo))
    assert code == 2 and "render-timeout" in err


# --- messages ---------------------------------------------------------------------


def test_klog_and_go_log_framing_is_removed() -> None:
    stderr = ('I1203 09:46:27.231837   14515 loader.go:12] loading\n'
              'E1203 09:46:27.231837   14515 run.go:72] "command failed" err="accumulating resources: '
              'accumulation err=\\"oops\\""\n'
              '2024/12/03 09:46:27 walk.go:74: found symbolic link\n')
    assert clean_message(stderr) == 'accumulating resources: accumulation err="oops"; loading; found symbolic link'
    multi = ('E1203 10:42:18.709246   30041 run.go:72] "command failed" err=<\n'
             "\taccumulating resources: accumulation err='oops'\n\tsecond line\n >\n")
    assert clean_message(multi) == "accumulating resources: accumulation err='oops'; second line"


def test_the_same_render_failure_gives_the_same_bytes(helm: str, kustomize: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    broken = repo / "broken"
    broken.mkdir()
    (broken / "kustomization.yaml").write_text("resources:\n- missing.yaml\n")
    _chart(repo, "fails", {"pod.yaml": '{{ fail "set gpu.enabled" }}\n'})
    runs = [run_cli("scan", "--helm", helm, "--kustomize", kustomize, str(repo)) for _ in range(2)]
    assert runs[0] == runs[1]
    out = runs[0][1]
    assert f"{broken}/kustomization.yaml:2:3: GPU010 [warning] kustomize build failed: " in out  # at the entry
    assert f"{repo}/fails/templates/pod.yaml:1:3: GPU010 [warning] helm template failed: " in out
    assert not re.search(r"[EWIF]\d{4} \d\d:\d\d|run\.go|gpulint-render-|/tmp/", out.replace(str(tmp_path), "T"))


def test_fail_and_required_point_at_the_template_line_and_name_the_option(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    chart = _chart(repo, "needs", {"a.yaml": "# first\nkind: {{ required \"set image.tag\" .Values.image }}\n"})
    _code, report = scan_json("--helm", helm, str(chart))
    [finding] = report["findings"]
    assert (finding["rule"], finding["path"], finding["line"], finding["column"]) == (
        "GPU010", f"{chart}/templates/a.yaml", 2, 9)
    assert finding["message"] == ("helm template failed: execution error at (needs/templates/a.yaml:2:9): "
                                  "set image.tag (the chart needs values: give them with --values FILE or "
                                  "--set KEY=VALUE); the chart was not rendered, so its 1 template file was read "
                                  "as literal text instead: only its literal text was checked, each action read as "
                                  "a placeholder")
    ns = _chart(repo, "ns", {"a.yaml": '{{ if eq .Release.Namespace "default" }}{{ fail "install it in its own '
                             'namespace" }}{{ end }}\n'})
    # gpulint chose `default`, which the chart refuses: it is rendered for a namespace of its own (info).
    _code, report = scan_json("--helm", helm, str(ns))
    [finding] = report["findings"]
    assert (finding["severity"], finding["path"], finding["line"]) == ("info", f"{ns}/Chart.yaml", 1)
    assert "it was rendered for namespace 'ns' instead and checked" in finding["message"]
    # A namespace the user gives is kept: refused, the failure names the option.
    _code, report = scan_json("--helm", helm, "--helm-namespace", "default", str(ns))
    [finding] = report["findings"]
    assert (finding["path"], finding["line"]) == (f"{ns}/templates/a.yaml", 1)
    assert "(rendered for namespace 'default': give the chart's namespace with --helm-namespace); " in (
        finding["message"])
    _code, report = scan_json("--helm", helm, "--helm-namespace", "gpu", str(ns))
    assert report["findings"] == []


def test_a_chart_without_templates_dir_scans_its_root_files(helm: str, tmp_path: Path) -> None:
    """Helm renders only templates/: a chart keeping them at its root renders nothing, so they are
    scanned as they are and the chart is reported."""
    repo = _repo(tmp_path)
    chart = repo / "flat"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: flat\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("gpus: all\n")
    (chart / "pod.yaml").write_text(ENV_POD.format(name="flat", value="all"))
    _code, report = scan_json("--helm", helm, str(chart))
    rows = sorted((f["rule"], f["path"], f["line"]) for f in report["findings"])
    assert rows == [("GPU003", f"{chart}/pod.yaml", 10), ("GPU010", f"{chart}/Chart.yaml", 1)]
    assert "no templates/ directory" in report["findings"][0]["message"] + report["findings"][1]["message"]


def test_render_timeout_is_a_scan_option() -> None:
    from gpulint.cli.scanargs import parse
    from gpulint.cli.scancmd import UsageError

    assert parse(["--render-timeout", "5", "k8s"])["render_timeout"] == 5
    with pytest.raises(UsageError):
        parse(["--render-timeout", "0"])


def test_gpu010_is_reported_unless_ignored_like_gpu000(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Selecting other rules does not hide what could not be rendered; ignoring GPU010 does."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    repo = _repo(tmp_path)
    _chart(repo, "chart", {"pod.yaml": ENV_POD.format(name="p", value="all")})
    # (The chart's template is read as literal text: its GPU003 is found all the same.)
    _code, report = scan_json("--select", "GPU003", str(repo))
    assert [f["rule"] for f in report["findings"]] == ["GPU010", "GPU003"]
    code, report = scan_json("--select", "GPU003", "--ignore", "GPU010", str(repo))
    assert (code, [f["rule"] for f in report["findings"]]) == (1, ["GPU003"])
    (repo / ".gpulint.yaml").write_text("rules:\n  GPU010:\n    enabled: false\n")
    _code, report = scan_json(str(repo))
    assert [f["rule"] for f in report["findings"]] == ["GPU003"]
    _code, report = scan_json("--extend-select", "GPU010", str(repo))
    assert [f["rule"] for f in report["findings"]] == ["GPU010", "GPU003"]
