"""Running helm and kustomize: found on PATH, time-bounded, isolated from user config.

Rendering never touches the network and never reads or writes the user's Helm
configuration: every run gets fresh HELM_* and KUBECONFIG locations inside a
temporary directory that is removed afterwards. Tool messages are cleaned
before they reach a report (no temporary path ever appears in output).

Renders may run at once in threads of one scan (scan/reader.py): each run is a
process group of its own, and every one still running can be stopped at once
(stop_running: the scan was interrupted). SharedRuns lets identical runs of a
scan happen once.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Hashable

from gpulint.lazypattern import lazy
from gpulint.record import record

# klog (kubectl) frames lines as: E1202 14:56:18.027 12345 run.go:72] "command failed" err="..."
_KLOG_PREFIX_RE = lazy(r"^([EWIF])\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w.\-]+:\d+\] ")
_KLOG_ERR_RE = lazy(r'^"[^"]*" err="(.*)"$')
_KLOG_BLOCK_RE = lazy(r'^"[^"]*" err=<$')        # the error follows on indented lines, up to `>`
# Go's log package: `2024/12/03 09:46:27 walk.go:74: ...` (date, time, source file; each optional).
_GO_LOG_RE = lazy(r"^(?:\d{4}/\d{2}/\d{2} )?(?:\d{2}:\d{2}:\d{2}(?:\.\d+)? )?(?:[\w\-]+\.go:\d+: )?")


@record(eq=True, repr=True)
class RunResult:
    __slots__ = ("ok", "stdout", "message", "timed_out")
    ok: bool
    stdout: str
    message: str          # the tool's error message, cleaned; empty when ok
    timed_out: bool

    def __init__(self, ok: bool, stdout: str, message: str, timed_out: bool = False) -> None:
        self.ok = ok
        self.stdout = stdout
        self.message = message
        self.timed_out = timed_out


class ToolMissing(Exception):
    """The tool is neither given nor on PATH."""


def which(explicit: str | None, *names: str) -> str:
    """The executable to run: the explicit path if given, else the first name on PATH."""
    if explicit:
        if os.sep in explicit or (os.altsep and os.altsep in explicit):
            if Path(explicit).is_file() and os.access(explicit, os.X_OK):
                return explicit
            raise ToolMissing(f"{explicit} is not an executable file")
        found = shutil.which(explicit)
        if found is None:
            raise ToolMissing(f"{explicit} was not found on PATH")
        return found
    for name in names:
        found = shutil.which(name)
        if found is not None:
            return found
    raise ToolMissing(" and ".join(names) + " not found on PATH")


def run(argv: list[str], cwd: str | None, timeout: float, scratch: Path, memory: int | None = None) -> RunResult:
    """Run a renderer with a scrubbed, offline environment rooted in `scratch`.

    The renderer runs in a session of its own: on expiry of `timeout` the whole
    process group (helm plugins, git, ...) is killed, not only the first process.
    `memory`: MiB it may allocate (see memory_prefix); None for no limit.
    """
    env = _isolated_env(scratch)
    _write_kubeconfig(scratch)
    tool = Path(argv[0]).name
    prefix = offline_prefix()
    if memory is not None:
        env["GOMEMLIMIT"] = f"{memory}MiB"       # the Go runtime collects harder before the hard limit
        prefix = memory_prefix(memory) + prefix
    with _LIVE_LOCK:
        if _stopping.is_set():
            return RunResult(False, "", f"{tool} was not run: the scan was interrupted")
        try:
            process = subprocess.Popen(prefix + argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as error:
            return RunResult(False, "", f"cannot run {tool}: {error.strerror or error}")
        _LIVE.add(process)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        return RunResult(False, "", f"{tool} did not finish within {timeout:g} seconds and was stopped "
                                    "(raise the limit with --render-timeout or the `render-timeout` setting)",
                         timed_out=True)
    except BaseException:
        _kill_group(process)
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(process)
    stdout = out.decode("utf-8", errors="replace")
    if process.returncode != 0:
        stderr = err.decode("utf-8", errors="replace")
        if memory is not None and _OUT_OF_MEMORY_RE.search(stderr):
            return RunResult(False, "", f"{tool} needed more than the {memory} MiB of memory a renderer may use and "
                                        "was stopped (raise the limit with --render-memory)")
        return RunResult(False, stdout, clean_message(stderr) or f"{tool} exited with status {process.returncode}")
    return RunResult(True, stdout, "")


# The Go runtime's words when an allocation fails (helm, kustomize and kubectl are Go programs).
_OUT_OF_MEMORY_RE = lazy(r"^(?:fatal error: out of memory|runtime: out of memory)", re.M)

# A Go program reserves about 700-770 MiB of address space before it allocates anything (helm
# 3.17 and kubectl 1.32 would not start under 700 MiB, did under 768): the limit is that much
# on top of what a render may allocate, so `--render-memory` counts the render's own memory.
GO_RESERVE = 1024


def memory_prefix(memory: int) -> list[str]:
    """`prlimit --as=BYTES --` limiting the renderer (and every process it starts) to `memory` MiB
    beyond the Go runtime's reservation: an allocation past it fails and the renderer exits.
    (util-linux's prlimit sets the limit in the child before exec; where it is missing, a
    Python one-liner does the same.)"""
    limit = str((memory + GO_RESERVE) << 20)
    found = _prlimit()
    if found:
        return [found, f"--as={limit}", "--"]
    return [sys.executable, "-S", "-c", "import os,resource,sys;l=int(sys.argv[1]);"
            "resource.setrlimit(resource.RLIMIT_AS,(l,l));os.execvp(sys.argv[2],sys.argv[2:])", limit]


_PRLIMIT: list[str | None] = []


def _prlimit() -> str | None:
    if not _PRLIMIT:
        _PRLIMIT.append(shutil.which("prlimit") if sys.platform.startswith("linux") else None)
    return _PRLIMIT[0]


# Where kubectl (or the version dispatcher some distributions install as `kubectl`) would look
# for an API server: port 0 on the loopback, where nothing can listen. `kubectl kustomize` needs
# no server; a dispatcher that asks for its version reaches nothing and uses its default kubectl.
_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: none
  cluster:
    server: https://127.0.0.1:0
contexts:
- name: none
  context:
    cluster: none
current-context: none
"""


def _write_kubeconfig(scratch: Path) -> None:
    path = scratch / "kubeconfig"
    if not path.exists():
        try:
            path.write_text(_KUBECONFIG, encoding="utf-8")
        except OSError:
            pass


# The renderers running now (in any thread of this process), for stop_running.
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()
_stopping = threading.Event()


def stop_running() -> None:
    """Kill the process group of every renderer running now and start no other: the scan was
    interrupted (each waiting thread then returns at once, its run failed)."""
    with _LIVE_LOCK:
        _stopping.set()
        running = list(_LIVE)
    for process in running:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass


def resume_running() -> None:
    """Allow runs again (after stop_running, for the next scan of this process)."""
    _stopping.clear()


class SharedRuns:
    """Runs of one scan shared by identical requests: the first request of a key runs, the
    others wait for it and take its result. A failed run is shared only by requests with
    the same `paths` (what a message may name: the chart's and the values files' real paths);
    another request runs itself, so that each message names its own files."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[Hashable, _Shared] = {}
        self.runs = 0           # runs made (the others were shared)

    def run(self, key: Hashable, paths: Hashable, start: Callable[[], tuple[RunResult, Any]]) -> tuple[RunResult, Any]:
        """`start()` -> (result, what the caller needs to read it: e.g. the paths it ran on),
        or the same pair from an identical run of this scan."""
        with self._lock:
            shared = self._runs.get(key)
            mine = shared is None
            if shared is None:
                shared = self._runs[key] = _Shared(paths)
        if not mine:
            shared.done.wait()
            if shared.outcome is not None and (shared.outcome[0].ok or shared.paths == paths):
                return shared.outcome
            return self._start(start)
        try:
            shared.outcome = self._start(start)
            return shared.outcome
        finally:
            shared.done.set()       # an exception leaves outcome None: the others run themselves

    def _start(self, start: Callable[[], tuple[RunResult, Any]]) -> tuple[RunResult, Any]:
        with self._lock:
            self.runs += 1
        return start()


class _Shared:
    def __init__(self, paths: Hashable) -> None:
        self.paths = paths
        self.done = threading.Event()
        self.outcome: tuple[RunResult, Any] | None = None


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the renderer's process group and reap it (its pipes are then closed)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        process.communicate(timeout=5)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass


# Defence in depth: gpulint never gives a renderer a remote reference (see kustomizebuild.py and
# helm.py), and a renderer that tries one anyway finds no network. Where the OS lets an
# unprivileged process make a network namespace (`unshare --net --map-root-user`), the
# renderer runs in one with no interface but a down loopback; everywhere, its proxy
# settings send HTTP(S) to a closed local port and git may use no transport at all.
_DEAD_PROXY = "http://127.0.0.1:9"     # the discard port: nothing listens there
_offline: list[str] | None = None
_OFFLINE_LOCK = threading.Lock()


def offline_prefix() -> list[str]:
    """`unshare -rn --` when this system allows it (tried once per process), else nothing."""
    with _OFFLINE_LOCK:
        return list(_probe_offline())


def _probe_offline() -> list[str]:
    global _offline
    if _offline is None:
        _offline = []
        unshare = shutil.which("unshare") if sys.platform.startswith("linux") else None
        if unshare is not None:
            try:
                done = subprocess.run([unshare, "--net", "--map-root-user", "--", "true"], capture_output=True,
                                      stdin=subprocess.DEVNULL, timeout=5, check=False)
                if done.returncode == 0:
                    _offline = [unshare, "--net", "--map-root-user", "--"]
            except (OSError, subprocess.TimeoutExpired):
                pass
    return _offline


def _isolated_env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HELM_", "KUSTOMIZE_", "GIT_")) and k != "KUBECONFIG"
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    for name, sub in (("HELM_CACHE_HOME", "cache"), ("HELM_CONFIG_HOME", "config"),
                      ("HELM_DATA_HOME", "data")):
        env[name] = str(scratch / "helm" / sub)
    env["HELM_PLUGINS"] = str(scratch / "helm" / "plugins")
    env["HELM_REGISTRY_CONFIG"] = str(scratch / "helm" / "registry.json")
    env["HELM_REPOSITORY_CONFIG"] = str(scratch / "helm" / "repositories.yaml")
    env["HELM_REPOSITORY_CACHE"] = str(scratch / "helm" / "repository")
    env["KUBECONFIG"] = str(scratch / "kubeconfig")  # gpulint's own (_KUBECONFIG): nothing of the user's is read
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = _DEAD_PROXY
    env["GIT_ALLOW_PROTOCOL"] = "none"       # git refuses every transport (file, http, ssh, git)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_SSH_COMMAND"] = "false"
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    return env


def scratch_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="gpulint-render-")


def clean_message(stderr: str) -> str:
    """The tool's error, first, then its other lines: no klog or Go log framing (severity letter,
    timestamp, process id, source file), no usage hints, no blank lines, so that the same
    failure gives the same message on every run."""
    errors: list[str] = []
    others: list[str] = []
    block: list[str] | None = None         # inside klog's multi-line `err=<` ... `>` value
    for raw in stderr.splitlines():
        line = raw.strip()
        if block is not None:
            if line == ">":
                block = None
            elif line:
                block.append(line)
            continue
        is_error = False
        klog = _KLOG_PREFIX_RE.match(line)
        if klog:
            is_error = klog.group(1) in "EF"
            line = line[klog.end():]
            if _KLOG_BLOCK_RE.match(line):
                block = errors if is_error else others
                continue
            quoted = _KLOG_ERR_RE.match(line)
            if quoted:
                line = quoted.group(1).replace('\\"', '"').replace("\\\\", "\\")
        line = _GO_LOG_RE.sub("", line).strip()
        if not line or line.startswith("Use --debug flag"):
            continue
        if line.startswith("Error: "):
            line, is_error = line[len("Error: "):], True
        (errors if is_error else others).append(line)
    return "; ".join(errors + others)


def ancestor_paths(target: Path, display: str, root: Path) -> list[tuple[str, str]]:
    """Replacements for `replace_paths`: each folder from `target`'s parent up to `root` (the
    repository), with a trailing separator, by the name the user knows it by (`display` with as
    many trailing parts taken off), so that a tool's message names a sibling file as the scan
    shows it, never by an absolute path of the machine."""
    pairs: list[tuple[str, str]] = []
    shown = Path(display)
    if shown.is_absolute():
        return pairs   # the user named it so: nothing to hide
    here = target
    while here != root and root in here.parents and shown.name not in ("", ".."):
        here, shown = here.parent, shown.parent
        pairs.append((str(here) + os.sep, "" if str(shown) == "." else str(shown) + os.sep))
    return pairs


def replace_paths(message: str, replacements: list[tuple[str, str]]) -> str:
    """Replace absolute paths (longest first) by what the user wrote."""
    for old, new in sorted(replacements, key=lambda pair: -len(pair[0])):
        if old:
            message = message.replace(old, new)
    return message


def real_path(path: Path) -> Path:
    """`path` with symlinks resolved; unlike Path.resolve (before Python 3.13) it survives symlink loops."""
    return Path(os.path.realpath(path))


def value_at(data: Any, path: tuple) -> Any:
    """The value at document `path` in plain data (None where the path leads nowhere)."""
    for step in path:
        if isinstance(step, int):
            data = data[step] if isinstance(data, list) and 0 <= step < len(data) else None
        else:
            data = data.get(step) if isinstance(data, dict) else None
    return data
