"""The typed model: documents to Kubernetes objects, workloads, pod specs and containers.

Plugins import the model classes from here (`from gpulint.model import Workload`)."""

from gpulint.model.nodes import NodeView
from gpulint.model.workload import (
    Container,
    EnvFrom,
    EnvVar,
    Exec,
    PodSpec,
    Problems,
    Resources,
    Script,
    TypeProblem,
    Volume,
    VolumeMount,
    Workload,
)

__all__ = ["Container", "EnvFrom", "EnvVar", "Exec", "NodeView", "PodSpec", "Problems", "Resources", "Script", "TypeProblem",
           "Volume", "VolumeMount", "Workload"]
