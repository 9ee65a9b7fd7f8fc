"""Untrusted pull requests, round 2 (issue #26): each test builds a hostile tree for one door and
checks it is closed. A canary secret sits outside the repository; a TCP listener on 127.0.0.1
counts connections. Network tests turn gpulint's network namespace and dead proxies off, so only
the audit and the renderers' settings stand."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BAD_POD, ENV_POD, run_cli, scan_json
from test_render_safety import CANARY, Listener, _chart, _repo, _without_defences
from tooling import process_gone, sleeper

from gpulint.render import tools


@pytest.fixture
def listener() -> Listener:
    server = Listener()
    yield server
    server.close()


def _rows(report: dict, repo: Path) -> list[tuple[str, str, str, int, int]]:
    return [(f["rule"], f["severity"], Path(f["path"]).relative_to(repo).as_posix(), f["line"], f["column"])
            for f in report["findings"]]


# --- files outside the tree ----------------------------------------------------------------


@pytest.mark.parametrize("form", ["file", "inline", "directory"])
def test_a_generator_configuration_naming_a_link_out_is_not_built(kustomize: str, tmp_path: Path, form: str) -> None:
    """A ConfigMapGenerator configuration (in a file, inline, or in a directory of configurations)
    names `token.txt`, a symlink to the secret: kustomize's load restrictor lets a link in the root
    through, so the audit must read the configuration; the pod beside it is still scanned."""
    repo = _repo(tmp_path)
    app = repo / "app"
    app.mkdir()
    (app / "token.txt").symlink_to(tmp_path / "x" / "token.txt")
    (app / "pod.yaml").write_text(BAD_POD)
    config = ("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: leak\n"
              "literals:\n- a=b\nfiles:\n- token.txt\n")
    if form == "file":
        (app / "gen.yaml").write_text(config)
        entry = "- gen.yaml\n"
    elif form == "inline":
        entry = "- |\n" + "".join(f"  {line}\n" for line in config.splitlines())
    else:
        (app / "gens").mkdir()
        (app / "gens" / "gen.yaml").write_text(config)
        (app / "gens" / "kustomization.yaml").write_text("resources:\n- gen.yaml\n")
        entry = "- gens\n"
    (app / "kustomization.yaml").write_text("resources:\n- pod.yaml\ngenerators:\n" + entry)
    code, out, err = run_cli("scan", "--format", "json", "--kustomize", kustomize, str(repo))
    assert CANARY not in out + err
    report = json.loads(out)
    # (in a directory of configurations, the GPU010 is on its kustomization's entry naming gen.yaml)
    where = ("app/gens/kustomization.yaml", 2, 3) if form == "directory" else ("app/kustomization.yaml", 4, 3)
    assert _rows(report, repo) == [("GPU010", "warning", *where), ("GPU003", "error", "app/pod.yaml", 10, 7)]
    assert "token.txt, which resolves outside the repository" in report["findings"][0]["message"]
    assert code == 1


def test_a_yaml_tag_cannot_hide_a_url_from_the_audit(kustomize: str, listener: Listener, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`!!binary` is base64 to gpulint's loader (tags are ignored) and the decoded URL to kustomize's."""
    repo = _repo(tmp_path)
    app = repo / "app"
    app.mkdir()
    (app / "pod.yaml").write_text(BAD_POD)
    url = base64.b64encode(f"http://127.0.0.1:{listener.port}/remote.yaml".encode()).decode()
    (app / "kustomization.yaml").write_text(f"resources:\n- pod.yaml\n- !!binary {url}\n")
    _without_defences(monkeypatch)
    code, report = scan_json("--kustomize", kustomize, str(repo))
    assert listener.connections == 0
    assert _rows(report, repo) == [("GPU010", "warning", "app/kustomization.yaml", 3, 3),
                                   ("GPU003", "error", "app/pod.yaml", 10, 7)]
    assert "YAML tag !!binary (line 3)" in report["findings"][0]["message"]
    assert code == 1


def test_a_schema_with_a_byte_order_mark_is_audited_too(helm: str, listener: Listener, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's JSON reader refuses a leading BOM; Helm strips it and would follow the reference."""
    repo = _repo(tmp_path)
    schema = json.dumps({"type": "object", "properties": {"a": {"$ref": f"http://127.0.0.1:{listener.port}/a.json"}}})
    chart = _chart(repo, "bom", {"pod.yaml": BAD_POD}, {"values.yaml": "a: 1\n"})
    (chart / "values.schema.json").write_bytes(b"\xef\xbb\xbf" + schema.encode())
    _without_defences(monkeypatch)
    code, report = scan_json("--helm", helm, str(repo))
    assert listener.connections == 0
    # The template's own line (BAD_POD's env entry); the rendered stream's is beside it.
    assert [(f["rule"], f["line"], f["rendered"]["line"]) for f in report["findings"]] == [("GPU003", 10, 12)]
    assert code == 1


def test_an_in_tree_configuration_names_no_values_file_outside_the_repository(helm: str, tmp_path: Path) -> None:
    """A template that echoes a values file: a pull request's `.gpulint.yaml` naming the runner's
    secret would print it in a finding."""
    repo = _repo(tmp_path)
    (tmp_path / "x" / "values.yaml").write_text(f"secret: {CANARY}\n")
    _chart(repo, "echo", {"pod.yaml": ENV_POD.format(name="p", value="{{ .Values.secret | quote }}")},
           {"values.yaml": "secret: none\n"})
    (repo / ".gpulint.yaml").write_text("charts:\n- path: echo\n  values: [../x/values.yaml]\n")
    code, out, err = run_cli("scan", "--format", "json", "--helm", helm, str(repo))
    assert CANARY not in out + err
    assert code == 2
    assert err.strip() == (f"gpulint: error: {repo}/.gpulint.yaml:3:12: `charts[0].values[0]`: ../x/values.yaml is "
                           "outside the repository; a configuration found in the scanned tree names files inside it "
                           "only (give a trusted one with --config)")
    # The same configuration given with --config is trusted: its author chose the file.
    code, out, err = run_cli("scan", "--format", "json", "--helm", helm, "--config", str(repo / ".gpulint.yaml"),
                             str(repo))
    assert code == 1 and CANARY in out


# --- the network ---------------------------------------------------------------------------


def test_remote_forms_in_generator_configurations_reach_nothing(kustomize: str, listener: Listener, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    app = repo / "app"
    app.mkdir()
    url = f"http://127.0.0.1:{listener.port}"
    (app / "gen.yaml").write_text(f"apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: r\n"
                                  f"files:\n- {url}/file.txt\n")
    (app / "helm.yaml").write_text(f"apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: h\n"
                                   f"name: gpu\nrepo: {url}/charts\n")
    (app / "kustomization.yaml").write_text("generators:\n- gen.yaml\n- helm.yaml\n")
    _without_defences(monkeypatch)
    _code, report = scan_json("--kustomize", kustomize, str(repo))
    assert listener.connections == 0
    [finding] = report["findings"]
    assert finding["rule"] == "GPU010" and finding["message"].startswith(f"remote resources not fetched: {url}/file.txt")


def test_kubectl_is_given_no_api_server_to_ask(kustomize: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Some `kubectl`s (a version dispatcher) ask the cluster of the kubeconfig, by default
    127.0.0.1:8080, for its version on every command; gpulint's kubeconfig names port 0."""
    _without_defences(monkeypatch)
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 8080))
    except OSError:
        pytest.skip("127.0.0.1:8080 is in use")
    server.listen(4)
    server.settimeout(0.2)
    app = tmp_path / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("resources: []\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    try:
        argv = [kustomize, "kustomize", str(app)] if kustomize.endswith("kubectl") else [kustomize, "build", str(app)]
        result = tools.run(argv, None, 30, scratch)
        with pytest.raises(socket.timeout):
            server.accept()[0].close()
    finally:
        server.close()
    assert result.ok


# --- forged CI output ----------------------------------------------------------------------


def _forging_tree(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(12):
        (repo / f"0-{i:02}.yaml").write_text(BAD_POD)        # sorted first: these are annotated
    (repo / "::stop-commands::tok.yaml").write_text(BAD_POD)
    (repo / "x ##[error]forged.yaml").write_text(BAD_POD)
    with open(repo / "##[error]big.yaml", "wb") as handle:     # named on stderr by --verbose
        handle.truncate(2 << 20)
    return repo


def _forged(text: str) -> list[str]:
    """Lines GitHub's runner would take for a command that are not gpulint's own. (The runner tries
    the `::` syntax first: a line of gpulint's own commands is read as that command, whatever `##[`
    its escaped properties hold.)"""
    ours = ("::error ", "::warning ", "::notice ", "::group::", "::endgroup::")
    return [line for line in text.splitlines()
            if not line.startswith(ours) and (line.strip().startswith("::") or "##[" in line)]


def test_no_line_of_the_github_format_or_stderr_is_a_forged_command(tmp_path: Path) -> None:
    repo = _forging_tree(tmp_path)
    previous = os.getcwd()
    os.chdir(repo)
    try:
        code, out, err = run_cli("scan", "--format", "github", "--verbose", "--max-file-size", "1", ".")
    finally:
        os.chdir(previous)
    assert code == 1
    assert "::group::" in out                      # 15 errors: five are in the overflow group
    assert _forged(out) == [] and _forged(err) == []
    assert r"\::stop-commands::tok.yaml:10:7: GPU003" in out
    assert r"x ##\[error]forged.yaml:10:7: GPU003" in out
    assert r"gpulint: not scanned: ##\[error]big.yaml: unreadable" in err


def test_text_formats_escape_terminal_sequences_and_commands(tmp_path: Path) -> None:
    pod = BAD_POD.replace("value: all", "value: all  # \x1b]0;owned\x07 \x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\")
    (tmp_path / "pod.yaml").write_text(pod)
    code, out, _err = run_cli("scan", "--format", "full", str(tmp_path))
    assert code == 1 and "\x1b" not in out and "\x07" not in out
    assert r"11 |       value: all  # \x1b]0;owned\x07 \x1b]8;;https://evil.example\x1b\x\x1b]8;;" in out


def test_sarif_messages_escape_link_syntax(tmp_path: Path) -> None:
    pod = BAD_POD.replace("- name: app", "- name: '[click](https://evil.example)'")
    (tmp_path / "pod.yaml").write_text(pod)
    _code, out, _err = run_cli("scan", "--format", "sarif", str(tmp_path))
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["message"]["text"].endswith(r'(Pod bad, container "\[click\](https://evil.example)")')


def test_the_job_summary_makes_no_link_or_mention(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "@org").mkdir()
    (repo / "@org" / "team.yaml").write_text(BAD_POD)
    (repo / "www.evil.example").mkdir()
    (repo / "www.evil.example" / "p.yaml").write_text(BAD_POD)
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"}
    done = subprocess.run([sys.executable, "-m", "gpulint", "scan", "--format", "github", "."], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    text = summary.read_text()
    assert "| @\u200borg/team.yaml | 1 |" in text and "| www\u200b.evil.example/p.yaml | 1 |" in text


# --- hangs and exhaustion ------------------------------------------------------------------


def test_a_named_pipe_as_a_charts_values_file_does_not_stall_the_scan(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    chart = _chart(repo, "fifo", {"pod.yaml": BAD_POD})
    os.mkfifo(chart / "values.yaml")
    done = subprocess.run([sys.executable, "-m", "gpulint", "scan", "--format", "json", "--helm", helm, str(repo)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["rule"], f["line"], (f["rendered"] or {}).get("line")) for f in findings] == [
        ("GPU003", 10, 12), ("GPU010", 1, None)]
    # The pipe was left out of the render, and said so (never silently).
    assert "rendered without" in findings[1]["message"] and "values.yaml: not a regular file" in findings[1]["message"]


def test_a_named_pipe_a_kustomization_reads_is_never_handed_to_kustomize(kustomize: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    app = repo / "app"
    app.mkdir()
    os.mkfifo(app / "pipe.yaml")
    (app / "pod.yaml").write_text(BAD_POD)
    (app / "kustomization.yaml").write_text("resources:\n- pod.yaml\n- pipe.yaml\n")
    started = time.monotonic()
    code, report = scan_json("--kustomize", kustomize, "--render-timeout", "20", str(repo))
    assert time.monotonic() - started < 15
    assert _rows(report, repo) == [("GPU010", "warning", "app/kustomization.yaml", 3, 3),
                                   ("GPU003", "error", "app/pod.yaml", 10, 7)]
    assert code == 1


def test_a_renderer_is_stopped_at_its_memory_limit(helm: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _chart(repo, "bomb", {"cm.yaml": '{{ $x := repeat 2000000000 "a" }}a: {{ len $x }}\n'})
    code, report = scan_json("--helm", helm, "--render-memory", "256", str(repo))
    [finding] = report["findings"]
    assert finding["rule"] == "GPU010" and code == 1
    assert finding["message"].startswith("helm template failed: helm needed more than the 256 MiB of memory a "
                                         "renderer may use and was stopped (raise the limit with --render-memory)")


def test_a_file_above_the_size_limit_is_reported_and_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as handle:
        handle.truncate(3 << 20)               # sparse: 3 MiB of NUL bytes never written
    (tmp_path / "pod.yaml").write_text(BAD_POD)
    code, report = scan_json("--max-file-size", "2", str(tmp_path))
    assert [(f["rule"], Path(f["path"]).name, f["line"], f["column"], f["message"]) for f in report["findings"]] == [
        ("GPU000", "big.yaml", 1, 1, "cannot read file: 3145728 bytes, more than the limit of 2097152 bytes "
                                     "(--max-file-size 2 MiB); not read"),
        ("GPU003", "pod.yaml", 10, 7, report["findings"][1]["message"])]
    assert report["summary"]["error"] == 1 and code == 1


# --- process hygiene and the cache ---------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_renderers_and_remove_temporary_directories(tmp_path: Path, signum: int) -> None:
    repo = _repo(tmp_path)
    _chart(repo, "slow", {"pod.yaml": BAD_POD})
    helm, pids = sleeper(tmp_path, "helm")
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "gpulint", "scan", "--helm", str(helm), "--no-cache", str(repo)],
                               env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids.exists(), "helm never started"
    process.send_signal(signum)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 128 + signum
    assert err.strip().endswith(f"gpulint: terminated (signal {signum})")
    assert process_gone(int(pids.read_text()))
    assert not [p for p in temp.iterdir() if p.name.startswith("gpulint-render-")]


def test_a_cache_folder_that_is_not_ours_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPULINT_NO_CACHE", raising=False)
    target = tmp_path / "pod.yaml"
    target.write_text(BAD_POD)
    shared = tmp_path / "shared"
    shared.mkdir()
    assert run_cli("scan", "--cache-dir", str(shared), str(target))[0] == 1
    [entry] = list(shared.rglob("*.json"))
    stored = json.loads(entry.read_text())
    stored["result"]["files"][0]["findings"] = []          # a planted "No findings"
    entry.write_text(json.dumps(stored))
    shared.chmod(0o777)
    code, _out, err = run_cli("scan", "--cache-dir", str(shared), str(target))
    assert code == 1
    assert err.strip() == (f"gpulint: warning: result cache off: {shared} is writable by other users "
                           "(use a folder of your own with --cache-dir)")
    shared.chmod(0o700)
    (tmp_path / "link").symlink_to(shared)
    code, _out, err = run_cli("scan", "--cache-dir", str(tmp_path / "link"), str(target))
    assert code == 1 and "is a symbolic link" in err


def test_a_cached_result_follows_a_values_line_that_moved(helm: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The rendered text is the same, the values line the finding maps to is not."""
    monkeypatch.delenv("GPULINT_NO_CACHE", raising=False)
    repo = _repo(tmp_path)
    chart = _chart(repo, "c", {"pod.yaml": ENV_POD.format(name="p", value="{{ .Values.devices | quote }}")},
                   {"values.yaml": "devices: all\n"})

    def values_line() -> list[int]:
        _code, report = scan_json("--helm", helm, "--cache-dir", str(tmp_path / "cache"), str(repo))
        return [m["line"] for f in report["findings"] for m in f["mapped"] if m["role"] == "values"]

    assert values_line() == [1]
    (chart / "values.yaml").write_text("# moved down\n\ndevices: all\n")
    assert values_line() == [3]


# --- the gate ------------------------------------------------------------------------------


def test_a_kustomization_that_fails_to_build_keeps_its_files_findings(kustomize: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    app = repo / "app"
    app.mkdir()
    (app / "pod.yaml").write_text(BAD_POD)
    (app / "kustomization.yaml").write_text("resources:\n- pod.yaml\n- missing.yaml\n")
    code, report = scan_json("--kustomize", kustomize, "--fail-on", "error", str(repo))
    assert _rows(report, repo) == [("GPU010", "warning", "app/kustomization.yaml", 3, 3),     # (missing.yaml)
                                   ("GPU003", "error", "app/pod.yaml", 10, 7)]
    assert report["findings"][0]["message"].startswith("kustomize build failed: ")
    assert code == 1                                    # --fail-on error still fails
    assert report["summary"]["files"] == report["summary"]["scanned"] == 1


def test_isolated_reads_no_configuration_from_the_tree(tmp_path: Path) -> None:
    (tmp_path / ".gpulint.yaml").write_text("fail-on: never\nignore: [ALL]\nexclude: ['*']\n")
    (tmp_path / "pod.yaml").write_text(BAD_POD)
    assert run_cli("scan", "--format", "json", str(tmp_path))[0] == 0          # the pull request disarmed it
    code, report = scan_json("--isolated", str(tmp_path))
    assert code == 1 and [(f["rule"], f["line"], f["column"]) for f in report["findings"]] == [("GPU003", 10, 7)]
    trusted = tmp_path / "trusted.yaml"
    trusted.write_text("fail-on: error\n")
    code, report = scan_json("--isolated", "--config", str(trusted), str(tmp_path))
    assert code == 1 and len(report["findings"]) == 1


def test_an_in_tree_render_timeout_is_capped(tmp_path: Path) -> None:
    from gpulint.config.settings import IN_TREE_RENDER_TIMEOUT_MAX, load_config
    from gpulint.scan.registry import load_rules

    (tmp_path / ".gpulint.yaml").write_text("render-timeout: 3600\n")
    rules = load_rules()
    assert load_config(tmp_path / ".gpulint.yaml", rules, from_tree=True).render_timeout == IN_TREE_RENDER_TIMEOUT_MAX
    assert load_config(tmp_path / ".gpulint.yaml", rules).render_timeout == 3600      # given with --config
