"""gpulint: find every way a Kubernetes workload gets GPUs around the scheduler."""

__version__ = "0.1.0"
