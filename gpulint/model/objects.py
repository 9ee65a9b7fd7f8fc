"""Documents -> Kubernetes objects, with where each came from.

A document holding `apiVersion` and `kind` is an object; `kind: List` and
`*List` documents (`kubectl get -o yaml`) hold objects under `items`. Anything
else (values.yaml, CI workflows) is not Kubernetes and is skipped by the caller.
Helm's `# Source:` comment and Kustomize's `config.kubernetes.io/origin`
annotation are recorded so findings can point back at the file a human edits.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from gpulint.load.yamlload import Document
from gpulint.record import record

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
# The kind of a component read from a values file whose chart is not in the scanned tree (valuesfile.py).
HELM_VALUES_KIND = "HelmValues"
# `(\S[^\n]*)` then rstrip: a lazy `.*?` before `\s*$` is quadratic on a long line of blanks.
_SOURCE_RE = re.compile(r"^# Source: *(\S[^\n]*)", re.M)


# Not frozen, as the model's views (model/workload.py): one per object of a scan; hashable by
# value as before.
@record(eq=True, hash=True)
class ObjectRef:
    """Identity of an object, as shown in messages and output."""

    __slots__ = ("api_version", "kind", "name", "namespace")
    api_version: str
    kind: str
    name: str
    namespace: str | None

    def __init__(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        self.api_version = api_version
        self.kind = kind
        self.name = name
        self.namespace = namespace

    def describe(self) -> str:
        if self.kind == HELM_VALUES_KIND and not self.api_version:
            return f"values file for a chart gpulint could not render, component {self.name}"
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"


@record
class KubeObject:
    """One Kubernetes object inside a document (the document itself or a List item)."""

    __slots__ = ("file", "doc", "base", "data", "ref", "template", "origin", "patch_of")
    file: str              # path as given on the command line
    doc: Document
    base: tuple            # path of the object inside doc.data
    data: dict
    ref: ObjectRef
    template: str | None   # Helm `# Source:` path, when rendered by Helm
    origin: dict | None    # parsed Kustomize origin annotation, when present
    # For a pod-spec patch parsed from a string (gpulint.model.podpatch): the object holding
    # the string, the string's document path there, and whether the patch's positions are the
    # file's own (a literal block, a one-line string without escapes).
    patch_of: "tuple[KubeObject, tuple, bool] | None"

    def __init__(self, file: str, doc: Document, base: tuple, data: dict, ref: ObjectRef, template: str | None,
                 origin: dict | None, patch_of: "tuple[KubeObject, tuple, bool] | None" = None) -> None:
        self.file = file
        self.doc = doc
        self.base = base
        self.data = data
        self.ref = ref
        self.template = template
        self.origin = origin
        self.patch_of = patch_of

    def path(self, *items: Any) -> tuple:
        """Document path of a path inside this object."""
        return self.base + items


def is_kubernetes(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("apiVersion"), str)
        and isinstance(data.get("kind"), str)
        and bool(data["apiVersion"]) and bool(data["kind"])
    )


def helm_source(doc: Document) -> str | None:
    """The `# Source:` comment Helm writes before each rendered document."""
    if doc.text.find("# Source:", 0, doc.content_start) < 0:  # the usual case: no copy, no regex scan
        return None
    match = None
    for match in _SOURCE_RE.finditer(doc.text[: doc.content_start]):
        pass
    return match.group(1).rstrip() if match else None


def objects_in(file: str, doc: Document) -> Iterator[KubeObject]:
    """Kubernetes objects of a document: itself, or the items of a List."""
    data = doc.data
    if not is_kubernetes(data):
        return
    template = helm_source(doc)
    items = data.get("items")
    if data["kind"].endswith("List") and isinstance(items, list):
        for i, item in enumerate(items):
            if is_kubernetes(item):
                yield _make(file, doc, ("items", i), item, template)
        return
    yield _make(file, doc, (), data, template)


def _make(file: str, doc: Document, base: tuple, data: dict, template: str | None) -> KubeObject:
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name") or meta.get("generateName") or ""
    namespace = meta.get("namespace")
    annotations = meta.get("annotations")
    origin = None
    if isinstance(annotations, dict) and isinstance(annotations.get(ORIGIN_ANNOTATION), str):
        origin = parse_origin(annotations[ORIGIN_ANNOTATION])
    ref = ObjectRef(data["apiVersion"], data["kind"], str(name),
                    str(namespace) if namespace is not None and namespace != "" else None)
    return KubeObject(file, doc, base, data, ref, template, origin)


def parse_origin(text: str) -> dict | None:
    """Kustomize writes the origin as a small YAML mapping (path, repo, ref...)."""
    from gpulint.load.yamlload import load_documents

    for doc in load_documents(text):
        if isinstance(doc, Document) and isinstance(doc.data, dict):
            return {str(k): v for k, v in doc.data.items()}
        break
    return None
