"""Running helm and kustomize: found on PATH, time-bounded, isolated from user config.

Rendering never touches the network and never reads or writes the user's Helm
configuration: every run gets fresh HELM_* and KUBECONFIG locations inside a
temporary directory that is removed afterwards. Tool messages are cleaned
before they reach a report (no temporary path ever appears in output).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

# klog (kubectl) wraps errors as: E1202 14:56:18.02 123 run.go:72] "command failed" err="..."
_KLOG_RE = re.compile(r'^[EWIF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] "[^"]*" err="(.*)"\s*$')


@dataclass
class RunResult:
    ok: bool
    stdout: str
    message: str          # the tool's error message, cleaned; empty when ok


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


def run(argv: list[str], cwd: str | None, timeout: float, scratch: Path) -> RunResult:
    """Run a renderer with a scrubbed environment rooted in `scratch`."""
    env = _isolated_env(scratch)
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return RunResult(False, "", f"{Path(argv[0]).name} did not finish within {timeout:g} seconds")
    except OSError as error:
        return RunResult(False, "", f"cannot run {argv[0]}: {error.strerror or error}")
    stdout = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", errors="replace")
        return RunResult(False, stdout, clean_message(stderr) or f"exit status {done.returncode}")
    return RunResult(True, stdout, "")


def _isolated_env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HELM_", "KUSTOMIZE_")) and k != "KUBECONFIG"}
    for name, sub in (("HELM_CACHE_HOME", "cache"), ("HELM_CONFIG_HOME", "config"),
                      ("HELM_DATA_HOME", "data")):
        env[name] = str(scratch / "helm" / sub)
    env["HELM_PLUGINS"] = str(scratch / "helm" / "plugins")
    env["HELM_REGISTRY_CONFIG"] = str(scratch / "helm" / "registry.json")
    env["HELM_REPOSITORY_CONFIG"] = str(scratch / "helm" / "repositories.yaml")
    env["HELM_REPOSITORY_CACHE"] = str(scratch / "helm" / "repository")
    env["KUBECONFIG"] = str(scratch / "kubeconfig")  # absent: nothing of the user's is read
    return env


def scratch_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="gpulint-render-")


def clean_message(stderr: str) -> str:
    """The tool's error, without klog framing, usage hints or blank lines."""
    lines: list[str] = []
    for raw in stderr.splitlines():
        line = raw.rstrip()
        match = _KLOG_RE.match(line)
        if match:
            line = match.group(1).replace('\\"', '"').replace("\\\\", "\\")
        if not line.strip() or line.startswith("Use --debug flag"):
            continue
        if line.startswith("Error: "):
            line = line[len("Error: "):]
        lines.append(line)
    return "; ".join(lines)


def replace_paths(message: str, replacements: list[tuple[str, str]]) -> str:
    """Replace absolute paths (longest first) by what the user wrote."""
    for old, new in sorted(replacements, key=lambda pair: -len(pair[0])):
        if old:
            message = message.replace(old, new)
    return message


def real_path(path: Path) -> Path:
    """`path` with symlinks resolved; unlike Path.resolve (before Python 3.13) it survives symlink loops."""
    return Path(os.path.realpath(path))
