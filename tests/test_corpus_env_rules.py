"""GPU004 and GPU005 against the labelled real-world corpus (../shared/corpus/LABELS.tsv).

A finding matches a label when it is in the same file on the same line (labels
point at the `- name: NVIDIA_VISIBLE_DEVICES` line and at the `image:` line); a
finding on a rendered chart or kustomization is matched at the template or
origin line it maps to (conftest.labelled_at).
Suppressed findings count as found: system components (device plugins, GFD,
HAMi, gpushare) are labelled too and marked `system-component`, and are
reported separately because the default allowlist reports them suppressed.
Run with `-s` to see the table.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field

import pytest
from conftest import CORPUS, labelled_at, scan_json

CATEGORIES = {
    "GPU004": "env-request-indirect",
    "GPU005": "image-default-visible-devices",
}
# Lower bounds: what the rules reach today (rounded down to 2 decimals), so that
# a regression fails; raise them as the rules improve. Measured on the corpus of
# 32 repositories (with and without helm on PATH: no GPU004/GPU005 label is in a chart):
#   GPU004: precision 7/7, recall 7/7.
#   GPU005: precision 43/44 = 0.977 (unlabelled: the mig-parted Dockerfile's
#     `ENV NVIDIA_VISIBLE_DEVICES=all`, a Dockerfile kept as evidence and labelled
#     `none`), recall 43/47 = 0.914 (missed: a Triton-derived sample image and an
#     unverified MindSpore GPU image that the image list does not know, jobset's
#     pytorch-mnist image built FROM pytorch/pytorch by a Dockerfile beside it, and a
#     Dynamo CRD's container under `services.<name>.extraPodSpec.mainContainer`).
MIN_PRECISION = {"GPU004": 1.0, "GPU005": 0.97}
MIN_RECALL = {"GPU004": 1.0, "GPU005": 0.91}


@dataclass
class Score:
    found: set = field(default_factory=set)
    labelled: dict = field(default_factory=dict)   # (path, line) -> justification

    @property
    def hits(self) -> set:
        return self.found & set(self.labelled)

    @property
    def precision(self) -> float:
        return len(self.hits) / len(self.found) if self.found else 1.0

    @property
    def recall(self) -> float:
        return len(self.hits) / len(self.labelled) if self.labelled else 1.0

    def subset(self, system: bool) -> "Score":
        def is_system(key: tuple) -> bool:
            return self.labelled.get(key, "").startswith("system-component")
        labelled = {k: v for k, v in self.labelled.items() if is_system(k) == system}
        found = {k for k in self.found if (k in self.labelled and is_system(k) == system)
                 or (k not in self.labelled and not system)}
        return Score(found, labelled)


@pytest.fixture(scope="module")
def scores() -> dict[str, Score]:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present (it lives beside the repository, not in it)")
    corpus = CORPUS
    _code, report = scan_json("--select", ",".join(CATEGORIES), "--show-suppressed", str(corpus))
    out = {rule: Score() for rule in CATEGORIES}
    for finding in report["findings"]:
        if finding["rule"] in out:
            out[finding["rule"]].found.add(labelled_at(finding, corpus))
    with (corpus / "LABELS.tsv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            for rule, category in CATEGORIES.items():
                if row["category"] == category:
                    out[rule].labelled[(row["path"], int(row["line"]))] = row["justification"]
    print()
    for rule, score in out.items():
        for name, part in (("all", score), ("system components", score.subset(True)),
                           ("workloads", score.subset(False))):
            print(f"{rule} {CATEGORIES[rule]:32} {name:18} labelled {len(part.labelled):3}  found {len(part.found):3}  "
                  f"precision {part.precision:.2f}  recall {part.recall:.2f}")
        for key in sorted(set(score.labelled) - score.found):
            print(f"  missed {key[0]}:{key[1]}  {score.labelled[key][:90]}")
        for key in sorted(score.found - set(score.labelled)):
            print(f"  unlabelled {key[0]}:{key[1]}")
    return out


@pytest.mark.parametrize("rule", sorted(CATEGORIES))
def test_precision_and_recall(scores: dict[str, Score], rule: str) -> None:
    score = scores[rule]
    assert score.labelled, f"no {CATEGORIES[rule]} rows in LABELS.tsv"
    assert score.precision >= MIN_PRECISION[rule], sorted(score.found - set(score.labelled))
    assert score.recall >= MIN_RECALL[rule], sorted(set(score.labelled) - score.found)
