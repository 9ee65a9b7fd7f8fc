"""primaryLocationLineHash: the value GitHub's upload-sarif computes (gpulint/report/linehash.py)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from gpulint.report.linehash import FileLineHashes, all_hashes

# The vectors github/codeql-action publishes for its own implementation
# (src/fingerprints.test.ts): text -> the hash of every line, in order.
PUBLISHED = [
    ("", ["c129715d7a2bc9a3:1"]),
    (" a\nb\n  \t\tc\n d", ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]),
    (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
     ["8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1",
      "b86d3392aea1be30:1", "e6ceba753e1a442:1"]),
]
ENDED = ["e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1",
         "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1"]
PUBLISHED += [(text, ENDED) for text in (
    " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
    " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
    " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
    " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n",
)]
PUBLISHED.append(("Lorem ipsum dolor sit amet.\n" * 10, [
    "a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3", "a7f2ff13bc495cf2:4",
    "a7f2ff13bc495cf2:5", "a7f2ff13bc495cf2:6", "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1",
    "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1", "c129715d7a2bc9a3:1"]))


@pytest.mark.parametrize("text, expected", PUBLISHED)
def test_published_vectors(text: str, expected: list[str]) -> None:
    assert list(all_hashes(text.encode())) == expected


def test_lines_inserted_above_keep_the_hash() -> None:
    body = b"kind: Pod\nspec:\n  containers:\n  - name: a\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n"
    before = FileLineHashes(body).get(6)
    after = FileLineHashes(b"# comment\n\n---\n" + body).get(9)
    assert before == after and before is not None
    assert FileLineHashes(body).get(7) is not None and FileLineHashes(body).get(8) is None


# A second implementation, written from upload-sarif's description in JavaScript
# and run by node on node's own UTF-8 decoder and UTF-16 strings: the streaming
# form (a rolling window over the whole file), where linehash.py hashes per line.
_NODE_HASH = r"""
const data = require("fs").readFileSync(0);
const text = data.toString("utf8");
const B = 100, M = (1n << 64n);
let first = 1n; for (let i = 0; i < B; i++) first = (first * 37n) % M;
const win = new Array(B).fill(0), starts = new Array(B).fill(-1), counts = {}, out = [];
let h = 0n, at = 0, line = 0, lineStart = true, prevCR = false;
const emit = () => { const v = h.toString(16); counts[v] = (counts[v] || 0) + 1;
  out.push([starts[at], v + ":" + counts[v]]); starts[at] = -1; };
const push = (c) => { const old = win[at]; win[at] = c;
  h = ((h * 37n + BigInt(c) - first * BigInt(old)) % M + M) % M; at = (at + 1) % B; };
const feed = (c) => {
  if (c === 32 || c === 9 || (prevCR && c === 10)) { prevCR = false; return; }
  if (c === 13) { c = 10; prevCR = true; } else { prevCR = false; }
  if (starts[at] !== -1) emit();
  if (lineStart) { lineStart = false; line++; starts[at] = line; }
  if (c === 10) lineStart = true;
  push(c);
};
for (let i = 0; i < text.length; i++) feed(text.charCodeAt(i));
feed(65535);
for (let i = 0; i < B; i++) { if (starts[at] !== -1) emit(); push(0); }
process.stdout.write(JSON.stringify(out.map(x => x[1])));
"""


def _samples() -> list[bytes]:
    rng = random.Random(20261203)
    pieces = [b" ", b"\t", b"\n", b"\r", b"\r\n", b"\r \n", b"a", b"key: value", b"- name: X",
              "é".encode(), "😀".encode(), b"\xff", b"\xc3", b"\xe2\x82", b"\x00", "\u2028".encode()]
    samples = [b"", b"\xef\xbb\xbfkind: Pod\n", ("x" * 250 + "\n").encode() * 3]
    for _ in range(40):
        samples.append(b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400))))
    ascii_pieces = [piece for piece in pieces if piece.isascii()]   # the ASCII path drops spaces as bytes
    for _ in range(20):
        samples.append(b"".join(rng.choice(ascii_pieces) for _ in range(rng.randrange(0, 400))))
    return samples


def test_agrees_with_a_streaming_implementation_under_node() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the cross-check needs a JavaScript engine")
    for sample in _samples():
        proc = subprocess.run([node, "-e", _NODE_HASH], input=sample, capture_output=True, check=True)
        assert list(all_hashes(sample)) == json.loads(proc.stdout), sample


def _reference(data: bytes) -> list[str]:
    """Every line's hash from windows cut out of the whole normalised text (the plain reading of the algorithm)."""
    from gpulint.report.linehash import hash_window, normalise

    units = normalise(data)
    starts = [0] + [at + 1 for at, unit in enumerate(units) if unit == "\n"]
    seen: dict[str, int] = {}
    out = []
    for start in starts:
        value = hash_window(units[start:start + 100])
        seen[value] = seen.get(value, 0) + 1
        out.append(f"{value}:{seen[value]}")
    return out


@pytest.mark.parametrize("lines", [300, 5000])
@pytest.mark.parametrize("names", [0, 40])   # few different lines (searched for), many (grouped)
@pytest.mark.parametrize("long_lines", [False, True])
def test_windows_joined_from_lines_agree_with_the_whole_text(lines: int, names: int, long_lines: bool) -> None:
    rng = random.Random(lines + names)
    pieces = ["- name: main", "  image: nvidia/cuda:12.4.1", "", "\t", "key: value  ", "x" * 99, "---", "a\r",
              "é😀", *(f"  name: n{i}" for i in range(names))] + (["x" * 120, "x" * 120 + "y"] if long_lines else [])
    data = "\n".join(rng.choice(pieces) for _ in range(lines)).encode()
    expected = _reference(data)
    assert all_hashes(data) == expected
    for asked in (200, 10):                       # lines asked for in any order, as results come
        hashes = FileLineHashes(data)
        order = list(range(1, len(expected) + 1))
        rng.shuffle(order)
        assert [hashes.get(line) for line in order[:asked]] == [expected[line - 1] for line in order[:asked]]
