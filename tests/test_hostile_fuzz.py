"""A bounded hostile-tree fuzz test: random mixes of symlinks out of the repository, named pipes,
YAML tags, byte-order marks, remote and outside references across kustomizations, charts, plain
manifests and configurations. Whatever the mix, a scan reads nothing outside the repository (a
canary beside it never reaches any output), connects to nothing (a listener on 127.0.0.1 counts),
finishes in bounded time, and prints no line GitHub's runner would take for a workflow command.

Derandomized, and a handful of examples: it runs in the suite in seconds, the same every run.
gpulint's network namespace and dead proxies are turned off (where a runner has no namespace),
so only the audit and the renderers' own settings stand.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import stat
import tempfile
import time
from pathlib import Path

import pytest
from conftest import BAD_POD, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_render_safety import Listener, _without_defences
from test_untrusted_pr import _forged
from tooling import find_tool

CANARY = "CANARY-fuzz-51d2"
# Each piece of a hostile tree; {url} is the listener, {out} the secret outside the repository.
KUSTOMIZATION_REFS = [
    "- pod.yaml", "- {url}/remote.yaml", "- git::{url}/org/repo.git//k8s?ref=v1", "- ../../../outside",
    "- linked.yaml", "- pipe.yaml", "- !!binary {b64url}", "- 127.0.0.1:{port}/org/repo",
]
GENERATOR_FORMS = ["none", "file-link", "inline-url", "dir-link", "env-outside"]
CHART_VALUES = ["plain", "fifo", "link-out"]
SCHEMAS = ["none", "ref-url", "bom-ref-url", "ref-file-out"]
MANIFEST_NAMES = ["pod.yaml", "::stop-commands::x.yaml", "a ##[error]b.yaml", "::error file=z::y.yaml"]


@pytest.fixture(scope="module")
def tools_found() -> tuple[str, str]:
    return find_tool("helm"), find_tool("kustomize", "kubectl")


def _write(path: Path, text: str, bom: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())


def _build(root: Path, port: int, refs: list[str], generator: str, bom: bool, values: str, schema: str,
           files_get: bool, names: list[str], config: bool) -> Path:
    outside = root / "outside"
    _write(outside / "token.txt", CANARY + "\n")
    _write(outside / "kustomization.yaml", "resources:\n- token.yaml\n")
    _write(outside / "token.yaml", BAD_POD.replace("value: all", f"value: {CANARY}"))
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    url = f"http://127.0.0.1:{port}"
    fill = {"url": url, "port": port, "b64url": base64.b64encode(f"{url}/tagged.yaml".encode()).decode()}

    app = repo / "k8s" / "app"
    _write(app / "pod.yaml", BAD_POD)
    (app / "linked.yaml").symlink_to(outside / "token.yaml")
    os.mkfifo(app / "pipe.yaml")
    kustomization = "resources:\n" + "".join(ref.format(**fill) + "\n" for ref in refs)
    if generator == "file-link":
        (app / "token.txt").symlink_to(outside / "token.txt")
        _write(app / "gen.yaml", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\n"
                                 "files:\n- token.txt\n")
        kustomization += "generators:\n- gen.yaml\n"
    elif generator == "inline-url":
        kustomization += (f"generators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata:\n"
                          f"    name: g\n  files:\n  - {url}/file.txt\n")
    elif generator == "dir-link":
        (app / "gens").mkdir()
        (app / "gens" / "token.txt").symlink_to(outside / "token.txt")
        _write(app / "gens" / "gen.yaml", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\n"
                                          "files:\n- token.txt\n")
        _write(app / "gens" / "kustomization.yaml", "resources:\n- gen.yaml\n")
        kustomization += "generators:\n- gens\n"
    elif generator == "env-outside":
        kustomization += "configMapGenerator:\n- name: e\n  envs:\n  - ../../../outside/token.txt\n"
    _write(app / "kustomization.yaml", kustomization, bom)

    chart = repo / "charts" / "c"
    _write(chart / "Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    template = BAD_POD.replace("value: all", 'value: {{ .Files.Get "token.txt" | default "all" | quote }}'
                               if files_get else "value: {{ .Values.devices | default \"all\" | quote }}")
    _write(chart / "templates" / "pod.yaml", template)
    (chart / "token.txt").symlink_to(outside / "token.txt")
    if values == "plain":
        _write(chart / "values.yaml", "devices: all\n")
    elif values == "fifo":
        os.mkfifo(chart / "values.yaml")
    else:
        (chart / "values.yaml").symlink_to(outside / "token.txt")
    if schema != "none":
        ref = f"{url}/schema.json" if "url" in schema else f"file://{outside}/token.txt"
        _write(chart / "values.schema.json", json.dumps({"properties": {"devices": {"$ref": ref}}}),
               bom=schema.startswith("bom"))

    for name in names:
        _write(repo / "loose" / name, BAD_POD.replace("value: all", "value: all  # \x1b]0;title\x07 ##[warning]x"))
    if config:
        _write(repo / ".gpulint.yaml", "render-timeout: 3600\nexclude: [nothing]\n")
    return repo


def _stall_guard(repo: Path, seconds: int) -> None:
    """Fail the test (TimeoutError) if the scan takes `seconds`: each of the tree's named pipes is
    first replaced by an empty file and a read blocked on it released (a writer opens and closes
    it), so that the failure is reported instead of the suite hanging."""

    def fire(_signum: int, _frame: object) -> None:
        for path in repo.rglob("*"):
            try:
                if stat.S_ISFIFO(os.lstat(path).st_mode):
                    held = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                    path.unlink()
                    path.write_bytes(b"")
                    os.close(held)
            except OSError:
                pass
        raise TimeoutError(f"the scan stalled for {seconds} seconds")

    signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)


@settings(max_examples=5, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(refs=st.lists(st.sampled_from(KUSTOMIZATION_REFS), min_size=1, max_size=4, unique=True),
       generator=st.sampled_from(GENERATOR_FORMS), bom=st.booleans(), values=st.sampled_from(CHART_VALUES),
       schema=st.sampled_from(SCHEMAS), files_get=st.booleans(),
       names=st.lists(st.sampled_from(MANIFEST_NAMES), min_size=1, max_size=3, unique=True), config=st.booleans())
def test_a_hostile_tree_reads_nothing_outside_connects_nowhere_and_forges_nothing(
        tools_found: tuple[str, str], monkeypatch: pytest.MonkeyPatch, refs: list[str], generator: str, bom: bool,
        values: str, schema: str, files_get: bool, names: list[str], config: bool) -> None:
    helm, kustomize = tools_found
    _without_defences(monkeypatch)
    listener = Listener()
    try:
        with tempfile.TemporaryDirectory(prefix="gpulint-fuzz-") as root:
            repo = _build(Path(root), listener.port, refs, generator, bom, values, schema, files_get, names, config)
            written = Path(root) / "report.json"
            started = time.monotonic()
            _stall_guard(repo, 60)
            try:
                code, out, err = run_cli("scan", "--format", "github", "-o", f"json:{written}", "--verbose", "--no-cache",
                                         "--helm", helm, "--kustomize", kustomize, "--render-timeout", "20",
                                         str(repo))
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, signal.SIG_DFL)
            assert time.monotonic() - started < 20, "the scan stalled"
            assert code == 1, err                   # the repository's own bypasses are found
            text = written.read_text()
            for shown in (out, err, text):
                assert CANARY not in shown
                assert _forged(shown) == []         # a JSON report printed in a log forges nothing either
                assert "\x1b" not in shown
            report = json.loads(text)
            assert report["summary"]["files"] == sum(report["summary"][k] for k in (
                "scanned", "not_kubernetes", "not_kubernetes_unparseable", "unrendered_template", "binary",
                "error", "helm_chart", "outside_root", "ignored"))
    finally:
        listener.close()
    assert listener.connections == 0
