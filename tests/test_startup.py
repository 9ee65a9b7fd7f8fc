"""What a plain `gpulint scan` loads, and the shortcuts that keep start-up cheap.

No timings here (bench/run.py measures start-up): these check that a scan
stays free of Typer and pydantic (see gpulint/cli/launch.py for the figure),
importlib.metadata and the rendering and reporting code it does not use, and
that the shortcuts give what the standard machinery gives.
"""

from __future__ import annotations

import concurrent.futures
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT
import _ruamel_yaml
from _ruamel_yaml import CParser
from ruamel.yaml import YAML
from ruamel.yaml import events as ev

from gpulint.load import events
from gpulint.load.yamlload import DEFAULT_LIMITS, LoadError, _parse_chunk, load_documents
from gpulint.scan import registry

_PROBE = """
import sys

sys.argv = ["gpulint", "scan", *sys.argv[1:]]
try:
    from gpulint.cli.launch import main
    main()
except SystemExit:
    pass
sys.stdout.flush()
print("\\n@@" + " ".join(sorted(sys.modules)), file=sys.stderr)
"""


def _modules_after(*args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "NO_COLOR": "1"})
    return set(proc.stderr.rpartition("@@")[2].split())


def test_a_plain_scan_loads_no_cli_framework_and_nothing_it_does_not_use() -> None:
    loaded = _modules_after(str(FIXTURES / "rules" / "GPU006"))
    heavy = {"typer", "click", "pydantic", "rich", "jsonschema", "sarif_om", "importlib.metadata", "pkgutil",
             "gpulint.cli.app", "gpulint.render", "gpulint.render.helm", "gpulint.load.dockerfile", "gpulint.suppress.baseline",
             "multiprocessing", "concurrent.futures", "pickle", "gpulint.report.sarif",
             "gpulint.report.json_report", "gpulint.report.formats.sarif", "gpulint.report.formats.json",
             "gpulint.report.formats.github", "gpulint.report.formats.rdjson", "gpulint.report.formats.full",
             "gpulint.cli.fixcmd", "gpulint.fix.rounds", "gpulint.fix.diff",
             # gpulint's classes are records (gpulint/record.py): dataclasses brings inspect, ast and dis
             "dataclasses", "inspect", "ast", "dis"}
    assert loaded & heavy == set()
    assert {"gpulint.scan.engine", "gpulint.report.text", "gpulint.report.formats.text"} <= loaded


def test_a_plain_scan_asks_for_no_pathlib_and_no_decimal() -> None:
    """Asked for by gpulint's own code, that is: an editable install's finder loads pathlib anyway."""
    probe = ("import builtins, os, sys\n"
             "asked = set()\n"
             "real_import = builtins.__import__\n"
             "def watch(name, globals=None, *args, **kwargs):\n"
             "    if name in ('pathlib', 'decimal') and (globals or {}).get('__name__', '').startswith('gpulint'):\n"
             "        asked.add(name)\n"
             "    return real_import(name, globals, *args, **kwargs)\n"
             "builtins.__import__ = watch\n"
             "sys.argv = ['gpulint', 'scan', sys.argv[1]]\n"
             "from gpulint.cli.launch import main\n"
             "try:\n"
             "    main()\n"
             "finally:\n"
             "    print('asked', sorted(asked), flush=True)\n")
    one = FIXTURES / "rules" / "GPU001" / "bad-enter-host.yaml"   # findings, and no quantity to parse
    proc = subprocess.run([sys.executable, "-c", probe, str(one)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "NO_COLOR": "1"})
    assert proc.stdout.splitlines()[-1] == "asked []", proc.stderr


def test_what_a_scan_uses_is_loaded_when_it_is_used(tmp_path: Path) -> None:
    assert "gpulint.report.json_report" in _modules_after("--format", "json", str(FIXTURES / "core"))
    assert {"gpulint.report.formats.sarif", "gpulint.report.formats.rdjson"} <= _modules_after(
        "--format", "sarif", "-o", f"rdjson:{tmp_path / 'r.json'}", str(FIXTURES / "core"))
    dockerfile = FIXTURES / "rules" / "GPU091" / "Dockerfile.bare-comment"
    loaded = _modules_after("--write-baseline", str(tmp_path / "b.json"), str(dockerfile))
    assert {"gpulint.suppress.baseline", "gpulint.load.dockerfile"} <= loaded
    assert "typer" not in _modules_after("--help")  # scan help is argparse's too
    # A report to a device or pipe is written in place; only a file is made through tempfile.
    assert "tempfile" not in _modules_after("--format", "json", "-o", os.devnull, str(FIXTURES / "rules" / "GPU006"))
    assert "tempfile" in _modules_after("--format", "json", "-o", str(tmp_path / "r.json"), str(FIXTURES / "rules" / "GPU006"))



def test_helm_output_without_its_chart_nearby_does_not_load_the_renderer(tmp_path: Path) -> None:
    """Its findings map to no chart either way (tests/test_helm.py checks the mapping with one)."""
    stream = tmp_path / "out.yaml"
    stream.write_text("---\n# Source: no-such-chart/templates/pod.yaml\napiVersion: v1\nkind: Pod\n"
                      "metadata: {name: p}\nspec:\n  containers:\n    - name: c\n      image: x\n"
                      "      env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n")
    loaded = _modules_after("--format", "json", "-o", os.devnull, str(stream))
    assert "gpulint.render.piped" in loaded
    assert not {"gpulint.render.helm", "gpulint.render.tools", "subprocess", "shutil"} & loaded


# --- entry points ------------------------------------------------------------------------


def _groups() -> set[str]:
    from importlib.metadata import distributions

    return {ep.group for dist in distributions() for ep in dist.entry_points}


def test_entry_points_are_read_as_importlib_metadata_reads_them() -> None:
    from importlib.metadata import entry_points

    groups = _groups()
    assert registry.GROUP in groups and len(groups) > 3
    for group in groups:
        mine = registry._read_entry_points(group)
        assert mine is not None
        assert sorted((e.name, e.value) for e in mine) == sorted((e.name, e.value) for e in entry_points(group=group))
    loaded = [ep.load() for ep in registry._read_entry_points(registry.GROUP) or ()]
    import gpulint.rules

    assert gpulint.rules in loaded


def test_entry_points_fall_back_to_importlib_metadata_for_zipped_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip
    monkeypatch.setattr(sys, "path", [*sys.path, str(archive)])
    assert registry._read_entry_points(registry.GROUP) is None
    assert [ep.name for ep in registry._entry_points()] == ["builtin"]


def test_entry_point_sections_parse_like_importlib_metadata() -> None:
    text = "# comment\n[gpulint.rules]\n  mine =  pkg.mod:RULE [extra]\n\n[other]\nx = y\n[gpulint.rules]\nmore=pkg\n"
    assert [(e.name, e.value) for e in registry._group_entries(text, "gpulint.rules")] == [
        ("mine", "pkg.mod:RULE [extra]"), ("more", "pkg")]
    assert registry.EntryPoint("x", "json:dumps", "g").load() is json.dumps


@pytest.mark.parametrize("value", ["gpulint.rules", "a", "a_b.c", "é.ü", "٣x", "a:b", "a.b:c.d", "a [x]", "a:b [x]",
                                   "a-b", "", ".", "a b", "a:", ":b"])
def test_entry_point_values_load_what_the_pattern_reads(value: str) -> None:
    import re

    match = re.match(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$", value)
    if registry._is_dotted_name(value):   # taken whole as the module, without the pattern
        assert match is not None and match.group("module") == value and match.group("attr") is None
    else:
        assert value not in ("gpulint.rules", "a", "a_b.c", "é.ü", "٣x")


@pytest.mark.parametrize("name", ["a-b", "a--b", "a_-.b", "-a", "a-", "..", "", "abc", "a__b", "ruamel.yaml.clib"])
def test_distribution_names_are_normalised_as_importlib_metadata_does(name: str) -> None:
    import re

    assert registry._normalized(name) == re.sub(r"[-_.]+", "_", name)


def test_rule_package_modules_are_listed_as_pkgutil_lists_them(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import pkgutil
    from importlib.machinery import EXTENSION_SUFFIXES

    import gpulint.rules

    package = tmp_path / "plug_rules"
    (package / "sub").mkdir(parents=True)
    (package / "notpkg").mkdir()
    for name in ("__init__.py", "b_rule.py", "a_rule.py", "_private.py", "sub/__init__.py", "notes.txt",
                 "fast" + EXTENSION_SUFFIXES[0], "notpkg/x.py"):
        (package / name).write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    plug = importlib.import_module("plug_rules")
    for module in (gpulint.rules, plug):
        expected = sorted({info.name for info in pkgutil.iter_modules(module.__path__)})
        assert registry._package_modules(module) == expected
    assert registry._package_modules(plug) == ["_private", "a_rule", "b_rule", "fast", "sub"]


# --- parser events -------------------------------------------------------------------------


def _texts() -> list[str]:
    """Every kind of event, tags, anchors, every scalar style, several documents, a NEL line break."""
    return [(FIXTURES / "core" / "anchors.yaml").read_text(), (FIXTURES / "core" / "flow-style.yaml").read_text(),
            events._SAMPLE, "a: b\x85c: !!int 1\n--- !x\n- &a {k: v}\n- *a\n"]


def _ruamel_events(text: str) -> list[tuple]:
    parser, out = CParser(text), []
    while True:
        event = parser.get_event()
        out.append(events.from_ruamel(event))
        if type(event).__name__ == "StreamEndEvent":
            return out


def _plain(event: tuple) -> tuple:
    marks = tuple((mark.index, mark.line, mark.column) for mark in event[events.START_MARK:events.END_MARK + 1])
    return (event[events.KIND], *marks, *event[events.END_MARK + 1:])


def test_the_lean_events_are_ruamels_events_field_for_field() -> None:
    assert events._check(), "the installed ruamel.yaml.clib no longer calls the event names as events.py expects"
    for text in _texts():
        expected = _ruamel_events(text)
        with events.parsing():
            get_event = events.reader(text)
            lean = [get_event() for _ in expected]
        assert all(type(e) is tuple for e in lean)
        assert [_plain(e) for e in lean] == [_plain(e) for e in expected]
        kinds = {e[events.KIND] for e in lean}
        assert kinds >= {events.SCALAR, events.MAP_START, events.MAP_END, events.STREAM_END}


def test_each_event_factory_writes_its_kind() -> None:
    """The factories made for every node write their kind as a literal (the field-for-field check
    above compares tuples the same factories made, so it cannot see a wrong one)."""
    mark = object()
    made = {events.scalar(None, None, (True, False), "v", mark, mark, ""): events.SCALAR,
            events.mapping_start(None, None, True, mark, mark, False): events.MAP_START,
            events.sequence_start(None, None, True, mark, mark, False): events.SEQ_START,
            events.mapping_end(mark, mark): events.MAP_END, events.sequence_end(mark, mark): events.SEQ_END,
            events.alias("a", mark, mark): events.ALIAS, events.document_start(mark, mark): events.DOC_START,
            events.document_end(mark, mark): events.DOC_END, events.stream_start(mark, mark): events.STREAM_START,
            events.stream_end(mark, mark): events.STREAM_END}
    assert [event[events.KIND] for event in made] == list(made.values())
    assert all(event[events.START_MARK] is mark and event[events.END_MARK] is mark for event in made)


def test_the_fallback_reads_the_same_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the C module's calls are not what events.py expects, ruamel's events are converted."""
    def load(text: str) -> list:
        out = []
        for doc in load_documents(text):
            assert not isinstance(doc, LoadError), doc.message
            out.append((doc.data, [(p.message, p.span) for p in doc.problems],
                        doc.span(("metadata", "name")) if isinstance(doc.data, dict) else None, doc.root().span))
        return out

    texts = [*_texts()[:2], "a: 1\na: 2\nb: [x, {c: d}]\n", "a: b\x85c: d\n"]
    lean = [load(text) for text in texts]
    monkeypatch.setattr(events, "_lean", False)
    assert [load(text) for text in texts] == lean


def test_ruamels_names_are_its_own_outside_gpulints_parses() -> None:
    """ruamel's own users (its C emitter, its event API) in the same process see its classes again."""
    text = (FIXTURES / "core" / "anchors.yaml").read_text()
    assert _ruamel_yaml.ScalarEvent is ev.ScalarEvent
    list(load_documents(text))
    assert _ruamel_yaml.ScalarEvent is ev.ScalarEvent and _ruamel_yaml.StreamEndEvent is ev.StreamEndEvent
    with events.parsing():
        with events.parsing():  # nested windows (and windows of other threads) are counted
            assert _ruamel_yaml.ScalarEvent is events.scalar
        assert _ruamel_yaml.ScalarEvent is events.scalar
    assert _ruamel_yaml.ScalarEvent is ev.ScalarEvent
    with pytest.raises(LoadError):
        list(_parse_chunk("a: [\n", 0, DEFAULT_LIMITS))  # a parse that fails closes its window too
    assert _ruamel_yaml.ScalarEvent is ev.ScalarEvent
    for typ, pure in (("safe", False), ("safe", True), ("rt", True)):
        yaml = YAML(typ=typ, pure=pure)
        data = list(yaml.load_all(text))
        assert data and data[0]["kind"] == "Deployment"
    out = io.StringIO()
    YAML(typ="safe", pure=False).dump({"a": [1, "b"]}, out)   # the C emitter checks event classes
    assert out.getvalue() == "a: [1, b]\n"
    assert [type(e).__name__ for e in YAML().parse(text)][:3] == [
        "StreamStartEvent", "DocumentStartEvent", "MappingStartEvent"]


def test_windows_of_several_threads_restore_ruamels_names() -> None:
    text = (FIXTURES / "core" / "anchors.yaml").read_text() * 1
    expected = [doc.data for doc in load_documents(text)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: [doc.data for doc in load_documents(text)], range(200)))
    assert all(result == expected for result in results)
    assert _ruamel_yaml.ScalarEvent is ev.ScalarEvent and events._open == 0


@pytest.mark.parametrize("raw", ["x.yaml", "./x.yaml", "a/b/x.yaml", "a//b/./x.yaml/", "/a/x.yaml", "/", "///a",
                                 "../x.yaml", ".", "a/..", "a/../b/", ""])
def test_discovery_writes_paths_as_pathlib_would(raw: str) -> None:
    from gpulint.inputs import discovery

    path = discovery._normal(raw)
    assert path == str(Path(raw))
    assert discovery._parent(path) == str(Path(raw).parent) and discovery._name(path) == Path(raw).name


# --- patterns compiled on first use --------------------------------------------------------


def test_a_lazy_pattern_compiles_when_first_used_and_then_is_the_compiled_pattern() -> None:
    import re

    from gpulint.lazypattern import lazy

    pattern = lazy(r"(?P<n>gpu)s?\Z", re.IGNORECASE)
    assert vars(pattern) == {"_source": (r"(?P<n>gpu)s?\Z", re.IGNORECASE)}   # nothing compiled yet
    assert pattern.match("GPUs").group("n") == "GPU" and pattern.search("a gpu x") is None
    compiled = re.compile(r"(?P<n>gpu)s?\Z", re.IGNORECASE)
    assert pattern.match.__self__ is compiled and pattern.groupindex == {"n": 1}   # re's cache gives the same
    assert pattern.sub("-", "gpus") == "-"
    with pytest.raises(AttributeError):
        pattern.__getstate__x   # noqa: B018 - dunder-like names are not looked up on the pattern


def test_a_plain_scan_leaves_the_patterns_of_input_it_did_not_meet_uncompiled() -> None:
    probe = ("import sys\n"
             "sys.argv = ['gpulint', 'scan', sys.argv[1]]\n"
             "from gpulint.cli.launch import main\n"
             "try:\n"
             "    main()\n"
             "except SystemExit:\n"
             "    pass\n"
             "from gpulint.knowledge import vendors\n"
             "print('compiled', sorted(k for k, v in vars(vendors._INSTANCE_BY_PROVIDER['aws']).items() if k != '_source'))\n")
    one = FIXTURES / "rules" / "GPU001" / "bad-enter-host.yaml"   # no Node: no instance type to read
    proc = subprocess.run([sys.executable, "-c", probe, str(one)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "NO_COLOR": "1"})
    assert proc.stdout.splitlines()[-1] == "compiled []", proc.stderr


@pytest.mark.parametrize("pattern", ["amd.com/gpu", "gpu.intel.com/*", "aws.amazon.com/neuron*", "*", "", "a*b",
                                     "registry*.aliyuncs.com/acs/x", "x?", "[ab]*", "a.b*", "a\nb*"])
@pytest.mark.parametrize("name", ["amd.com/gpu", "amd.com/gpux", "gpu.intel.com/i915", "gpu.intel.com/",
                                  "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "", "a", "ab", "a.bc",
                                  "a\nbc", "xa", "a.b\n", "registry-vpc.aliyuncs.com/acs/x"])
def test_globs_match_as_fnmatch_matches_them(name: str, pattern: str) -> None:
    import fnmatch

    from gpulint.lazypattern import glob_matches

    assert glob_matches(name, pattern) is fnmatch.fnmatchcase(name, pattern)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_fork_during_another_threads_parse_leaves_the_child_ruamels_names() -> None:
    """The child of a fork made while another thread is inside a parsing window has no such
    thread: its names are ruamel's, and its own parses work (no lock inherited held)."""
    import threading

    inside, release = threading.Event(), threading.Event()

    def parse() -> None:
        with events.parsing():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=parse)
    thread.start()
    try:
        assert inside.wait(10)
        pid = os.fork()
        if pid == 0:   # the child: report through the exit status only
            ok = _ruamel_yaml.ScalarEvent is ev.ScalarEvent and events._open == 0
            ok = ok and [doc.data for doc in load_documents("a: 1\n")] == [{"a": 1}]
            os._exit(0 if ok and _ruamel_yaml.ScalarEvent is ev.ScalarEvent else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert _ruamel_yaml.ScalarEvent is events.scalar   # the parent's window is still open
    finally:
        release.set()
        thread.join()
    assert _ruamel_yaml.ScalarEvent is ev.ScalarEvent
