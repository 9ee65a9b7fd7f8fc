"""`--fix` of findings on a kustomization's build, made in the file the user wrote: the resource
file, a strategic-merge patch, a JSON 6902 operation's value, an inline patch. Each round builds
every kustomization that reads the edited file again (the real `kubectl kustomize`); where the
edit cannot be placed safely the finding keeps "no fix" and says why."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli, scan_json
from sarif_check import check as check_sarif

GOLDEN = FIXTURES / "fixes" / "kustomize" / "gpu-train"
FIXED = sorted(p for p in GOLDEN.rglob("*.fixed"))
SAFE = "make the nvidia.com/gpu request equal to its limit"


def _tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "gpu-train"
    shutil.copytree(GOLDEN, target, ignore=shutil.ignore_patterns("*.fixed"))
    (tmp_path / ".git").mkdir()   # the repository the overlays may read their base in
    monkeypatch.chdir(tmp_path)
    return target


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def test_every_fix_is_a_text_edit_of_the_file_that_writes_the_value(kustomize: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, monkeypatch)
    _code, report = scan_json("--kustomize", kustomize, "--unsafe-fixes", "gpu-train")
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parent.parent / "gpulint/schemas/report.schema.json").read_text())
    jsonschema.validate(report, schema)
    found = [(f["rule"], f["path"], f["line"], f["rendered"]["path"], f["fix"]) for f in report["findings"]]
    unsafe, safe = "unsafe", "safe"
    assert found == [
        ("GPU007", "gpu-train/overlays/a/kustomization.yaml", 18, "gpu-train/overlays/a (rendered)",
         {"applicability": unsafe, "title": "delete runtimeClassName nvidia: no container requests a GPU",
          "path": "gpu-train/overlays/a/kustomization.yaml",      # the inline patch, in its CR LF file
          "edits": [{"line": 18, "column": 1, "end_line": 19, "end_column": 1, "text": ""}]}),
        ("GPU003", "gpu-train/overlays/a/pin-gpu.yaml", 11, "gpu-train/overlays/a (rendered)",
         {"applicability": unsafe, "title": "delete NVIDIA_VISIBLE_DEVICES: the GPU limit gives the container its GPUs",
          "path": "gpu-train/overlays/a/pin-gpu.yaml",             # the strategic-merge patch
          "edits": [{"line": 11, "column": 1, "end_line": 13, "end_column": 1, "text": ""}]}),
        ("GPU102", "gpu-train/base/trainer.yaml", 18, "gpu-train/overlays/a (rendered)",
         {"applicability": safe, "title": SAFE, "path": "gpu-train/base/trainer.yaml",   # the base's resource
          "edits": [{"line": 18, "column": 29, "end_line": 18, "end_column": 30, "text": "1"}]}),
        ("GPU101", "gpu-train/overlays/b/metrics-gpu.yaml", 12, "gpu-train/overlays/b (rendered)",
         {"applicability": safe, "title": "add nvidia.com/gpu to resources.limits, equal to the request",
          "path": "gpu-train/overlays/b/metrics-gpu.yaml",
          "edits": [{"line": 12, "column": 52, "end_line": 12, "end_column": 52,
                     "text": "\n            limits:\n              nvidia.com/gpu: 1"}]}),
        ("GPU102", "gpu-train/overlays/b/more-gpus.yaml", 2, "gpu-train/overlays/b (rendered)",
         {"applicability": safe, "title": SAFE, "path": "gpu-train/overlays/b/more-gpus.yaml",  # the JSON op's value
          "edits": [{"line": 3, "column": 10, "end_line": 3, "end_column": 11, "text": "1"}]}),
    ]


def test_golden_fix_builds_scans_clean_and_a_second_fix_changes_nothing(kustomize: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path, monkeypatch)
    before = _files(tree)
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--unsafe-fixes", "gpu-train")
    assert code == 0, err
    assert "gpulint: 5 fixed, 0 remaining\n" in err
    after = _files(tree)
    golden = {str(p.relative_to(GOLDEN))[:-len(".fixed")]: p.read_bytes() for p in FIXED}
    assert {name: data for name, data in after.items() if data != before[name]} == golden
    assert b"\r\n" in golden["overlays/a/pin-gpu.yaml"] and b"\n\n" not in golden["overlays/a/pin-gpu.yaml"]
    for overlay in ("overlays/a", "overlays/b"):   # the fixed tree still builds
        subprocess.run([kustomize, "kustomize", str(tree / overlay)] if Path(kustomize).name.startswith("kubectl")
                       else [kustomize, "build", str(tree / overlay)], check=True, capture_output=True)
    code, report = scan_json("--kustomize", kustomize, "gpu-train")
    assert (code, report["findings"]) == (0, [])
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--unsafe-fixes", "gpu-train")
    assert code == 0 and "gpulint: 0 fixed, 0 remaining\n" in err
    assert _files(tree) == after


def test_safe_fixes_alone(kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path, monkeypatch)
    code, out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--format", "json", "gpu-train")
    assert code == 1
    assert "gpulint: 3 fixed, 2 remaining (2 with --unsafe-fixes)\n" in err
    left = json.loads(out)   # the scan of the fixed files: what the unsafe fixes would still do
    assert [(f["rule"], f["path"], f["line"], f["fix"]["path"]) for f in left["findings"]] == [
        ("GPU007", "gpu-train/overlays/a/kustomization.yaml", 18, "gpu-train/overlays/a/kustomization.yaml"),
        ("GPU003", "gpu-train/overlays/a/pin-gpu.yaml", 11, "gpu-train/overlays/a/pin-gpu.yaml")]
    for name in ("base/trainer.yaml", "overlays/b/more-gpus.yaml", "overlays/b/metrics-gpu.yaml"):
        assert (tree / name).read_bytes() == (GOLDEN / f"{name}.fixed").read_bytes()
    for name in ("overlays/a/pin-gpu.yaml", "overlays/a/kustomization.yaml"):
        assert (tree / name).read_bytes() == (GOLDEN / name).read_bytes()


def test_diff_shows_each_edited_file_and_changes_nothing(kustomize: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _tree(tmp_path, monkeypatch)
    before = _files(tree)
    code, out, err = run_cli("scan", "--kustomize", kustomize, "--diff", "--unsafe-fixes", "gpu-train")
    assert code == 1
    assert _files(tree) == before
    expected = ""
    for fixed in FIXED:
        name = "gpu-train/" + str(fixed.relative_to(GOLDEN))[:-len(".fixed")]
        old = (GOLDEN / name[len("gpu-train/"):]).read_bytes().decode().splitlines(keepends=True)
        new = fixed.read_bytes().decode().splitlines(keepends=True)
        expected += "".join(difflib.unified_diff(old, new, f"a/{name}", f"b/{name}"))
    assert out == expected.replace("\r\n", "\n")   # (the CLI runner reads stdout with universal newlines)
    assert out.startswith(
        "--- a/gpu-train/base/trainer.yaml\n"
        "+++ b/gpu-train/base/trainer.yaml\n"
        "@@ -15,6 +15,6 @@\n"
        "         image: registry.example.com/trainer:1.4\n"
        "         resources:\n"
        "           requests:\n"
        "-            nvidia.com/gpu: 2   # two were asked for\n"
        "+            nvidia.com/gpu: 1   # two were asked for\n")
    assert out.endswith(
        "--- a/gpu-train/overlays/b/more-gpus.yaml\n"
        "+++ b/gpu-train/overlays/b/more-gpus.yaml\n"
        "@@ -1,3 +1,3 @@\n"
        " - op: replace\n"
        "   path: /spec/template/spec/containers/0/resources/requests/nvidia.com~1gpu\n"
        "-  value: 4   # the big run\n"
        "+  value: 1   # the big run\n")
    assert "gpulint: 5 fixes in 5 files would be applied\n" in err


def test_sarif_fix_names_the_file_it_edits(kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, monkeypatch)
    _code, out, _err = run_cli("scan", "--kustomize", kustomize, "--format", "sarif", "--select", "GPU102",
                               "gpu-train")
    run = check_sarif(json.loads(out))
    changes = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                [(c["artifactLocation"]["uri"], c["replacements"]) for f in r["fixes"] for c in f["artifactChanges"]])
               for r in run["results"]]
    assert changes == [
        ("gpu-train/base/trainer.yaml", [("gpu-train/base/trainer.yaml", [
            {"deletedRegion": {"endColumn": 30, "endLine": 18, "startColumn": 29, "startLine": 18},
             "insertedContent": {"text": "1"}}])]),
        ("gpu-train/overlays/b/more-gpus.yaml", [("gpu-train/overlays/b/more-gpus.yaml", [
            {"deletedRegion": {"endColumn": 11, "endLine": 3, "startColumn": 10, "startLine": 3},
             "insertedContent": {"text": "1"}}])]),
    ]


def test_rdjson_offers_no_suggestion_in_another_file(kustomize: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A reviewdog suggestion is an edit of the diagnostic's own file, here the rendered output."""
    _tree(tmp_path, monkeypatch)
    _code, out, _err = run_cli("scan", "--kustomize", kustomize, "--format", "rdjson", "--select", "GPU102",
                               "gpu-train")
    diagnostics = json.loads(out)["diagnostics"]
    assert [(d["location"]["path"], "suggestions" in d) for d in diagnostics] == [
        ("gpu-train/overlays/a (rendered)", False), ("gpu-train/overlays/b (rendered)", False)]


# --- a base shared by several overlays, and a file scanned on its own too -----------------------

_BASE = {
    "base/kustomization.yaml": "resources:\n- trainer.yaml\n",
    "base/trainer.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n"
                          "  selector:\n    matchLabels: {app: trainer}\n  template:\n"
                          "    metadata:\n      labels: {app: trainer}\n    spec:\n      containers:\n"
                          "      - name: trainer\n        image: registry.example.com/trainer:1.4\n"
                          "        env:\n        - name: NVIDIA_VISIBLE_DEVICES\n          value: \"0\"\n"
                          "        - name: LOG_LEVEL\n          value: info\n"
                          "        resources:\n          requests:\n            nvidia.com/gpu: 2\n"
                          "          limits:\n            nvidia.com/gpu: 1\n"),
    "a/kustomization.yaml": "resources:\n- ../base\n",
}


def test_a_base_fix_that_breaks_another_overlay_is_dropped(kustomize: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Overlay `a` uses the base as it is; overlay `c` raises the limit to the base's request. Making the
    base's request equal to its limit fixes `a` and breaks `c`: building `c` again catches it."""
    _write(tmp_path, {**_BASE, "c/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: two.yaml\n",
                      "c/two.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n"
                                     "  template:\n    spec:\n      containers:\n      - name: trainer\n"
                                     "        resources:\n          limits:\n            nvidia.com/gpu: 2\n")})
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--select", "GPU102", ".")
    assert code == 2
    assert (tmp_path / "base/trainer.yaml").read_text() == _BASE["base/trainer.yaml"]
    assert ("base/trainer.yaml:22:29: internal error: the fix of GPU102 (make the nvidia.com/gpu request equal to "
            "its limit) was not applied: it adds a GPU102 finding at c (rendered):") in err, err
    assert "gpulint: 0 fixed, 1 remaining" in err


def test_a_file_scanned_on_its_own_and_through_a_kustomization_gets_one_edit(
        kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, _BASE)
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    _code, report = scan_json("--kustomize", kustomize, "--select", "GPU102", "a", "base/trainer.yaml")
    assert [(f["path"], f["line"], f["fix"]["edits"], f["fix"].get("path")) for f in report["findings"]] == [
        ("base/trainer.yaml", 22, [{"line": 22, "column": 29, "end_line": 22, "end_column": 30, "text": "1"}],
         "base/trainer.yaml"),   # the build's, made in its resource file
        ("base/trainer.yaml", 22, [{"line": 22, "column": 29, "end_line": 22, "end_column": 30, "text": "1"}], None)]
    code, out, err = run_cli("scan", "--kustomize", kustomize, "--diff", "--select", "GPU102", "a", "base/trainer.yaml")
    assert code == 1 and out.count("--- a/base/trainer.yaml") == 1 and out.count("\n-") == 1
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--select", "GPU102", "a", "base/trainer.yaml")
    assert code == 0, err
    assert (tmp_path / "base/trainer.yaml").read_text() == _BASE["base/trainer.yaml"].replace("gpu: 2", "gpu: 1")


# --- where no fix can be placed safely, and why --------------------------------------------------

def _no_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kustomize: str, files: dict[str, str],
            rule: str) -> list[tuple[str, int, str]]:
    _write(tmp_path, {**_BASE, **files})
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    _code, report = scan_json("--kustomize", kustomize, "--unsafe-fixes", "--select", rule, "a")
    return [(f["path"], f["line"], f["fix"]["title"]) for f in report["findings"]
            if f["fix"] is not None and f["fix"]["applicability"] is None]


def test_no_fix_when_a_json_patch_addresses_the_list_by_index(kustomize: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Deleting env[0] in the base would move LOG_LEVEL to env[0]: the overlay's operation on env/1 would break."""
    ops = "- op: replace\n  path: /spec/template/spec/containers/0/env/1/value\n  value: debug\n"
    assert _no_fix(tmp_path, monkeypatch, kustomize, {
        "a/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: ops.yaml\n  target: {kind: Deployment}\n",
        "a/ops.yaml": ops}, "GPU003") == [
        ("base/trainer.yaml", 16, "no fix: the object is built by Kustomize: the JSON patch at a/ops.yaml:1 "
         "addresses that list by index, and deleting the item would shift it; the value is written at "
         "base/trainer.yaml:16")]


def test_no_fix_when_a_replacement_sets_the_value(kustomize: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert _no_fix(tmp_path, monkeypatch, kustomize, {
        "a/kustomization.yaml": (
            "resources:\n- ../base\n- gpus.yaml\nreplacements:\n"
            "- source: {kind: ConfigMap, name: gpus, fieldPath: data.request}\n  targets:\n"
            "  - select: {kind: Deployment, name: trainer}\n    fieldPaths:\n"
            "    - spec.template.spec.containers.[name=trainer].resources.requests.nvidia\\.com/gpu\n"),
        "a/gpus.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gpus\ndata:\n  request: \"4\"\n"},
        "GPU102") == [
        ("base/trainer.yaml", 22, "no fix: the object is built by Kustomize: the replacement at "
         "a/kustomization.yaml:5 sets it; the value is written at base/trainer.yaml:22")]


def test_no_fix_when_a_transformer_changes_the_value(kustomize: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`vars` substitutes $(GPUS) after the base writes it: what the build has is not what the file says."""
    base = _BASE["base/trainer.yaml"].replace('value: "0"', 'value: "$(GPUS)"')
    assert _no_fix(tmp_path, monkeypatch, kustomize, {
        "base/trainer.yaml": base,
        "a/kustomization.yaml": (
            "resources:\n- ../base\n- gpus.yaml\nvars:\n- name: GPUS\n"
            "  objref: {kind: ConfigMap, name: gpus, apiVersion: v1}\n  fieldref: {fieldpath: data.ids}\n"),
        "a/gpus.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gpus\ndata:\n  ids: \"0\"\n"},
        "GPU003") == [
        ("base/trainer.yaml", 16, "no fix: the object is built by Kustomize: a transformer (images, replicas, "
         "replacements, vars) changes the value on its way into the build; the value is written at "
         "base/trainer.yaml:16")]


def test_no_fix_for_a_whole_json_patch_value(kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _BASE["base/trainer.yaml"].replace('        - name: NVIDIA_VISIBLE_DEVICES\n          value: "0"\n', "")
    ops = ("- op: add\n  path: /spec/template/spec/containers/0/env/-\n"
           "  value: {name: NVIDIA_VISIBLE_DEVICES, value: \"1\"}\n")
    assert _no_fix(tmp_path, monkeypatch, kustomize, {
        "base/trainer.yaml": base,
        "a/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: ops.yaml\n  target: {kind: Deployment}\n",
        "a/ops.yaml": ops}, "GPU003") == [
        ("a/ops.yaml", 3, "no fix: the object is built by Kustomize: it is all the value of the JSON patch "
         "operation at a/ops.yaml:1; removing the patch's only operation is left to you; the value is written at "
         "a/ops.yaml:3")]


def test_an_add_operation_that_only_adds_the_finding_is_deleted(kustomize: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    base = _BASE["base/trainer.yaml"].replace('        - name: NVIDIA_VISIBLE_DEVICES\n          value: "0"\n', "")
    keep = "- op: replace  # louder logs\n  path: /spec/template/spec/containers/0/env/0/value\n  value: debug\n"
    ops = keep + ("- op: add\n  path: /spec/template/spec/containers/0/env/-\n"
                  "  value: {name: NVIDIA_VISIBLE_DEVICES, value: \"1\"}\n# end\n")
    _write(tmp_path, {**_BASE, "base/trainer.yaml": base, "a/ops.yaml": ops,
                      "a/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: ops.yaml\n"
                                              "  target: {kind: Deployment}\n"})
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--unsafe-fixes", "--select", "GPU003", "a")
    assert code == 0, err
    assert (tmp_path / "a/ops.yaml").read_text() == keep + "# end\n"


def test_no_fix_when_the_object_is_ambiguous_in_its_file(kustomize: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Deployments named `trainer` (in two namespaces) in one file: which one the build's is, is not known."""
    one = _BASE["base/trainer.yaml"].replace("  name: trainer\n", "  name: trainer\n  namespace: x\n", 1)
    two = _BASE["base/trainer.yaml"].replace("  name: trainer\n", "  name: trainer\n  namespace: y\n", 1)
    found = _no_fix(tmp_path, monkeypatch, kustomize, {"base/trainer.yaml": one + "---\n" + two}, "GPU102")
    assert [(path, title) for path, _line, title in found] == [
        ("base/trainer.yaml", "no fix: the object is built by Kustomize: several documents of base/trainer.yaml "
         "could be the object's; the value is written at base/trainer.yaml:23"),
        ("base/trainer.yaml", "no fix: the object is built by Kustomize: several documents of base/trainer.yaml "
         "could be the object's; the value is written at base/trainer.yaml:23")]


def test_no_fix_in_an_inline_patch_that_is_no_literal_block(kustomize: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    patch = ("apiVersion: apps/v1\\nkind: Deployment\\nmetadata:\\n  name: trainer\\nspec:\\n  template:\\n"
             "    spec:\\n      runtimeClassName: nvidia\\n")
    base = _BASE["base/trainer.yaml"].replace("          limits:\n            nvidia.com/gpu: 1\n", "").replace(
        "          requests:\n            nvidia.com/gpu: 2\n", "          requests: {}\n")
    found = _no_fix(tmp_path, monkeypatch, kustomize, {
        "base/trainer.yaml": base,
        "a/kustomization.yaml": f"resources:\n- ../base\npatches:\n- patch: \"{patch}\"\n"}, "GPU007")
    assert found == [("a/kustomization.yaml", 4, "no fix: the object is built by Kustomize: the inline patch is "
                      "not written as a literal `|` block; the value is written at a/kustomization.yaml:4")]


def test_a_file_outside_the_paths_scanned_is_not_edited(kustomize: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Scanning one overlay: its base may feed overlays the scan never builds, so it is left as it is."""
    _write(tmp_path, {**_BASE, "b/kustomization.yaml": "resources:\n- ../base\n"})
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("scan", "--kustomize", kustomize, "--diff", "--select", "GPU102", "a")
    assert (code, out) == (0, "")
    assert ("gpulint: base/trainer.yaml: not fixed: it is outside the paths scanned, and kustomizations the scan "
            "did not build may read it (scan a directory that holds it)\n") in err
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--select", "GPU102", "a")
    assert code == 1 and "gpulint: 0 fixed, 1 remaining" in err
    assert (tmp_path / "base/trainer.yaml").read_text() == _BASE["base/trainer.yaml"]


def test_a_list_item_matched_by_its_place_only_is_not_placed() -> None:
    """A patch's list without merge keys: which built item its first item writes is not known."""
    from pathlib import Path as P

    from gpulint.load.yamlload import load_documents
    from gpulint.render.kustomizesite import Layer, by_place, position

    (doc,) = load_documents("spec:\n  args: [a, --gpus]\n  env:\n  - {name: A, value: '1'}\n")
    layer = Layer("p.yaml", P("p.yaml"), doc, (), (), "patch")
    built = {"spec": {"args": ["x", "--gpus"], "env": [{"name": "A", "value": "1"}]}}
    at = position(layer, ("spec", "args", 0), built)
    assert at == (("spec", "args", 0), 3) and by_place(layer, ("spec", "args", 0), built, at[0])
    assert not by_place(layer, ("spec", "args", 1), built, ("spec", "args", 1))          # equal items
    assert not by_place(layer, ("spec", "env", 0, "value"), built, ("spec", "env", 0, "value"))   # by name


def test_an_entry_added_in_an_inline_patch_follows_its_block_and_line_breaks(
        kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector:\n"
            "    matchLabels: {app: d}\n  template:\n    metadata:\n      labels: {app: d}\n    spec:\n"
            "      containers:\n      - name: c\n        image: i\n")
    patch = ("resources:\n- ../base\npatches:\n- patch: |\n    apiVersion: apps/v1\n    kind: Deployment\n"
             "    metadata:\n      name: d\n    spec:\n      template:\n        spec:\n          containers:\n"
             "          - name: c\n            resources:\n              requests:\n"
             "                nvidia.com/gpu: 2  # two\n# after\n")
    _write(tmp_path, {"base/kustomization.yaml": "resources:\n- d.yaml\n", "base/d.yaml": base})
    (tmp_path / "ov").mkdir()
    (tmp_path / "ov/kustomization.yaml").write_bytes(patch.replace("\n", "\r\n").encode())
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--select", "GPU101", ".")
    assert code == 0, err
    assert (tmp_path / "ov/kustomization.yaml").read_bytes() == patch.replace(
        "# two\n", "# two\n              limits:\n                nvidia.com/gpu: 2\n").replace("\n", "\r\n").encode()


def test_a_file_a_transformer_names_by_a_bare_name_is_in_the_builds_copy(
        kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check builds a copy of the kustomization's folder: a PatchTransformer's `path: extra.yaml`
    (a bare name) is there too, so the build of the fixed copy succeeds and the fix is made."""
    base = _BASE["base/trainer.yaml"].replace("          limits:\n            nvidia.com/gpu: 1\n", "")
    _write(tmp_path, {
        "app/kustomization.yaml": "resources:\n- trainer.yaml\ntransformers:\n- patcher.yaml\n",
        "app/trainer.yaml": base,
        "app/patcher.yaml": ("apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: extra.yaml\n"
                             "target:\n  kind: Deployment\n"),
        "app/extra.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n"
                           "  template:\n    metadata:\n      labels: {tier: gpu}\n")})
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("scan", "--kustomize", kustomize, "--fix", "--select", "GPU101", "app")
    assert code == 0, err
    assert (tmp_path / "app/trainer.yaml").read_text() == base.replace(
        "nvidia.com/gpu: 2\n", "nvidia.com/gpu: 2\n          limits:\n            nvidia.com/gpu: 2\n")


def test_each_of_two_objects_whose_names_contain_each_other_is_fixed_in_its_document(
        kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = _BASE["base/trainer.yaml"].replace("name: trainer\n", "name: trainer-big\n", 1).replace(
        "nvidia.com/gpu: 2", "nvidia.com/gpu: 4")
    _write(tmp_path, {**_BASE, "base/trainer.yaml": _BASE["base/trainer.yaml"] + "---\n" + big})
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    _code, report = scan_json("--kustomize", kustomize, "--select", "GPU102", ".")
    assert [(f["line"], f["fix"]["edits"][0]["line"], f["fix"]["edits"][0]["text"]) for f in report["findings"]] \
        == [(22, 22, "1"), (47, 47, "1")]


def test_no_fix_for_all_a_replace_operation_writes(kustomize: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Deleting a `replace` operation would bring back the value it replaced (LOG_LEVEL here)."""
    base = _BASE["base/trainer.yaml"].replace('        - name: NVIDIA_VISIBLE_DEVICES\n          value: "0"\n', "")
    ops = ("- op: replace\n  path: /spec/template/spec/containers/0/env/0\n"
           "  value: {name: NVIDIA_VISIBLE_DEVICES, value: \"1\"}\n"
           "- op: add\n  path: /metadata/labels\n  value: {tier: gpu}\n")
    assert _no_fix(tmp_path, monkeypatch, kustomize, {
        "base/trainer.yaml": base,
        "a/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: ops.yaml\n  target: {kind: Deployment}\n",
        "a/ops.yaml": ops}, "GPU003") == [
        ("a/ops.yaml", 3, "no fix: the object is built by Kustomize: it is all the value of the JSON patch "
         "operation at a/ops.yaml:1, which replaces another value; removing it is left to you; the value is "
         "written at a/ops.yaml:3")]
