"""Values files that scripts in the scanned tree pass to helm for a chart that is not in the tree.

A deploy script runs `helm install NAME repo/chart --values gpu.yaml` (or `-f`, `upgrade`,
`template`): gpu.yaml is a values file whatever its name, for a chart gpulint cannot render
(a repository chart, an OCI reference, a URL, `--repo`). Scripts are shell files and
makefiles met while walking (regular files, never through a link, the first MAX_SCRIPT
bytes). A values path is found where the script names it: beside the script, at a scanned
root, or, when it starts with a variable (`${CONFIG_DIR}/helm/gpu.yml`) or names a copy the
script's setup makes, by its last two path components among the scanned files.

A chart that is a folder of the tree is rendered by gpulint itself: once more with the
values files the script gives it (when all are where the script says, inside the scanned
tree), like a chart's `ci/*-values.yaml`. Every values file a script passes is also read by
the shape of its containers; a finding the render already maps to the same line is said
once (results/repeats.py).
"""

from __future__ import annotations

import os

from gpulint.lazypattern import lazy

SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".mk")
SCRIPT_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile", "Justfile", "justfile"})
MAX_SCRIPT = 512 * 1024
_HELM_RE = lazy(r"\bhelm\s+(?:upgrade|install|template)\b([^\n]*)")
# helm options that take the next word as their value (the others are switches or written `--x=y`).
_VALUE_OPTIONS = frozenset({
    "-n", "--namespace", "--version", "--set", "--set-string", "--set-file", "--set-json", "--set-literal",
    "--repo", "--kube-context", "--kubeconfig", "--timeout", "--post-renderer", "--post-renderer-args",
    "--description", "--username", "--password", "--ca-file", "--cert-file", "--key-file", "-o", "--output",
    "--kube-version", "-a", "--api-versions", "--history-max", "--output-dir", "--show-only", "-s",
    "--kube-apiserver", "--kube-as-user", "--kube-as-group", "--kube-token", "--registry-config",
    "--repository-cache", "--repository-config", "--labels", "-l", "--release-name", "--name-template",
})
_VARIABLE_RE = lazy(r"\A(?:\$\{[^}]*\}|\$\(\([^)]*\)\)|\$\([^)]*\)|\$\w+)/")


def is_script(name: str) -> bool:
    return name in SCRIPT_NAMES or name.endswith(SCRIPT_SUFFIXES)


def script_values(scripts: list[str], candidates: list[str],
                  roots: list[str]) -> tuple[set[str], list[tuple[str, str, tuple[str, ...]]]]:
    """What the `scripts` pass to helm: the `candidates` (paths of scanned YAML files) given as
    values files, and (script, chart folder, values files) for each chart of the tree a script
    renders with values files of the tree, in script order."""
    by_tail: dict[str, list[str]] = {}
    for path in candidates:
        by_tail.setdefault(_tail(path), []).append(path)
    known = {os.path.normpath(path): path for path in candidates}
    remote: set[str] = set()
    local: list[tuple[str, str, tuple[str, ...]]] = []
    for script in scripts:
        for chart, values in _helm_calls(_read(script)):
            base = os.path.dirname(script)
            folder = _local_chart(chart, base, roots)
            if folder is None:
                for value in values:
                    remote.update(_resolve(value, base, roots, known, by_tail))
                continue
            # Only files that are where the script says (a chart's own values.yaml too): a render
            # needs all of them.
            exact = [_in_tree(os.path.normpath(os.path.join(base, value)), roots) for value in values]
            if exact and all(path is not None for path in exact):
                local.append((script, folder, tuple(path for path in exact if path is not None)))
                remote.update(known[path] for path in exact if path in known)
    return remote, local


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SCRIPT)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def _helm_calls(text: str) -> list[tuple[str | None, list[str]]]:
    """(chart, values files) of each `helm install|upgrade|template` command of a script's text;
    the chart is None when `--repo` says it comes from a repository."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    calls = []
    for match in _HELM_RE.finditer(text):
        words = _words(match.group(1))
        values: list[str] = []
        positional: list[str] = []
        remote = False
        skip = False
        for index, word in enumerate(words):
            if skip:
                skip = False
                continue
            if word in (";", "&&", "||", "|", "&", ")"):
                break
            if word in ("-f", "--values"):
                if index + 1 < len(words):
                    values.append(words[index + 1])
                skip = True
            elif word.startswith("--values="):
                values.append(word.split("=", 1)[1])
            elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
                values.append(word[2:])
            elif word == "--repo" or word.startswith("--repo="):
                remote = True
                skip = word == "--repo"
            elif word in _VALUE_OPTIONS:
                skip = True
            elif not word.startswith("-"):
                positional.append(word)
        if values and positional:
            calls.append((None if remote else positional[-1], values))
    return calls


def _words(text: str) -> list[str]:
    import shlex   # only for a script that runs helm: most scans meet none

    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|)")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: the plain words
        return text.split()


def _local_chart(chart: str | None, base: str, roots: list[str]) -> str | None:
    """The folder of the tree the chart argument names (`./charts/app`, `charts/app`), else None."""
    if chart is None or not chart or "://" in chart or chart.startswith("$"):
        return None
    for folder in (base, *roots):
        path = os.path.normpath(os.path.join(folder, chart))
        if os.path.isfile(os.path.join(path, "Chart.yaml")):
            return path
    return None


def _in_tree(path: str, roots: list[str]) -> str | None:
    """`path` when it is a regular file inside a scanned root (never through a link out of it)."""
    real = os.path.realpath(path)
    if not os.path.isfile(real) or os.path.islink(path):
        return None
    inside = any(real == os.path.realpath(root) or real.startswith(os.path.realpath(root) + os.sep)
                 for root in roots)
    return path if inside else None


def _resolve(value: str, base: str, roots: list[str], known: dict[str, str],
             by_tail: dict[str, list[str]]) -> list[str]:
    if value in ("-", "") or "://" in value:
        return []
    stripped = _VARIABLE_RE.sub("", value)
    if stripped == value and not value.startswith("$"):
        for folder in (base, *roots):
            path = known.get(os.path.normpath(os.path.join(folder, value)))
            if path is not None:
                return [path]
    if "$" in stripped:
        return []
    tail = _tail(stripped)
    return by_tail.get(tail, []) if "/" in tail else []


def _tail(path: str) -> str:
    """The last two components of a path (`helm/gpu.yml`), or its name when it has one."""
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    return "/".join(parts[-2:])
