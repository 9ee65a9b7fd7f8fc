"""Whether Helm would fetch something to validate a chart's values: `values.schema.json` files
(of the chart, its subcharts and packaged subcharts) naming a document outside themselves.

Helm resolves such references over the network before rendering; gpulint then
renders with `--skip-schema-validation` (see helm.py) and never lets it try.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpulint.lazypattern import lazy

_META_SCHEMA_RE = lazy(r"^https?://json-schema\.org/")


def remote_schema_reference(chart: Path) -> tuple[str, str] | None:
    """(schema file relative to the chart, reference) of the first `values.schema.json` in the
    chart or its subcharts that names a document outside itself: Helm would fetch it."""
    for path in sorted(chart.rglob("*")):
        rel = path.relative_to(chart).as_posix()
        if path.name == "values.schema.json" and path.is_file():
            try:
                found = _schema_reference(path.read_bytes())
            except OSError:
                continue
        elif path.suffix == ".tgz" and path.is_file():
            found_in = _archived_reference(path, rel)
            if found_in is not None:
                return found_in
            continue
        else:
            continue
        if found is not None:
            return rel, found
    return None


def _schema_reference(data: bytes) -> str | None:
    """The schema's first reference outside itself. A schema gpulint cannot read as JSON (a
    byte-order mark, UTF-16, bytes that do not decode) may still be one Helm reads (it strips a
    BOM): it is taken as naming one, so that Helm never validates, and never fetches, with it."""
    import json

    from gpulint.load.decode import decode_lenient

    try:
        text, problem = decode_lenient(data)
        schema = json.loads(text)
    except Exception:  # noqa: BLE001 - binary, undecodable or not JSON: not something gpulint checked
        return "(a schema gpulint cannot read as JSON)" if data.strip() else None
    if problem is not None:
        return "(a schema gpulint cannot read as JSON)"
    return _external_reference(schema)


_ARCHIVE_READ_MAX = 64 << 20          # bytes read from a chart archive's schemas, in all


def _archived_reference(archive: Path, rel: str) -> tuple[str, str] | None:
    """The same for a packaged subchart (`charts/x-1.0.0.tgz`), archives inside it included."""
    try:
        return _archive_scan(archive.read_bytes(), rel, 0, [_ARCHIVE_READ_MAX])
    except OSError:
        return None


def _gunzip(data: bytes, limit: int) -> bytes | None:
    """`data` decompressed if gzip (else as is), or None past `limit` bytes (a decompression bomb)."""
    import zlib

    if not data.startswith(b"\x1f\x8b"):
        return data if len(data) <= limit else None
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(data, limit + 1)
    except zlib.error:
        return b""
    return None if len(out) > limit or inflate.unconsumed_tail else out


def _archive_scan(data: bytes, rel: str, depth: int, budget: list[int]) -> tuple[str, str] | None:
    import io
    import tarfile

    raw = _gunzip(data, budget[0])
    if raw is None:       # too large to look into: assume the worst, Helm validates nothing then
        return rel, "(an archive too large to check)"
    budget[0] -= len(raw)
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for member in tar:
                name = member.name
                wanted = name == "values.schema.json" or name.endswith("/values.schema.json")
                nested = name.endswith(".tgz") and depth < 3
                if not member.isfile() or not (wanted or nested):
                    continue
                handle = tar.extractfile(member)
                if handle is None:
                    continue
                if wanted:
                    found = _schema_reference(handle.read())
                    if found is not None:
                        return f"{rel}:{name}", found
                else:
                    found_in = _archive_scan(handle.read(), f"{rel}:{name}", depth + 1, budget)
                    if found_in is not None:
                        return found_in
    except (OSError, tarfile.TarError, EOFError, ValueError):
        return None                   # Helm reports a broken archive itself
    return None


def _external_reference(data: Any, depth: int = 0) -> str | None:
    if depth > 200:
        return "(a schema nested too deeply to check)"
    if isinstance(data, list):
        for item in data:
            found = _external_reference(item, depth + 1)
            if found is not None:
                return found
        return None
    if not isinstance(data, dict):
        return None
    for key, value in data.items():
        if key in ("$ref", "$dynamicRef", "$recursiveRef") and isinstance(value, str) and not value.startswith("#"):
            return value
        if key == "$id" and isinstance(value, str) and value and not value.startswith("#"):
            return value          # a base URI: every relative reference below it resolves against it
        if key == "$schema" and isinstance(value, str) and not _META_SCHEMA_RE.match(value):
            return value
        found = _external_reference(value, depth + 1)
        if found is not None:
            return found
    return None
