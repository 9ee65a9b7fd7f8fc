"""Every command a container runs, with where it is written.

Sources, in order: its exec vectors (command/args, lifecycle hooks, exec
probes), the shell scripts the model extracted from them (`sh -c SCRIPT`, Argo
`script.source`), and shell scripts it mounts from a ConfigMap or Secret of the
scan. Each command comes with the node a finding about it points at: the argv
element (exec vectors) or the command's text inside the script (`TextAt`), in
the ConfigMap's own file for mounted scripts.

A mounted ConfigMap/Secret key is read as a shell script when it starts with
a shell `#!` line, or has no `#!` line and its file name ends in `.sh`/`.bash`
or the container runs its mounted path (as the program, `sh PATH` or `. PATH`;
`python PATH` does not count). Keys left out by `items` are not mounted and are
ignored. A mount's `subPath` is not taken into account.
"""

from __future__ import annotations

import functools
import posixpath
from typing import Iterator

from gpulint.api import TextAt, ValueAt, Where
from gpulint.knowledge.hostpaths import normalize
from gpulint.model.index import ConfigEntry, ConfigIndex, ConfigSource
from gpulint.model.objects import KubeObject
from gpulint.model.shell import (
    SHELL_NAMES,
    Command,
    basename,
    command_index,
    parse,
    script_arguments,
)
from gpulint.model.workload import Container, PodSpec, Volume, Workload
from gpulint.record import record, set_field

_SCRIPT_SUFFIXES = (".sh", ".bash")
_CONFIG_VOLUME_KINDS = frozenset({"configMap", "secret", "projected"})  # the kinds `_config_refs` reads


# Not frozen, as the model's views (model/workload.py): one per command of every container.
@record
class RunCommand:
    """One command: its argv from the program name on, and where it is written."""

    __slots__ = ("argv", "where", "source", "origin", "located_in")
    argv: tuple[str, ...]          # wrappers (`sudo`, `env X=1`...) and assignments skipped
    where: Where
    source: tuple                  # identifies the argv or script it is in
    origin: str                    # "command", "lifecycle.postStart", "script", "ConfigMap app/run.sh"...
    located_in: KubeObject | None  # the ConfigMap/Secret, for mounted scripts

    def __init__(self, argv: tuple[str, ...], where: Where, source: tuple, origin: str,
                 located_in: KubeObject | None = None) -> None:
        self.argv = argv
        self.where = where
        self.source = source
        self.origin = origin
        self.located_in = located_in

    @property
    def name(self) -> str:
        return basename(self.argv[0]) if self.argv else ""

    @property
    def described_origin(self) -> str:
        """Where the command is, for messages: "in the container's command", "in lifecycle.postStart"..."""
        if self.origin == "command":
            return "in the container's command"
        if self.origin == "script":
            return "in script.source"
        return f"in {self.origin}"


@record(frozen=True)
class MountedFile:
    """A ConfigMap/Secret key as a file in a container."""

    __slots__ = ("path", "entry", "source")
    path: str                      # path inside the container
    entry: ConfigEntry
    source: ConfigSource

    def __init__(self, path: str, entry: ConfigEntry, source: ConfigSource) -> None:
        set_field(self, "path", path)
        set_field(self, "entry", entry)
        set_field(self, "source", source)


@functools.lru_cache(maxsize=512)
def parse_script(text: str) -> tuple[Command, ...]:
    """`shell.parse`, cached: several rules read the same scripts."""
    return tuple(parse(text))


@functools.lru_cache(maxsize=512)
def _script_argvs(text: str) -> tuple[tuple[tuple[str, ...], int, int], ...]:
    """(argv, start, end) of each command of `text` that runs something, cached:
    the same script recurs in many containers (replicas, rendered charts)."""
    out = []
    for command in parse_script(text):
        argv = command.argv()
        if argv:
            out.append((tuple(w.text for w in argv), argv[0].start, argv[-1].end))
    return tuple(out)


@functools.lru_cache(maxsize=512)
def _script_names(text: str) -> frozenset[str]:
    """The program names (`RunCommand.name`) of the commands of `text`, cached with them."""
    return frozenset(basename(argv[0]) for argv, _start, _end in _script_argvs(text))


def container_commands(workload: Workload, pod: PodSpec, container: Container,
                       index: ConfigIndex) -> Iterator[RunCommand]:
    """The commands `container` runs (see the module docstring for the sources).

    Computed once per container and index.
    """
    memo = container.memo.get("commands.container_commands")
    if memo is None or memo[0] is not index:
        memo = container.memo["commands.container_commands"] = (
            index, tuple(_commands(_command_sources(workload, pod, container, index))))
    return iter(memo[1])


def commands_named(workload: Workload, pod: PodSpec, container: Container, index: ConfigIndex,
                   names: frozenset[str]) -> Iterator[RunCommand]:
    """The commands of `container_commands` whose program (`RunCommand.name`) is one of `names`,
    in the same order. A rule after a few programs (GPU001: nsenter, chroot; GPU002: the container
    engines) asks this: the commands of other programs, most of them, are never built."""
    return _commands(_command_sources(workload, pod, container, index), names)


def workload_commands_named(workload: Workload, index: ConfigIndex,
                            names: frozenset[str]) -> Iterator[tuple[PodSpec, Container, RunCommand]]:
    """(pod, container, command) for the `commands_named` of each container of the workload in
    turn. No container is walked when none runs any of `names`: the programs the workload
    runs are listed once, and most workloads run none of them (GPU001 and GPU002 ask)."""
    if names.isdisjoint(_workload_programs(workload, index)):
        return iter(())
    return _named_in(workload, index, names)


def _named_in(workload: Workload, index: ConfigIndex,
              names: frozenset[str]) -> Iterator[tuple[PodSpec, Container, RunCommand]]:
    for pod, container in workload.containers():
        for command in commands_named(workload, pod, container, index, names):
            yield pod, container, command


def _workload_programs(workload: Workload, index: ConfigIndex) -> frozenset[str]:
    """The program names (`RunCommand.name`) of every command of the workload's containers;
    computed once per workload and index."""
    memo = workload.memo.get("commands.programs")
    if memo is None or memo[0] is not index:
        programs: set[str] = set()
        for pod in workload.pod_specs:   # (the order of workload.containers())
            config: dict[str, Volume] | None = None   # made once per pod, when a container mounts something
            for container in pod.containers:
                if config is None and container.volume_mounts:
                    config = _config_volumes(pod)
                # (kept as `_command_sources` keeps them: `commands_named` reads them next)
                container.memo["commands.sources"] = (
                    index, _find_sources(workload, container, index, config, programs))
        memo = workload.memo["commands.programs"] = (index, frozenset(programs))
    return memo[1]


# A container's commands are kept as their sources: an exec vector's one command
# (_EXEC, argv from the program on, the path of its program word, its `source` key,
# origin, program name) or a shell script's text (_SCRIPT, text, path, origin, the
# ConfigMap/Secret holding it or None), whose commands `_script_argvs` caches per text.
_EXEC = "exec"
_SCRIPT = "script"


def _command_sources(workload: Workload, pod: PodSpec, container: Container,
                     index: ConfigIndex) -> tuple[tuple, ...]:
    """The sources of the container's commands, in the order of `container_commands`;
    computed once per container and index (GPU001 and GPU002 both read them)."""
    memo = container.memo.get("commands.sources")
    if memo is None or memo[0] is not index:
        config = _config_volumes(pod) if container.volume_mounts else None
        memo = container.memo["commands.sources"] = (
            index, _find_sources(workload, container, index, config, set()))
    return memo[1]


def _find_sources(workload: Workload, container: Container, index: ConfigIndex,
                  config: dict[str, Volume] | None, programs: set[str]) -> tuple[tuple, ...]:
    """The container's command sources; `config`: its pod's `_config_volumes` (None when the
    container mounts nothing). Adds the program names of the sources to `programs`."""
    found: list[tuple] = []
    for exec_ in container.execs:
        start, scripts, argv, name = _exec_shape(exec_.argv)
        if start is None:
            continue
        found.append((_EXEC, argv, exec_.paths[start], ("exec", exec_.paths[0]), exec_.origin, name))
        programs.add(name)
        if scripts:
            path = exec_.paths[start + scripts[0]]
            # e.g. `sudo sh -c`: a script the model did not extract
            if all(script.path != path for script in container.scripts):
                found.append((_SCRIPT, argv[scripts[0]], path, exec_.origin, None))
                programs.update(_script_names(argv[scripts[0]]))
    for script in container.scripts:
        if script.interpreter in SHELL_NAMES or script.interpreter in ("", "busybox"):
            found.append((_SCRIPT, script.text, script.path, script.origin, None))
            programs.update(_script_names(script.text))
    if not config or not container.volume_mounts:
        return tuple(found)   # most containers: no ConfigMap or Secret volume in their pod
    direct = len(found)  # mounted scripts are found by what the container itself runs
    referenced: set[str] | None = None  # computed only when a mounted file needs it
    for file in _mounted_files(workload, container, index, config):
        text = file.entry.value or ""
        if text.startswith("#!"):
            is_script = shebang_interpreter(text) in SHELL_NAMES
        elif file.path.endswith(_SCRIPT_SUFFIXES):
            is_script = True
        else:
            if referenced is None:
                referenced = {path for argv in _source_argvs(found[:direct]) for path in _runs_files(argv)}
            is_script = normalize(file.path) in referenced
        if is_script:
            assert file.entry.value is not None
            origin = f"{file.source.obj.ref.kind} {file.source.obj.ref.name}, key {file.entry.key}"
            found.append((_SCRIPT, file.entry.value, file.entry.path, origin, file.source.obj))
            programs.update(_script_names(file.entry.value))
    return tuple(found)


def _source_argvs(sources: list[tuple]) -> Iterator[tuple[str, ...]]:
    for source in sources:
        if source[0] is _EXEC:
            yield source[1]
        else:
            for argv, _start, _end in _script_argvs(source[1]):
                yield argv


def _commands(sources: tuple[tuple, ...], names: frozenset[str] | None = None) -> Iterator[RunCommand]:
    """The commands of `sources`; with `names`, only those of these programs."""
    for source in sources:
        if source[0] is _EXEC:
            _kind, argv, path, key, origin, name = source
            if names is None or name in names:
                yield RunCommand(argv, ValueAt(path), key, origin)
        elif names is None or not names.isdisjoint(_script_names(source[1])):
            _kind, text, path, origin, located_in = source
            yield from _script_commands(text, path, origin, located_in, names)


@functools.lru_cache(maxsize=4096)
def _exec_shape(argv: tuple[str, ...]) -> tuple[int | None, tuple[int, ...], tuple[str, ...], str]:
    """(index of the program run, indices of script arguments after it, the argv from the
    program on, the program's name) of an exec vector.
    Cached: replicas and rendered charts repeat the same commands."""
    start = command_index(argv)
    if start is None:
        return None, (), (), ""
    run = argv[start:]
    return start, tuple(script_arguments(run)), run, basename(run[0])


def _script_commands(text: str, path: tuple, origin: str, located_in: KubeObject | None,
                     names: frozenset[str] | None) -> Iterator[RunCommand]:
    source = ("script", located_in.file if located_in else "", path)
    for argv, start, end in _script_argvs(text):
        if names is None or basename(argv[0]) in names:
            yield RunCommand(argv, TextAt(path, start, end), source, origin, located_in)


def _config_volumes(pod: PodSpec) -> dict[str, Volume]:
    """The pod's volumes of the kinds `_config_refs` reads, by name (the first volume of a
    name, as `PodSpec.volume` finds it)."""
    found: dict[str, Volume] = {}
    seen: set[str] = set()
    for volume in pod.volumes:
        if volume.name not in seen:
            seen.add(volume.name)
            if volume.kind in _CONFIG_VOLUME_KINDS:
                found[volume.name] = volume
    return found


def _mounted_files(workload: Workload, container: Container, index: ConfigIndex,
                   config: dict[str, Volume]) -> Iterator[MountedFile]:
    """ConfigMap/Secret keys of the scan that `container` sees as files (`config`: its pod's
    `_config_volumes`)."""
    for mount in container.volume_mounts:
        volume = config.get(mount.name)
        if volume is None:
            continue
        for kind, name, items in _config_refs(volume.kind, volume.source):
            source = index.lookup(kind, workload.namespace, name)
            if source is None:
                continue
            files = items if items is not None else [(key, key) for key in source.entries]
            for key, rel in files:
                entry = source.entries.get(key)
                if entry is not None and entry.value is not None:
                    yield MountedFile(posixpath.join(mount.mount_path, rel), entry, source)


def _config_refs(kind: str, source: dict) -> Iterator[tuple[str, str, list[tuple[str, str]] | None]]:
    """(index kind, name, [(key, file path)] or None for all keys) of a volume source."""
    if kind == "configMap" and isinstance(source.get("name"), str):
        yield "configMap", source["name"], _items(source.get("items"))
    elif kind == "secret" and isinstance(source.get("secretName"), str):
        yield "secret", source["secretName"], _items(source.get("items"))
    elif kind == "projected" and isinstance(source.get("sources"), list):
        for item in source["sources"]:
            if not isinstance(item, dict):
                continue
            for key, index_kind in (("configMap", "configMap"), ("secret", "secret")):
                ref = item.get(key)
                if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                    yield index_kind, ref["name"], _items(ref.get("items"))


def _items(raw: object) -> list[tuple[str, str]] | None:
    if not isinstance(raw, list):
        return None
    return [(str(item["key"]), str(item.get("path") or item["key"])) for item in raw
            if isinstance(item, dict) and "key" in item]


def _runs_files(argv: tuple[str, ...]) -> Iterator[str]:
    """Files `argv` runs as programs or shell scripts: `/s/run`, `sh -e /s/run`, `. /s/env`."""
    if not argv:
        return
    if argv[0].startswith("/"):
        yield normalize(argv[0])
    name = basename(argv[0])
    if name in SHELL_NAMES or name in (".", "source"):
        script = next((word for word in argv[1:] if not word.startswith(("-", "+"))), None)
        if script is not None and script.startswith("/") and not script_arguments(argv):
            yield normalize(script)


def shebang_interpreter(text: str) -> str:
    """`#!/usr/bin/env bash` -> `bash`; `#!/bin/sh -e` -> `sh`; "" without a `#!` line."""
    if not text.startswith("#!"):
        return ""
    words = text[2:].split("\n", 1)[0].split()
    while words and posixpath.basename(words[0]) in ("env", "busybox"):
        words = [w for w in words[1:] if not w.startswith("-")]
    return posixpath.basename(words[0]) if words else ""
