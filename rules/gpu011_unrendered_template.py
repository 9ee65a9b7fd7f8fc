"""
## What it does
Reports a file outside any Helm chart that is an unrendered template and
therefore not YAML yet: Go `text/template` actions (`{{ ... }}`, a Helm
template copied out of its chart, or a manifest another program renders),
Jinja (`{{ ... }}` with `{% ... %}`, Ansible templates) or `${...}` templating (Terraform `templatefile` with its `%{ for }` directives,
envsubst). One finding per file, at the first place the template breaks the
YAML parser; the file is not an error. Best effort, its literal text is still
checked: lines holding only actions are read as blank and an action inside a
line as a same-length placeholder, so a literal `NVIDIA_VISIBLE_DEVICES=all`
is found where it is written, and findings about a placeholder are dropped.

It is a warning only where an unknown could hide a GPU bypass: an action in a
container's env, securityContext, command/args, resources, the pod's volumes,
hostPID, runtimeClassName or pod annotations, or one that renders whole keys
into a container or pod spec. A templated image is not one of them: it decides
a verdict only through its default environment (GPU005, a heuristic that needs
the NVIDIA runtime as the node's default), and no one can act on it before it
is rendered.
The finding then sits at that action and names the field. A template whose
actions fill only names, labels, ports, counts and the like cannot hide one: it
is reported at info severity (the exit code stays 0 under the default
`fail-on: warning`). Control actions (`if`, `range`, `end`, Jinja's `{% %}`)
render no text and are never an unknown. The message says which language the
template is written in: Helm, another Go template (a tool's own specs), Jinja
(Ansible) or `${...}`. See docs/templates-and-values.md.

An operator's operand manifests (a Kubernetes object in Go template syntax
that uses none of Helm's objects, named for the order the operator applies it
in, such as the GPU Operator's `manifests/state-driver/0500_daemonset.yaml`)
are rendered by the operator itself: they are reported at info severity.
Reported by the engine; a template that does not look like a Kubernetes object
at all (a Markdown or config template) is counted as not Kubernetes instead.
The templates of a chart Helm cannot render are read literally the same way,
but reported once for the chart (GPU010), not once per template.

## Why is this bad
What a template renders to depends on values gpulint cannot see: a bypass
can sit behind an action (`value: {{ .Values.visibleDevices }}`). Only the
rendered output can be checked in full.

## Example
```yaml
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Values.name }}
spec:
  containers:
  - name: app
    image: ${image}
    {{- toYaml .Values.resources | nindent 4 }}
```

## Use instead
Scan the chart directory (gpulint renders it), or render the template first
and scan the output, e.g. `helm template RELEASE CHART | gpulint scan -`.
Turn this rule off (`--ignore GPU011`) if the templates are checked where
they are rendered; parse errors in real manifests are still GPU000.

## Fix
None: the template has to be rendered by the program it is written for.

## References
- Go text/template: https://pkg.go.dev/text/template
- Terraform templatefile: https://developer.hashicorp.com/terraform/language/functions/templatefile
"""

from typing import Iterator

from gpulint.api import LITERAL_NOTE, LineAt, Rule, RuleContext, Severity, UnrenderedTemplate, Violation
from gpulint.lazypattern import lazy

HELM_RENDER_HINT = ("scan its chart directory, or render it first, e.g. "
                    "`helm template RELEASE CHART | gpulint scan -`")
# An operator's operand manifests are named for the order it applies them in (`0500_daemonset.yaml`).
_APPLY_ORDER_RE = lazy(r"(?:\A|[/\\])\d+[_-][^/\\]*\Z")


def check_template(template: UnrenderedTemplate, ctx: RuleContext) -> Iterator[Violation]:
    """One finding for the whole file: a warning at the first action that could hide a GPU bypass
    (load/unknowns.py), else info at its first document that failed to load."""
    documents = template.documents
    first = documents[0]
    go = template.syntax == "go"
    operator = go and not template.helm and _APPLY_ORDER_RE.search(template.file) is not None
    if operator:
        what = ("Go template of an operator's operand manifest (`{{ ... }}`, named for the order it is applied "
                "in, using none of Helm's objects), rendered by the operator itself")
        hint = ""
    elif go and template.helm:
        what = "unrendered Helm template (`{{ ... }}`) outside its chart"
        hint = HELM_RENDER_HINT
    elif go:
        what = "unrendered Go template (`{{ ... }}`, not Helm: it uses none of Helm's objects)"
        hint = "render it with the program it is written for, then scan the output"
    elif template.syntax == "jinja":
        what = "unrendered Jinja template (`{{ ... }}`, `{% ... %}`: Ansible, Jinja2)"
        hint = "render it (e.g. Ansible's template module), then scan the output"
    else:
        what = "unrendered template (`${...}`: Terraform templatefile, envsubst)"
        hint = "render it (e.g. `terraform console`, `envsubst`), then scan the output"
    if all(document.literal_checked for document in documents):
        checked = LITERAL_NOTE
    elif any(document.literal_checked for document in documents):
        unread = [document for document in documents if not document.literal_checked]
        checked = (f"{LITERAL_NOTE}; {len(unread)} of its {len(documents)} documents could not be read even "
                   f"so (from line {unread[0].line}: {unread[0].message})")
    else:
        checked = f"it could not be read even with its actions masked, so it was not checked ({first.message})"
    unknown = next((document.unknown for document in documents
                    if document.unknown is not None and not document.infrastructure), None)
    hidden = any(not document.literal_checked and document.holds_containers for document in documents)
    where = LineAt(first.line, first.column, first.line, first.column + 1)
    if unknown is not None:
        line, column, described = unknown
        if not operator:
            where = LineAt(line, column, line, column + 1)
        risk = f"{described} is unknown until it is rendered and could hide a GPU bypass"
    elif hidden:
        risk = "the containers of its unread documents could hide a GPU bypass"
    elif any(document.unknown is not None for document in documents):
        risk = ("its pods are GPU infrastructure (by what they mount), whose findings are exempt: what its "
                "actions render cannot hide a bypass")
    else:
        risk = ("no action fills a field that decides GPU access (env, securityContext, command, args, "
                "resources, volumes, runtimeClassName, annotations)")
    message = f"{what}: {risk}; {checked}" + (f"; {hint}" if hint else "")
    # Nothing unknown can hide a bypass (or an operator renders its own operands): info.
    quiet = operator or (unknown is None and not hidden)
    yield Violation(message, where, severity=Severity.INFO if quiet else None)


RULE = Rule(
    id="GPU011",
    name="unrendered-template",
    severity=Severity.WARNING,
    summary="A file outside any Helm chart that is an unrendered template; a warning where an unknown could hide "
            "a GPU bypass (reported by the engine).",
    doc=__doc__ or "",
    # What could not be checked as written, not a bypass: never a security alert.
    tags=("maintainability",),
    check_template=check_template,
)
