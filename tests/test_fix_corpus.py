"""`--fix --unsafe-fixes` on a copy of the shared corpus of real manifests.

It changes only lines where a finding's fix said it would, every changed file
still loads as it did, and the corpus has fewer findings and no new one. The
`corpus` fixture skips this when ../shared/corpus is absent.
"""

from __future__ import annotations

import difflib
import json
import shutil
from collections import Counter
from pathlib import Path

from conftest import run_cli

from gpulint.load.yamlload import LoadError, load_documents


def _scan(root: Path, *args: str) -> tuple[dict, str]:
    code, out, err = run_cli("scan", "--format", "json", "--fail-on", "never", *args, str(root))
    assert code == 0, err
    return json.loads(out), err


def _identity(finding: dict) -> tuple:
    """A finding, wherever edits above it moved it."""
    if finding["field_path"].startswith("line:"):
        return finding["rule"], finding["path"], finding["message"]
    obj = finding["object"]
    return (finding["rule"], finding["path"], tuple(obj.values()) if obj else None, finding["container"],
            finding["field_path"])


def _load_errors(text: str) -> int:
    return sum(1 for doc in load_documents(text) if isinstance(doc, LoadError))


def test_fixing_the_corpus(corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(corpus, root, symlinks=True)
    before, _err = _scan(root)
    files = {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}
    # Lines each file's fixes may touch: from the first line to the last of every edit.
    allowed: dict[str, set[int]] = {}
    for finding in before["findings"]:
        fix = finding["fix"]
        if fix and fix["applicability"] and not finding["suppressed"]:
            lines = allowed.setdefault(finding["path"], set())
            for edit in fix["edits"]:
                lines.update(range(edit["line"], edit["end_line"] + 1))
    assert allowed, "the corpus has findings with fixes"

    after, err = _scan(root, "--fix", "--unsafe-fixes")
    assert "internal error" not in err, err
    changed = [p for p, data in files.items() if p.read_bytes() != data]
    assert {str(p) for p in changed} == set(allowed)
    for path in changed:
        old, new = files[path].decode("utf-8-sig"), path.read_text(encoding="utf-8-sig")
        assert _load_errors(new) == _load_errors(old), path
        touched = set()
        for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, old.split("\n"), new.split("\n"),
                                                             autojunk=False).get_opcodes():
            if tag in ("replace", "delete"):
                touched.update(range(i1 + 1, i2 + 1))
            elif tag == "insert":
                touched.add(i1)        # inserted after line i1 (1-based)
        assert touched <= allowed[str(path)], (path, sorted(touched - allowed[str(path)]))

    active_before = Counter(_identity(f) for f in before["findings"] if not f["suppressed"])
    active_after = Counter(_identity(f) for f in after["findings"] if not f["suppressed"])
    assert sum(active_after.values()) < sum(active_before.values())
    assert active_after - active_before == Counter(), "the fixes added findings"
    fixed = int(err.split("gpulint: ", 1)[1].split(" fixed")[0])
    print(f"\n{fixed} fixes in {len(changed)} files; findings {sum(active_before.values())} -> "
          f"{sum(active_after.values())}")
    assert fixed >= len(changed)
