"""
## What it does
Finds GPUs handed out by an image's own default:

- **Manifests:** a container (init and ephemeral containers too, in every pod
  template: Deployments, Jobs, Ray, Kubeflow, Argo, KServe, ...) whose image
  sets `NVIDIA_VISIBLE_DEVICES=all` in its ENV, that requests no GPU and whose
  pod does not set the variable. Known images are listed, each with the source
  that shows it, in `gpulint/knowledge/data/gpu_images.yaml`: `nvidia/cuda`, NGC
  images of a CUDA family (`nvcr.io/nvidia/pytorch`, `…/tritonserver`, `…/nemo`,
  the NIM microservices under `nvcr.io/nim/`) or with an NGC framework release tag
  (`24.05-py3`), NVIDIA components whose Dockerfile sets it (device plugin, DCGM
  exporter, MIG manager), `tensorflow/tensorflow` and
  `tensorflow/serving` GPU tags, `pytorch/pytorch`, `horovod/horovod`,
  `rayproject/ray` GPU/CUDA tags, `rayproject/ray-ml` (except `-cpu`),
  `rayproject/ray-llm`, `vllm/vllm-openai`, `ollama/ollama`, `projecthami/hami`
  and the ACK gpushare device plugin. The `nvcr.io/nvidia/` prefix alone is not
  evidence: NGC also hosts operators' controllers, distroless and Kubernetes
  component images (the GPU Operator, its validator and the container toolkit
  even set `void`). Without a list, an image is a GPU image by what its reference
  says: copies of NVIDIA product images and other distinctive CUDA images in another
  registry, under the same name or with the path joined by `-` (`…/tritonserver`,
  `…/ai-dynamo-vllm-runtime`, `…/vllm-openai`, `$ECR_REGISTRY/ray-llm:$TAG`; the
  names are data with sources; a `-cpu` tag is no copy); a repository name or tag that says CUDA
  (`-cuda12.1`, `cu118`), or that says GPU the way frameworks name their CUDA
  builds (`mindspore-gpu`, `:1.0-gpu`) — unless the name says the image is a
  cluster component about GPUs (`gpu-operator`, `…-device-plugin`,
  `…_gpu_exporter`) or names another vendor's stack (ROCm, oneAPI, Neuron).
  References are compared the way registries
  read them: `docker.io/`, `index.docker.io/` and `library/` are implied, tags
  and digests are split off. Add your own images with the `gpu-images` setting.
- **Dockerfiles and Containerfiles:** an image whose final stage sets
  `NVIDIA_VISIBLE_DEVICES` to a value that exposes GPUs (`ENV
  NVIDIA_VISIBLE_DEVICES all`, `ENV NVIDIA_VISIBLE_DEVICES=all`, GPU indices,
  UUIDs; line continuations, quotes and `${ARG}` defaults are read). A value set
  in a stage the final stage builds on (`FROM base`) counts; a build stage the
  final image does not build on does not; a later `ENV NVIDIA_VISIBLE_DEVICES=void`
  cancels it. The finding points at the ENV line, at the variable's name. An
  image that also asks for MIG configuration or monitoring
  (`NVIDIA_MIG_CONFIG_DEVICES`, `NVIDIA_MIG_MONITOR_DEVICES`: only GPU management
  components such as a MIG manager need them) is GPU infrastructure, and so is one
  that asks for the `utility` driver capability alone
  (`NVIDIA_DRIVER_CAPABILITIES=utility`: NVML and nvidia-smi, no CUDA, as device
  plugins and DRA drivers build their images): its finding
  is reported suppressed as a system component (`--no-default-exemptions` shows it).

A container whose resources another object decides (the `kserve-container` of a
KServe serving runtime: the InferenceService that selects it merges its own), and a
pod-spec patch container running its base container's image (the base is reported),
are not reported either.
A container that requests a GPU (`resources.limits`, a DRA claim, a GPU-share
annotation (the `gpu-request-annotations` setting, or one shaped like a GPU request:
`tensor-fusion.ai/vram-request`), a scheduler's own GPU resource such as `volcano.sh/vgpu-number`, a
serverless GPU instance of its own (ACK ECI `k8s.aliyun.com/eci-use-specs` naming GPU
instance types), or, in a custom resource, the GPUs its component declares for the
operator to request: `resources.limits.gpu` beside a Dynamo service's pod spec,
a Kubeflow Trainer `resourcesPerNode`) is not reported: the device plugin sets the variable to the GPUs it
allocated. Neither is a container whose pod sets the variable itself: `void` or
`none` hide GPUs, a literal `all` is GPU003's finding and a ConfigMap value is
GPU004's. A `void` from an `envFrom` ConfigMap in the scan counts; an `envFrom`
source outside the scan cannot be checked, so the finding stands and says so.

## Why is this bad
Policy item 5 ([gpulint's policy](https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy)): container images that set `NVIDIA_VISIBLE_DEVICES`
to `all` by default are prohibited when the Pod YAML does not set it. On a node
where the NVIDIA runtime runs the container (the GPU Operator makes it the
default runtime, or `runtimeClassName: nvidia`), the runtime hook reads the
image's ENV like any other variable and mounts every GPU of the node into a
container that asked for none. The scheduler does not know: it keeps handing
those GPUs to other Pods, which then contend for the same cards and memory
(NVIDIA/gpu-operator#421, #700: all GPUs visible to pods that requested none;
kubernetes/kubernetes#133618). GPUs injected by the hook without runc knowing
them also fail later with "Failed to initialize NVML: Unknown Error" after a
`systemctl daemon-reload` (NVIDIA/nvidia-container-toolkit#48,
NVIDIA/nvidia-docker#1730, NVIDIA/gpu-operator#485).

## Example
```yaml
containers:
- name: ray-head            # the head runs no GPU work
  image: rayproject/ray:2.40.0-py311-gpu
  resources:
    limits: {cpu: "2"}
```
```dockerfile
FROM ubuntu:22.04
ENV NVIDIA_VISIBLE_DEVICES=all
```

## Use instead
```yaml
containers:
- name: ray-head
  image: rayproject/ray:2.40.0-py311-gpu
  env:
  - name: NVIDIA_VISIBLE_DEVICES
    value: void             # or request nvidia.com/gpu in resources.limits
```
In an image, leave the variable unset (or set it to `void`) and let the device
plugin set it for the containers that request GPUs.

## Fix
Unsafe (`--unsafe-fixes`), in manifests: `NVIDIA_VISIBLE_DEVICES=void` is
added to the container's `env`. The container loses the GPUs it was never
entitled to; if it really needs one, request it instead (and drop the
variable). No fix when `envFrom` of a source outside the scan may set the
variable, nor in Dockerfiles, nor when the pod targets GPU nodes (a GPU node
selector, affinity or toleration): such a pod may mean to use a GPU, and
hiding them would break it; the finding says to request one.

```diff
 containers:
 - name: tools
   image: nvidia/cuda:12.4.1-base-ubuntu22.04
+  env:
+  - name: NVIDIA_VISIBLE_DEVICES
+    value: void
```

## References
- ACK, "Use the default Kubernetes GPU scheduling", prohibited operation 5: https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-gpu-scheduling-in-ack-clusters
- gpulint's policy, item 5: https://github.com/gpulint/gpulint/blob/main/docs/policy.md#the-policy
- NVIDIA container toolkit, environment variables and CUDA image defaults: https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime/README.md
- NVIDIA/k8s-device-plugin#203: NGC images set NVIDIA_VISIBLE_DEVICES regardless: https://github.com/NVIDIA/k8s-device-plugin/issues/203
- NVIDIA/gpu-operator#421: https://github.com/NVIDIA/gpu-operator/issues/421
- NVIDIA/nvidia-container-toolkit#48: https://github.com/NVIDIA/nvidia-container-toolkit/issues/48
- Dockerfile reference, ENV: https://docs.docker.com/reference/dockerfile/#env
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping

from gpulint.api import (
    Admission,
    Applicability,
    Edit,
    Fix,
    LineAt,
    Rule,
    RuleContext,
    Severity,
    SystemRole,
    ValueAt,
    Violation,
)
from gpulint.knowledge import celforms
from gpulint.knowledge.envresolve import UNSET, describe_env_from, env_setters, resolve
from gpulint.knowledge.gpu import (
    GRANTS,
    VISIBLE_DEVICES,
    classify_visible_devices,
    describe_devices,
    gpu_node_targeting,
    image_visible_devices_default,
    requests_gpu,
)
from gpulint.model.workload import Workload

if TYPE_CHECKING:  # only Dockerfile scans need the Dockerfile parser
    from gpulint.load.dockerfile import Dockerfile


def check(workload: Workload, ctx: RuleContext) -> Iterator[Violation]:
    for pod, container in workload.containers():
        image_rule = image_visible_devices_default(container.image, ctx.settings)
        if image_rule is None or image_rule.sets != "all":
            continue
        if requests_gpu(container, pod, ctx.settings):
            continue
        if container.resources_from:
            continue  # its resources are another object's (a KServe runtime's InferenceService)
        if container.patched is not None and container.image_at is not None:
            continue  # a pod-spec patch running its base container's image: the base reports it
        if container.patches and any(patch.env_value(VISIBLE_DEVICES) is not None for patch in container.patches):
            continue  # a pod-spec patch sets the variable: hidden, or GPU003's finding there
        resolution = (resolve(VISIBLE_DEVICES, container, pod, workload.namespace, ctx.index)
                      if container in env_setters(workload, VISIBLE_DEVICES) else UNSET)
        if resolution.setting is not None:
            continue  # the pod sets the variable: hidden, or GPU003/GPU004's finding
        unless = ""
        fix = None
        no_fix = None
        targeting = gpu_node_targeting(pod, ctx.settings)
        if targeting is not None:
            # Hiding the GPUs would break a pod that was placed to use one: it should request it.
            no_fix = (f"no fix: its pod targets GPU nodes by {targeting}, so it may mean to use a GPU: request "
                      f"nvidia.com/gpu in resources.limits (how many is yours to say), or set {VISIBLE_DEVICES}"
                      "=void if it needs none")
        elif not resolution.unverifiable:
            fix = Fix(f"add {VISIBLE_DEVICES}=void to the container's env", Applicability.UNSAFE,
                      (Edit.append(container.key_path("env"), {"name": VISIBLE_DEVICES, "value": "void"}),))
        if resolution.unverifiable:
            names = ", ".join(describe_env_from(item) for item in resolution.unverifiable)
            unless = f" (unless envFrom {names}, not in the scan, sets it)"
        yield Violation(
            f"image {container.image} sets {VISIBLE_DEVICES}=all by default ({image_rule.source}) and the "
            f"container requests no GPU{unless}: with the NVIDIA runtime it sees every GPU of the node "
            f"without the scheduler knowing; set {VISIBLE_DEVICES}=void in env, or request nvidia.com/gpu "
            "in resources.limits",
            ValueAt(container.image_path), container, located_in=container.image_origin, fix=fix,
            no_fix=no_fix,
        )


def check_dockerfile(dockerfile: Dockerfile, ctx: RuleContext) -> Iterator[Violation]:
    pair = dockerfile.effective_env().get(VISIBLE_DEVICES)
    if pair is None or classify_visible_devices(pair.value) != GRANTS:
        return
    line, column, end_line, end_column = pair.span
    yield Violation(
        f"the image built here sets {VISIBLE_DEVICES}={pair.value} by default, exposing "
        f"{describe_devices(pair.value)} to every container that runs it without requesting a GPU; "
        f"remove the ENV (or set {VISIBLE_DEVICES}=void) and request nvidia.com/gpu in the pod's "
        "resources.limits",
        LineAt(line, column, end_line, end_column),
    )


def admission(options: Mapping[str, Any]) -> Admission:
    """The image knowledge (the list, user patterns, what a reference says) as regular expressions; a
    container that leaves the variable out of `env` is refused whatever its envFrom holds."""
    return Admission(
        f"runs an image that sets {VISIBLE_DEVICES}=all by default and requests no GPU: with the NVIDIA "
        f"runtime it sees every GPU of the node without the scheduler knowing; set {VISIBLE_DEVICES}=void in "
        "env, or request nvidia.com/gpu in resources.limits",
        container=(f"{celforms.gpu_image('c')} && !{celforms.requests_gpu('c')} && !variables.shareAnnotation && !{celforms.serverless_gpu_instance()} "
                   f"&& !{celforms.sets_variable('c')}"),
        enforced="images of the list (gpu_images.yaml and the gpu-images setting) and images whose reference "
                 "says CUDA, GPU or NGC, in containers that request no GPU and leave the variable out of env",
        linter_only="a value from an envFrom ConfigMap of the scan; Dockerfiles",
    )


RULE = Rule(
    id="GPU005",
    name="image-default-visible-devices",
    severity=Severity.WARNING,
    summary="An image that defaults NVIDIA_VISIBLE_DEVICES to all runs in a container that requests no GPU.",
    doc=__doc__ or "",
    check=check,
    check_dockerfile=check_dockerfile,
    security_severity="6.5",
    # The evidence is the image's default environment: it exposes GPUs only where the NVIDIA
    # runtime is the node's default, which the manifest cannot show.
    precision="medium",
    admission=admission,
    # Roles whose built-in components (data/system_components.yaml) are all exempt from this rule.
    exempt_roles=frozenset({SystemRole.DEVICE_PLUGIN, SystemRole.DRA_PLUGIN, SystemRole.CDI_WRITER,
                            SystemRole.NRI_PLUGIN, SystemRole.MANAGEMENT_IMAGE, SystemRole.GPU_NODE_AGENT, SystemRole.DEVICE_DISCOVERER, SystemRole.DEVICE_MANAGER,
                            SystemRole.RUNTIME_HOOK, SystemRole.MANAGEMENT_AGENT}),
)
