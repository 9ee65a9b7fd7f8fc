"""`scan --fix / --diff / --unsafe-fixes`: golden before/after files, byte for byte.

Every manifest under fixtures/fixes/<RULE>/ has its fixed text beside it
(`<name>.fixed`). Fixing a copy gives exactly that text, in LF and in CR LF with a
byte-order mark, and in UTF-16; the fixed file keeps only the findings that had no fix; a second
`--fix` changes nothing.
"""

from __future__ import annotations

import codecs
import difflib
import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, ROOT, run_cli
from expectations import read as read_expectations
from sarif_check import check as check_sarif

from gpulint.api import Applicability, Edit, Fix, KeyAt, Rule, Severity, Violation
from gpulint.scan import registry

GOLDEN = FIXTURES / "fixes"
# Charts (fixes of their values files) are tests/test_fix_values.py's, kustomizations tests/test_fix_kustomize.py's.
BEFORE = sorted(p for p in GOLDEN.rglob("*") if p.suffix in (".yaml", ".json")
                and not {"charts", "kustomize"} & set(p.relative_to(GOLDEN).parts))
VARIANTS = {
    "lf": lambda data: data,
    "crlf-bom": lambda data: codecs.BOM_UTF8 + data.replace(b"\n", b"\r\n"),
    "utf-16": lambda data: data.decode("utf-8").encode("utf-16"),   # written back in its own encoding
}


def _report(*args: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("scan", "--format", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out), err


def _args(before: Path) -> list[str]:
    """The golden's own scan arguments (`# fixture-args:`), else only its rule."""
    return read_expectations(before).args or ["--select", before.parent.name]


def _no_fix(report: dict, rule: str) -> list[str]:
    """Messages of the rule's findings that have no fix (sorted; lines move when fixing)."""
    return sorted(f["message"] for f in report["findings"]
                  if f["rule"] == rule and (f["fix"] is None or f["fix"]["applicability"] is None))


def test_there_is_a_golden_for_every_rule_with_a_fix() -> None:
    from gpulint.scan.registry import load_rules

    rules = {p.parent.name for p in BEFORE}
    assert rules == {"GPU003", "GPU005", "GPU006", "GPU007", "GPU101", "GPU102", "GPU104"}
    for rule_id in rules:
        assert "## Fix\nNone" not in load_rules()[rule_id].documentation
    for path in BEFORE:
        assert path.with_name(path.name + ".fixed").is_file(), path


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("before", BEFORE, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden(before: Path, variant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)   # where fixture-args' paths are relative to
    rule, args = before.parent.name, _args(before)
    convert = VARIANTS[variant]
    target = tmp_path / before.name
    target.write_bytes(convert(before.read_bytes()))
    want = convert(before.with_name(before.name + ".fixed").read_bytes())
    _code, original, _err = _report(*args, str(target))
    fixable = [f for f in original["findings"] if f["fix"] and f["fix"]["applicability"]]
    assert fixable, "a golden must have something to fix"

    code, after, err = _report("--fix", "--unsafe-fixes", *args, str(target))
    assert target.read_bytes() == want
    assert f"gpulint: {len(fixable)} fixed, {len(after['findings'])} remaining\n" in err
    # What is left of the rule had no fix (an alias's finding goes with its anchor's fix).
    left = _no_fix(after, rule)
    assert set(left) <= set(_no_fix(original, rule))
    assert len(left) == len(_no_fix(original, rule)) - (before.name == "anchors.yaml")
    assert all(f["rule"] != rule or f["fix"] is None or f["fix"]["applicability"] is None for f in after["findings"])
    assert code == (1 if after["findings"] else 0)

    again = run_cli("scan", "--fix", "--unsafe-fixes", *args, str(target))
    assert target.read_bytes() == want and "gpulint: 0 fixed" in again[2]


@pytest.mark.parametrize("before", BEFORE, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_diff_shows_the_golden_and_changes_nothing(before: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    args = _args(before)
    target = tmp_path / before.name
    target.write_bytes(before.read_bytes())
    code, out, err = run_cli("scan", "--diff", "--unsafe-fixes", *args, str(target))
    assert code == 1, err
    assert target.read_bytes() == before.read_bytes()
    fixed = before.with_name(before.name + ".fixed").read_text(encoding="utf-8")
    expected = "".join(difflib.unified_diff(before.read_text(encoding="utf-8").splitlines(keepends=True),
                                            fixed.splitlines(keepends=True), str(target), str(target)))
    assert out == expected
    target.write_text(fixed, encoding="utf-8")
    assert run_cli("scan", "--diff", "--unsafe-fixes", *args, str(target))[:2] == (0, "")


def test_diff_of_a_relative_path_uses_git_prefixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_bytes((GOLDEN / "GPU007" / "runtime-class.yaml").read_bytes())
    code, out, err = run_cli("scan", "--diff", "--unsafe-fixes", "pod.yaml")
    assert code == 1
    assert out.startswith("--- a/pod.yaml\n+++ b/pod.yaml\n@@ -4,7 +4,6 @@\n")
    assert "-  runtimeClassName: nvidia  # expect: GPU007\n" in out
    assert err.endswith("gpulint: 2 fixes in 1 file would be applied\n")


def test_unsafe_fixes_wait_for_the_option(tmp_path: Path) -> None:
    target = tmp_path / "pod.yaml"
    source = (GOLDEN / "GPU006" / "privileged.yaml").read_bytes()
    target.write_bytes(source)
    code, out, err = run_cli("scan", "--fix", "--select", "GPU006", str(target))
    assert target.read_bytes() == source
    assert code == 1 and "gpulint: 0 fixed, 4 remaining (3 with --unsafe-fixes)\n" in err
    code, out, err = run_cli("scan", "--diff", "--select", "GPU006", str(target))
    assert (code, out) == (0, "") and "gpulint: 0 fixes in 0 files would be applied (3 more with --unsafe-fixes)" in err


def test_safe_fixes_alone(tmp_path: Path) -> None:
    """GPU101 is safe: `--fix` applies it without --unsafe-fixes. GPU104's rename would repeat a key
    already there: no fix, and the report says why."""
    target = tmp_path / "pod.yaml"
    target.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
                      "    image: i\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n"
                      "        nvidia.com/gpus: 1\n")
    code, out, err = run_cli("scan", "--fix", str(target))
    assert target.read_text() == ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                                  "  - name: a\n    image: i\n    resources:\n      requests:\n"
                                  "        nvidia.com/gpu: 1\n        nvidia.com/gpus: 1\n      limits:\n"
                                  "        nvidia.com/gpu: 1\n")
    assert "gpulint: 1 fixed, 1 remaining\n" in err
    assert "GPU104" in out and "GPU101" not in out
    _code, report, _err = _report(str(target))
    assert [f["fix"]["title"] for f in report["findings"]] == ["no fix: nvidia.com/gpu is already set there"]


def test_stdin_fixed_text_on_stdout() -> None:
    before = GOLDEN / "GPU101" / "block.yaml"
    code, out, err = run_cli("scan", "--fix", "--select", "GPU101", "-", input=before.read_bytes())
    assert out == before.with_name("block.yaml.fixed").read_text(encoding="utf-8")
    assert code == 0 and "gpulint: 3 fixed, 0 remaining\n" in err
    # Nothing to fix: the text comes back as it was, and the exit code says what remains.
    unfixable = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: i\n" \
                "    env:\n    - {name: NVIDIA_VISIBLE_DEVICES, value: all}\n"
    code, out, err = run_cli("scan", "--fix", "--unsafe-fixes", "-", input=unfixable)
    assert (code, out) == (1, unfixable) and "gpulint: 0 fixed, 1 remaining\n" in err


def test_configuration_keys(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_bytes((GOLDEN / "GPU101" / "block.yaml").read_bytes())
    (tmp_path / "rt.yaml").write_bytes((GOLDEN / "GPU007" / "runtime-class.yaml").read_bytes())
    (tmp_path / ".gpulint.yaml").write_text("fix: true\nunsafe-fixes: true\nunfixable: [GPU101]\n")
    code, _out, err = run_cli("scan", str(tmp_path))
    assert (tmp_path / "pod.yaml").read_bytes() == (GOLDEN / "GPU101" / "block.yaml").read_bytes()
    assert (tmp_path / "rt.yaml").read_bytes() == (GOLDEN / "GPU007" / "runtime-class.yaml.fixed").read_bytes()
    assert "gpulint: 2 fixed, 3 remaining\n" in err
    (tmp_path / ".gpulint.yaml").write_text("fix: true\nfixable: [gpu-request-without-limit]\n")
    run_cli("scan", str(tmp_path))
    assert (tmp_path / "pod.yaml").read_bytes() == (GOLDEN / "GPU101" / "block.yaml.fixed").read_bytes()
    code, out, err = run_cli("scan", "--no-fix", "--diff", str(tmp_path))   # --diff never writes
    assert code == 0 and out == ""
    (tmp_path / ".gpulint.yaml").write_text("fixable: [GPU999]\n")
    code, _out, err = run_cli("scan", str(tmp_path))
    assert code == 2 and "unknown rule code `GPU999`" in err


def test_only_changed_files_are_written(tmp_path: Path) -> None:
    clean = tmp_path / "clean.yaml"
    clean.write_bytes((GOLDEN / "GPU007" / "runtime-class.yaml.fixed").read_bytes())
    stamp = clean.stat().st_mtime_ns
    bad = tmp_path / "bad.yaml"
    bad.write_bytes((GOLDEN / "GPU007" / "runtime-class.yaml").read_bytes())
    bad.chmod(0o640)
    run_cli("scan", "--fix", "--unsafe-fixes", str(tmp_path))
    assert clean.stat().st_mtime_ns == stamp
    assert bad.read_bytes() == clean.read_bytes() and bad.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "clean.yaml"]   # no temporary left


def test_json_report_carries_the_fix() -> None:
    _code, report, _err = _report(str(GOLDEN / "GPU101" / "block.yaml"))
    jsonschema.validate(report, json.loads(files("gpulint").joinpath("schemas/report.schema.json").read_text()))
    first = report["findings"][0]
    assert (first["rule"], first["line"], first["column"]) == ("GPU101", 14, 9)
    assert first["fix"] == {
        "applicability": "safe", "title": "add nvidia.com/gpu to resources.limits, equal to the request",
        "edits": [{"line": 14, "column": 44, "end_line": 14, "end_column": 44,
                   "text": "\n      limits:\n        nvidia.com/gpu: 1"}]}
    _code, report, _err = _report(str(GOLDEN / "GPU003" / "device-lists.yaml"))
    no_fix = [f for f in report["findings"] if f["line"] == 48]
    assert no_fix[0]["fix"]["applicability"] is None
    assert no_fix[0]["fix"]["title"].startswith("no fix: `all` is every GPU of the node")


def test_no_void_for_a_pod_placed_on_gpu_nodes() -> None:
    """GPU005's fix hides the GPUs; a pod that targets GPU nodes may mean to use one: no fix, and why."""
    _code, report, _err = _report("--select", "GPU005", str(GOLDEN / "GPU005" / "images.yaml"))
    (placed,) = [f for f in report["findings"] if f["line"] == 31]
    assert (placed["rule"], placed["column"], placed["fix"]["applicability"]) == ("GPU005", 12, None)
    assert placed["fix"]["title"] == (
        "no fix: its pod targets GPU nodes by nodeSelector cloud.google.com/gke-accelerator, so it may mean to use "
        "a GPU: request nvidia.com/gpu in resources.limits (how many is yours to say), or set "
        "NVIDIA_VISIBLE_DEVICES=void if it needs none")


def test_sarif_fixes_are_valid() -> None:
    code, out, _err = run_cli("scan", "--format", "sarif", "--select", "GPU003",
                             str(GOLDEN / "GPU003" / "device-lists.yaml"))
    run = check_sarif(json.loads(out))
    with_fix = [r for r in run["results"] if "fixes" in r]
    assert len(with_fix) == 5 and len(run["results"]) == 6
    (fix,) = with_fix[0]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == with_fix[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert fix["properties"] == {"applicability": "unsafe"}
    assert [r["deletedRegion"] for r in change["replacements"]] == [
        {"endColumn": 1, "endLine": 18, "startColumn": 1, "startLine": 16},
        {"endColumn": 18, "endLine": 19, "startColumn": 18, "startLine": 19}]   # after `      value: kept`
    assert change["replacements"][1]["insertedContent"] == {
        "text": "\n    resources:\n      limits:\n        nvidia.com/gpu: 2"}


def test_rendered_output_has_no_fix(tmp_path: Path) -> None:
    _code, report, _err = _report(str(FIXTURES / "charts" / "gpu-app"))
    titles = sorted({f["fix"]["title"] for f in report["findings"] if f["rule"] == "GPU003"})
    # A device list the rule would fix in a plain file is not fixed in a render; `all` has no fix anyway.
    assert [title[:40] for title in titles] == ["no fix: `all` is every GPU of the node, ",
                                                "no fix: the value comes from a template "]
    assert not any(f["fix"] and f["fix"]["edits"] for f in report["findings"])


def test_kustomize_output_is_fixed_in_the_file_that_writes_the_value(kustomize: str) -> None:
    """A build's finding is fixed in its resource or patch file, or says why not and where the value is
    written (tests/test_fix_kustomize.py has the rest)."""
    top = str(FIXTURES / "kustomize") + "/"
    _code, report, _err = _report("--unsafe-fixes", top)
    found = [(f["rule"], f["path"].replace(top, ""), f["line"], (f["fix"].get("path") or "").replace(top, ""),
              f["fix"]["applicability"]) for f in report["findings"]]
    assert found == [
        ("GPU003", "components/debug/kustomization.yaml", 16, "components/debug/kustomization.yaml", "unsafe"),
        ("GPU003", "overlays/dev/devices.json-patch.yaml", 6, "", None),
        ("GPU006", "overlays/dev/kustomization.yaml", 20, "", None),
        ("GPU003", "base/deployment.yaml", 25, "", None),
        ("GPU003", "overlays/prod/gpu-env.yaml", 12, "overlays/prod/gpu-env.yaml", "unsafe"),
        ("GPU003", "base/deployment.yaml", 25, "", None)]
    titles = [f["fix"]["title"].replace(top, "") for f in report["findings"] if f["fix"]["applicability"] is None]
    assert titles[0] == ("no fix: the object is built by Kustomize: it is all the value of the JSON patch operation "
                         "at overlays/dev/devices.json-patch.yaml:3; removing the patch's only operation is left to "
                         "you; the value is written at overlays/dev/devices.json-patch.yaml:6")
    assert titles[1].endswith("the value is written at overlays/dev/kustomization.yaml:20")


class _EntryPoint:
    def __init__(self, name: str, target: object) -> None:
        self.name, self.value, self._target = name, f"tests:{name}", target

    def load(self) -> object:
        return self._target


def _privileging(workload, ctx):  # noqa: ANN001, ANN202 - a plugin whose fix is wrong: it adds a bypass
    for _pod, container in workload.containers():
        if container.gpu_limits and container.privileged is None:
            path = container.path + ("securityContext", "privileged")
            yield Violation("plugin: the container is not privileged", KeyAt(container.path + ("name",)), container,
                            fix=Fix("make it privileged", Applicability.SAFE, (Edit.add(path, True),)))


def test_a_fix_that_adds_a_finding_is_dropped_as_an_internal_error(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    doc = "\n".join(f"## {h}\n-" for h in ("What it does", "Why is this bad", "Example", "Use instead",
                                            "References"))
    rule = Rule(id="GPU197", name="bad-fix-plugin", severity=Severity.WARNING, summary="test plugin", doc=doc,
                check=_privileging)
    real = list(registry._entry_points())
    monkeypatch.setattr(registry, "_entry_points", lambda: real + [_EntryPoint("badfix", rule)])
    target = tmp_path / "pod.yaml"
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
            "    image: i\n    resources: {limits: {nvidia.com/gpu: 1}}\n")
    target.write_text(text)
    code, _out, err = run_cli("scan", "--fix", "--select", "GPU197,GPU006", str(target))
    assert target.read_text() == text
    assert code == 2
    assert (f"{target}:6:5: internal error: the fix of GPU197 (make it privileged) was not applied: it adds a "
            "GPU006 finding at line 10") in err


def test_a_fix_that_breaks_the_file_is_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.fix import resolve

    real = resolve.scalar
    monkeypatch.setattr(resolve, "scalar", lambda value, quote: "[broken" if value == "nvidia.com/gpu"
                        else real(value, quote))
    target = tmp_path / "pod.yaml"
    source = (GOLDEN / "GPU104" / "typos.yaml").read_bytes()
    target.write_bytes(source)
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", "--select", "GPU104", str(target))
    assert target.read_bytes() == source and code == 2
    assert len(re.findall(r"internal error: the fix of GPU104 \(rename [^)]*\) was not applied: after it the "
                          r"file does not load", err)) == 3


def test_files_the_loader_normalises_are_not_fixed(tmp_path: Path) -> None:
    target = tmp_path / "pod.yaml"
    source = (GOLDEN / "GPU007" / "runtime-class.yaml").read_bytes().replace(b"\n", b"\r")
    target.write_bytes(source)
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", str(target))
    assert target.read_bytes() == source
    assert f"gpulint: {target}: not fixed: it has lone CR line breaks" in err


def test_the_documented_diffs_are_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "fixes.md").read_text(encoding="utf-8")
    examples = dict(re.findall(r"<!-- example: (\S+) -->\n```yaml\n(.*?)```", page, re.S))
    diffs = re.findall(r"<!-- diff: gpulint (.*?) -->\n```diff\n(.*?)```", page, re.S)
    assert sorted(examples) == ["env.yaml", "pod.yaml"] and len(diffs) == 2
    monkeypatch.chdir(tmp_path)
    for name, text in examples.items():
        Path(name).write_text(text, encoding="utf-8")
    for command, shown in diffs:
        code, out, _err = run_cli(*command.split())
        assert (code, out) == (1, shown)
    # The README shows the first one.
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    (shown,) = re.findall(r"<!-- diff: gpulint scan --diff pod.yaml \(docs/fixes.md's example\) -->\n```diff\n(.*?)```",
                          readme, re.S)
    assert shown == diffs[0][1] and diffs[0][0] == "scan --diff pod.yaml"
    # Turned back: the fixed Pod asks for its GPU in limits, and scans clean.
    run_cli("scan", "--fix", "pod.yaml")
    assert run_cli("scan", "pod.yaml")[0] == 0


def test_saved_helm_output_is_not_fixed_but_the_other_documents_are(tmp_path: Path) -> None:
    """A document `helm template` wrote (`# Source:` before it) comes from a template: no fix there,
    whether the file is read whole or streamed; the file's other documents are fixed as usual."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  runtimeClassName: nvidia\n" \
          "  containers:\n  - {name: a, image: i}\n"
    target = tmp_path / "mixed.yaml"
    target.write_text(pod % "plain" + "---\n# Source: app/templates/pod.yaml\n" + pod % "rendered")
    _code, report, _err = _report("--select", "GPU007", str(target))
    assert [(f["line"], f["fix"]["applicability"]) for f in report["findings"]] == [(5, "unsafe"), (14, None)]
    assert report["findings"][1]["fix"]["title"] == "no fix: the value comes from a template expression"


def test_a_bug_while_fixing_one_file_leaves_it_and_fixes_the_others(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.cli import fixcmd

    real = fixcmd.fix_file

    def fails_on_a(display: str, *args: object, **kwargs: object) -> object:
        if display.endswith("a.yaml"):
            raise KeyError("a bug")
        return real(display, *args, **kwargs)

    monkeypatch.setattr(fixcmd, "fix_file", fails_on_a)
    source = (GOLDEN / "GPU007" / "runtime-class.yaml").read_bytes()
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_bytes(source)
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", str(tmp_path))
    assert code == 2 and f"{tmp_path / 'a.yaml'} (fixing): internal error: KeyError: 'a bug'" in err
    assert (tmp_path / "a.yaml").read_bytes() == source
    assert (tmp_path / "b.yaml").read_bytes() == (GOLDEN / "GPU007" / "runtime-class.yaml.fixed").read_bytes()


def test_a_fix_meeting_an_opt_in_rule_is_left_out_with_a_note(tmp_path: Path) -> None:
    """GPU105 (off by default) wants a GPU request to pin the GPU model: a fix that adds the request
    is not a bug for it, so it is left out with a note, and the exit code is that of the findings."""
    target = tmp_path / "pod.yaml"
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: i\n"
            "    resources:\n      requests:\n        nvidia.com/gpu: 1\n")
    target.write_text(text)
    code, _out, err = run_cli("scan", "--fix", "--extend-select", "GPU105", str(target))
    assert target.read_text() == text
    assert code == 1 and "internal error" not in err
    assert f"gpulint: {target}:10:9: the fix of GPU101 was left out: it adds a GPU105 finding at line 12" in err
    assert "gpulint: 0 fixed, 2 remaining\n" in err   # GPU101, and GPU105 at the request


def test_the_files_of_a_kustomization_that_is_not_built_are_fixed_as_they_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote resource is never fetched: the kustomization is not built, its local files are
    scanned as they are, and so their fixes apply to them (the JSON report offered them)."""
    monkeypatch.chdir(tmp_path)
    Path("app").mkdir()
    Path("app/pod.yaml").write_bytes((GOLDEN / "GPU007" / "runtime-class.yaml").read_bytes())
    Path("app/kustomization.yaml").write_text("resources:\n- pod.yaml\n- https://github.com/example/repo/base?ref=v1\n")
    _code, report, _err = _report("--select", "GPU007", "app")
    assert [(f["path"], f["fix"]["applicability"]) for f in report["findings"] if f["rule"] == "GPU007"] == \
        [("app/pod.yaml", "unsafe")] * 2
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", "--select", "GPU007", "app")
    assert Path("app/pod.yaml").read_bytes() == (GOLDEN / "GPU007" / "runtime-class.yaml.fixed").read_bytes()
    assert "gpulint: 2 fixed, 1 remaining\n" in err and code == 1   # GPU010: the remote resource


def test_rounds_chain_fixes_and_a_name_is_renamed_in_both_sections(tmp_path: Path) -> None:
    """A misspelt request alone: renamed (round 1), which makes it a request without a limit,
    whose own fix adds the limit (round 2). A name misspelt in limits and requests is renamed in
    both by one fix. A request that is no valid quantity gets no limit copied from it."""
    target = tmp_path / "pod.yaml"
    head = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
    target.write_text(head + "  - name: a\n    image: i\n    resources:\n      requests:\n        nvidia.com/gpus: 1\n"
                      "  - name: b\n    image: i\n    resources:\n      requests: {amd.com/gpus: 1}\n"
                      "      limits: {amd.com/gpus: 1}\n"
                      "  - name: c\n    image: i\n    resources:\n      requests: {nvidia.com/gpu: 250m}\n")
    code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", str(target))
    assert target.read_text() == head + (
        "  - name: a\n    image: i\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n"
        "      limits:\n        nvidia.com/gpu: 1\n"
        "  - name: b\n    image: i\n    resources:\n      requests: {amd.com/gpu: 1}\n      limits: {amd.com/gpu: 1}\n"
        "  - name: c\n    image: i\n    resources:\n      requests: {nvidia.com/gpu: 250m}\n")
    assert "gpulint: 3 fixed, 2 remaining\n" in err and "internal error" not in err   # c: GPU101 and GPU103
    _code, report, _err = _report(str(target))
    assert [(f["rule"], f["fix"]["title"] if f["fix"] else None) for f in report["findings"]] == [
        ("GPU101", "no fix: the requested quantity is not valid (see GPU103)"), ("GPU103", None)]
