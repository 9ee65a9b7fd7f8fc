"""
## What it does
Reports a Helm chart or kustomization gpulint could not render as it is
(reported by the engine, once per problem):

- a kustomization naming a remote resource, base, component or Helm chart
  (`https://...`, `github.com/org/repo//dir?ref=v1`, `git@...`, a `helmCharts`
  `repo`): gpulint never fetches, so it is not built; its local resources and
  patches are scanned as they are, so a bypass in them is still found;
- a kustomization or chart that would read a file outside the repository;
- `helm template` or `kustomize build` failing (`fail`, `required`, a missing
  dependency, a namespace the chart refuses), with the tool's first error line
  and, when Helm names one, the template line;
- a renderer that did not finish within `--render-timeout` seconds (it is
  stopped), or that is not installed.

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
repository to have them checked with every change.

## References
- Kustomize remote targets: https://github.com/kubernetes-sigs/kustomize/blob/master/examples/remoteBuild.md
- Helm template functions `fail` and `required`: https://helm.sh/docs/howto/charts_tips_and_tricks/
"""

from gpulint.api import Rule, Severity

RULE = Rule(
    id="GPU010",
    name="render-failed",
    severity=Severity.WARNING,
    summary="A Helm chart or kustomization that could not be rendered as it is (reported by the engine).",
    doc=__doc__ or "",
    tags=("maintainability",),
)
