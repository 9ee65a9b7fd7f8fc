"""gpulint: find every way a Kubernetes workload gets GPUs around the scheduler."""

from gpulint import precompiled

__version__ = "0.1.0"

precompiled.install()  # dataclasses and patterns made from code compiled ahead of time: see precompiled.py
