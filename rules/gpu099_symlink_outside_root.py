"""
## What it does
Reports a symbolic link, found while walking a scanned directory, whose target
lies outside that directory (`config -> ../../etc`, `root -> /`,
`token.yaml -> /home/runner/.kube/config`) or inside a kernel filesystem
(`/proc`, `/sys`, `/dev`). gpulint does not follow it: nothing it points to is
read. The finding says where the link points and is counted in the summary as
`outside_root`. It is reported by the engine, at info severity.

A path given on the command line is always read as given, even when it is a
symlink: only links found inside a scanned directory are held to it.

## Why is this bad
The scanned tree is untrusted: on a pull request from a fork it is written by
whoever opened it. A link out of the tree would make the scan read files of the
machine running it (CI secrets, the host's filesystem) and print them in
findings, or walk `/` or `/proc` without end. A link that leaves the repository
also means the manifest it names is not part of the repository, so what gpulint
would check is not what gets deployed from it.

## Example
```text
k8s/
  deployment.yaml
  shared -> ../../platform/manifests     # outside the scanned directory
```

## Use instead
Scan the directory the link points to as well (`gpulint scan k8s/ ../platform/manifests`),
or copy the manifests into the repository. Links inside the scanned directory
are followed as usual.

## Fix
None: the link is not followed, and where it should point is not known.

## References
- OWASP, path traversal: https://owasp.org/www-community/attacks/Path_Traversal
- Git, how symbolic links are stored: https://git-scm.com/docs/git-config#Documentation/git-config.txt-coresymlinks
"""

from typing import Iterator

from gpulint.api import LineAt, Rule, RuleContext, Severity, UnreadInput, Violation


def check_unread(unread: UnreadInput, ctx: RuleContext) -> Iterator[Violation]:
    if unread.target is None:
        message = "kernel filesystem directory (/proc, /sys or /dev): not scanned"
    else:
        message = f"symlink to {unread.target} points outside the scanned directory: not followed"
    yield Violation(message, LineAt(1, 1, 1, 1))


RULE = Rule(
    id="GPU099",
    name="symlink-outside-root",
    severity=Severity.INFO,
    summary="A symlink in a scanned directory that points outside it (or into /proc, /sys, /dev): not followed.",
    doc=__doc__ or "",
    tags=("maintainability",),
    check_unread=check_unread,
)
