"""Findings on the real corpus compared with its hand labels (../shared/corpus/LABELS.tsv).

Every corpus file is scanned (JSON, suppressed findings included). A label row
(path, line, category) is found when a finding of the category's rule sits on
that line, or maps to it (a rendered chart's template line, a kustomization's
origin: conftest.labelled_at). A file inside a Helm chart is scanned through its
chart, so the summary counts each chart once, not its files. Rows whose
justification says `system-component` are counted apart: their findings should
be there *and* be suppressed by the allowlist.
The table is printed (`pytest -s`) and written under pytest's tmp dir.

Minimum recall/precision is asserted only for categories whose rule is in the
registry at test time: rules land one by one, and a missing rule is reported as
skipped rather than failing. The thresholds are measured values rounded down
(see MINIMUM), so a regression fails while the known misses (raw Helm templates
that do not parse, labels a manifest-only linter cannot see) do not.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from conftest import helm_charts, inputs_of, labelled_at, run_cli

from gpulint.results.findings import STATUSES
from gpulint.scan.registry import load_rules

CATEGORY_RULES: dict[str, tuple[str, ...]] = {
    "node-direct-access": ("GPU001",),
    "runtime-cli": ("GPU002",),
    "env-visible-devices": ("GPU003",),
    "env-request-indirect": ("GPU004",),
    "image-default-visible-devices": ("GPU005",),
    "privileged-gpu": ("GPU006",),
    "gpu-request-invalid": ("GPU101", "GPU102", "GPU103"),
}
SYSTEM, OTHER = "system-component", "other"

# Minimum (recall, precision) per category and group, asserted when the rule
# exists: the values measured on the corpus (32 repositories), rounded down to 2
# decimals, so that any regression fails; raise them as the rules improve. Where
# a figure depends on helm being on PATH (it renders four of the corpus's five
# charts: ROCm's and fake-gpu-operator's without their dependencies, which are not
# vendored, giantswarm's with a stand-in for its Chart.yaml version, a CI
# placeholder; fake-gpu-operator's sample lacks its helpers template, so its
# templates are read as literal text), the lower one is the threshold. Measured:
#   node-direct-access, system: recall 30/32 = 0.93 with helm, 31/32 without (misses:
#     a raw NVIDIA Helm template line whose path is a template expression, and, with
#     helm, ROCm's labeller, which its chart renders only with labeller.enabled=true;
#     without helm the chart is read literally and the line is found), precision 1.00.
#   node-direct-access, other: recall 8/8, precision 8/8.
#   runtime-cli, system: recall 4/5 = 0.80 without helm, 5/5 with (the Neuron
#     device plugin's host /run, in its chart), precision 1.00. other: 4/4, 4/4.
#   env-visible-devices, system: recall 11/12 = 0.91 without helm, 12/12 with (the
#     nvidia_gpu_exporter chart's `nvidiaVisibleDevices: all`), precision 1.00.
#   env-request-indirect (all other): recall 7/7, precision 7/7.
#   image-default-visible-devices, system: recall 16/16, precision 16/17 = 0.94 (the
#     extra is the mig-parted Dockerfile's ENV line, reported suppressed: a GPU
#     management image by its NVIDIA_MIG_CONFIG_DEVICES ENV). other: recall 30/31 = 0.96
#     (the miss: an image built FROM pytorch/pytorch by a Dockerfile beside the manifest,
#     whose name shows no evidence), precision 30/30.
#   privileged-gpu, system: recall 50/52 = 0.96 (a raw NVIDIA Helm template line,
#     giantswarm's device plugin, whose GPU evidence is only its image name), precision
#     50/51 = 0.98 (the extra line is HAMi's vgpu-monitor SYS_ADMIN warning, which the
#     labels do not cover).
#   privileged-gpu, other: recall 5/5, precision 5/5.
#   gpu-request-invalid (all other): recall 2/3 = 0.66 (the miss is a debatable
#     label on `nvidia.com/gpu: "<number_of_gpus>"`, a placeholder GPU103 leaves
#     alone by design), precision 2/2.
# Of the system-component rows found, 44/50 (privileged) and 8/11 without helm,
# 8/12 with (env) are reported suppressed: the rest are two generic images
# (alpine, ubuntu) that no allowlist can recognise, raw Helm templates (read
# literally, since they have no Chart.yaml beside them or their chart does not
# render) whose image is `{{ .Values.image }}`, which no allowlist can recognise
# either (rendered, the same charts are recognised), and third-party GPU
# infrastructure the allowlist does not list (utkuozdemir/nvidia_gpu_exporter).
MINIMUM: dict[tuple[str, str], tuple[float, float]] = {
    ("node-direct-access", OTHER): (1.0, 1.0),
    ("node-direct-access", SYSTEM): (0.93, 1.0),
    ("runtime-cli", OTHER): (1.0, 1.0),
    ("runtime-cli", SYSTEM): (0.8, 1.0),
    ("env-visible-devices", OTHER): (0.9, 0.9),      # no rows and no findings today
    ("env-visible-devices", SYSTEM): (0.91, 1.0),
    ("env-request-indirect", OTHER): (1.0, 1.0),
    ("image-default-visible-devices", OTHER): (0.96, 1.0),
    ("image-default-visible-devices", SYSTEM): (1.0, 0.94),
    ("privileged-gpu", OTHER): (1.0, 1.0),
    ("privileged-gpu", SYSTEM): (0.96, 0.98),
    ("gpu-request-invalid", OTHER): (0.66, 1.0),
}
# Labelled rows found, over every category (issue 15 asks for 0.95): 169/175 = 0.966 with
# helm and without (measured).
MINIMUM_OVERALL_RECALL = 0.96
# Of the system-component rows found, the share that must be reported suppressed.
MINIMUM_SUPPRESSED_SHARE = {"privileged-gpu": 0.88, "env-visible-devices": 0.66}
# Labelled bypasses that are not system components but that the default allowlist
# reports suppressed as one: a product bug, listed so that no other one can creep in
# (the list must match exactly; remove an entry when the allowlist is fixed). Empty since the
# NCCL plugin installer entry matches its exact repository, not a glob that also covered the
# `nccl-plugin-gib-diagnostic` benchmark workload.
KNOWN_SUPPRESSED_NON_SYSTEM: dict[str, list[str]] = {}


@dataclass
class Row:
    path: str
    line: int
    category: str
    justification: str

    @property
    def group(self) -> str:
        return SYSTEM if "system-component" in self.justification else OTHER


@dataclass
class Cell:
    rows: int = 0
    found: int = 0
    found_suppressed: int = 0
    findings: int = 0
    matched_findings: int = 0
    missed: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)
    suppressed_rows: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float | None:
        return self.found / self.rows if self.rows else None

    @property
    def precision(self) -> float | None:
        return self.matched_findings / self.findings if self.findings else None


def _read_labels(corpus: Path) -> list[Row]:
    with (corpus / "LABELS.tsv").open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [Row(r["path"], int(r["line"]), r["category"], r["justification"] or "") for r in reader]


def _corpus_files(corpus: Path) -> list[Path]:
    """Every file of the corpus but its two documents (LABELS.tsv, SOURCES.md)."""
    return sorted(p for p in corpus.rglob("*")
                  if p.is_file() and p.relative_to(corpus).parts not in (("LABELS.tsv",), ("SOURCES.md",)))


def _scan(files: list[Path], rules: list[str]) -> tuple[int, dict, str]:
    code, out, err = run_cli("scan", "--format", "json", "--fail-on", "never",
                             "--select", ",".join(rules), *map(str, files))
    return code, json.loads(out), err


def _evaluate(rows: list[Row], findings: list[dict], corpus: Path) -> dict[tuple[str, str], Cell]:
    table: dict[tuple[str, str], Cell] = {}
    for category, rules in CATEGORY_RULES.items():
        labelled = {(r.path, r.line): r for r in rows if r.category == category}
        # One finding per line and category (GPU101 and GPU102 may share a line).
        on_line: dict[tuple[str, int], bool] = {}
        for f in findings:
            if f["rule"] in rules:
                key = labelled_at(f, corpus)
                suppressed = f["suppressed"] and f["suppression"]["kind"] == "system-component"
                on_line[key] = on_line.get(key, True) and suppressed
        for group in (SYSTEM, OTHER):
            cell = table.setdefault((category, group), Cell())
            for key, row in labelled.items():
                if row.group != group:
                    continue
                cell.rows += 1
                if key in on_line:
                    cell.found += 1
                    cell.found_suppressed += on_line[key]
                    if on_line[key]:
                        cell.suppressed_rows.append(f"{key[0]}:{key[1]}")
                else:
                    cell.missed.append(f"{key[0]}:{key[1]}")
        for key, suppressed in on_line.items():
            row = labelled.get(key)
            group = row.group if row is not None else (SYSTEM if suppressed else OTHER)
            cell = table[(category, group)]
            cell.findings += 1
            if row is not None:
                cell.matched_findings += 1
            else:
                cell.unlabelled.append(f"{key[0]}:{key[1]}{' (suppressed)' if suppressed else ''}")
    return table


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:4.2f}"


def _report(table: dict[tuple[str, str], Cell], present: set[str]) -> str:
    lines = [f"{'category':<30} {'rule':<6} {'group':<16} {'found':>5} {'recall':>6} {'supp.':>5} "
             f"{'finds':>5} {'prec.':>5}",
             "-" * 86]
    for (category, group), cell in table.items():
        rules = CATEGORY_RULES[category]
        if not present.intersection(rules):
            if group == SYSTEM:
                lines.append(f"{category:<30} {'/'.join(rules):<6} (rule not in the tree: skipped)")
            continue
        lines.append(f"{category:<30} {'/'.join(rules) if group == SYSTEM else '':<6} {group:<16} "
                     f"{cell.found:>2}/{cell.rows:<2} {_fmt(cell.recall):>6} {cell.found_suppressed:>5} "
                     f"{cell.findings:>5} {_fmt(cell.precision):>5}")
    details = []
    for (category, group), cell in table.items():
        if present.intersection(CATEGORY_RULES[category]):
            details += [f"  missed   {category} [{group}] {m}" for m in cell.missed]
            details += [f"  extra    {category} [{group}] {u}" for u in cell.unlabelled]
    legend = ("found: label rows with a finding of the rule on that line; supp.: of those, reported "
              "suppressed as a system component; finds: distinct finding lines of the rule in that group "
              "(unlabelled findings count as system-component when suppressed as one).")
    return "\n".join(lines + ["", legend, ""] + details) + "\n"


def test_corpus_against_labels(corpus: Path, tmp_path: Path) -> None:
    rows = _read_labels(corpus)
    files = _corpus_files(corpus)
    labelled_paths = {r.path for r in rows}
    relative = {str(p.relative_to(corpus)) for p in files}
    # The corpus labels every file it holds (LABELS.tsv conventions): none left out.
    assert relative == labelled_paths, sorted(relative ^ labelled_paths)

    present = set(load_rules())
    wanted = sorted(present.intersection(r for rules in CATEGORY_RULES.values() for r in rules))
    assert wanted, "no labelled rule is registered"
    code, report, err = _scan(files, wanted)

    # No crash, and every file given is accounted for in exactly one outcome.
    assert code == 0, err
    assert "internal error" not in err and "Traceback" not in err
    summary = report["summary"]
    assert summary["internal_errors"] == 0
    # A file inside a Helm chart is not an input of its own: discovery scans its chart
    # instead (rendered, or its templates read as literal text with one GPU010 when it does not render), once.
    charts = helm_charts(corpus)
    inputs = inputs_of(files, charts)
    print(f"\n{len(files)} labelled files -> {len(inputs)} inputs ({len(charts)} Helm charts hold "
          f"{len(files) - len(inputs) + len(charts)} of the files)")
    # A chart's ci/*-values.yaml renders fold into its report: the chart is one input.
    assert summary["files"] == len(inputs)
    assert sum(summary[k] for k in STATUSES) == summary["files"]
    assert summary["suppressed"] == sum(f["suppressed"] for f in report["findings"])
    assert summary["findings"] == sum(not f["suppressed"] for f in report["findings"])
    # Every finding sits in a corpus file, or maps to one (a rendered chart's template).
    assert {labelled_at(f, corpus)[0] for f in report["findings"]} <= relative

    table = _evaluate(rows, report["findings"], corpus)
    text = _report(table, present)
    text += (f"\nfiles {summary['files']}: scanned {summary['scanned']}, not Kubernetes "
             f"{summary['not_kubernetes']}, binary {summary['binary']}, unreadable {summary['error']}, "
             f"unrendered Helm charts {summary['helm_chart']}; "
             f"findings {summary['findings']} active, {summary['suppressed']} suppressed\n")
    out = tmp_path / "corpus-labels.txt"
    out.write_text(text, encoding="utf-8")
    print(f"\n{text}(report: {out})")

    failures = []
    for (category, group), (min_recall, min_precision) in MINIMUM.items():
        if not present.intersection(CATEGORY_RULES[category]):
            continue
        cell = table[(category, group)]
        if cell.recall is not None and cell.recall < min_recall:
            failures.append(f"{category} [{group}] recall {cell.recall:.2f} < {min_recall}")
        if cell.precision is not None and cell.precision < min_precision:
            failures.append(f"{category} [{group}] precision {cell.precision:.2f} < {min_precision}")
    for category, share in MINIMUM_SUPPRESSED_SHARE.items():
        cell = table[(category, SYSTEM)]
        if present.intersection(CATEGORY_RULES[category]) and cell.found:
            if cell.found_suppressed / cell.found < share:
                failures.append(f"{category}: only {cell.found_suppressed}/{cell.found} system-component "
                                "rows reported suppressed")
    # The allowlist must never hide a labelled bypass that is not a system component
    # (but for the known product bug listed above, which must still be there).
    for (category, group), cell in table.items():
        known = sorted(KNOWN_SUPPRESSED_NON_SYSTEM.get(category, []))
        if group == OTHER and sorted(cell.suppressed_rows) != known:
            failures.append(f"{category}: non-system row(s) suppressed as system components: "
                            f"{sorted(cell.suppressed_rows)}, known: {known}")
    # Issue 15's figures: recall over every labelled row whose rule is registered, and no
    # active finding (of any labelled rule) on a file labelled only `none`. A suppressed
    # finding there is allowed: it is a system component's, reported with its reason.
    counted = [cell for (category, _), cell in table.items() if present.intersection(CATEGORY_RULES[category])]
    found, labelled_rows = sum(c.found for c in counted), sum(c.rows for c in counted)
    print(f"overall recall {found}/{labelled_rows} = {found / labelled_rows:.3f}")
    if found / labelled_rows < MINIMUM_OVERALL_RECALL:
        failures.append(f"overall recall {found}/{labelled_rows} < {MINIMUM_OVERALL_RECALL}")
    # (GPU000 and the render/template warnings GPU010/GPU011 are about reading the file,
    # not the policy: they are held to the next check.)
    none_only = {r.path for r in rows if r.category == "none"} - {r.path for r in rows if r.category != "none"}
    on_none = sorted(f"{f['rule']} {path}:{line}" for f in report["findings"]
                     if not f["suppressed"] and f["rule"] in wanted
                     for path, line in [labelled_at(f, corpus)] if path in none_only)
    if on_none:
        failures.append(f"active findings on files labelled `none`: {on_none}")
    # No GPU000 error on a file labelled "not Kubernetes".
    not_kubernetes = {r.path for r in rows if r.category == "none" and "not kubernetes" in r.justification.lower()}
    errors = sorted(f"{path}:{line}" for f in report["findings"] if f["rule"] == "GPU000"
                    for path, line in [labelled_at(f, corpus)] if path in not_kubernetes)
    if errors:
        failures.append(f"GPU000 on files labelled not Kubernetes: {errors}")
    assert not failures, "\n".join(failures)
