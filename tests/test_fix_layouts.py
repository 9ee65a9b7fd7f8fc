"""Fixes on many layouts of the same manifests (Hypothesis, bounded and derandomised).

The same Pod is written with random indentation, list indentation, quoting,
block or flow collections and comments. Whatever the layout, `--fix
--unsafe-fixes` must give a file that loads, means what the fixes say (checked
against data computed here, independently of the fixer), keeps every comment of
a line it does not delete, changes the text only inside the edits the JSON
report announced, and needs no second round.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.load.yamlload import Document, load_documents

EXAMPLES = int(os.environ.get("GPULINT_FUZZ_EXAMPLES", "40"))
LAYOUTS = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("GPULINT_FUZZ_RANDOM"),
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], database=None)

GPU = "nvidia.com/gpu"
IMAGE = "registry.example.com/app:1"
# Each container shows one fixable problem (scenario -> (container, expected container after --fix)).
SCENARIOS: dict[str, tuple[dict, dict]] = {
    "request-only": (
        {"resources": {"requests": {"cpu": "1", GPU: 2}}},
        {"resources": {"requests": {"cpu": "1", GPU: 2}, "limits": {GPU: 2}}}),
    "mismatch": (
        {"resources": {"limits": {GPU: 1}, "requests": {GPU: 4}}},
        {"resources": {"limits": {GPU: 1}, "requests": {GPU: 1}}}),
    "devices": (
        {"env": [{"name": "LOG", "value": "debug"}, {"name": "NVIDIA_VISIBLE_DEVICES", "value": "0,1"},
                 {"name": "MODE", "value": "batch"}]},
        {"env": [{"name": "LOG", "value": "debug"}, {"name": "MODE", "value": "batch"}],
         "resources": {"limits": {GPU: 2}}}),
    "only-devices": (
        {"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "3"}]},
        {"resources": {"limits": {GPU: 1}}}),
    "privileged": (
        {"resources": {"limits": {GPU: 1}}, "securityContext": {"runAsUser": 1000, "privileged": True}},
        {"resources": {"limits": {GPU: 1}}, "securityContext": {"runAsUser": 1000}}),
    "typo": (
        {"resources": {"limits": {"nvidia.com/gpus": 1}}},
        {"resources": {"limits": {GPU: 1}}}),
    "cuda-image": (
        {"image": "nvidia/cuda:12.4.1-base-ubuntu22.04", "env": [{"name": "MODE", "value": "batch"}]},
        {"image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
         "env": [{"name": "MODE", "value": "batch"}, {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]}),
}
_PLAIN_RE = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*\Z")


class Layout:
    """How one manifest is written: every choice drawn once per collection or scalar."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.step = draw(st.sampled_from([2, 3, 4]))
        self.dash = draw(st.sampled_from([0, self.step]))
        self.comments = 0

    def quote(self, text: str, key: bool) -> str:
        style = self.draw(st.sampled_from(["plain", "single", "double"]))
        if style == "double" or not _PLAIN_RE.match(text) or text in ("true", "false", "null", "yes", "no"):
            return json.dumps(text)
        return f"'{text}'" if style == "single" else text

    def scalar(self, value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return self.quote(value, key=False)

    def flow(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self.quote(k, True)}: {self.flow(v)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self.flow(v) for v in value) + "]"
        return self.scalar(value)

    def comment(self, protected: bool) -> str:
        """A trailing comment on lines no fix deletes (each one unique, to be found again)."""
        if not protected or not self.draw(st.booleans()):
            return ""
        self.comments += 1
        return f"  # c{self.comments}"

    def mapping(self, value: dict, column: int, protected: set[str]) -> list[str]:
        lines = []
        for key, item in value.items():
            pad = " " * column
            name = self.quote(key, True)
            keep = key in protected
            if keep and self.draw(st.booleans()):
                self.comments += 1
                lines.append(f"{pad}# c{self.comments} about {key}")
            if isinstance(item, (dict, list)) and item and self.draw(st.booleans()):
                lines.append(f"{pad}{name}:{self.comment(keep)}")
                if isinstance(item, dict):
                    lines += self.mapping(item, column + self.step, protected)
                else:   # env entries may be deleted with their comments: none there
                    lines += self.sequence(item, column + self.dash, set() if key == "env" else protected)
            else:
                lines.append(f"{pad}{name}: {self.flow(item)}{self.comment(keep)}")
        return lines

    def sequence(self, value: list, column: int, protected: set[str]) -> list[str]:
        lines = []
        for item in value:
            if isinstance(item, dict) and item and self.draw(st.booleans()):
                inner = self.mapping(item, column + 2, protected)
                lines.append(" " * column + "- " + inner[0][column + 2:])
                lines += inner[1:]
            else:
                lines.append(" " * column + "- " + self.flow(item))
        return lines


def _pod(names: list[str]) -> tuple[dict, dict]:
    before: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "layout"}, "spec": {"containers": []}}
    after = copy.deepcopy(before)
    for i, name in enumerate(names):
        bad, good = SCENARIOS[name]
        before["spec"]["containers"].append({"name": f"c{i}", "image": IMAGE, **copy.deepcopy(bad)})
        after["spec"]["containers"].append({"name": f"c{i}", "image": IMAGE, **copy.deepcopy(good)})
    return before, after


@st.composite
def manifests(draw: Any) -> tuple[str, dict, dict, int]:
    names = draw(st.lists(st.sampled_from(sorted(SCENARIOS)), min_size=1, max_size=3))
    before, after = _pod(names)
    layout = Layout(draw)
    protected = {"apiVersion", "kind", "metadata", "name", "image", "spec", "containers", "LOG", "MODE", "cpu"}
    lines = layout.mapping(before, 0, protected)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + newline, before, after, layout.comments


def _apply(text: str, edits: list[dict]) -> str:
    """The JSON report's edits made by (line, column), independently of gpulint's own code."""
    lines = text.split("\n")
    starts = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines))]
    spans = sorted(((starts[e["line"] - 1] + e["column"] - 1, starts[e["end_line"] - 1] + e["end_column"] - 1,
                     e["text"]) for e in edits), reverse=True)
    for (start, end, _new), (next_start, next_end, _t) in zip(spans, spans[1:]):
        assert next_end <= start, "edits of one round overlap"
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def _data(text: str) -> Any:
    (doc,) = load_documents(text)
    assert isinstance(doc, Document), doc
    return doc.data


@LAYOUTS
@given(manifests())
def test_fixes_on_any_layout(case: tuple[str, dict, dict, int]) -> None:
    text, before, expected, comments = case
    assert _data(text) == before   # the layout writes the manifest meant
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pod.yaml"
        path.write_bytes(text.encode())
        code, out, err = run_cli("scan", "--format", "json", str(path))
        edits = [e for f in json.loads(out)["findings"] if f["fix"] for e in f["fix"]["edits"]]
        code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", str(path))
        fixed = path.read_bytes().decode()
        assert "internal error" not in err, err
        code, _out, err = run_cli("scan", "--fix", "--unsafe-fixes", str(path))
        assert path.read_bytes().decode() == fixed and "gpulint: 0 fixed, 0 remaining" in err
    assert fixed == _apply(text, edits), "the text changed outside the announced edits"
    assert _data(fixed) == expected
    for number in range(1, comments + 1):
        assert len(re.findall(rf"# c{number}\b", fixed)) == 1, f"comment c{number} lost"
    if "\r\n" in text:
        assert fixed.count("\n") == fixed.count("\r\n"), "a line break of another kind was added"
