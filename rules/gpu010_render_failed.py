"""
## What it does
Reports a Helm chart or kustomization gpulint could not render as it is
(reported by the engine, once per problem):

- a kustomization naming a remote resource, base, component or Helm chart
  (`https://...`, `github.com/org/repo//dir?ref=v1`, `git@...`, a `helmCharts`
  `repo`): gpulint never fetches, so it is not built; its local resources and
  patches are scanned as they are, so a bypass in them is still found;
- a kustomization or chart that would read a file outside the repository
  (generator and transformer configurations included), or a kustomization
  gpulint cannot read exactly as kustomize would (a YAML tag such as
  `!!binary`, text that does not parse, a named pipe it reads);
- `helm template` or `kustomize build` failing (`fail`, `required`, a missing
  dependency or file, a plugin, a namespace the chart refuses), with the tool's
  first error line and, when Helm names one, the template line;
- a renderer that did not finish within `--render-timeout` seconds, or needed
  more than `--render-memory` MiB (it is stopped), or that is not installed.

A kustomization that is not built, for any of these reasons, is scanned as a
chart that does not render is: its local resources and patches as plain
manifests, their findings at their own severity, with ONE warning here saying
why. A build is never retried in a less restricted mode (kustomize's load
restrictor is never lifted).

A chart Helm cannot load offline as it is, although its templates are fine, is
rendered all the same from gpulint's private copy of it (the chart itself is
never changed), and what was changed is reported where it is written:

- chart dependencies declared in `Chart.yaml` (`requirements.yaml` for
  apiVersion v1 charts) but missing from `charts/` (no `helm dependency build`
  ran): the chart is rendered without them, and one warning at the first one
  names them all, says whether each is enabled by its `condition`/`tags` with
  the values used, that what they render was not checked, and how to fix it
  (at **info** severity when every one left out is disabled with those values:
  Helm would not render them either, so nothing goes unchecked);
- a `version` (or `appVersion`) Helm cannot load: a release tool's placeholder
  such as `version: [[ .Version ]]` (a nested YAML list), `{{ .Version }}`,
  `"${VERSION}"` (not SemVer), or no `version` at all: the chart is rendered
  with the stand-in `0.0.0`, reported at **info** severity at the field's line:
  nothing goes unchecked (only `.Chart.Version` renders differently), and such
  a placeholder is the repository's normal state, so it does not fail a scan.

A chart that still does not render (a template error, a helper defined
nowhere, helm missing) is one finding, and its templates (every file Helm
would render: under `templates/` of the chart and its unpacked subcharts, but
`_*` partials and `NOTES.txt`) are checked as literal text, as a loose
template is (see GPU011: lines holding only actions are blank, an action
inside a line is a placeholder, findings about a placeholder are dropped), with
findings at the template lines. There is no GPU011 per template on top: the
chart's finding says its templates were read literally, and counts the
documents that could not be read even so. When another render of the chart
(a `ci/*-values.yaml` file) succeeds, its findings replace the literal ones.

The message carries no timestamp, process id or temporary path: the same
failure gives the same report on every run.

## Why is this bad
What is not rendered is not checked: objects a chart or overlay produces may
request GPUs around the scheduler and nobody would know. The finding says why
rendering failed and which option supplies what is missing (`--values`,
`--set`, `--helm-namespace`), or how to render it yourself and pipe the output
into `gpulint scan -`.

## Example
```yaml
# kustomization.yaml
resources:
- github.com/example/gpu-stack//deploy?ref=v1.2.0   # not fetched
- trainer.yaml                                      # still scanned
```

## Use instead
Render what gpulint cannot, and scan the output:
`kubectl kustomize overlays/prod | gpulint scan -`, or give the chart the
values it needs with `--values`/`--set`. Vendor remote bases into the
repository to have them checked with every change. Run `helm dependency build
CHART` before the scan (the GitHub Action's `helm-dependency-build: true`) to
have a chart's dependencies checked; a placeholder version can stay, or be
suppressed where it is written (`# gpulint: ignore[GPU010] filled in by CI`).

## Fix
None: the chart or kustomization has to be repaired so that it renders.

## References
- Kustomize remote targets: https://github.com/kubernetes-sigs/kustomize/blob/master/examples/remoteBuild.md
- Helm template functions `fail` and `required`: https://helm.sh/docs/howto/charts_tips_and_tricks/
- Chart.yaml fields, dependencies, conditions and tags: https://helm.sh/docs/topics/charts/
"""

from typing import Iterator

from gpulint.api import RenderProblem, Rule, RuleContext, Severity, Violation


def check_render(problem: RenderProblem, ctx: RuleContext) -> Iterator[Violation]:
    """Every render problem is one finding, at the severity the renderer judged (info when nothing
    went unchecked), where the renderer placed it."""
    yield Violation(problem.message, problem.where, severity=problem.severity)


RULE = Rule(
    id="GPU010",
    name="render-failed",
    severity=Severity.WARNING,
    summary="A Helm chart or kustomization that could not be rendered as it is (reported by the engine).",
    doc=__doc__ or "",
    tags=("maintainability",),
    check_render=check_render,
    kept_when_selecting_others=True,
)
