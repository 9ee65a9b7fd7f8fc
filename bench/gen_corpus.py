"""Deterministic benchmark corpus: thousands of manifests of every workload kind.

    python bench/gen_corpus.py OUT_DIR [--files N] [--big-docs N]

Writes OUT_DIR/manifests/<kind>/<n>.yaml (one to six documents each, a mix of
clean workloads, GPU bypasses, ConfigMaps and Services), OUT_DIR/json/*.json
(`kubectl get -o json` style lists) and OUT_DIR/helm-template.yaml, one large
helm-template-style stream with `# Source:` comments. The same arguments always
produce byte-identical files.

`--repository` writes instead a tree shaped like a real deployment repository
(generate_repository): kustomize bases with many overlays, small Helm charts with
chart-testing values, a chart vendored twice, plain manifests.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

IMAGES = ["registry.example.com/app:1.2.3", "nvidia/cuda:12.4.1-base-ubuntu22.04", "python:3.12-slim",
          "nvcr.io/nvidia/pytorch:24.05-py3", "rayproject/ray:2.9.0-gpu", "busybox:1.36",
          "vllm/vllm-openai:v0.6.0", "tensorflow/tensorflow:2.15.0-gpu"]


def container(rng: random.Random, name: str) -> str:
    lines = [f"- name: {name}", f"  image: {rng.choice(IMAGES)}"]
    if rng.random() < 0.5:
        lines += ["  command: [\"python\", \"-m\", \"serve\"]", "  args:", "  - --port=8080"]
    else:
        lines += ["  command: [\"sh\", \"-c\"]", "  args:", "  - |",
                  "    echo starting",
                  "    python -m train --epochs 3" if rng.random() < 0.9 else "    docker run --gpus all trainer",
                  "    echo done"]
    lines += ["  ports:", "  - containerPort: 8080", "    name: http"]
    lines += ["  env:", "  - name: LOG_LEVEL", "    value: info", "  - name: POD_NAME",
              "    valueFrom:", "      fieldRef:", "        fieldPath: metadata.name"]
    r = rng.random()
    if r < 0.05:
        lines += ["  - name: NVIDIA_VISIBLE_DEVICES", "    value: all"]
    elif r < 0.10:
        lines += ["  - name: NVIDIA_VISIBLE_DEVICES", "    value: void"]
    lines += ["  resources:", "    requests:", "      cpu: 500m", "      memory: 1Gi", "    limits:",
              "      cpu: \"2\"", "      memory: 4Gi"]
    if rng.random() < 0.4:
        lines += [f"      nvidia.com/gpu: {rng.choice([1, 1, 2, 4, 8])}"]
    if rng.random() < 0.08:
        lines += ["  securityContext:", "    privileged: true"]
    if rng.random() < 0.2:
        lines += ["  envFrom:", "  - configMapRef:", f"      name: {rng.choice(['train-config', 'gpu-env'])}",
                  "  - secretRef:", "      name: runtime-env"]
    lines += ["  volumeMounts:", "  - name: data", "    mountPath: /data",
              "  readinessProbe:", "    httpGet: {path: /healthz, port: 8080}", "    periodSeconds: 10"]
    return "\n".join(lines)


def resources(rng: random.Random) -> str:
    gpu = f"\n    nvidia.com/gpu: {rng.choice([1, 2])}" if rng.random() < 0.5 else ""
    return f"resources:\n  limits:\n    cpu: \"4\"{gpu}\n  requests:\n    cpu: \"2\""


def argo_templates(rng: random.Random) -> str:
    """An Argo workflow spec: a container template, a script template and a containerSet."""
    main = "\n".join(line[2:] for line in container(rng, "main").splitlines())
    return ("entrypoint: main\ntemplates:\n- name: main\n  container:\n" + indent(main, 4)
            + "\n- name: prepare\n  script:\n    image: python:3.12-slim\n    command: [python]\n"
            "    source: |\n      import os\n      print(os.environ.get('NVIDIA_VISIBLE_DEVICES'))\n"
            + indent(resources(rng), 4)
            + "\n- name: pair\n  containerSet:\n    containers:\n"
            + indent(container(rng, "a"), 4) + "\n" + indent(container(rng, "b"), 4))


def indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line if line else line for line in text.splitlines())


def pod_spec(rng: random.Random, n: int) -> str:
    parts = ["containers:", indent(container(rng, "main"), 0)]
    if rng.random() < 0.3:
        parts += [indent(container(rng, "sidecar"), 0)]
    if rng.random() < 0.2:
        parts += ["initContainers:", indent(container(rng, "init"), 0)]
    parts += ["volumes:", "- name: data"]
    if rng.random() < 0.05:
        parts += ["  hostPath:", "    path: /dev/nvidia0"]
    else:
        parts += ["  emptyDir: {}"]
    if rng.random() < 0.3:
        parts += ["nodeSelector:", "  nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB"]
    if rng.random() < 0.3:
        parts += ["tolerations:", "- key: nvidia.com/gpu", "  operator: Exists", "  effect: NoSchedule"]
    return "\n".join(parts)


def meta(kind: str, n: int, ns: str = "ml") -> str:
    return (f"metadata:\n  name: {kind.lower()}-{n}\n  namespace: {ns}\n  labels:\n    app: {kind.lower()}-{n}\n"
            f"    team: team-{n % 7}\n  annotations:\n    owner: platform\n")


def template(rng: random.Random, n: int, depth: int) -> str:
    return indent(f"template:\n  metadata:\n    labels:\n      app: w{n}\n  spec:\n{indent(pod_spec(rng, n), 4)}", depth)


def workload(rng: random.Random, kind: str, n: int) -> str:
    head = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1",
            "Job": "batch/v1", "CronJob": "batch/v1", "Pod": "v1", "ReplicationController": "v1",
            "PodTemplate": "v1", "RayCluster": "ray.io/v1", "PyTorchJob": "kubeflow.org/v1",
            "JobSet": "jobset.x-k8s.io/v1alpha2", "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1",
            "VolcanoJob": "batch.volcano.sh/v1alpha1", "Workflow": "argoproj.io/v1alpha1",
            "InferenceService": "serving.kserve.io/v1beta1", "KnativeService": "serving.knative.dev/v1",
            "Rollout": "argoproj.io/v1alpha1", "CloneSet": "apps.kruise.io/v1alpha1",
            "WorkflowTemplate": "argoproj.io/v1alpha1", "ClusterWorkflowTemplate": "argoproj.io/v1alpha1",
            "CronWorkflow": "argoproj.io/v1alpha1", "InferenceServiceModel": "serving.kserve.io/v1beta1"}[kind]
    real_kind = {"VolcanoJob": "Job", "KnativeService": "Service",
                 "InferenceServiceModel": "InferenceService"}.get(kind, kind)
    out = f"apiVersion: {head}\nkind: {real_kind}\n{meta(kind, n)}"
    if kind == "Pod":
        return out + "spec:\n" + indent(pod_spec(rng, n), 2)
    if kind == "PodTemplate":
        return out + template(rng, n, 0)
    if kind == "CronJob":
        return out + "spec:\n  schedule: \"0 * * * *\"\n  jobTemplate:\n    spec:\n" + template(rng, n, 6)
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job",
                "KnativeService", "Rollout", "CloneSet"):
        return out + "spec:\n  replicas: 2\n" + template(rng, n, 2)
    if kind == "RayCluster":
        return (out + "spec:\n  headGroupSpec:\n    rayStartParams: {}\n" + template(rng, n, 4)
                + "\n  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 2\n" + template(rng, n, 4))
    if kind == "PyTorchJob":
        return (out + "spec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n" + template(rng, n, 6)
                + "\n    Worker:\n      replicas: 4\n" + template(rng, n, 6))
    if kind == "JobSet":
        return out + "spec:\n  replicatedJobs:\n  - name: w\n    template:\n      spec:\n" + template(rng, n, 8)
    if kind == "LeaderWorkerSet":
        return out + "spec:\n  leaderWorkerTemplate:\n    workerTemplate:\n" + indent(
            f"metadata:\n  labels:\n    app: w{n}\nspec:\n{indent(pod_spec(rng, n), 2)}", 6)
    if kind == "VolcanoJob":
        return out + "spec:\n  tasks:\n  - name: w\n    replicas: 2\n" + template(rng, n, 4)
    if kind in ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate"):
        return out + "spec:\n" + indent(argo_templates(rng), 2)
    if kind == "CronWorkflow":
        return (out + "spec:\n  schedule: \"0 3 * * *\"\n  workflowSpec:\n" + indent(argo_templates(rng), 4))
    if kind == "InferenceServiceModel":
        return (out + "spec:\n  predictor:\n    model:\n      modelFormat: {name: pytorch}\n"
                "      storageUri: s3://models/m\n" + indent(resources(rng), 6))
    if kind == "InferenceService":
        return out + "spec:\n  predictor:\n" + indent(pod_spec(rng, n), 4)
    raise AssertionError(kind)


# Every way the model finds pod specs: the built-in kinds, CRDs found by shape,
# Argo templates (container, script, containerSet) and KServe components
# (containers, or the `model` shorthand).
KINDS = ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod",
         "ReplicationController", "PodTemplate", "RayCluster", "PyTorchJob", "JobSet", "LeaderWorkerSet",
         "VolcanoJob", "Workflow", "InferenceService", "KnativeService", "Rollout", "CloneSet",
         "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow", "InferenceServiceModel"]


def extras(rng: random.Random, n: int) -> list[str]:
    docs = []
    if rng.random() < 0.5:
        docs.append(f"apiVersion: v1\nkind: Service\n{meta('Service', n)}spec:\n  selector:\n    app: w{n}\n"
                    "  ports:\n  - port: 80\n    targetPort: 8080\n")
    if rng.random() < 0.4:
        docs.append(f"apiVersion: v1\nkind: ConfigMap\n{meta('ConfigMap', n)}data:\n  config.yaml: |\n"
                    "    batch_size: 32\n    lr: 0.001\n  MODE: train\n")
    if rng.random() < 0.05:
        name = rng.choice(["train-config", "gpu-env"])
        docs.append(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: ml\ndata:\n"
                    f"  NVIDIA_VISIBLE_DEVICES: {rng.choice(['all', 'void', '0,1'])}\n  EPOCHS: \"3\"\n")
    if rng.random() < 0.05:
        docs.append("apiVersion: v1\nkind: Secret\nmetadata:\n  name: runtime-env\n  namespace: ml\n"
                    "type: Opaque\ndata:\n  TOKEN: c2VjcmV0\n  NVIDIA_VISIBLE_DEVICES: dm9pZA==\n")
    return docs


def generate(out: Path, files: int, big_docs: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(files):
        kind = KINDS[i % len(KINDS)]
        docs = [workload(rng, kind, i)] + extras(rng, i)
        path = out / "manifests" / kind.lower() / f"{i:05d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\n".join(d if d.endswith("\n") else d + "\n" for d in docs))
    # `kubectl get -o json` style lists (JSON is parsed by the same YAML parser).
    for i in range(max(1, files // 50)):
        items = []
        for j in range(5):
            rng_items = rng.random()
            items.append({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{i}-{j}", "namespace": "ml"},
                          "spec": {"containers": [{"name": "c", "image": rng.choice(IMAGES),
                                                   "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
                                                   if rng_items < 0.1 else [],
                                                   "resources": {"limits": {"nvidia.com/gpu": 1}}}]}})
        path = out / "json" / f"list-{i:04d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2) + "\n")
    # One large helm-template-style stream.
    with open(out / "helm-template.yaml", "w") as handle:
        for i in range(big_docs):
            kind = KINDS[i % 9]
            handle.write(f"---\n# Source: big-chart/templates/{kind.lower()}-{i}.yaml\n")
            handle.write(workload(rng, kind, 100000 + i) + "\n")


def generate_references(out: Path, docs: int, seed: int = 13) -> int:
    """A corpus where lookups in the ConfigMap/Secret index miss: `docs` documents (about a
    third ConfigMaps and Secrets in several namespaces) in files of up to 40 documents, whose
    workloads refer by `envFrom`, `valueFrom` and volumes to sources of other namespaces,
    to unqualified ones and to ones that do not exist. Returns the number of documents.

    A lookup whose exact (kind, namespace, name) misses is what once scanned the whole
    index: this corpus makes every workload do several, so that the cost per document
    shows whether lookups stay constant as the scan grows.
    """
    rng = random.Random(seed)
    namespaces = ["ml", "serving", "batch", ""]
    written = 0
    part = 0
    while written < docs:
        texts = []
        for _ in range(min(40, docs - written)):
            n = written + len(texts)
            ns = namespaces[n % len(namespaces)]
            meta_ns = f"  namespace: {ns}\n" if ns else ""
            if n % 3 == 0:
                texts.append(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env-{n}\n{meta_ns}data:\n"
                             f"  MODE: train\n  NVIDIA_VISIBLE_DEVICES: {rng.choice(['all', 'void', '0'])}\n")
            elif n % 3 == 1 and n % 2 == 0:
                texts.append(f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: token-{n}\n{meta_ns}"
                             "type: Opaque\ndata:\n  TOKEN: c2VjcmV0\n")
            else:
                other = rng.randrange(max(1, n))
                refs = ["  envFrom:", f"  - configMapRef:\n      name: env-{other - other % 3}",
                        f"  - configMapRef:\n      name: missing-{n}\n      optional: true",
                        f"  - secretRef:\n      name: token-{rng.randrange(max(1, n))}\n      optional: true",
                        "  env:", "  - name: CUDA_VISIBLE_DEVICES", "    valueFrom:", "      configMapKeyRef:",
                        f"        name: env-{rng.randrange(max(1, n))}", "        key: NVIDIA_VISIBLE_DEVICES",
                        "        optional: true"]
                spec = ("containers:\n- name: main\n  image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
                        + "\n".join(refs) + "\n  resources:\n    limits:\n      nvidia.com/gpu: 1\n")
                texts.append(f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{n}\n{meta_ns}"
                             "spec:\n  replicas: 1\n  template:\n"
                             f"    metadata:\n      labels:\n        app: a{n}\n    spec:\n{indent(spec, 6)}\n")
        path = out / f"refs-{part:04d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\n".join(texts))
        written += len(texts)
        part += 1
    return written


def generate_cold(out: Path, docs: int, seed: int = 23) -> int:
    """A first-scan corpus of about `docs` documents, shaped like a repository gpulint meets cold:
    workloads of every kind in files of 1-12 documents, a third of them reading ConfigMaps and
    Secrets (envFrom, valueFrom, volumes) that sit in other files, scripts kept in ConfigMaps and
    run by the workloads that mount them, `kubectl get -o json` lists, and one `helm template`-
    style stream holding a fifth of the documents. Charts and kustomizations are left out: the
    floor a cold figure is compared with (PyYAML composing the same files) has nothing to set
    against a `helm`/`kustomize` process, which figure 7 measures. Returns the document count.
    """
    rng = random.Random(seed)
    written = 0
    stream_docs = docs // 5
    n = 0
    while written < docs - stream_docs:
        texts = []
        for _ in range(min(rng.randint(1, 12), docs - stream_docs - written)):
            n += 1
            r = rng.random()
            if r < 0.55:
                kind = KINDS[n % len(KINDS)]
                text = workload(rng, kind, n)
                if r < 0.15:   # reads a ConfigMap of another file
                    text = re.sub(r"^( *)- name: LOG_LEVEL\n +value: info$",
                                  lambda m: (f"{m[1]}- name: LOG_LEVEL\n{m[1]}  valueFrom:\n{m[1]}    configMapKeyRef:\n"
                                             f"{m[1]}      name: env-{rng.randrange(max(1, n))}\n"
                                             f"{m[1]}      key: LOG_LEVEL"), text, count=1, flags=re.M)
                texts.append(text if text.endswith("\n") else text + "\n")
            elif r < 0.75:
                texts.append(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env-{n}\n  namespace: ml\n"
                             f"data:\n  LOG_LEVEL: info\n  NVIDIA_VISIBLE_DEVICES: {rng.choice(['void', 'none', 'all'])}\n")
            elif r < 0.85:
                script = ("#!/bin/sh\nset -e\necho preparing\n"
                          + ("docker run --rm --gpus all trainer:1\n" if rng.random() < 0.1 else
                             "python -m train --epochs 3\n"))
                texts.append(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scripts-{n}\n  namespace: ml\n"
                             "data:\n  run.sh: |\n" + indent(script, 4) + "\n")
                texts.append(f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job-{n}\n  namespace: ml\n"
                             "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
                             f"      - name: run\n        image: {rng.choice(IMAGES)}\n"
                             "        command: [\"sh\", \"/scripts/run.sh\"]\n        volumeMounts:\n"
                             "        - name: scripts\n          mountPath: /scripts\n      volumes:\n"
                             f"      - name: scripts\n        configMap:\n          name: scripts-{n}\n")
            elif r < 0.95:
                texts.extend(extras(rng, n) or [f"apiVersion: v1\nkind: Service\n{meta('Service', n)}"
                                                "spec:\n  ports:\n  - port: 80\n"])
            else:
                texts.append(f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: token-{n}\n  namespace: ml\n"
                             "type: Opaque\ndata:\n  TOKEN: c2VjcmV0\n")
        if n % 97 == 0:
            items = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{n}-{j}", "namespace": "ml"},
                      "spec": {"containers": [{"name": "c", "image": rng.choice(IMAGES),
                                               "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
                     for j in range(len(texts))]
            path = out / "json" / f"list-{n:06d}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2) + "\n")
            written += len(items) + 1
            continue
        path = out / "manifests" / f"{n // 500:03d}" / f"{n:06d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\n".join(texts))
        written += len(texts)
    (out / "rendered").mkdir(parents=True, exist_ok=True)
    with open(out / "rendered" / "stream.yaml", "w") as handle:
        for i in range(stream_docs):
            kind = KINDS[i % 9]
            handle.write(f"---\n# Source: big-chart/templates/{kind.lower()}-{i}.yaml\n")
            handle.write(workload(rng, kind, 500000 + i) + "\n")
    return written + stream_docs


def big_stream(path: Path, megabytes: int, configmap_share: float = 0.28, seed: int = 11) -> None:
    """One `helm template`-style stream of about `megabytes` MB: workloads of nine kinds with
    `# Source:` comments and, `configmap_share` of the documents, ConfigMaps holding settings
    and a start-up script (realistic charts ship about a quarter of their documents as such)."""
    rng = random.Random(seed)
    docs = []
    for i in range(400):
        if rng.random() < configmap_share:
            lines = "\n".join(f"    echo step {j}; python -m stage{j} --shard {i}" for j in range(rng.randint(3, 12)))
            docs.append(f"# Source: big-chart/templates/config-{i}.yaml\napiVersion: v1\nkind: ConfigMap\n"
                        f"{meta('ConfigMap', i)}data:\n  MODE: train\n  BATCH_SIZE: \"32\"\n"
                        f"  run.sh: |\n    #!/bin/sh\n{lines}\n")
        else:
            docs.append(f"# Source: big-chart/templates/workload-{i}.yaml\n" + workload(rng, KINDS[i % 9], i) + "\n")
    block = "".join("---\n" + d for d in docs).encode()
    with open(path, "wb") as handle:
        written = 0
        repetition = 0
        while written < megabytes * 1024 * 1024:
            # Each ConfigMap of the stream has a name of its own (the index keeps them all).
            handle.write(block.replace(b"name: configmap-", b"name: configmap-r%d-" % repetition))
            written += len(block)
            repetition += 1


# --- a repository-shaped tree: renders (bench/run.py figure 7) ----------------------------

REPO_BASES = ("api", "worker", "trainer")
REPO_ENVS = tuple(f"{env}-{region}" for env in ("dev", "staging", "prod") for region in ("us", "eu", "ap", "sa"))
REPO_CHARTS = ("inference", "batch-jobs", "notebooks", "feature-store", "embeddings", "monitoring")


def _base(name: str, rng: random.Random) -> dict[str, str]:
    gpu = name != "api"
    limits = "          limits:\n            cpu: \"2\"\n            memory: 4Gi\n" + (
        "            nvidia.com/gpu: 1\n" if gpu else "")
    deployment = (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n    app: {name}\n"
                  f"spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n"
                  f"    metadata:\n      labels:\n        app: {name}\n    spec:\n      containers:\n"
                  f"      - name: {name}\n        image: {rng.choice(IMAGES)}\n        envFrom:\n"
                  f"        - configMapRef:\n            name: {name}-env\n        ports:\n"
                  f"        - containerPort: 8080\n          name: http\n        resources:\n"
                  f"          requests:\n            cpu: 500m\n            memory: 1Gi\n{limits}")
    service = (f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  selector:\n    app: {name}\n"
               "  ports:\n  - port: 80\n    targetPort: http\n")
    config = (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-env\ndata:\n  LOG_LEVEL: info\n"
              f"  NVIDIA_VISIBLE_DEVICES: {'void' if gpu else 'none'}\n")
    return {"deployment.yaml": deployment, "service.yaml": service, "configmap.yaml": config,
            "kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                  "resources:\n- deployment.yaml\n- service.yaml\n- configmap.yaml\n"}


def _overlay(base: str, env: str, rng: random.Random) -> dict[str, str]:
    bypass = rng.random() < 0.15
    env_lines = ("        env:\n        - name: NVIDIA_VISIBLE_DEVICES\n          value: all\n" if bypass else
                 "        env:\n        - name: REGION\n          value: " + env.split("-")[1] + "\n")
    patch = (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {base}\nspec:\n"
             f"  replicas: {rng.choice([1, 2, 3, 4])}\n  template:\n    spec:\n      containers:\n"
             f"      - name: {base}\n{env_lines}")
    kustomization = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                     f"namespace: {env}\nnamePrefix: {env}-\nlabels:\n- pairs:\n    environment: {env}\n"
                     f"resources:\n- ../../../bases/{base}\npatches:\n- path: patch.yaml\n"
                     f"configMapGenerator:\n- name: {base}-settings\n  literals:\n  - ENVIRONMENT={env}\n"
                     f"  - SHARDS={rng.randint(1, 16)}\n")
    return {"kustomization.yaml": kustomization, "patch.yaml": patch}


def _chart(name: str, rng: random.Random) -> dict[str, str]:
    helpers = (f'{{{{- define "{name}.labels" -}}}}\napp.kubernetes.io/name: {name}\n'
               'app.kubernetes.io/instance: {{ .Release.Name }}\n{{- end }}\n'
               f'{{{{- define "{name}.gpuEnv" -}}}}\n{{{{- if .Values.gpu.visibleDevices }}}}\n'
               '- name: NVIDIA_VISIBLE_DEVICES\n  value: {{ .Values.gpu.visibleDevices | quote }}\n{{- end }}\n'
               '{{- end }}\n')
    deployment = (f'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{{{ .Release.Name }}}}-{name}\n'
                  f'  labels:\n    {{{{- include "{name}.labels" . | nindent 4 }}}}\nspec:\n'
                  '  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels:\n'
                  f'      {{{{- include "{name}.labels" . | nindent 6 }}}}\n  template:\n    metadata:\n'
                  f'      labels:\n        {{{{- include "{name}.labels" . | nindent 8 }}}}\n    spec:\n'
                  '      containers:\n      - name: main\n        image: {{ .Values.image }}\n'
                  f'        env:\n        - name: MODE\n          value: {{{{ .Values.mode }}}}\n'
                  f'        {{{{- include "{name}.gpuEnv" . | nindent 8 }}}}\n        resources:\n          limits:\n'
                  '            cpu: {{ .Values.cpu | quote }}\n            {{- if .Values.gpu.count }}\n'
                  '            nvidia.com/gpu: {{ .Values.gpu.count }}\n            {{- end }}\n'
                  '        {{- if .Values.privileged }}\n        securityContext:\n          privileged: true\n'
                  '        {{- end }}\n')
    service = (f'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{{{ .Release.Name }}}}-{name}\nspec:\n'
               f'  selector:\n    {{{{- include "{name}.labels" . | nindent 4 }}}}\n  ports:\n  - port: 80\n')
    config = (f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-{name}-config\ndata:\n'
              '  mode: {{ .Values.mode | quote }}\n')
    values = (f"image: {rng.choice(IMAGES)}\nreplicas: 1\nmode: serve\ncpu: \"2\"\nprivileged: false\n"
              "gpu:\n  count: 1\n  visibleDevices: \"\"\n")
    return {"Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 0.{rng.randint(1, 9)}.0\ntype: application\n",
            "values.yaml": values, "templates/_helpers.tpl": helpers, "templates/deployment.yaml": deployment,
            "templates/service.yaml": service, "templates/configmap.yaml": config,
            "ci/gpu-values.yaml": f"gpu:\n  count: {rng.choice([2, 4, 8])}\nmode: train\n",
            "ci/cpu-values.yaml": "gpu:\n  count: 0\n" + (
                "  visibleDevices: all\n" if rng.random() < 0.3 else "") + "cpu: \"8\"\n"}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def generate_repository(out: Path, plain: int = 40, overlays: int = 12, charts: int = 6,
                        seed: int = 17) -> list[tuple[str, ...]]:
    """A tree shaped like a deployment repository, and the renders a scan of it runs.

    3 kustomize bases (k8s/bases) × 12 overlays (k8s/overlays/ENV/BASE: a patch, a
    namespace and prefix, a ConfigMap generator): 36 builds. 6 small Helm charts
    (charts/NAME: helpers, a Deployment, a Service, a ConfigMap) with two chart-testing
    values files each, one of them with a third identical to another; one chart vendored
    twice, identical (teams/*/charts/shared-worker). `plain` manifests (manifests/). No
    `.git`: the tree is its own repository. `overlays` and `charts` (at most 12 and 6)
    make it smaller, for tests.

    Returns the renders gpulint runs, in no particular order: ("kustomize", overlay
    directory) and ("helm", chart directory, values file or "") — identical ones included,
    which gpulint runs once (a duplicate's entry repeats the first one's arguments).
    """
    rng = random.Random(seed)
    renders: list[tuple[str, ...]] = []
    for base in REPO_BASES:
        _write(out / "k8s" / "bases" / base, _base(base, rng))
    for env in REPO_ENVS[:overlays]:
        for base in REPO_BASES:
            directory = out / "k8s" / "overlays" / env / base
            _write(directory, _overlay(base, env, rng))
            renders.append(("kustomize", str(directory)))
    charts = [out / "charts" / name for name in REPO_CHARTS[:max(1, charts)]]
    for directory in charts:
        _write(directory, _chart(directory.name, rng))
    (charts[0] / "ci" / "smoke-values.yaml").write_text((charts[0] / "ci" / "gpu-values.yaml").read_text())
    shared = _chart("shared-worker", rng)
    for team in ("team-a", "team-b"):
        directory = out / "teams" / team / "charts" / "shared-worker"
        _write(directory, shared)
        charts.append(directory)
    for directory in charts:
        renders.append(("helm", str(directory), ""))
        for values in sorted((directory / "ci").glob("*-values.yaml")):
            renders.append(("helm", str(directory), str(values)))
    for i in range(plain):
        kind = KINDS[i % len(KINDS)]
        docs = [workload(rng, kind, i)] + extras(rng, i)
        path = out / "manifests" / f"{kind.lower()}-{i:03d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\n".join(d if d.endswith("\n") else d + "\n" for d in docs))
    return renders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--big-docs", type=int, default=3000)
    parser.add_argument("--references", type=int, metavar="DOCS",
                        help="write instead the index-lookup corpus of this many documents (see generate_references)")
    parser.add_argument("--repository", action="store_true",
                        help="write instead a repository-shaped tree with charts and overlays (generate_repository)")
    args = parser.parse_args()
    if args.repository:
        generate_repository(args.out)
    elif args.references:
        generate_references(args.out, args.references)
    else:
        generate(args.out, args.files, args.big_docs)


if __name__ == "__main__":
    main()
