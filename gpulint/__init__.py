"""gpulint: find every way a Kubernetes workload gets GPUs around the scheduler."""

from gpulint import fastdataclasses

__version__ = "0.1.0"

fastdataclasses.install()  # dataclasses made from precompiled methods: see fastdataclasses.py
