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
container's env, securityContext, command/args, resources, the image of a
container that requests no GPU, the pod's volumes, hostPID, runtimeClassName or
pod annotations, or one that renders whole keys into a container or pod spec.
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

from gpulint.api import Rule, Severity

RULE = Rule(
    id="GPU011",
    name="unrendered-template",
    severity=Severity.WARNING,
    summary="A file outside any Helm chart that is an unrendered template; a warning where an unknown could hide "
            "a GPU bypass (reported by the engine).",
    doc=__doc__ or "",
)
