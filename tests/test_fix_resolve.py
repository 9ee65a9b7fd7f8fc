"""gpulint/fix/resolve.py: edits by document path -> text edits, and the cases it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulint.api import Applicability, CopyOf, Edit, Fix
from gpulint.fix.resolve import NoFix, _Text, resolve, scalar
from gpulint.fix.textedits import apply_fixes
from gpulint.load.locations import LocNode
from gpulint.load.yamlload import Document, load_documents
from gpulint.results.findings import FindingFix


def _doc(text: str, index: int = 0) -> Document:
    doc = list(load_documents(text))[index]
    assert isinstance(doc, Document)
    return doc


def _fixed(text: str, *edits: Edit, index: int = 0) -> str:
    found = resolve(_doc(text, index), Fix("t", Applicability.SAFE, edits))
    return apply_fixes(text, [FindingFix("t", "safe", found)])


def test_scalars_are_plain_only_when_read_back_the_same() -> None:
    assert [scalar(v, None) for v in ("void", "nvidia.com/gpu", "yes", "1", "a b", "", True, 2)] == \
        ["void", "nvidia.com/gpu", '"yes"', '"1"', '"a b"', '""', "true", "2"]
    assert scalar("it's", "'") == "'it''s'" and scalar("x", '"') == '"x"'


def test_positions_are_file_lines_in_later_documents() -> None:
    text = "a: 1\n---\nkind: Pod\nspec:\n  x: 1\n"
    assert _fixed(text, Edit.set(("spec", "x"), 2), index=1) == "a: 1\n---\nkind: Pod\nspec:\n  x: 2\n"
    (edit,) = resolve(_doc(text, 1), Fix("t", Applicability.SAFE, (Edit.set(("spec", "x"), 2),)))
    assert (edit.span.line, edit.span.column, edit.span.end_column, edit.text) == (5, 6, 7, "2")


def test_delete_takes_an_emptied_mapping_with_it_but_keeps_comments_around() -> None:
    text = "c:\n  # about sc\n  sc:\n    privileged: true  # gone with its line\n  name: x\n"
    assert _fixed(text, Edit.delete(("c", "sc", "privileged"))) == "c:\n  # about sc\n  name: x\n"


def test_delete_of_a_list_items_first_key_keeps_the_dash() -> None:
    text = "l:\n- a: 1\n  b: 2\n"
    assert _fixed(text, Edit.delete(("l", 0, "a"))) == "l:\n- b: 2\n"


def test_add_learns_the_indentation_of_the_document() -> None:
    text = "spec:\n    containers:\n    -   name: a\n        resources:\n            requests: {cpu: 1}\n"
    assert _fixed(text, Edit.add(("spec", "containers", 0, "resources", "limits", "cpu"), 1)) == (
        "spec:\n    containers:\n    -   name: a\n        resources:\n            requests: {cpu: 1}\n"
        "            limits:\n                cpu: 1\n")


def test_copy_keeps_the_source_spelling() -> None:
    text = "r:\n  requests: {g: '2'}\n  limits: {g: 1}\n"
    assert _fixed(text, Edit.set(("r", "limits", "g"), CopyOf(("r", "requests", "g")))) == \
        "r:\n  requests: {g: '2'}\n  limits: {g: '2'}\n"


@pytest.mark.parametrize(("text", "edit", "reason"), [
    ("a: &x {k: 1}\nb: *x\n", Edit.set(("b", "k"), 2), "b.k comes from a YAML anchor shared with other places"),
    ("s: |\n  text\n", Edit.set(("s",), "x"), "s is not a one-line value"),
    ("m: {a: 1}\n", Edit.rename(("m", "a"), "a"), "a is already set there"),
    ("m:\n", Edit.add(("m", "k"), 1), "m is not a mapping"),
    ("l: [1]\n", Edit.delete(("l", 5)), "l[5] is not in the document"),
])
def test_refused(text: str, edit: Edit, reason: str) -> None:
    with pytest.raises(NoFix, match=reason.replace("[", r"\[").replace("]", r"\]")):
        resolve(_doc(text), Fix("t", Applicability.SAFE, (edit,)))


def test_the_indentation_is_learnt_only_for_lines_nested_under_the_insert(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.fix import resolve as resolving

    learnt: list[int] = []
    real = resolving._Text.indent
    monkeypatch.setattr(resolving._Text, "indent", lambda self: learnt.append(1) or real(self))
    text = "spec:\n   limits:\n      cpu: 1\n   list:\n   -  a\n"
    assert _fixed(text, Edit.add(("spec", "limits", "gpu"), 1)) == text.replace("cpu: 1\n", "cpu: 1\n      gpu: 1\n")
    assert _fixed(text, Edit.append(("spec", "list"), "b")) == text + "   - b\n"
    assert _fixed(text, Edit.append(("spec", "list"), {"k": "v"})) == text + "   - k: v\n"
    assert learnt == []
    assert _fixed(text, Edit.add(("spec", "requests", "gpu"), 1)) == text + "   requests:\n      gpu: 1\n"
    assert _fixed(text, Edit.append(("spec", "list"), {"k": ["v"]})) == text + "   - k:\n     - v\n"   # dashes under their key (seq 0)
    assert learnt == [1, 1]


# --- the walk of a path: asked once where every node is in place -------------------------------

_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# Documents whose nodes are not all where their paths say: each has a path the check of every level
# refuses and a walk of the path alone would not.
_OUT_OF_PLACE = [   # (text, a path the check of each level refuses)
    ("a: &x {k: 1}\nb: *x\n", ("b", "k")),                    # an alias of a node written before its key
    ("m:\n  a: &x 1\n  b: *x\n", ("m", "b")),                 # ... inside the same mapping: only the key's place tells
    ("base: &b {k: 1}\nm:\n  <<: *b\n  j: 2\n", ("m", "k")),  # a merge key's keys, written at the anchor
    ("m:\n  <<: {k: 1}\n  j: 2\n", ("m", "j")),               # an inline merge: m ends where k's value does
    ("a: 1\nb: 2\na: 3\n", ("a",)),                          # a repeated key: its last value lies past the end
]
_IN_PLACE = [
    "spec:\n  containers:\n  - name: a\n    env: []\n    args: [x, {k: v}]\n",
    'schedule: "0 3 * * *"\njob:\n  image: x\n',          # a `*` without a `&`
    'job:\n  command: [sh, -c, "a && b"]\n',               # a `&` without a `*`
    "a: &x {k: 1}\nb:\n  c: &y [1, 2]\n",             # anchors that no alias uses
    "? k\n: v\nm: !!map\n  x: |\n    text\n\n  y:\n  z: 1\n",
    '{"spec": {"containers": [{"name": "a", "env": [{"name": "X"}]}]}}\n',
    "a: 1\r\nb:\r\n  - c: 2\r\n    d: 3\r\n",
]


def _paths(data: object, path: tuple = ()) -> list[tuple]:
    """Every path to a node of `data`, and one missing below each."""
    out = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, path + (key,))
        out.append(path + ("absent",))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out += _paths(value, path + (index,))
        out.append(path + (len(data),))
    else:
        out.append(path + ("below",))
    return out


def _walked(found: object) -> object:
    return (found.start, found.end) if isinstance(found, LocNode) else found


def _documents() -> list[Document]:
    docs = [_doc(text) for text in _IN_PLACE]
    for file in sorted(_FIXTURES.rglob("*")):
        if file.suffix in (".yaml", ".yml", ".json") and file.is_file():
            text = file.read_text(encoding="utf-8", errors="replace")
            docs += [doc for doc in load_documents(text) if isinstance(doc, Document)]
    return docs


def test_a_path_in_place_is_walked_once_with_the_same_answer() -> None:
    in_place = 0
    for doc in _documents():
        text = _Text(doc)
        if not text._in_place:
            continue
        in_place += 1
        for path in _paths(doc.data):
            assert _walked(_Text(doc)._walk_once(path)) == _walked(_Text(doc)._walk_levels(path)), (doc.text, path)
    assert in_place > 100
    assert all(_Text(_doc(text))._in_place for text in _IN_PLACE)


@pytest.mark.parametrize("limit", [3, 40, resolving_indent_sample := 400])
def test_an_in_place_document_lists_its_block_entries_as_its_location_nodes_do(limit: int, monkeypatch) -> None:
    # indent() reads a document written in place from its event tree (Document.block_entries), any
    # other through its location nodes (_Text._block_entries): the same entries, in the same order.
    import gpulint.fix.resolve as resolving

    assert resolving._INDENT_SAMPLE == resolving_indent_sample
    monkeypatch.setattr(resolving, "_INDENT_SAMPLE", limit)
    listed = 0
    for doc in _documents():
        if not (_Text(doc)._in_place and _Text(doc)._indexed):
            continue
        entries = list(doc.block_entries(limit))
        assert entries == list(_Text(doc)._block_entries()), doc.text
        listed += len(entries)
    assert listed > 100


def test_a_text_after_a_byte_order_mark_is_edited_at_its_lines() -> None:
    # libyaml does not count a leading byte-order mark in its offsets: keys are then placed by their lines.
    text = "\ufeffa:\n  b: 1\nc:\n  - x: 1\n"
    assert _fixed(text, Edit.add(("a", "c"), 2)) == "\ufeffa:\n  b: 1\n  c: 2\nc:\n  - x: 1\n"
    assert _fixed(text, Edit.add(("a", "d"), {"e": [{"f": 1}]})) == \
        "\ufeffa:\n  b: 1\n  d:\n    e:\n      - f: 1\nc:\n  - x: 1\n"


def test_key_offsets_are_where_the_key_spans_say() -> None:
    # entries() takes a mapping's key offsets from its key events, not from the key spans' lines.
    checked = 0
    for doc in _documents():
        text = _Text(doc)
        if not text._indexed:
            continue
        stack = [doc.node(())]
        while stack:
            node = stack.pop()
            children = node.children
            if isinstance(children, dict):
                offsets = node.key_offsets()
                assert list(offsets) == list(children)
                for key, (key_span, child) in children.items():
                    assert offsets[key] == (text.offset(key_span.line, key_span.column),
                                            text.offset(key_span.end_line, key_span.end_column)), (doc.text, key)
                    stack.append(child)
                    checked += 1
            elif isinstance(children, list):
                stack.extend(children)
    assert checked > 1000


@pytest.mark.parametrize(("text", "path"), _OUT_OF_PLACE)
def test_a_document_out_of_place_is_walked_level_by_level(text: str, path: tuple) -> None:
    doc = _doc(text)
    assert not _Text(doc)._in_place
    assert _walked(_Text(doc)._walk_levels(path)) == "shared"
    assert _walked(_Text(doc)._walk_once(path)) != "shared"   # (what walking the path once would miss)
    with pytest.raises(NoFix, match="anchor shared"):
        resolve(doc, Fix("t", Applicability.SAFE, (Edit.set(path, 5),)))


def test_a_copy_that_cannot_be_made_is_the_reason_before_an_empty_target() -> None:
    text = "s: |\n  x\nm: !!map {}\n"
    with pytest.raises(NoFix, match="s is not a one-line value"):
        resolve(_doc(text), Fix("t", Applicability.SAFE, (Edit.add(("m", "k"), CopyOf(("s",))),)))
    with pytest.raises(NoFix, match="m is empty"):
        resolve(_doc(text), Fix("t", Applicability.SAFE, (Edit.add(("m", "k"), 1),)))


def test_a_long_text_answers_positions_from_its_line_table_as_a_short_one_by_searching(monkeypatch) -> None:
    """Positions are searched for in a short text and bisected from the line table in a long one (a
    search from the start per position made 12,000 fixes of one 1.3 MB document take 65 % longer):
    both must give every offset's line, column and line start alike."""
    from gpulint.fix import resolve as resolve_mod

    text = "---\n# c\nkind: Pod\n\nspec:\n  containers:\n  - name: a\n    env: [{name: X, value: 'y z'}]\n"
    doc = _doc(text)
    answers = {}
    for limit in (len(text), len(text) - 1):
        monkeypatch.setattr(resolve_mod, "_SEARCH_MAX", limit)
        lines = _Text(doc)
        assert lines._searched is (limit == len(text))
        answers[limit] = [(lines.position(offset), lines.line_start(offset)) for offset in range(len(text) + 1)]
    assert answers[len(text)] == answers[len(text) - 1]
    assert answers[len(text)][text.index("kind")] == ((3, 1), 8)


def test_a_list_item_is_quoted_as_the_first_items_first_written_key() -> None:
    # (In place, the first item's first key event is read, its entries are not made: exact texts.)
    quoted = 'l:\n- "b": 1\n  a: 2\n'
    assert _fixed(quoted, Edit.append(("l",), {"k": "v"})) == quoted + '- "k": "v"\n'
    single = "l:\n- 'b': 1\n"
    assert _fixed(single, Edit.append(("l",), {"k": "v"})) == single + "- 'k': 'v'\n"
    plain = 'l:\n- b: 1\n  "a": 2\n'
    assert _fixed(plain, Edit.append(("l",), {"k": "v"})) == plain + "- k: v\n"
    scalars = 'l:\n- "x"\n'
    assert _fixed(scalars, Edit.append(("l",), {"k": "v"})) == scalars + "- k: v\n"
    empty = 'l:\n- {}\n'
    assert _fixed(empty, Edit.append(("l",), {"k": "v"})) == empty + "- k: v\n"


# --- a document in place: its entries read from the event tree, not from location nodes ----------

# Layouts where the event tree's entries could say other than the location nodes: flow collections
# (one line and several), empty values, lists of lists and of scalars, JSON, CR LF, a later document.
_WRITTEN = [
    "a: {b: 1, c: [x, y]}\nd:\n  - [1, 2]\n  - []\n  - {}\ne: {\n  f: 1,\n  g: {h: 2}\n}\n",
    "a:\nb:\n  c:\n  d: 1\nl:\n- \n- x\n- - y\n  - z\n",
    '{\n  "spec": {\n    "containers": [\n      {"name": "a", "env": [{"name": "X", "value": "1"}]}\n    ]\n  }\n}\n',
    "m: !!map\n  a: 'q'\n  \"b\": |\n    text\n  c: >\n    more\n",
    "x: 1\n---\nspec:\r\n  c:\r\n  - a: 1\r\n    b: [1,\r\n      2]\r\n",
    "m: {a, b: 1}\nn:\n  ? a\n  b:    # c\n  c: [d: 1]\n",   # values without text, a pair in a list
]


def _written_docs() -> list[Document]:
    docs = [doc for text in _WRITTEN for doc in load_documents(text) if isinstance(doc, Document)]
    return [doc for doc in docs + _documents() if _Text(doc)._written]


def _as_nodes_say(monkeypatch: pytest.MonkeyPatch) -> None:
    """Location nodes answer every question again: the event tree's answers are not known."""
    from gpulint.load import yamlload

    for name in ("along", "item_count", "item_index", "item_start", "item_end", "first_item_key_start",
                 "first_key_start", "start_line"):
        monkeypatch.setattr(yamlload._CollectionLoc, name, getattr(LocNode, name))


def _answers(doc: Document) -> list:
    """What _Text says of every collection of `doc`, and of every path's node."""
    text = _Text(doc)
    out: list = []
    for path in _paths(doc.data):
        found = text._walk_once(path)
        out.append(_walked(found))
        if not isinstance(found, LocNode) or found.kind() is None:
            continue
        out.append((found.kind(), text.count(found), text.quote(found)))
        for at in range(text.count(found)):
            out.append((text.item_start(found, at), text.item_end(found, at)))
        if found.kind() is dict:
            out.append([text.index(found, key) for key in _value_at(doc.data, path)])
    return out


def _value_at(data: object, path: tuple) -> object:
    for item in path:
        data = data[item]  # type: ignore[index]
    return data


def test_a_document_in_place_answers_from_its_event_tree_as_its_location_nodes(monkeypatch) -> None:
    docs = _written_docs()
    assert len(docs) > 100
    read = [_answers(doc) for doc in docs]
    _as_nodes_say(monkeypatch)
    assert [_answers(doc) for doc in docs] == read
    assert sum(len(answers) for answers in read) > 5000


def _edits(data: object) -> list[Edit]:
    """An edit of each kind at every path of `data` it applies to."""
    edits: list[Edit] = []
    for path in _paths(data)[1:]:
        try:
            value = _value_at(data, path)
        except (KeyError, IndexError, TypeError):
            edits.append(Edit.add(path + ("k",), {"a": [1, {"b": "c"}]}))
            continue
        edits.append(Edit.delete(path))
        if isinstance(value, list):
            edits += [Edit.append(path, {"name": "X", "value": "y z"}), Edit.append(path, "v")]
        elif isinstance(value, dict):
            edits += [Edit.add(path + ("new",), 1), Edit.add(path + ("n", "m"), ["x"])]
        else:
            edits.append(Edit.set(path, "s"))
    return edits


def _resolved(doc: Document, edit: Edit) -> object:
    from gpulint.fix import resolve as resolving

    resolving._last = None
    try:
        return [(tuple(e.span), e.text) for e in resolve(doc, Fix("t", Applicability.SAFE, (edit,)))]
    except NoFix as reason:
        return str(reason)


def test_a_document_in_place_is_edited_as_its_location_nodes_say(monkeypatch) -> None:
    docs = [doc for doc in _written_docs() if len(doc.text) < 4000]
    cases = [(doc, edit) for doc in docs for edit in _edits(doc.data)]
    made = [_resolved(doc, edit) for doc, edit in cases]
    _as_nodes_say(monkeypatch)
    assert [_resolved(doc, edit) for doc, edit in cases] == made
    assert sum(isinstance(edits, list) for edits in made) > 2000


def test_entries_read_from_the_event_tree_exact_values() -> None:
    doc = _doc("a: {b: 1, c: [x, y]}\nl:\n- k: 1\n  j:\n    - 2\n- 3\nz:\n")
    a, l, z = doc.node(("a",)), doc.node(("l",)), doc.node(("z",))
    assert (a.kind(), l.kind(), z.kind()) == (dict, list, None)
    assert (a.item_count(), l.item_count()) == (2, 2)
    assert [a.item_start(0), a.item_start(1), a.item_end(0), a.item_end(1)] == [(4, 5), (10, 11), 8, 19]
    # (A block collection ends with its last child, not where its end event sits.)
    assert [l.item_start(0), l.item_end(0), l.item_start(1), l.item_end(1)] == [(26, 26), 43, (46, 46), 47]
    assert (a.item_index("c"), a.item_index("d"), l.item_index(1), l.item_index(2)) == (1, None, 1, None)
    assert (l.first_item_key_start(), a.first_item_key_start(), a.first_key_start()) == (26, None, 4)
    along = doc.node(()).along(("l", 0, "j", 0, "x"))
    assert [(node.start, node.end) for node in along] == [(0, 50), (24, 47), (26, 43), (40, 43), (42, 43)]
    assert len(doc.node(()).along(("l", 5))) == 2


def test_positions_are_counted_from_the_last_one_asked_for_in_either_direction() -> None:
    text = "---\n# c\nkind: Pod\n\nspec:\n  containers:\n  - name: a\n    env: [{name: X, value: 'y z'}]\n"
    lines = _Text(_doc(text))
    assert lines._searched
    table = [(offset, text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset))
             for offset in range(len(text) + 1)]
    order = list(range(0, len(text) + 1, 7)) + list(range(len(text), -1, -3)) + [5, 60, 20, 20, 0]
    assert [(offset, *lines.position(offset)) for offset in order] == [table[offset] for offset in order]
    assert lines.span(text.index("env"), text.index("env")) == (8, 5, 8, 5)
    assert lines.span(text.index("kind"), text.index("spec")) == (3, 1, 5, 1)


def test_the_loaders_lines_are_the_texts_where_positions_count_from_them() -> None:
    # position() counts line breaks from a node's start, whose line the loader counted: not where it also
    # breaks lines at U+2028 (nor after a byte-order mark or at a lone CR, where its offsets differ).
    checked = 0
    for doc in _written_docs() + [_doc("a: \"x\u2028y\"\nb:\n  c: 1\n")]:
        if not _Text(doc)._lined:
            continue
        for path in _paths(doc.data):
            node = doc.node(path)
            if node is not None and node.kind() is not None:
                assert node.start_line() == doc.text.count("\n", 0, node.start), doc.text
                checked += 1
    assert checked > 1000
    text = "a: \"x\u2028y\"\nb:\n  c: 1\n"
    assert not _Text(_doc(text))._lined
    assert _doc(text).node(("b",)).start_line() == 2   # (the text's line 1)
    assert _fixed(text, Edit.add(("b", "d"), 2)) == text + "  d: 2\n"
    assert _fixed(text, Edit.delete(("b", "c"))) == "a: \"x\u2028y\"\n"
