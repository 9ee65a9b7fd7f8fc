"""The index pass: the ConfigMaps, Secrets and DRA claims of the whole scan, read before any rule runs.

A workload may take its environment or script from a ConfigMap in another file;
rules see them all through the index (model/index.py). Input errors are not
reported here: the scan reads the same input again and reports them.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from gpulint.inputs.discovery import Input
from gpulint.load.decode import BinaryInput, ReadError, Text, decode_lenient
from gpulint.load.yamlload import (
    Document,
    Limits,
    LoadError,
    ParsedChunks,
    load_documents,
    load_stream,
    split_documents,
)
from gpulint.model.index import ConfigIndex, ConfigSource, source_of
from gpulint.model.objects import objects_in
from gpulint.results.findings import internal_error_message
from gpulint.scan.reader import InputReader


# (Substrings of the documents to index: "ResourceClaim" covers ResourceClaimTemplate too;
# "DeviceClass" for the extended resource names of KEP-5004.)
_INDEXED_KINDS = ("ConfigMap", "Secret", "ResourceClaim", "DeviceClass")


_INDEXED_KINDS_UTF8 = tuple(kind.encode() for kind in _INDEXED_KINDS)


# Where the documents of a text end, and the 0-based line each starts at (what split_documents
# found in it): the index pass splits a file's text, and the scan takes the same cuts.
Split = list[tuple[int, int]]

# What the index pass found in one input: its ConfigMaps and Secrets (index.source_of),
# internal errors, and for the scan its bytes, parsed chunks with their size in characters
# and its text's split.
Indexed = tuple[list[ConfigSource], list[str], "bytes | None", "ParsedChunks | None", int, "Split | None"]


def build_index(inputs: list[Input], reader: InputReader, limits: Limits,
                internal_errors: list[str] | None = None, sizes: list[int | None] | None = None) -> ConfigIndex:
    """First pass: ConfigMaps, Secrets and DRA claims (their device classes) of the whole scan.

    Input errors are ignored here: the second pass reads the same input and
    reports them. A bug is recorded in `internal_errors` and the scan goes on.
    With `sizes` (a parallel scan's, see parallel.plan), a forked helper reads
    about half of the manifests meanwhile (parallel.IndexHelper); either way
    the index takes the inputs in their order.
    """
    helper = None
    if sizes is not None:
        from gpulint.scan.parallel import IndexHelper

        helper = IndexHelper.start(inputs, reader, limits, sizes, index_input)
    mine: dict[int, tuple[list[ConfigSource], list[str]]] = {}
    # Files first, renders last: renders still running in the background (InputReader.start_renders)
    # go on meanwhile. The index takes the inputs in their order whatever the order they are read in.
    order = sorted(range(len(inputs)), key=lambda position: inputs[position].kind.rendered)
    try:
        for position in order:
            item = inputs[position]
            if helper is not None and position in helper.positions:
                continue
            indexed = index_one(item, reader, limits)
            if indexed is not None:
                mine[position] = indexed
    except BaseException:
        if helper is not None:
            helper.close()
        raise
    found = helper.results() if helper is not None else {}
    index = ConfigIndex()
    for position, item in enumerate(inputs):
        if position in mine:
            objects, errors = mine[position]
        elif position in found:
            objects, errors = _keep(reader, item, found[position])
        elif helper is not None and position in helper.positions:  # the helper failed: read it here
            objects, errors = _keep(reader, item, index_input(item, reader, limits))
        else:
            continue
        for source in objects:
            index.add_source(source)
        if internal_errors is not None:
            internal_errors.extend(errors)
    return index


def index_one(item: Input, reader: InputReader, limits: Limits) -> tuple[list[ConfigSource], list[str]] | None:
    """What the index pass finds in one input (its sources and internal errors; a render is waited
    for), its bytes handed to the reader for the scan; None for an input that holds no manifests."""
    if item.kind.rendered:
        rendered = reader.rendered(item)
        text = rendered.text
        texts = [(rendered.display, text)] if text is not None else []
        texts += [(display, given if given is not None else _read_quietly(path))
                  for display, path, given in (*rendered.plain, *rendered.literal)]
        try:
            return ([source for display, part in texts if any(kind in part for kind in _INDEXED_KINDS)
                     for source in _sources(display, load_documents(part, limits, only=_INDEXED_KINDS))], [])
        except Exception as error:  # a bug in gpulint: say where, keep going
            return [], [internal_error_message(item.display, error)]
    if item.kind.manifests:
        return _keep(reader, item, index_input(item, reader, limits))
    return None


def _read_quietly(path: Any) -> str:
    """A file's text for the index pass (the scan reports what is wrong with it)."""
    from gpulint.load.regular import read_regular

    try:
        return decode_lenient(read_regular(path, 256 << 20))[0]
    except (OSError, BinaryInput):
        return ""


def _keep(reader: InputReader, item: Input, indexed: Indexed) -> tuple[list[ConfigSource], list[str]]:
    """Hand an input's bytes and parsed documents to the reader (which keeps what fits) for the scan."""
    objects, errors, data, chunks, size, split = indexed
    if data is not None:
        reader.keep(item, data)
        if chunks:
            reader.keep_parsed(item, chunks, size, split)
    return objects, errors


def index_input(item: Input, reader: InputReader, limits: Limits) -> Indexed:
    """What the index pass finds in a manifest or stdin (nothing when it cannot be read)."""
    try:
        if item.real is not None and limits.max_file_size is not None:
            from gpulint.load.regular import check_size

            check_size(item.real, limits.max_file_size)      # (the scan reports it)
        data = reader.small(item)
        if data is not None:
            return _index_text(item, Text.of(data), limits)
        with reader.open(item) as stream:
            return _index_text(item, Text(stream), limits)
    except (OSError, ReadError, BinaryInput):
        return [], [], None, None, 0, None
    except Exception as error:  # a bug in gpulint: say where, keep going
        return [], [internal_error_message(item.display, error)], None, None, 0, None


def _index_text(item: Input, source: Text, limits: Limits) -> Indexed:
    data = source.data
    if not source.may_contain(_INDEXED_KINDS_UTF8):
        return [], [], data, None, 0, None
    if data is None:   # streamed: nothing of it is kept for the scan
        return _sources(item.display, documents_of(source, limits, only=_INDEXED_KINDS)), [], None, None, 0, None
    record: ParsedChunks = {}
    whole = source.whole
    assert whole is not None
    chunks = list(split_documents(whole))
    # (Recorded for the scan, hence built without event trees: small ConfigMaps are kept whole.)
    sources = _sources(item.display, load_documents(whole, limits, only=_INDEXED_KINDS, record=record,
                                                   chunks=chunks), keep=True)
    # What keeping the record costs beyond what the index holds for the whole scan anyway (the
    # objects of small ConfigMaps and Secrets, kept whole by their sources): the characters of
    # the chunks with a document no source holds, counted against InputReader.PARSED_MAX.
    held = {id(doc.data) for source in sources if isinstance(source, ConfigSource) and (doc := source.held)}
    split, end, size = [], 0, 0
    for chunk, line in chunks:
        end += len(chunk)
        split.append((end, line))
        done = record.get(line)
        if done is not None and not all(id(parsed[1]) in held for parsed in done[0]):
            size += len(chunk)
    return sources, [], data, record or None, size, split


def _sources(display: str, documents: Iterable[Document | LoadError], keep: bool = False) -> list[ConfigSource]:
    """The ConfigMaps and Secrets of `documents`, each made as it is read (its document let go
    unless `keep`: see ConfigSource)."""
    return [source for doc in documents if isinstance(doc, Document) for obj in objects_in(display, doc)
            if (source := source_of(obj, keep)) is not None]


def documents_of(source: Text, limits: Limits, only: tuple[str, ...] = (), strict_json: bool = False,
               record: ParsedChunks | None = None, parsed: ParsedChunks | None = None,
               split: Split | None = None) -> Iterator[Document | LoadError]:
    """`source`'s documents (load_documents, or load_stream for a streamed input). `split`: where the
    index pass cut this text into documents (split_documents' answer, not worked out again)."""
    whole = source.whole
    if whole is not None:
        same = split and split[-1][0] == len(whole)   # (the same text: the bytes the index pass read)
        chunks = _cut(whole, split) if same else None
        return load_documents(whole, limits, only=only, strict_json=strict_json, record=record, parsed=parsed,
                              chunks=chunks)
    assert source.blocks is not None
    return load_stream(source.blocks, limits, only=only, strict_json=strict_json)


def _cut(text: str, split: Split) -> Iterator[tuple[str, int]]:
    """The (document text, line) pairs split_documents gives for `text`, from its `split`."""
    start = 0
    for end, line in split:
        yield text[start:end], line
        start = end
