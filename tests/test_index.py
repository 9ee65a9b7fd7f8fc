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
