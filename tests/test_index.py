"""ConfigIndex.lookup: the keyed lookup agrees with the definition (a search of every source)."""

from __future__ import annotations

import itertools
import random

from gpulint.load.yamlload import Document, load_documents
from gpulint.model.index import ConfigIndex, ConfigSource
from gpulint.model.objects import objects_in

NAMES = ("a", "b", "c")
NAMESPACES = ("", "ml", "other")


def _reference(index: ConfigIndex, kind: str, namespace: str | None, name: str) -> ConfigSource | None:
    """The lookup as documented: the exact (kind, namespace, name), else the one source of that
    kind and name where either side has no namespace (none when there are several)."""
    sources = list(index)
    for source in reversed(sources):  # a later object of the same key replaces an earlier one
        ref = source.obj.ref
        if source.kind == kind and (ref.namespace or "") == (namespace or "") and ref.name == name:
            return source
    candidates = [s for s in sources if s.kind == kind and s.obj.ref.name == name
                  and (not s.obj.ref.namespace or not namespace)]
    return candidates[0] if len(candidates) == 1 else None


def _index_of(objects: list[tuple[str, str, str]]) -> ConfigIndex:
    docs = []
    for kind, namespace, name in objects:
        meta = f"metadata:\n  name: {name}\n" + (f"  namespace: {namespace}\n" if namespace else "")
        docs.append(f"apiVersion: v1\nkind: {kind}\n{meta}data:\n  KEY: dmFsdWU=\n")
    index = ConfigIndex()
    for doc in load_documents("---\n".join(docs)):
        assert isinstance(doc, Document)
        for obj in objects_in("<test>", doc):
            index.add(obj)
    return index


def test_lookup_agrees_with_a_search_of_every_source() -> None:
    rng = random.Random(5)
    universe = [(kind, ns, name) for kind in ("ConfigMap", "Secret") for ns in NAMESPACES for name in NAMES]
    for _ in range(300):
        objects = [rng.choice(universe) for _ in range(rng.randint(0, 10))]
        index = _index_of(objects)
        for kind, namespace, name in itertools.product(("configMap", "secret"), (None, *NAMESPACES), NAMES):
            assert index.lookup(kind, namespace, name) is _reference(index, kind, namespace, name), \
                (objects, kind, namespace, name)


def test_unqualified_reference_finds_the_one_namespaced_source_and_not_two() -> None:
    one = _index_of([("ConfigMap", "ml", "a")])
    assert one.lookup("configMap", None, "a") is not None
    assert one.lookup("secret", None, "a") is None
    two = _index_of([("ConfigMap", "ml", "a"), ("ConfigMap", "other", "a")])
    assert two.lookup("configMap", None, "a") is None          # ambiguous
    assert two.lookup("configMap", "ml", "a") is not None      # exact
    assert two.lookup("configMap", "third", "a") is None       # neither namespace matches


def test_namespaced_reference_finds_an_unqualified_source() -> None:
    index = _index_of([("Secret", "", "b"), ("Secret", "ml", "b")])
    assert index.lookup("secret", "other", "b").obj.ref.namespace is None
    assert index.lookup("secret", "ml", "b").obj.ref.namespace == "ml"


def test_a_source_keeps_no_data_and_gives_back_the_same_object() -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n# Source: chart/templates/cm.yaml\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ml\ndata:\n  run.sh: |\n"
            "    docker run --gpus all x\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n"
            "  kind: Secret\n  metadata: {name: s}\n  stringData: {TOKEN: t}\n")
    originals = [obj for doc in load_documents(text) if isinstance(doc, Document) for obj in objects_in("f", doc)]
    index = ConfigIndex()
    for obj in originals:
        index.add(obj)
    sources = list(index)
    assert [s.ref.name for s in sources] == ["a", "s"]
    for source, original in zip(sources, originals[1:]):
        assert source._doc.data is None and source._obj is None and source._entries is None   # text and place only
        rebuilt = source.obj
        assert rebuilt is source.obj                                # parsed once
        assert (rebuilt.data, rebuilt.ref, rebuilt.base, rebuilt.template, rebuilt.file) == \
            (original.data, original.ref, original.base, original.template, original.file)
        assert (rebuilt.doc.index, rebuilt.doc.line_offset, rebuilt.doc.text) == \
            (original.doc.index, original.doc.line_offset, original.doc.text)
        for entry in source.entries.values():
            assert rebuilt.doc.span(entry.path) == original.doc.span(entry.path) is not None


def test_the_index_pass_keeps_small_objects_of_a_file_read_whole(tmp_path) -> None:
    """A ConfigMap of a file read whole is kept as the index pass built it (no parse again on
    lookup) when its text is small, and gives what a parse again gives; a large one keeps its text only."""
    from gpulint.inputs.discovery import discover
    from gpulint.load.yamlload import DEFAULT_LIMITS
    from gpulint.model.index import KEPT_TEXT_MAX
    from gpulint.scan import indexing
    from gpulint.scan.reader import InputReader

    large = "x" * KEPT_TEXT_MAX
    text = ("# Source: chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ml}\n"
            "data:\n  run.sh: |\n    docker run --gpus all x\n---\napiVersion: v1\nkind: List\nitems:\n"
            "- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n  data: {TOKEN: dA==}\n"
            f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata: {{k: {large}}}\n")
    path = tmp_path / "m.yaml"
    path.write_text(text)
    index = indexing.build_index(discover([str(path)]).inputs, InputReader(), DEFAULT_LIMITS)
    sources = {source.ref.name: source for source in index}
    assert sources["a"]._obj is not None and sources["s"]._obj is not None     # kept whole
    assert sources["big"]._obj is None and sources["big"]._doc is not None      # text and place only
    originals = {obj.ref.name: obj for doc in load_documents(text) if isinstance(doc, Document)
                 for obj in objects_in(str(path), doc)}
    for name, source in sources.items():
        kept = source.obj
        again = ConfigSource(source.kind, kept).obj     # parsed again from its text
        for obj in (kept, again):
            assert (obj.data, obj.ref, obj.base, obj.template, obj.file, obj.doc.index, obj.doc.line_offset) == \
                (originals[name].data, originals[name].ref, originals[name].base, originals[name].template,
                 originals[name].file, originals[name].doc.index, originals[name].doc.line_offset)
        assert {key: (entry.value, entry.path) for key, entry in source.entries.items()} == \
            {key: (entry.value, entry.path) for key, entry in ConfigSource(source.kind, kept).entries.items()}
        for entry in source.entries.values():
            assert kept.doc.span(entry.path) == again.doc.span(entry.path) == originals[name].doc.span(entry.path)
    assert sources["s"].entries["TOKEN"].value == "t" and sources["a"].obj.template == "chart/templates/cm.yaml"


def test_the_scan_takes_the_index_pass_split_of_a_file(tmp_path) -> None:
    """The index pass splits a file's text into documents once; the scan reads the same documents
    from that split as from its own (split_documents), directives and end markers included."""
    from gpulint.inputs.discovery import discover
    from gpulint.load.decode import Text
    from gpulint.load.yamlload import DEFAULT_LIMITS, Document, load_documents, split_documents
    from gpulint.scan import indexing
    from gpulint.scan.reader import InputReader

    text = ("# head\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n...\n"
            "%YAML 1.1\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n---\n"
            "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n--- {bad\n")
    path = tmp_path / "m.yaml"
    path.write_text(text)
    item = discover([str(path)]).inputs[0]
    reader = InputReader()
    indexing.build_index([item], reader, DEFAULT_LIMITS)
    chunks = list(split_documents(text))
    assert [line for _chunk, line in chunks] == [0, 1, 7, 12, 13, 17]
    assert reader._split[str(item.real)] == [(7, 0), (79, 1), (138, 7), (142, 12), (194, 13), (203, 17)]
    assert "".join(chunk for chunk, _line in chunks) == text and len(text) == 203
    data = reader.small(item)
    assert data == text.encode()
    documents = list(indexing.documents_of(Text.of(data), DEFAULT_LIMITS, parsed=reader.parsed(item),
                                           split=reader.split(item)))
    expected = list(load_documents(text, DEFAULT_LIMITS))
    assert reader.split(item) is None   # handed over once

    def described(doc: object) -> tuple:
        if isinstance(doc, Document):
            return ("doc", doc.index, doc.text, doc.line_offset, doc.data, doc.content_start)
        return ("error", doc.line, doc.column, str(doc))   # type: ignore[attr-defined]

    assert [described(d) for d in documents] == [described(d) for d in expected]
    assert [d.data["kind"] for d in documents if isinstance(d, Document)] == ["ConfigMap", "Pod", "Secret"]


def test_the_parsed_budget_counts_only_documents_the_index_does_not_hold(tmp_path, monkeypatch) -> None:
    """The scan takes the index pass's parse of a file's ConfigMaps however many small ones it
    has (the index keeps their objects anyway); a large ConfigMap, whose text only the index
    keeps, counts against InputReader.PARSED_MAX, and past it the scan parses the file itself."""
    from gpulint.inputs.discovery import discover
    from gpulint.load.decode import Text
    from gpulint.load.yamlload import DEFAULT_LIMITS
    from gpulint.model.index import KEPT_TEXT_MAX
    from gpulint.scan import indexing
    from gpulint.scan.reader import InputReader

    small = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata: {{k: v}}\n"
                    for i in range(40))
    small += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: b}]}\n"
    large = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata: {{k: {'x' * KEPT_TEXT_MAX}}}\n"
    (tmp_path / "small.yaml").write_text(small)
    (tmp_path / "large.yaml").write_text(large)
    inputs = sorted(discover([str(tmp_path)]).inputs, key=lambda item: item.display)
    reader = InputReader()
    indexing.build_index(inputs, reader, DEFAULT_LIMITS)
    assert reader._parsed_size == len(large)                      # the large one counts, in full
    monkeypatch.setattr(InputReader, "PARSED_MAX", len(small) // 2)
    reader = InputReader()
    indexing.build_index(inputs, reader, DEFAULT_LIMITS)
    large_item, small_item = inputs
    assert reader._parsed_size == 0
    assert reader.parsed(large_item) is None                      # over the budget: the scan parses it
    parsed = reader.parsed(small_item)
    assert parsed is not None and len(parsed) == 40               # every ConfigMap, none counted
    documents = list(indexing.documents_of(Text.of(reader.small(small_item)), DEFAULT_LIMITS, parsed=parsed,
                                           split=reader.split(small_item)))
    assert [doc.data["metadata"]["name"] for doc in documents] == [f"c{i}" for i in range(40)] + ["p"]
    assert not parsed                                             # all taken from the index pass
